"""service.convert.plan_diff: a workload's deployment change is worded from the planner's rows (a
share of a shared pool is its replica-equivalents, never "×0"), and from the deployments of plans
saved before the rows existed."""

from __future__ import annotations

from api.fleetplan.v1 import common_pb2, plan_pb2
from service.convert.plan_diff import deployment_changes


def _row(name: str, *uses: tuple[int, float, bool]) -> plan_pb2.WorkloadRow:
    return plan_pb2.WorkloadRow(
        workload_name=name,
        served=True,
        uses=[
            plan_pb2.WorkloadGroupUse(
                gpu_id="h100-nvl",
                tp=tp,
                precision=common_pb2.PRECISION_FP8,
                shared=shared,
                replicas=r,
                replicas_max=r,
            )
            for tp, r, shared in uses
        ],
    )


def _plan(row: plan_pb2.WorkloadRow | None, deployment: plan_pb2.WorkloadDeployment) -> plan_pb2.Plan:
    return plan_pb2.Plan(deployments=[deployment], workload_rows=[row] if row is not None else [])


LEGACY = plan_pb2.WorkloadDeployment(
    workload_name="chat", gpu_id="h100-nvl", tp=1, precision=common_pb2.PRECISION_FP8
)


def test_a_pool_share_is_named_with_its_replica_equivalents() -> None:
    base = _plan(_row("chat", (1, 0.54, True)), LEGACY)
    other = _plan(_row("chat", (2, 1.0, False)), LEGACY)
    (change,) = deployment_changes(base, other)
    assert change.description == "chat: 0.54 × h100-nvl TP1 fp8 shared → 1 × h100-nvl TP2 fp8"


def test_the_same_rows_are_no_change() -> None:
    row = _row("chat", (1, 0.54, True), (2, 1.0, False))
    assert deployment_changes(_plan(row, LEGACY), _plan(row, LEGACY)) == []


def test_plans_without_rows_are_compared_by_their_deployments() -> None:
    moved = plan_pb2.WorkloadDeployment(
        workload_name="chat", gpu_id="h100-nvl", tp=2, precision=common_pb2.PRECISION_FP8, replicas=1
    )
    (change,) = deployment_changes(_plan(None, LEGACY), _plan(None, moved))
    assert change.description == "chat: h100-nvl TP1 fp8 ×0 → h100-nvl TP2 fp8 ×1"
