"""clients.render.plan: deployments of several kinds and runner-up remarks."""

from __future__ import annotations

from api.fleetplan.v1 import common_pb2, plan_pb2
from clients.render.plan import deployment_columns, runner_up_remarks


def _group(tp: int, replicas: int, mig_slice: int = 0) -> plan_pb2.ReplicaGroup:
    return plan_pb2.ReplicaGroup(
        gpu_id="h200-sxm", tp=tp, precision=common_pb2.PRECISION_FP8, replicas=replicas, mig_slice=mig_slice
    )


def test_mixed_tp_groups_are_listed_side_by_side() -> None:
    groups = [_group(1, 2), _group(2, 1)]
    d = plan_pb2.WorkloadDeployment(gpu_id="h200-sxm", tp=2, replicas=3, replica_groups=groups)
    assert deployment_columns(d) == ["h200-sxm", "1 + 2", "fp8", "2 + 1"]


def test_a_mig_slice_is_named_as_such() -> None:
    groups = [_group(1, 2, mig_slice=4)]
    d = plan_pb2.WorkloadDeployment(gpu_id="h200-sxm", tp=1, replicas=2, replica_groups=groups)
    assert deployment_columns(d) == ["h200-sxm", "MIG 1/4", "fp8", "2"]


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
