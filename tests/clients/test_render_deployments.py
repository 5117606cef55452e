"""clients.render: a workload served by several deployment kinds shows each of them."""

from __future__ import annotations

from clients._pb.fleetplan.v1 import common_pb2, plan_pb2
from clients.render import _deployment_columns


def _group(tp: int, replicas: int, mig_slice: int = 0) -> plan_pb2.ReplicaGroup:
    return plan_pb2.ReplicaGroup(
        gpu_id="h200-sxm", tp=tp, precision=common_pb2.PRECISION_FP8, replicas=replicas, mig_slice=mig_slice
    )


def test_mixed_tp_groups_are_listed_side_by_side() -> None:
    groups = [_group(1, 2), _group(2, 1)]
    d = plan_pb2.WorkloadDeployment(gpu_id="h200-sxm", tp=2, replicas=3, replica_groups=groups)
    assert _deployment_columns(d) == ["h200-sxm", "1 + 2", "fp8", "2 + 1"]


def test_a_mig_slice_is_named_as_such() -> None:
    groups = [_group(1, 2, mig_slice=4)]
    d = plan_pb2.WorkloadDeployment(gpu_id="h200-sxm", tp=1, replicas=2, replica_groups=groups)
    assert _deployment_columns(d) == ["h200-sxm", "MIG 1/4", "fp8", "2"]
