"""The headroom part of a plan (``solver.analysis.headroom``): every workload's demand together,
each workload alone, and the cheapest addition for the next step of growth, within a deadline.

The per-workload searches and the addition run side by side (``solver.optimizer.concurrency``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial

from pydantic import ValidationError

from pricebook.schema import Currency, Money
from solver.analysis.headroom import Headroom, WorkloadHeadroom, cheapest_addition, next_step
from solver.analysis.whatif import Solve, scale_demand
from solver.budget import DEFAULT_BUDGET as BUDGET
from solver.domain import AcquisitionMode, FleetItem
from solver.errors import SolveCancelled
from solver.optimizer.concurrency import run_side_by_side
from solver.optimizer.headroom import FleetCheck, GrowthFound, largest_served, pin_fleet, workload_growth
from solver.optimizer.instance import FleetInstance
from solver.optimizer.results import FleetSolution
from solver.planner.assemble import solution_tco


def plan_headroom(
    instance: FleetInstance,
    solution: FleetSolution,
    check: FleetCheck,
    solve: Solve,
    currency: Currency,
    *,
    deadline: float,
) -> Headroom | None:
    """The plan's headroom, or None for a plan without inference workloads."""
    if not instance.inference or not solution.has_plan:
        return None
    pinned = pin_fleet(instance, solution)
    hints = check.demand_scale_hints(pinned, max(0.1, (deadline - time.monotonic()) * BUDGET.headroom_hints))
    overall_hint = min(hints.values()) if len(hints) == len(instance.inference) else None
    overall_deadline = time.monotonic() + max(0.0, deadline - time.monotonic()) * BUDGET.headroom_overall
    overall = largest_served(
        partial(scale_demand, pinned), check, start=1.0, hint=overall_hint, deadline=overall_deadline
    )
    growth = overall.multiplier - 1.0
    step = next_step(growth)
    # One workload alone is every workload together (no training to scale beside it).
    alone = len(instance.inference) == 1 and not instance.training
    searched = () if alone else instance.inference
    jobs: list[Callable[[float], object]] = [
        partial(_addition, instance=instance, solution=solution, growth=step, solve=solve, currency=currency),
        *(
            partial(workload_growth, pinned, w.name, check, hints.get(w.name), start=overall.multiplier)
            for w in searched
        ),
    ]
    outcomes = run_side_by_side(jobs, deadline=deadline)
    for outcome in outcomes:
        if isinstance(outcome, BaseException) and not isinstance(outcome, SolveCancelled):
            raise outcome
    addition = outcomes[0]
    found = [
        WorkloadHeadroom(w.name, out.multiplier - 1.0, out.at_least)
        if isinstance(out, GrowthFound)
        else WorkloadHeadroom(w.name, growth, at_least=True)
        for w, out in zip(searched, outcomes[1:], strict=True)
    ]
    if alone:
        found = [WorkloadHeadroom(instance.inference[0].name, growth, overall.at_least)]
    items, extra, note = addition if isinstance(addition, tuple) else ((), None, _NOT_FOUND)
    return Headroom(
        demand_growth_served=growth,
        at_least=overall.at_least,
        workloads=tuple(found),
        next_step_growth=step,
        addition=addition_text(items),
        added=items,
        addition_extra_tco=extra,
        note=note,
    )


_NOT_FOUND = "no addition found in time"


def _addition(
    deadline: float,
    *,
    instance: FleetInstance,
    solution: FleetSolution,
    growth: float,
    solve: Solve,
    currency: Currency,
) -> tuple[tuple[FleetItem, ...], Money | None, str]:
    """(fleet lines to add, the extra horizon TCO, a note) for demand × (1 + ``growth``)."""
    found = cheapest_addition(instance, solution, growth, solve, max(0.1, deadline - time.monotonic()))
    if found is None:
        return (), None, _NOT_FOUND
    grown, bigger = found
    before = solution_tco(solution, instance, currency).total.horizon_total
    after = solution_tco(bigger, grown, currency).total.horizon_total
    extra = Money(amount=after.amount - before.amount, currency=currency)
    try:
        added = added_items(solution, bigger)
    except ValidationError:  # more GPUs than a fleet line holds: not an addition to list
        return (), None, "the addition is larger than a fleet line can hold"
    notes = [] if added else ["no GPU to add: the held fleet serves it with more on-demand or busy hours"]
    if extra.amount < 0:
        notes.append("that grown plan costs less than this one: this plan is not proven optimal")
    return added, extra, "; ".join(notes)


def added_items(before: FleetSolution, after: FleetSolution) -> tuple[FleetItem, ...]:
    """GPUs ``after`` holds beyond ``before`` per GPU type, mode, server model and offer (on-demand
    at their peak): fleet lines to add to ``before``'s fleet, naming their offer as its lines do."""

    def counts(solution: FleetSolution) -> dict[tuple[str, AcquisitionMode, str, str], int]:
        out: dict[tuple[str, AcquisitionMode, str, str], int] = {}
        for o in solution.options:
            if not o.owned:
                key = (o.gpu, o.mode, o.server_id or "", o.offer_id or "")
                out[key] = out.get(key, 0) + o.peak_gpus
        return out

    old, new = counts(before), counts(after)
    return tuple(
        FleetItem(
            gpu=gpu,
            mode=mode,
            count=n - old.get((gpu, mode, server, offer), 0),
            server=server or None,
            offer=offer or None,
        )
        for (gpu, mode, server, offer), n in sorted(new.items())
        if n > old.get((gpu, mode, server, offer), 0)
    )


def addition_text(items: tuple[FleetItem, ...]) -> str:
    """E.g. ``+1 × h100-nvl buy`` or ``+4 × rtx-pro-6000-server buy (pcie-rtx-pro-6000-server-8gpu)
    + 2 × l4 on_demand``; empty for no items."""
    parts = [f"{i.count} × {i.gpu} {i.mode.value}" + (f" ({i.server})" if i.server else "") for i in items]
    return "+" + " + ".join(parts) if parts else ""
