"""Explanations: why a request is infeasible, and what each workload's runner-up would cost.

- Infeasible: every workload no allowed GPU can serve, with the candidate reasons; otherwise,
  for each cap, the smallest value that makes the request feasible (a re-solve with that cap
  free that minimises the cap's usage), e.g. "power cap 40 kW is short by 12.6 kW".
- Feasible: per workload, the best plan that forbids the workload's chosen GPU type, and its
  extra cost. Small portfolios re-plan everything for each workload (``explain_runner_ups``);
  large ones re-plan that workload and the fleet while the other workloads keep their planned
  replicas (``explain_local_runner_ups``: a real alternative plan, so its extra cost is an upper
  bound on the fully re-planned one), largest workloads first, as far as the time allows.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from functools import partial

from solver.optimizer.cancel import CancelToken
from solver.optimizer.caps import Cap, CapKey, count_cap, counted_gpu
from solver.optimizer.concurrency import EXTRA_SOLVE_WORKERS, run_side_by_side
from solver.optimizer.driver import solve_mip
from solver.optimizer.gpu_costs import cheapest_cost_per_gpu, replica_cost, replicas_alone
from solver.optimizer.instance import CandidateRejection, FleetInstance
from solver.optimizer.model import MipResult, Relaxation, usable_candidates
from solver.optimizer.results import (
    Assignment,
    CapRelaxation,
    Diagnosis,
    FleetSolution,
    RunnerUp,
    SolveStatus,
    UnservableWorkload,
)
from solver.optimizer.solution import build_solution
from solver.optimizer.variants import describe_fleet, restrict_to_gpu


def unservable_workloads(instance: FleetInstance) -> tuple[UnservableWorkload, ...]:
    """Workloads with no usable deployment on any allowed GPU, with each rejection's reason."""
    usable = {c.workload for c in usable_candidates(instance)}
    out = []
    for w in instance.inference:
        if w.name in usable:
            continue
        reasons = [f"{r.label}: {r.reason}" for r in instance.rejections_of(w.name)]
        offered = {o.gpu for o in instance.options}
        for c in instance.candidates_of(w.name):
            cause = (
                "TP group exceeds every offered server's domain" if c.gpu in offered else "GPU not offered"
            )
            reasons.append(f"{c.label}: {cause}")
        out.append(
            UnservableWorkload(workload=w.name, reasons=tuple(reasons) or ("no allowed GPU is offered",))
        )
    for t in instance.training:
        offered = {o.gpu for o in instance.options}
        if not any(ch.gpu in offered for ch in t.choices):
            lines = tuple(f"{r.gpu}: {r.reason}" for r in t.rejections) or ("no allowed GPU can run it",)
            out.append(UnservableWorkload(workload=t.name, reasons=lines))
    return tuple(out)


def _caps_present(instance: FleetInstance) -> list[CapKey]:
    caps: list[CapKey] = list(instance.caps.present())
    caps += [count_cap(c.gpu) for c in instance.count_limits if c.max_count is not None]
    return caps


NEEDED_TOLERANCE = 0.05
"""A "needs X" figure is the least value of the lifted cap within 5 %; a wider one is a bound."""
SINGLE_TYPE_SHARE = 0.4
"""Share of one cap's time for the fleets of one GPU type (small MIPs that settle fast)."""
BINDING_SHARE = 0.995
"""Another cap binds at the fleet found when that fleet uses this share of it or more."""


def _describe(relaxation: CapRelaxation, currency: str, others: str) -> str:
    """E.g. "capex budget 300,000,000 KRW is short by 59,115,654 KRW (needs 359,115,654 KRW: …)"
    when proven within the tolerance, else the same figures as a bound with the proven range."""
    cap, limit, needed = relaxation.cap, relaxation.limit, relaxation.needed
    gpu = counted_gpu(cap)

    def amount(value: float) -> str:
        return f"{value:.0f} GPUs" if gpu is not None else Cap(cap).amount(value, currency)

    words = f"maximum {gpu} count {limit:.0f}" if gpu is not None else f"{Cap(cap).words} {amount(limit)}"
    fleet = f"; {relaxation.fleet}" if relaxation.fleet else ""
    low = relaxation.needed_at_least
    if low is not None and needed <= low * (1 + NEEDED_TOLERANCE):
        return f"{words} is short by {amount(needed - limit)} (needs {amount(needed)}{fleet}){others}"
    least = f"the least needed is between {amount(low or limit)} and {amount(needed)}"
    return (
        f"{words} is short by at most {amount(needed - limit)}: a fleet within {amount(needed)} meets "
        f"everything else{fleet} ({least}; not narrowed to {NEEDED_TOLERANCE:.0%} in the time){others}"
    )


def _other_binding(instance: FleetInstance, plan: FleetSolution, lifted: CapKey) -> str:
    """The caps besides ``lifted`` that the fleet found uses (almost) all of, in words."""
    usage = _usage(plan)
    tight = []
    for cap in _caps_present(instance):
        limit = _limit(instance, cap)
        if cap != lifted and limit > 0 and usage.get(cap, 0.0) >= limit * BINDING_SHARE:
            gpu = counted_gpu(cap)
            tight.append(f"maximum {gpu} count" if gpu is not None else Cap(cap).words)
    if not tight:
        return "; no other cap binds at that fleet"
    return f"; at that fleet the {' and '.join(tight)} also bind"


def diagnose_infeasible(
    instance: FleetInstance,
    solution: FleetSolution,
    *,
    time_limit_s: float,
    cancel: CancelToken | None = None,
    backend: str = "scip",
) -> FleetSolution:
    """Attach a ``Diagnosis`` to an infeasible solution."""
    unservable = unservable_workloads(instance)
    if unservable:
        names = tuple(f"{u.workload}: no allowed GPU can serve it" for u in unservable)
        return dataclasses.replace(solution, diagnosis=Diagnosis(unservable=unservable, messages=names))
    caps = _caps_present(instance)
    deadline = time.perf_counter() + time_limit_s
    relaxations: list[CapRelaxation] = []
    for cap in caps:
        left = deadline - time.perf_counter()
        if left <= 0.05:
            break
        found = _smallest_relaxation(instance, cap, left / max(1, len(caps)), cancel, backend)
        if found is not None:
            relaxations.append(found)
    messages: list[str] = [r.message for r in relaxations]
    if not relaxations:
        relaxations, messages = _joint_relaxations(
            instance, caps, deadline - time.perf_counter(), cancel, backend
        )
    return dataclasses.replace(
        solution, diagnosis=Diagnosis(binding_caps=tuple(relaxations), messages=tuple(messages))
    )


def _smallest_relaxation(
    instance: FleetInstance, cap: CapKey, time_limit_s: float, cancel: CancelToken | None, backend: str
) -> CapRelaxation | None:
    """``cap``'s smallest value that makes the request feasible, when it is above the cap; None
    when this cap alone is not it. Re-solves with this cap free that minimise its usage (fleets of
    one GPU type side by side, then every type together: the least found, and a proven bound),
    then narrowed by feasibility solves with the cap just below the least found (``_narrow``)."""
    deadline = time.perf_counter() + time_limit_s
    found, bound = _least_found(instance, cap, time_limit_s, cancel, backend)
    limit = _limit(instance, cap)
    if not found or min(f[0] for f in found) <= limit * (1 + 1e-9):
        return None
    needed, plan = min(found, key=lambda f: f[0])
    low = max(limit, bound if bound is not None else limit)
    needed, plan, low = _narrow(instance, cap, (needed, plan, low), deadline, cancel=cancel, backend=backend)
    relaxation = CapRelaxation(cap, limit, needed, "", needed_at_least=low, fleet=describe_fleet(plan))
    message = _describe(relaxation, instance.currency, _other_binding(instance, plan, cap))
    return dataclasses.replace(relaxation, message=message)


Found = tuple[float, FleetSolution]
"""A cap's usage in a plan meeting everything else, and the plan."""


def _least_found(
    instance: FleetInstance, cap: CapKey, time_limit_s: float, cancel: CancelToken | None, backend: str
) -> tuple[list[Found], float | None]:
    """Plans that minimise ``cap``'s usage with it free — one per GPU type (small MIPs that settle
    fast), then every type together to within the tolerance — and the joint solve's proven bound."""
    deadline = time.perf_counter() + time_limit_s
    relax = Relaxation(minimize=cap, drop_caps=frozenset({cap}))
    singles = [v for v in (restrict_to_gpu(instance, g)[0] for g in instance.gpu_types()) if v is not None]

    def least(variant: FleetInstance, gap: float, until: float) -> Found | None:
        left = max(0.05, until - time.perf_counter())
        mip = solve_mip(
            variant, time_limit_s=left, cancel=cancel, backend=backend, relax=relax, relative_gap=gap
        )
        if mip.values is None or mip.stats.objective is None:
            return None
        return mip.stats.objective, build_solution(variant, mip)

    jobs = [partial(least, single, 0.0) for single in singles] if len(singles) > 1 else []
    until = time.perf_counter() + time_limit_s * SINGLE_TYPE_SHARE
    found = [f for f in run_side_by_side(jobs, deadline=until) if isinstance(f, tuple)]
    left = max(0.05, deadline - time.perf_counter())
    mip = solve_mip(
        instance,
        time_limit_s=left,
        cancel=cancel,
        backend=backend,
        relax=relax,
        relative_gap=NEEDED_TOLERANCE / 2,
    )
    if mip.values is not None and mip.stats.objective is not None:
        found.append((mip.stats.objective, build_solution(instance, mip)))
    return found, mip.stats.best_bound


def _narrow(
    instance: FleetInstance,
    cap: CapKey,
    best: tuple[float, FleetSolution, float],
    deadline: float,
    *,
    cancel: CancelToken | None,
    backend: str,
) -> tuple[float, FleetSolution, float]:
    """(needed, its plan, proven least) narrowed until needed is within the tolerance of the least:
    each step solves the request with the cap just below needed ÷ (1 + tolerance) — proven
    infeasible raises the least there, a plan found lowers needed to its usage — while time lasts."""
    needed, plan, low = best
    while needed > low * (1 + NEEDED_TOLERANCE):
        left = deadline - time.perf_counter()
        if left < MIN_NARROW_SECONDS:
            break
        probe = needed / (1 + NEEDED_TOLERANCE)
        mip = solve_mip(
            _with_limit(instance, cap, probe),
            time_limit_s=left,
            cancel=cancel,
            backend=backend,
            relative_gap=1.0,
        )
        if mip.stats.status is SolveStatus.INFEASIBLE:
            low = probe
        elif mip.values is not None:
            plan = build_solution(instance, mip)
            needed = _usage(plan).get(cap, needed)
        else:
            break
    return needed, plan, low


MIN_NARROW_SECONDS = 0.2
"""No narrowing step is started with less time than this."""


def _with_limit(instance: FleetInstance, cap: CapKey, value: float) -> FleetInstance:
    """``instance`` with ``cap`` set to ``value`` (a count cap to the whole GPUs below it)."""
    gpu = counted_gpu(cap)
    if gpu is None:
        return dataclasses.replace(
            instance, caps=dataclasses.replace(instance.caps, **{Cap(cap).value: value})
        )
    limits = tuple(
        dataclasses.replace(c, max_count=math.floor(value)) if c.gpu == gpu and c.max_count is not None else c
        for c in instance.count_limits
    )
    return dataclasses.replace(instance, count_limits=limits)


def _joint_relaxations(
    instance: FleetInstance, caps: list[CapKey], time_limit_s: float, cancel: CancelToken | None, backend: str
) -> tuple[list[CapRelaxation], list[str]]:
    """No single cap's relaxation suffices: the caps the cheapest plan without any cap exceeds."""
    if time_limit_s <= 0.05 or not caps:
        return [], ["infeasible: no cap can be blamed (owned counts, minimum counts or training deadlines)"]
    free = solve_mip(
        instance,
        time_limit_s=time_limit_s,
        cancel=cancel,
        backend=backend,
        relax=Relaxation(drop_caps=frozenset(caps)),
    )
    if free.values is None:
        return [], ["infeasible even without any cap (training deadlines, owned or minimum counts)"]
    usage = _usage(build_solution(instance, free))
    relaxations = []
    for cap in caps:
        limit = _limit(instance, cap)
        used = usage.get(cap, 0.0)
        if used > limit:
            joint = CapRelaxation(cap, limit, used, "", needed_at_least=None)
            message = _describe(joint, instance.currency, "")
            relaxations.append(dataclasses.replace(joint, message=message))
    return relaxations, ["no single cap's relaxation suffices; caps bind jointly"] + [
        r.message for r in relaxations
    ]


def _limit(instance: FleetInstance, cap: CapKey) -> float:
    gpu = counted_gpu(cap)
    if gpu is not None:
        return float(
            next(c.max_count for c in instance.count_limits if c.gpu == gpu and c.max_count is not None)
        )
    return float(instance.caps.limit(Cap(cap)) or 0.0)


def _usage(plan: FleetSolution) -> dict[CapKey, float]:
    usage: dict[CapKey, float] = {cap: plan.usage.get(cap.usage_key, 0.0) for cap in Cap}
    for gpu, count in plan.gpu_counts().items():
        usage[count_cap(gpu)] = float(count)
    return usage


MAX_REJECTIONS_SHOWN = 12


def _informative_first(r: CandidateRejection) -> tuple[int, int, str]:
    # SLA misses first (they say what the hardware cannot do), then memory, then the rest, and
    # "TP exceeds the domain" last; the largest TP first.
    reason = r.reason
    tier = 3 if "exceeds the largest" in reason else 0 if "target" in reason else 1 if " GB" in reason else 2
    return (tier, -r.tp, r.gpu)


def rejection_reasons(
    rejections: Iterable[CandidateRejection], limit: int = MAX_REJECTIONS_SHOWN
) -> tuple[str, ...]:
    """The reasons deployments were turned away, in words: the most telling one of each GPU type
    first, then the rest (dominated ones are left out: they work, another on the same GPU is
    just as good)."""
    ordered = sorted((r for r in rejections if not r.dominated_by), key=_informative_first)
    head_of: dict[str, CandidateRejection] = {}
    for r in ordered:
        head_of.setdefault(r.gpu, r)
    heads = list(head_of.values())
    rest = [r for r in ordered if r not in heads]
    return tuple(f"{r.label}: {r.reason}" for r in (heads + rest)[:limit])


def _no_runner_up(instance: FleetInstance, workload: str, gpu: str) -> str:
    """Why nothing else works: other GPU types that could serve the workload lose to the caps
    (budget, power, racks, counts) or to the other workloads; the rest have rejection reasons."""
    servable = sorted({c.gpu for c in instance.candidates if c.workload == workload and c.gpu != gpu})
    reasons = sorted(
        (
            r
            for r in instance.rejections_of(workload)
            if r.gpu != gpu and r.gpu not in servable and not r.dominated_by
        ),
        key=_informative_first,
    )
    parts = []
    if servable:
        others = ", ".join(servable)
        parts.append(f"{others} could serve it, but not within the caps beside the other workloads")
    parts += [f"{r.label}: {r.reason}" for r in reasons[:3]]
    if parts:
        why = "; ".join(parts)
    elif {o.gpu for o in instance.options} - {gpu}:
        why = "the other allowed GPUs do not fit within the caps"
    else:
        why = "no other GPU type is allowed"
    return f"no feasible plan without {gpu}: {why}"


def _runner_up(instance: FleetInstance, mip: MipResult, workload: str, base: float) -> RunnerUp | None:
    """The workload's main deployment in a re-solved plan, and that plan's extra TCO."""
    alt = build_solution(instance, mip) if mip.values is not None else None
    alt_a = next((x for x in alt.assignments if x.workload == workload), None) if alt else None
    if alt is None or alt_a is None or not alt_a.uses or alt.cost is None:
        return None
    main = alt_a.primary
    return RunnerUp(
        gpu=main.candidate.gpu,
        tp=main.candidate.tp,
        precision=str(main.candidate.precision),
        replicas_at_peak=main.replicas[alt_a.peak_bucket],
        total_cost=alt.cost.total,
        cost_difference=alt.cost.total - base,
    )


def _cheaper_than_plan(runner_up: RunnerUp, solution: FleetSolution) -> str:
    """Says so when a runner-up costs less than the plan. A proven plan's runner-ups can only be
    cheaper within the solver's gap; a plan stopped by its time limit can be beaten, and the user
    should know that a cheaper plan exists."""
    if solution.status is SolveStatus.OPTIMAL or runner_up.cost_difference >= -CHEAPER_TOLERANCE * max(
        1.0, abs(runner_up.total_cost)
    ):
        return ""
    gap = solution.stats.gap
    where = "before any bound was proven" if gap is None else f"{gap:.2%} from its bound"
    return (
        f"this alternative costs {-runner_up.cost_difference:,.0f} {solution.currency} less than the plan, "
        f"which stopped at its time limit {where}; a longer time limit finds a plan at least this cheap"
    )


def _joined(*remarks: str) -> str:
    return "; ".join(r for r in remarks if r)


CHEAPER_TOLERANCE = 1e-6
"""Relative TCO difference below which a runner-up counts as costing the same as the plan."""
LOCAL_RUNNER_UP_LIMIT_S = 0.5
"""Most seconds one local runner-up re-solve may take. Measured on the 20-workload benchmark
portfolio: ~1 000 variables, 0.1–0.35 s to prove most optimal; a TP4-on-boards workload was not
proven in 5 s (its runner-up then says the search stopped)."""
LOCAL_RUNNER_UP_GAP = 1e-3
LOCAL_RUNNER_UP_THREADS = EXTRA_SOLVE_WORKERS


def _cheapest_alone(instance: FleetInstance, workload: str) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """``workload`` served by its single cheapest usable candidate (GPU cost per request/s, at
    the GPU's cheapest option around the clock), with the fewest replicas each bucket needs: a
    partial start the solver completes with a fleet."""
    per_gpu = cheapest_cost_per_gpu(instance)
    w = next((x for x in instance.inference if x.name == workload), None)
    usable = [c for c in usable_candidates(instance) if c.workload == workload and c.gpu in per_gpu]
    if w is None or not usable:
        return ()
    best = min(usable, key=lambda c: (replica_cost(c, per_gpu) / c.capacity_req_s, c.id))
    return ((best.id, tuple(replicas_alone(lam, best.capacity_req_s, w.redundancy) for lam in w.rate_req_s)),)


def explain_local_runner_ups(
    instance: FleetInstance,
    solution: FleetSolution,
    *,
    time_limit_s: float,
    cancel: CancelToken | None = None,
    backend: str = "scip",
) -> FleetSolution:
    """Per workload, largest GPU footprint first: the cheapest plan without its chosen GPU type
    when every other workload keeps its planned replicas (the fleet is re-planned)."""
    if solution.cost is None:
        return solution
    local = _LocalRunnerUp(
        instance,
        solution,
        base=solution.cost.total,
        deadline=time.perf_counter() + time_limit_s,
        cancel=cancel,
        backend=backend,
    )
    assignments = solution.assignments
    order = sorted(range(len(assignments)), key=lambda i: (-_footprint(assignments[i]), i))
    # Each re-solve spends most of its time in SCIP, which releases the GIL: two at a time.
    with ThreadPoolExecutor(
        max_workers=LOCAL_RUNNER_UP_THREADS, thread_name_prefix="fleetplan-runner-up"
    ) as pool:
        futures = {i: pool.submit(local.runner_up_of, assignments[i]) for i in order if assignments[i].uses}
        results = {i: future.result() for i, future in futures.items()}
    done = sum(1 for r in results.values() if r is not None)
    updated = []
    for i, a in enumerate(assignments):
        if not a.uses:
            updated.append(dataclasses.replace(a, runner_up_note="no demand"))
        elif (found := results.get(i)) is not None:
            updated.append(found)
        else:
            note = (
                f"not computed: the time limit allowed runner-ups for the {done} largest of "
                f"{len(assignments)} workloads"
            )
            updated.append(dataclasses.replace(a, runner_up_note=note))
    return dataclasses.replace(solution, assignments=tuple(updated))


def _footprint(a: Assignment) -> float:
    """GPUs the workload's replicas occupy in its busiest bucket."""
    return max(
        (
            sum(u.replicas[b] * n for u in a.uses for _, n in u.candidate.gpus_by_type())
            for b in range(len(a.demand_req_s))
        ),
        default=0.0,
    )


class _LocalRunnerUp:
    """One workload's local runner-up: its GPU type forbidden, the other workloads' replicas
    fixed as planned, the fleet re-planned around them."""

    def __init__(
        self,
        instance: FleetInstance,
        solution: FleetSolution,
        *,
        base: float,
        deadline: float,
        cancel: CancelToken | None,
        backend: str,
    ) -> None:
        self.instance = instance
        self.solution = solution
        self.base = base
        self.deadline = deadline
        self.cancel = cancel
        self.backend = backend
        self.planned = tuple(
            (a.workload, u.candidate.id, u.replicas)
            for a in solution.assignments
            for u in a.uses
            if any(u.replicas)
        )
        self.planned_ids = {cid for _, cid, _ in self.planned}

    def runner_up_of(self, a: Assignment) -> Assignment | None:
        """``a`` with its local runner-up (or a note why there is none); None = not computed."""
        left = self.deadline - time.perf_counter()
        if not a.uses or left <= 0.05 or (self.cancel is not None and self.cancel.expired):
            return None
        gpu = a.primary.candidate.gpu
        local = dataclasses.replace(
            self.instance,
            candidates=tuple(
                c
                for c in self.instance.candidates
                if (c.workload == a.workload and c.gpu != gpu)
                or (c.workload != a.workload and c.id in self.planned_ids)
            ),
        )
        fixed = tuple((cid, reps) for workload, cid, reps in self.planned if workload != a.workload)
        mip = solve_mip(
            local,
            time_limit_s=min(LOCAL_RUNNER_UP_LIMIT_S, left),
            cancel=self.cancel,
            backend=self.backend,
            relative_gap=LOCAL_RUNNER_UP_GAP,
            relax=Relaxation(fixed_replicas=fixed),
            replica_hint=fixed + _cheapest_alone(local, a.workload),
        )
        runner_up = _runner_up(local, mip, a.workload, self.base)
        if runner_up is None:
            if mip.stats.status is SolveStatus.NO_SOLUTION:
                note = f"no plan without {gpu} found within {LOCAL_RUNNER_UP_LIMIT_S:.1f} s (one may exist)"
            else:
                note = _no_runner_up(self.instance, a.workload, gpu) + " (other workloads kept as planned)"
            return dataclasses.replace(a, runner_up_note=note)
        remark = "other workloads kept as planned; a full re-plan can only be cheaper"
        if mip.stats.status is not SolveStatus.OPTIMAL:
            remark += f" (search stopped at {LOCAL_RUNNER_UP_LIMIT_S:.1f} s)"
        remark = _joined(remark, _cheaper_than_plan(runner_up, self.solution))
        return dataclasses.replace(a, runner_up=runner_up, runner_up_note=remark)


def explain_runner_ups(
    instance: FleetInstance,
    solution: FleetSolution,
    *,
    time_limit_s: float,
    cancel: CancelToken | None = None,
    backend: str = "scip",
) -> FleetSolution:
    """Per workload: the cheapest plan that may not use its chosen GPU type, and the extra cost
    (the re-plans run side by side, ``solver.optimizer.concurrency``)."""
    if solution.cost is None:
        return solution
    base = solution.cost.total

    def runner_up_of(a: Assignment, deadline: float) -> Assignment:
        left = deadline - time.monotonic()
        if not a.uses or left <= 0.05:
            return a if a.uses else dataclasses.replace(a, runner_up_note="no demand")
        gpu = a.primary.candidate.gpu
        mip = solve_mip(
            instance,
            time_limit_s=left,
            cancel=cancel,
            backend=backend,
            relax=Relaxation(forbid=frozenset({(a.workload, gpu)})),
        )
        runner_up = _runner_up(instance, mip, a.workload, base)
        if runner_up is None:
            if mip.stats.status is SolveStatus.NO_SOLUTION:
                # The time limit (or a deadline wrap-up) fired first: that proves nothing about feasibility.
                note = f"no plan without {gpu} found within its {left:.2f} s time limit (one may exist)"
            else:
                note = _no_runner_up(instance, a.workload, gpu)
            return dataclasses.replace(a, runner_up_note=note)
        note = _cheaper_than_plan(runner_up, solution)
        return dataclasses.replace(a, runner_up=runner_up, runner_up_note=note)

    outcomes = run_side_by_side(
        [partial(runner_up_of, a) for a in solution.assignments],
        deadline=time.monotonic() + time_limit_s,
    )
    updated: list[Assignment] = []
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome  # cancelled: the caller answers for the whole call
        updated.append(outcome)
    return dataclasses.replace(solution, assignments=tuple(updated))
