"""clients.render.plan: deployments of several kinds and runner-up remarks."""

from __future__ import annotations

from api.fleetplan.v1 import common_pb2, plan_pb2
from clients.render.plan import plan_tables, replicas_text, runner_up_remarks, workload_uses


def _use(
    tp: int, replicas: float, *, most: float | None = None, shared: bool = False, mig: int = 0
) -> plan_pb2.WorkloadGroupUse:
    return plan_pb2.WorkloadGroupUse(
        gpu_id="h100-nvl",
        tp=tp,
        mig_slice=mig,
        precision=common_pb2.PRECISION_FP8,
        shared=shared,
        replicas=replicas,
        replicas_max=replicas if most is None else most,
    )


def test_a_tp_mix_names_each_deployment_with_its_replicas() -> None:
    row = plan_pb2.WorkloadRow(uses=[_use(1, 1.4621, shared=True), _use(2, 1)])
    assert workload_uses(row) == "1.46 × h100-nvl TP1 fp8 shared + 1 × h100-nvl TP2 fp8"


def test_groups_serving_only_other_hours_are_named_with_their_most_replicas() -> None:
    row = plan_pb2.WorkloadRow(uses=[_use(1, 1, mig=7), _use(1, 0, most=1)])
    assert workload_uses(row) == "1 × h100-nvl MIG 1/7 fp8; other hours: ≤1 × h100-nvl TP1 fp8"


def test_replica_equivalents_read_as_whole_numbers_or_two_decimals() -> None:
    assert [replicas_text(v) for v in (2.0, 0.537848, 1.9999999, 0.004)] == ["2", "0.54", "2", "0"]


def test_the_workloads_table_copies_the_rows_and_names_unserved_ones() -> None:
    plan = plan_pb2.Plan(
        workload_rows=[
            plan_pb2.WorkloadRow(
                workload_name="chat", served=True, uses=[_use(1, 0.54, shared=True)], replicas=0.54
            ),
            plan_pb2.WorkloadRow(workload_name="idle"),
        ]
    )
    rows = {r[0]: r for r in plan_tables(plan)[0].rows}
    assert rows["chat"][1:3] == ["0.54 × h100-nvl TP1 fp8 shared", "0.54"]
    assert rows["idle"][1] == "not served"


def testrunner_up_remarks_name_their_workloads_once_per_remark() -> None:
    local = "other workloads kept as planned; a full re-plan can only be cheaper"
    runner_up = plan_pb2.RunnerUp(gpu_id="b200", tp=1)
    deployments = [
        plan_pb2.WorkloadDeployment(workload_name=f"w{i}", runner_up=runner_up, runner_up_note=local)
        for i in range(8)
    ]
    deployments.append(plan_pb2.WorkloadDeployment(workload_name="solo", runner_up_note="no demand"))
    deployments.append(plan_pb2.WorkloadDeployment(workload_name="plain", runner_up=runner_up))
    assert runner_up_remarks(deployments) == [f"runner-ups of w0, w1, w2, w3, w4, w5 and 2 more: {local}"]
