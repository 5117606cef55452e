"""PlanFleet for a multi-year request (``solver.periods.is_staged``): the staged MIP
(``solver.optimizer.stages``) on the request's periods, each year's plan checked on its own
(``stage_eval.check_staged``), the schedule and the yearly cash flows.

The answer's fleet, deployments and cost lines are the final year's (its months only); the
schedule carries the plan over the whole horizon: what is added each year, its capex, the fleet
in service, and the TCO (NPV under ``objective: npv``). Baselines, sensitivity and headroom are
single-period analyses and are not computed for a staged plan (a warning says so).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from decimal import Decimal

from pricebook import catalog
from pricebook.schema import Currency, Money, Pricebook
from solver.analysis.cash_flows import CashFlows, yearly_flows
from solver.analysis.tco import VatLines, to_money
from solver.domain import CostObjective, PlanRequest
from solver.optimizer.api import discarded
from solver.optimizer.cancel import CancelToken
from solver.optimizer.candidates import build_instance, perf_capacity_checker
from solver.optimizer.instance import FleetInstance
from solver.optimizer.results import FleetSolution
from solver.optimizer.solution import empty_solution
from solver.optimizer.stage_eval import StagedCost, check_staged, price_staged, staged_solutions
from solver.optimizer.stage_instance import period_instance
from solver.optimizer.stages import PeriodWeights, StagedInstance, is_bought, solve_staged
from solver.periods import period_months
from solver.planner.assemble import Extras, assemble_result
from solver.planner.results import PlanResult
from solver.planner.schedule import StagedSchedule, schedule
from solver.pricing.costs import residual_value_credit
from solver.pricing.discounting import discount_factor, residual_weight
from solver.pricing.options import AcquisitionOption
from solver.pricing.trends import default_multiplier
from solver.resolve import ResolvedRequest

MONTHS_PER_YEAR = 12
TCO_TOLERANCE = 1e-6
"""Relative difference between the MIP's TCO and the independently priced plan that is a defect."""
NOT_COMPUTED = (
    "multi-year plan: baselines, sensitivity and headroom are not computed; the fleet, deployments "
    "and cost lines shown are the final year's, the whole horizon is in the schedule"
)


def _starts(months: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(sum(months[:p]) for p in range(len(months)))


def price_path(
    request: PlanRequest, book: Pricebook, o: AcquisitionOption, starts: tuple[int, ...]
) -> tuple[float, ...]:
    """μ_op: the request's path for the option's offer, else for its GPU class, else the book's
    default trend (``site.price_trends``: purchases fall, rentals flat; estimates)."""
    paths = request.constraints.price_by_year
    given = next((p for p in paths if p.offer == o.offer_id), None) or next(
        (p for p in paths if p.gpu == o.gpu), None
    )
    if given is not None:
        return given.multipliers
    return tuple(default_multiplier(book, o.mode, t) for t in starts)


def discount_weights(rate: float, months: tuple[int, ...]) -> PeriodWeights:
    """κ_p, ω_p, ω_H by ``solver.pricing.discounting``'s convention: a purchase at the start of
    plan year y at the end of year y − 1, a month's payment at the end of its plan year, the
    residual at the end of the last plan year."""
    starts = _starts(months)
    per_month = tuple(
        sum(discount_factor(rate, k // MONTHS_PER_YEAR + 1) for k in range(t, t + m)) / m
        for t, m in zip(starts, months, strict=True)
    )
    return PeriodWeights(
        at_start=tuple(discount_factor(rate, t // MONTHS_PER_YEAR) for t in starts),
        per_month=per_month,
        at_horizon=residual_weight(rate, sum(months)),
    )


def staged_instance(request: PlanRequest, book: Pricebook, bases: Sequence[FleetInstance]) -> StagedInstance:
    """The request's periods over ``bases`` (per period, the single-period instance of the stated
    demand: the same one for a plan, the fleet in service that year for EvaluateFleet)."""
    months = period_months(request)
    starts = _starts(months)
    horizon = sum(months)
    credit = residual_value_credit(request.constraints, book)
    later = request.constraints.available_from_year
    periods = []
    for p, m in enumerate(months):
        periods.append(
            period_instance(
                bases[p],
                months=m,
                demand_factor={w.name: w.demand_by_year[p] for w in request.inference if w.demand_by_year},
                rental_multiplier={o.id: price_path(request, book, o, starts)[p] for o in bases[p].options},
                unavailable_gpus={a.gpu for a in later if a.from_year > p + 1},
            )
        )
    bought = list({o.id: o for base in bases for o in base.options if is_bought(o)}.values())
    residual = {
        o.id: tuple(
            catalog.residual_curve(book.site, catalog.gpu(book, o.gpu)).value_at(horizon - t)
            if credit
            else 0.0
            for t in starts
        )
        for o in bought
    }
    rate = request.constraints.objective_discount_rate
    return StagedInstance(
        periods=tuple(periods),
        purchase_multiplier={o.id: price_path(request, book, o, starts) for o in bought},
        residual=residual,
        weights=discount_weights(rate, months) if rate > 0 else None,
    )


def _value(book: Pricebook, o: AcquisitionOption, age_months: int) -> float:
    """Market value of o's GPU class after ``age_months`` (the book's residual curve)."""
    return catalog.residual_curve(book.site, catalog.gpu(book, o.gpu)).value_at(age_months)


def staged_cash_flows(request: PlanRequest, sched: StagedSchedule, currency: Currency) -> CashFlows | None:
    """Per plan year (periods of 12 months only) from the schedule's rounded rows: year 0 the first
    purchases, year y its months' opex, the purchases of the next year's start and, in the last,
    less the market value — so they add up to ``sched.nominal_tco`` exactly."""
    rate = request.constraints.discount_rate_annual
    years = sched.years
    if rate is None or any(y.months != MONTHS_PER_YEAR for y in years[:-1]):
        return None
    nominal = [years[0].capex.amount]
    for i, y in enumerate(years, start=1):
        after = years[i].capex.amount if i < len(years) else -sched.residual.amount
        nominal.append(y.opex_monthly.amount * y.months + after)
    months = [y.months for y in years]
    return yearly_flows(nominal, months, rate, request.constraints.cost_objective, currency)


def staged_vat(sched: StagedSchedule, rate: float, currency: Currency) -> VatLines:
    """Supply / VAT / total of every payment of the horizon (``analysis.tco.VatLines``' rules) from
    the schedule's rounded rows: supply = the years' capex + monthly opex × months; VAT on the
    purchases = their sum × rate; the TCO with VAT adds the VAT line to the nominal TCO."""
    paid = [y.capex.amount + y.opex_monthly.amount * y.months for y in sched.years]
    supply = Money(amount=sum(paid, Decimal(0)), currency=currency)
    vat = to_money(float(supply.amount) * rate, currency)
    capex = sum((y.capex.amount for y in sched.years), Decimal(0))
    return VatLines(
        rate=rate,
        supply=supply,
        vat=vat,
        total=Money(amount=supply.amount + vat.amount, currency=currency),
        capex_vat=to_money(float(capex) * rate, currency),
        horizon_total_with_vat=Money(amount=sched.nominal_tco.amount + vat.amount, currency=currency),
    )


def plan_staged(
    resolved: ResolvedRequest, *, time_limit_s: float, cancel: CancelToken | None, started: float
) -> PlanResult:
    """The staged plan of ``resolved`` within ``time_limit_s`` (the module docstring)."""
    request, book = resolved.request, resolved.book
    base = build_instance(request, book)
    staged = staged_instance(request, book, (base,) * len(period_months(request)))
    opts = request.options
    left = max(0.1, min(opts.time_limit_s, time_limit_s - (time.monotonic() - started)))
    backend = "scip" if opts.backend == "auto" else opts.backend
    result = solve_staged(
        staged, time_limit_s=left, relative_gap=opts.relative_gap, backend=backend, cancel=cancel
    )
    solutions = staged_solutions(staged, result)
    last = staged.periods[-1]
    if not solutions:
        return assembled(resolved, last, empty_solution(last, result.stats), started)
    violations = check_staged(staged, solutions, perf_capacity_checker(request, book))
    if violations:
        return assembled(resolved, last, discarded(last, solutions[-1], violations), started)
    cost = price_staged(staged, solutions)
    warnings = [NOT_COMPUTED]
    if result.tco is not None and abs(result.tco - cost.tco) > TCO_TOLERANCE * max(1.0, abs(cost.tco)):
        warnings.append(
            f"internal: the staged MIP's TCO {result.tco:.2f} differs from its priced plan's {cost.tco:.2f}"
        )
    plan = staged_answer(resolved, staged, solutions, cost, started)
    return dataclasses.replace(plan, warnings=(*warnings, *plan.warnings))


def staged_answer(
    resolved: ResolvedRequest,
    staged: StagedInstance,
    solutions: tuple[FleetSolution, ...],
    cost: StagedCost,
    started: float,
) -> PlanResult:
    """The answer of a staged plan (or evaluated staged fleet): the final year's lines, and the
    schedule, summary, yearly cash flows and VAT of the whole horizon."""
    request, book = resolved.request, resolved.book
    plan = assembled(resolved, staged.periods[-1], solutions[-1], started)
    sched = schedule(staged, solutions, cost, request.constraints.objective_discount_rate, plan.currency)
    flows = staged_cash_flows(request, sched, plan.currency)
    if flows is not None and flows.objective is CostObjective.NPV:
        sched = dataclasses.replace(sched, horizon_tco=flows.npv)  # Σ the years rounded, as shown
    return dataclasses.replace(
        plan,
        schedule=sched,
        summary=staged_summary(sched, plan.currency),
        cash_flows=flows,
        vat=staged_vat(sched, book.site.vat_rate, plan.currency) if plan.vat is not None else None,
        depreciation=(),  # the final year's book depreciation would be wrong; tranches carry theirs
    )


def staged_summary(sched: StagedSchedule, currency: str) -> str:
    """One line: what is bought when, and the horizon TCO (NPV when discounted)."""
    bought = [
        f"year {y.year}: {', '.join(f'{i.gpu} ×{i.gpus}' for i in y.added)}" for y in sched.years if y.added
    ]
    what = "; ".join(bought) if bought else "nothing bought (rentals only)"
    kind = "NPV" if sched.discount_rate > 0 else "TCO"
    total = f"{sched.horizon_tco.amount:,} {currency}"
    return f"{len(sched.years)}-period plan — buy {what}. Horizon {kind} {total}."


def assembled(
    resolved: ResolvedRequest, instance: FleetInstance, solution: FleetSolution, started: float
) -> PlanResult:
    return assemble_result(
        resolved.request,
        resolved.book,
        instance,
        solution,
        extras=Extras(),
        overrides_applied=resolved.overrides_applied,
        started=started,
    )
