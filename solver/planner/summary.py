"""The words of a plan: its one-paragraph summary, its warnings, and the FX note."""

from __future__ import annotations

import structlog

from pricebook.schema import Money, Pricebook, PriceLabel
from solver.analysis.tco import FleetTco
from solver.analysis.whatif import describe_fleet
from solver.domain import PlanRequest
from solver.optimizer.instance import FleetInstance
from solver.optimizer.results import FleetSolution, SolveStatus
from solver.perf import resolve_model
from solver.planner.results import BaselineSaving

log = structlog.get_logger(__name__)

TCO_CHECK_TOLERANCE = 1e-6
"""Relative gap between the TCO breakdown and the MIP objective above which we warn (a bug)."""


def summary_text(solution: FleetSolution, tco: FleetTco | None, saving: BaselineSaving | None) -> str:
    """The fleet, its horizon TCO and capex/opex, and how it compares with the best baseline;
    without a plan, why there is none."""
    if not solution.has_plan or tco is None:
        messages = solution.diagnosis.messages if solution.diagnosis is not None else ()
        if not messages and solution.status is SolveStatus.NO_SOLUTION:
            messages = (
                f"The solver found no plan within its time limit ({solution.stats.time_limit_s:.3g} s) and "
                "proved none impossible; a longer time limit (or deadline) may find one.",
            )
        return f"No plan ({solution.status.value}). " + " ".join(messages)
    total = tco.total
    text = (
        f"{describe_fleet(solution)}: {_fmt(total.horizon_total)} over {tco.horizon_months} months "
        f"(capex {_fmt(total.capex)}, opex {_fmt(total.opex_monthly)}/month)."
    )
    if saving is None:
        return text
    return text + _saving_sentence(solution, saving)


def _saving_sentence(solution: FleetSolution, saving: BaselineSaving) -> str:
    best = saving.best_baseline_gpu
    npv = " in net present value" if saving.in_npv else ""
    if saving.saving.amount > 0:
        return (
            f" Saves {_fmt(saving.saving)} ({saving.saving_fraction:.1%}){npv} over the best single-GPU "
            f"fleet ({best})."
        )
    if saving.saving.amount < 0:  # only a plan stopped by its time limit can cost more
        cheaper = Money(amount=-saving.saving.amount, currency=saving.saving.currency)
        return f" The best single-GPU fleet ({best}) costs {_fmt(cheaper)} less{npv}."
    if set(solution.gpu_counts()) == {best}:
        return " It is also the best single-GPU fleet."
    return f" It costs the same as the best single-GPU fleet ({best})."


def _fmt(amount: Money) -> str:
    return f"{amount.amount:,} {amount.currency}"


def fx_note(book: Pricebook) -> str:
    """The pricebook's first FX rate in words, with its date and source."""
    for rate in book.site.fx_rates:
        return f"1 {rate.base} = {rate.rate:,.2f} {rate.quote} ({rate.as_of.isoformat()}, {rate.source})"
    return "no FX rate in the pricebook"


def gap_too_wide(solution: FleetSolution, max_gap: float) -> bool:
    """Whether a plan the time limit stopped is further than ``max_gap`` from the bound, or has no
    proven bound at all (an unknown gap)."""
    gap = solution.stats.gap
    return solution.status is SolveStatus.FEASIBLE and (gap is None or gap > max_gap)


def gap_too_wide_warning(solution: FleetSolution, max_gap: float) -> str:
    """The summary's first sentence for such a plan."""
    gap = solution.stats.gap
    stopped = (
        "before it proved any bound (the gap is unknown)"
        if gap is None
        else f"{gap:.1%} from the solver's bound (above the {max_gap:.0%} allowed by max_gap)"
    )
    return (
        f"Not a plan to buy: the time limit stopped the solver {stopped}, so a much cheaper fleet may "
        "exist; solve with a longer time limit (or deadline) before acting on it."
    )


def solve_warnings(solution: FleetSolution, tco: FleetTco, instance: FleetInstance) -> list[str]:
    """A TCO breakdown that disagrees with the MIP objective (a bug), and a plan not proven optimal
    (stopped by the time limit, or with hours clustered into buckets: why, and how far it may be)."""
    warnings: list[str] = []
    objective = solution.cost.total if solution.cost is not None else None
    if objective is not None and abs(tco.total_float - objective) > TCO_CHECK_TOLERANCE * max(1.0, objective):
        log.error("tco_mismatch", breakdown=tco.total_float, objective=objective)
        warnings.append(
            f"internal: TCO breakdown {tco.total_float:.2f} differs from the solver's {objective:.2f}"
        )
    gap = solution.stats.gap
    if solution.status is SolveStatus.FEASIBLE and gap is None:
        warnings.append(
            "time limit reached before any bound was proven: how far the plan is from optimal is unknown"
        )
    elif solution.status is SolveStatus.FEASIBLE and gap is not None:
        if instance.hours_clustered:
            warnings.append(
                f"hours with different demand were grouped into {len(instance.buckets)} buckets, each "
                f"served at its busiest hour, to keep this portfolio solvable: the plan covers every "
                f"hour and is within {gap:.2%} of a bound of the request"
            )
        else:
            warnings.append(f"time limit reached: the plan is within {gap:.2%} of optimal")
    return warnings


def price_warnings(book: Pricebook, instance: FleetInstance, solution: FleetSolution) -> list[str]:
    """Chosen offers whose price is an estimate or derived, not a quote."""
    offers = {o.id: o for o in book.offers}
    warnings: list[str] = []
    for chosen in solution.options:
        offer = offers.get(instance.option(chosen.option_id).offer_id)
        if offer is not None and offer.label in (PriceLabel.ESTIMATE, PriceLabel.DERIVED):
            warnings.append(
                f"price of {offer.id} ({offer.gpu}) is {offer.label.value}, not a quote: "
                f"{offer.source} ({offer.as_of})"
            )
    return warnings


def owned_warnings(instance: FleetInstance, solution: FleetSolution) -> list[str]:
    """Owned GPUs the plan leaves unused (they are sunk; running them would cost more than it saves)."""
    if not solution.has_plan:
        return []
    warnings = []
    for gpu, owned in sorted(instance.owned_counts.items()):
        used = sum(c.gpus for c in solution.options if c.gpu == gpu and c.owned)
        if used < owned:
            warnings.append(
                f"{owned - used} of the {owned} owned {gpu} GPUs are left unused: "
                "running them would cost more (power, hosts, support) than the plan saves with them"
            )
    return warnings


def model_warnings(request: PlanRequest, book: Pricebook) -> list[str]:
    """Workloads whose model architecture was assumed from its size (a wider uncertainty band)."""
    warnings: list[str] = []
    refs = [(w.name, w.model) for w in request.inference] + [(t.name, t.model) for t in request.training]
    for name, ref in refs:
        try:
            arch = resolve_model(ref, book)
        except (LookupError, ValueError):  # an unknown model was already reported by the instance
            continue
        if arch.assumed:
            warnings.append(
                f"{name}: architecture assumed from its size ({arch.params_b:g}B parameters); "
                "the uncertainty band is wider"
            )
    return warnings
