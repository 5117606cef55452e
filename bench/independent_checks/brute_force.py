"""Brute force: every small fleet of a random request priced and checked by EvaluateFleet; the
planner's plan must cost no more than the cheapest feasible one (within the plan's gap), and the
plan's own fleet must evaluate feasible at exactly its reported TCO.

Fleets: every mix of the allowed GPU types and modes up to ``MAX_GPUS`` GPUs in all (the evaluator
prices each line on the cheapest valid mix of its eligible offers), every one-line fleet of
``SINGLE_COUNTS`` GPUs, and every one-line fleet on each offer the planner may choose by name (the
request's pins, label policy and provider filters applied: a fleet naming another offer is the
user's choice, not one the plan could have made)."""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from bench.independent_checks.scenarios import (
    Planned,
    described,
    eligible_offers,
    evaluate_fleet,
    evaluate_in_process,
    fleet_text,
    plan_fleet,
    planner_offers,
    resolved,
)
from clients import FleetPlannerClient
from solver.domain import Fleet, FleetItem, PlanRequest

MAX_GPUS = 4
SINGLE_COUNTS = (5, 6, 8)
"""One-line fleets past ``MAX_GPUS``: 8 fills a whole 8-GPU instance or server."""
MAX_FLEETS = 200
CENT = Decimal("0.01")


@dataclass
class BruteResult:
    seed: int
    request: PlanRequest
    planned: Planned
    fleets_evaluated: int = 0
    fleets_feasible: int = 0
    fleets_refused: int = 0
    cheapest: tuple[str, Decimal] | None = None
    failures: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0

    def record(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "plan": self.planned.summary(),
            "fleets_evaluated": self.fleets_evaluated,
            "fleets_feasible": self.fleets_feasible,
            "fleets_refused": self.fleets_refused,
            "cheapest_enumerated": None
            if self.cheapest is None
            else [self.cheapest[0], str(self.cheapest[1])],
            "failures": len(self.failures),
            "seconds": round(self.seconds, 2),
        }


def candidate_fleets(request: PlanRequest) -> list[Fleet]:
    """The small fleets the brute force prices, smallest first."""
    limits = request.constraints
    lines = [(g, m) for g in limits.allowed_gpus for m in limits.allowed_modes if eligible_offers(g, m)]
    fleets: list[Fleet] = []
    for counts in itertools.product(range(MAX_GPUS + 1), repeat=len(lines)):
        if 0 < sum(counts) <= MAX_GPUS:
            items = tuple(
                FleetItem(gpu=g, mode=m, count=c) for (g, m), c in zip(lines, counts, strict=True) if c
            )
            fleets.append(Fleet(items=items))
    for (gpu, mode), count in itertools.product(lines, SINGLE_COUNTS):
        fleets.append(Fleet(items=(FleetItem(gpu=gpu, mode=mode, count=count),)))
    choosable = planner_offers(limits)
    for gpu, mode in lines:
        offers = [o for o in eligible_offers(gpu, mode) if o in choosable]
        for offer, count in itertools.product(offers, (1, 2, 4, 8)):
            fleets.append(Fleet(items=(FleetItem(gpu=gpu, mode=mode, count=count, offer=offer),)))
    fleets.sort(key=lambda f: sum(i.count for i in f.items))
    return fleets[:MAX_FLEETS]


def _fail(result: BruteResult, check: str, detail: str, **figures: object) -> None:
    result.failures.append(
        {
            "check": check,
            "seed": result.seed,
            "detail": detail,
            **figures,
            "request": described(result.request),
        }
    )


def check_instance(client: FleetPlannerClient, seed: int, request: PlanRequest) -> BruteResult:
    started = time.perf_counter()
    result = BruteResult(seed, request, plan_fleet(client, request))
    feasible: list[tuple[Decimal, Fleet]] = []
    ready = resolved(request)
    for fleet in candidate_fleets(request):
        evaluated = evaluate_in_process(ready, fleet)
        result.fleets_evaluated += 1
        result.fleets_refused += bool(evaluated.error)
        if evaluated.feasible and evaluated.tco is not None:
            feasible.append((evaluated.tco, fleet))
    result.fleets_feasible = len(feasible)
    if feasible:
        tco, fleet = min(feasible, key=lambda f: f[0])
        result.cheapest = (fleet_text(fleet), tco)
        _check_cheapest_over_grpc(client, result, fleet, tco)
    _check_plan(client, result)
    result.seconds = time.perf_counter() - started
    return result


def _check_cheapest_over_grpc(
    client: FleetPlannerClient, result: BruteResult, fleet: Fleet, tco: Decimal
) -> None:
    """The cheapest enumerated fleet, evaluated in process, is what gRPC EvaluateFleet says too."""
    remote = evaluate_fleet(client, result.request, fleet)
    if not remote.feasible or remote.tco != tco:
        _fail(
            result,
            "in-process and gRPC EvaluateFleet agree",
            f"{fleet_text(fleet)}: in process feasible at {tco}, gRPC {remote}",
        )


def _check_plan(client: FleetPlannerClient, result: BruteResult) -> None:
    planned = result.planned
    if planned.error:
        if planned.error.startswith(("INTERNAL", "UNKNOWN")):
            _fail(result, "PlanFleet never INTERNAL", planned.error)
        elif result.cheapest is not None:
            _fail(result, "a plan when a fleet is feasible", f"{planned.error}; feasible: {result.cheapest}")
        return
    if not planned.has_plan:
        if result.cheapest is not None:
            _fail(
                result,
                "a plan when a fleet is feasible",
                f"status {planned.status}, yet {result.cheapest[0]} is feasible at {result.cheapest[1]}",
            )
        return
    plan = planned.response.plan
    stats = plan.solver_statistics
    gap = max(stats.requested_relative_gap, stats.relative_gap)
    if plan.status == 1 and stats.relative_gap > stats.requested_relative_gap + 1e-12:  # OPTIMAL
        _fail(
            result,
            "OPTIMAL means proven within the gap",
            f"gap {stats.relative_gap} > {stats.requested_relative_gap}",
        )
    if result.cheapest is not None and planned.tco > result.cheapest[1] * Decimal(1 + gap) + CENT:
        _fail(
            result,
            "plan ≤ cheapest feasible enumerated fleet",
            f"plan {planned.tco} ({planned.summary()['fleet']}) > "
            f"{result.cheapest[1]} ({result.cheapest[0]})",
            plan_tco=str(planned.tco),
            cheapest_tco=str(result.cheapest[1]),
        )
    _check_plan_evaluates(client, result, gap)
    _check_lines_sum(result)
    _check_whole_instances(result)


def _check_plan_evaluates(client: FleetPlannerClient, result: BruteResult, gap: float) -> None:
    planned = result.planned
    named = evaluate_fleet(client, result.request, planned.fleet(with_offers=True))
    if not named.feasible or named.tco != planned.tco:
        _fail(
            result,
            "EvaluateFleet of the plan's fleet = the plan's TCO",
            f"plan {planned.tco}; EvaluateFleet feasible={named.feasible} tco={named.tco} {named.error} "
            f"{list(named.messages)[:3]}",
            fleet=fleet_text(planned.fleet(with_offers=True)),
        )
    counts = evaluate_fleet(client, result.request, planned.fleet(with_offers=False))
    low = planned.tco * Decimal(1 - gap) - CENT
    if not counts.feasible or counts.tco is None or not (low <= counts.tco <= planned.tco + CENT):
        _fail(
            result,
            "EvaluateFleet of the plan's counts (offers unnamed) is feasible at no more than the plan's TCO",
            f"plan {planned.tco}; EvaluateFleet feasible={counts.feasible} tco={counts.tco} {counts.error} "
            f"{list(counts.messages)[:3]}",
            fleet=fleet_text(planned.fleet(with_offers=False)),
        )


def _check_lines_sum(result: BruteResult) -> None:
    plan = result.planned.response.plan
    lines = sum((Decimal(line.horizon_cost.amount) for line in plan.fleet), Decimal(0))
    components = sum((Decimal(c.horizon_amount.amount) for c in plan.cost.components), Decimal(0))
    tco = result.planned.tco
    if lines != tco or components != tco:
        _fail(
            result,
            "fleet lines and cost components sum to the TCO",
            f"lines {lines}, components {components}, TCO {tco}",
        )


def _check_whole_instances(result: BruteResult) -> None:
    """A rental line on an offer renting N-GPU instances holds whole instances at every hour."""
    for line in result.planned.response.plan.fleet:
        unit = max(1, line.gpus_per_instance)
        counts = [line.gpu_count, *line.on_demand_gpus_by_hour]
        if any(c % unit for c in counts):
            _fail(
                result,
                "rental lines rent whole instances",
                f"{line.gpu_id} {line.offer_id}: {line.gpu_count} GPUs "
                f"(by hour {list(line.on_demand_gpus_by_hour)}) on {unit}-GPU instances",
            )
