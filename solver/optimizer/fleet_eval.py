"""EvaluateFleet: the best use of a given fleet (a vendor's proposal, or what is installed).

Two solves on the fixed fleet (GPU counts pinned; on-demand counts are an upper bound per hour):
1. elastic demand — unserved request rate is allowed at a large penalty, so the answer says how
   much of each workload the fleet serves at its SLA (feasible = everything served);
2. headroom — per workload, the largest growth of its demand alone the fleet serves at the SLA,
   checked like the fleet itself (``solver.optimizer.headroom``; the maximise-α assignment gives
   the first probes).
The fleet's TCO is the plan's cost split (the fleet is held whether busy or not).
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from functools import partial

from solver.domain import AcquisitionMode, Fleet
from solver.optimizer.cancel import CancelToken
from solver.optimizer.caps import CapKey, count_cap, counted_gpu
from solver.optimizer.concurrency import run_side_by_side
from solver.optimizer.driver import solve_mip
from solver.optimizer.evaluate import CapacityOf, check_solution
from solver.optimizer.headroom import FleetCheck, GrowthFound, workload_growth
from solver.optimizer.instance import FleetInstance, InferenceDemand
from solver.optimizer.model import MipValues, Relaxation
from solver.optimizer.pool_timing import solve_pools_by_timing
from solver.optimizer.results import FleetEvaluation, FleetSolution, SolveStatus, ViolationKind, WorkloadFit
from solver.optimizer.solution import build_solution


def evaluate_fixed_fleet(
    instance: FleetInstance,
    fleet: Fleet,
    *,
    time_limit_s: float,
    cancel: CancelToken | None = None,
    backend: str = "scip",
    capacity_of: CapacityOf | None = None,
    optimal: FleetSolution | None = None,
) -> FleetEvaluation:
    """``instance`` must carry ``fixed_fleet`` (see ``candidates.build_instance(..., fleet=)``)."""
    if instance.fixed_fleet is None:
        msg = "evaluate_fixed_fleet needs an instance built for a fixed fleet"
        raise ValueError(msg)
    backend = "scip" if backend == "auto" else backend
    # Caps and the count bounds the fleet cannot meet are reported with their figures rather than
    # left to make every use of the fleet infeasible; bounds it can meet hold in its use.
    unmet = _bounds_unmet(instance, fleet)
    caps = frozenset(instance.caps.present()) | frozenset(unmet)
    # First every demand in full: an elastic solve trades a sliver of demand (pool shares are
    # continuous) for a GPU's busy hours whenever the penalty on that sliver is below the GPU's
    # price (0.1 of 1,400 req/s on a Mélange fleet, issue 20), so it only runs when that fails.
    # Pools are held to the sharing rule: a mix the timing rejects is re-solved with that pool
    # derated (``pool_timing``), so the fleet is judged by a use of it that meets the SLA.
    instance, strict = solve_pools_by_timing(
        instance,
        lambda inst, limit: solve_mip(
            inst,
            time_limit_s=limit,
            cancel=cancel,
            backend=backend,
            relax=Relaxation(drop_caps=caps),
            relative_gap=0.0,
        ),
        time_limit_s / 4,
        capacity_of,
        lambda inst, mip: build_solution(inst, mip) if mip.values is not None else None,
    )
    elastic = (
        strict
        if strict.values is not None
        else solve_mip(
            instance,
            time_limit_s=time_limit_s / 4,
            cancel=cancel,
            backend=backend,
            relax=Relaxation(elastic_demand=True, drop_caps=caps),
            # Exact: the fleet is fixed, so only its use (busy hours) is left to choose, and its TCO
            # must equal a plan's own when the fleet is that plan's (a 1e-4 gap left 10 USD on 266 k).
            relative_gap=0.0,
        )
    )
    solution = build_solution(instance, elastic)
    if elastic.values is None:
        why = (
            "the fleet cannot run the training workloads (GPU type, count or idle hours)"
            if instance.training
            else "no use of the fleet as given is possible: a bought or reserved line's GPUs must fill "
            "whole servers of its server model"
        )
        fits = tuple(WorkloadFit(w.name, 0.0, -1.0, f"not evaluated: {why}") for w in instance.inference)
        return FleetEvaluation(feasible=False, solution=solution, fits=fits, tco=None, messages=(why,))
    served = _served_fractions(instance, elastic.values)
    feasible = all(f >= 1.0 for f in served.values())
    # Headroom means spare capacity once everything is served; a shortfall is its own headroom.
    check = FleetCheck(cancel=cancel, backend=backend, capacity_of=capacity_of, drop_caps=caps)
    found = _headroom(instance, time_limit_s / 2, check) if feasible else {}
    headroom = {name: f.multiplier - 1.0 for name, f in found.items()}
    fits = tuple(
        WorkloadFit(
            workload=w.name,
            served_fraction=served[w.name],
            headroom_fraction=headroom.get(w.name, served[w.name] - 1.0),
            message=_shortfall(w, served[w.name], elastic.values),
        )
        for w in instance.inference
    )
    messages = [f"{f.workload}: {f.message}" for f in fits if f.message]
    if feasible:
        # Caps are reported once, with their overage, by ``_caps_exceeded``; unmet bounds once too.
        unmet_gpus = {counted_gpu(cap) for cap in unmet}
        violations = [
            v
            for v in check_solution(instance, solution, capacity_of)
            if v.kind is not ViolationKind.CAP
            and not (v.kind is ViolationKind.COUNT and v.subject in unmet_gpus)
        ]
        if violations:
            feasible = False
            messages.extend(f"{v.kind} {v.subject}: {v.message}" for v in violations)
    over = _caps_exceeded(instance, solution) + list(unmet.values())
    feasible = feasible and not over
    messages += over
    solution = dataclasses.replace(solution, status=solution.status if feasible else SolveStatus.INFEASIBLE)
    optimal_tco = optimal.cost.total if optimal is not None and optimal.has_plan and optimal.cost else None
    return FleetEvaluation(
        feasible=feasible,
        solution=solution,
        fits=fits,
        tco=solution.cost.total if solution.cost is not None else None,
        optimal_tco=optimal_tco,
        messages=tuple(messages),
    )


def _served_fractions(instance: FleetInstance, values: MipValues) -> dict[str, float]:
    """Per workload: the smallest share of its demand the fleet serves in any bucket."""
    served: dict[str, float] = {}
    for w in instance.inference:
        short = values.unserved.get(w.name, ())
        worst = 1.0
        for b, lam in enumerate(w.rate_req_s):
            if lam > 0 and short:
                worst = min(worst, max(0.0, 1.0 - short[b] / lam))
        served[w.name] = 1.0 if worst > 1 - 1e-6 else worst
    return served


def _shortfall(demand: InferenceDemand, served: float, values: MipValues) -> str:
    """What the fleet leaves unserved of one workload, in words ("" when it serves everything)."""
    if served >= 1.0:
        return ""
    short = values.unserved.get(demand.name, ())
    peak_short = max(short, default=0.0)
    spares = f" with {demand.redundancy} spare replica(s)" if demand.redundancy else ""
    return (
        f"the fleet serves {served:.1%} of its peak demand at the SLA{spares}: "
        f"{peak_short:.4g} req/s short at the worst hour (more GPUs of a type that fits are needed)"
    )


def _caps_exceeded(instance: FleetInstance, solution: FleetSolution) -> list[str]:
    """A message for each cap the fleet uses more of than the request allows."""
    out = []
    for cap in instance.caps.present():
        limit = instance.caps.limit(cap)
        used = solution.usage.get(cap.usage_key, 0.0)
        if limit is not None and used > limit * (1 + 1e-9):
            out.append(f"{cap}: the fleet is {cap.overage(used, limit, instance.currency)}")
    return out


def _bounds_unmet(instance: FleetInstance, fleet: Fleet) -> dict[CapKey, str]:
    """The request's count bounds the fleet as given cannot meet (fewer GPUs of a type than its
    minimum, or more held than its maximum), each with what to tell the user."""
    given: Counter[str] = Counter()
    held: Counter[str] = Counter()
    for item in fleet.items:
        given[item.gpu] += item.count
        if item.owned or item.mode is not AcquisitionMode.ON_DEMAND:
            held[item.gpu] += item.count
    out: dict[CapKey, str] = {}
    for lim in instance.count_limits:
        if given[lim.gpu] < lim.min_count:
            out[count_cap(lim.gpu)] = (
                f"count {lim.gpu}: {given[lim.gpu]} GPUs in the fleet < minimum {lim.min_count}"
            )
        elif lim.max_count is not None and held[lim.gpu] > lim.max_count:
            out[count_cap(lim.gpu)] = f"count {lim.gpu}: {held[lim.gpu]} GPUs held > maximum {lim.max_count}"
    return out


HINT_SHARE = 0.25
"""Share of the headroom time for the maximise-α solve whose assignment gives the first probes."""


def _headroom(
    instance: FleetInstance,
    time_limit_s: float,
    check: FleetCheck,
) -> dict[str, GrowthFound]:
    """Per workload, the largest growth of its demand alone (the others' as they are) the fleet
    serves at the SLA, checked like the fleet itself (``solver.optimizer.headroom``)."""
    deadline = time.monotonic() + time_limit_s
    hints = check.demand_scale_hints(instance, time_limit_s * HINT_SHARE)
    jobs = [partial(workload_growth, instance, w.name, check, hints.get(w.name)) for w in instance.inference]
    found = run_side_by_side(jobs, deadline=deadline)
    return {w.name: f for w, f in zip(instance.inference, found, strict=True) if isinstance(f, GrowthFound)}
