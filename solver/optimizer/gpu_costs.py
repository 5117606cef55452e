"""What one GPU of an option, or one candidate serving its workload alone, costs over the horizon:
the yardsticks the MIP's bounds, reductions and LP-guided search compare options by."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from solver.optimizer.instance import Bucket, Candidate, FleetInstance, InferenceDemand
from solver.pricing.options import AcquisitionOption
from solver.units import DAYS_PER_MONTH

__all__ = [
    "cheapest_cost_per_gpu",
    "cost_alone",
    "horizon_cost_per_gpu",
    "lease_cost_per_server",
    "replica_cost",
    "replicas_alone",
]


def horizon_cost_per_gpu(option: AcquisitionOption, months: int) -> float:
    """One GPU of ``option`` held and busy around the clock for the horizon (its server's costs
    shared over its slots): the option's most expensive use, comparable across modes."""
    slots = max(1, option.gpus_per_server)
    return (
        option.capex_per_gpu_with_host
        + option.network_capex_per_server / slots
        + months * (option.fixed_monthly_per_gpu + option.fixed_monthly_per_server / slots)
        + months * DAYS_PER_MONTH * 24 * option.busy_hourly_per_gpu
        + option.lease_total(1) / slots
    )


def lease_cost_per_server(option: AcquisitionOption, instance: FleetInstance) -> float:
    """What one leased server's lease adds to the objective: its payments less the market value of
    the hardware it leaves at the horizon, both weighed as the objective weighs cash (today's money
    under objective npv); 0 for any other option."""
    if not option.leased:
        return 0.0
    credit = option.lease_value_per_server * option.residual_fraction * instance.residual_weight
    return option.lease_cost(1, instance.discount_rate) - credit


def replicas_alone(rate_req_s: float, capacity_req_s: float, spares: int) -> int:
    """Replicas of one candidate that serve ``rate_req_s`` on their own, plus the spares (0 when
    there is no demand)."""
    if rate_req_s <= 0:
        return 0
    return math.ceil(rate_req_s / capacity_req_s * (1 + 1e-9)) + spares


def cheapest_cost_per_gpu(instance: FleetInstance) -> dict[str, float]:
    """Per GPU type: ``horizon_cost_per_gpu`` of its cheapest option in ``instance``."""
    per_gpu: dict[str, float] = {}
    for o in instance.options:
        cost = horizon_cost_per_gpu(o, instance.horizon_months)
        per_gpu[o.gpu] = min(per_gpu.get(o.gpu, cost), cost)
    return per_gpu


def cost_alone(
    candidate: Candidate, demand: InferenceDemand, buckets: Sequence[Bucket], per_gpu: Mapping[str, float]
) -> float:
    """``candidate`` serving its workload (``demand``) on its own: the whole replicas each bucket
    needs (spares included) × GPUs per replica × the GPU type's cheapest per-GPU horizon cost,
    weighted by the bucket's share of the day. Unlike capacity per GPU, it sees the partly idle
    last replica."""
    gpu_days = sum(
        len(bucket.hours) / 24 * replicas_alone(rate, candidate.capacity_req_s, demand.redundancy)
        for bucket, rate in zip(buckets, demand.rate_req_s, strict=True)
    )
    return gpu_days * replica_cost(candidate, per_gpu)


def replica_cost(candidate: Candidate, per_gpu: Mapping[str, float]) -> float:
    """One replica's GPUs at their types' per-GPU cost (a disaggregated unit: both roles')."""
    if candidate.unit is None:
        return candidate.gpu_equivalents * per_gpu.get(candidate.gpu, math.inf)
    return sum(n * per_gpu.get(g, math.inf) for g, n in candidate.gpus_by_type())
