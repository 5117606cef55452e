"""PlanFleet for a multi-year request (``solver.periods.is_staged``): the staged MIP
(``solver.optimizer.stages``) on the request's periods, each year's plan checked on its own
(``stage_eval.check_staged``), the schedule and the yearly cash flows.

The answer's fleet, deployments and cost lines are the final year's (its months only); the
schedule carries the plan over the whole horizon: what is added each year, its capex, the fleet
in service, and the TCO (NPV under ``objective: npv``). Baselines, sensitivity and headroom are
single-period analyses; a staged plan's baselines are staged plans of one GPU type each
(``staged_baselines``), its headroom that of the final year's fleet, and its sensitivity the price
rows re-solved on the staged model (``staged_sensitivity``).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import partial

from pricebook import catalog
from pricebook.schema import Currency, Money, Pricebook
from solver.analysis.cash_flows import CashFlows, yearly_flows
from solver.analysis.headroom import Headroom
from solver.analysis.tco import VatLines, to_money
from solver.budget import DEFAULT_BUDGET as BUDGET
from solver.domain import CostObjective, PlanRequest
from solver.optimizer.api import discarded
from solver.optimizer.cancel import CancelToken
from solver.optimizer.candidates import build_instance, perf_capacity_checker
from solver.optimizer.instance import FleetInstance
from solver.optimizer.results import FleetSolution
from solver.optimizer.solution import empty_solution
from solver.optimizer.stage_eval import StagedCost, check_staged, price_staged, staged_solutions
from solver.optimizer.stage_instance import period_instance
from solver.optimizer.stages import PeriodWeights, StagedInstance, StagedResult, is_bought, solve_staged
from solver.optimizer.variants import describe_fleet
from solver.periods import period_months
from solver.planner.assemble import Extras, assemble_result, plan_fleet_lines, solution_tco
from solver.planner.baselines import saving_over, solve_baselines
from solver.planner.results import Baseline, BaselineSaving, PlanResult
from solver.planner.schedule import StagedSchedule, schedule
from solver.planner.sensitivity import CUT_SHORT_WARNING, cut_short
from solver.planner.staged_sensitivity import horizon_fleet, staged_sensitivity
from solver.pricing.costs import residual_value_credit
from solver.pricing.discounting import discount_factor, plan_years, residual_weight
from solver.pricing.options import AcquisitionOption
from solver.pricing.trends import default_multiplier
from solver.resolve import ResolvedRequest

MONTHS_PER_YEAR = 12
TCO_TOLERANCE = 1e-6
"""Relative difference between the MIP's TCO and the independently priced plan that is a defect."""
WHAT_IS_SHOWN = (
    "multi-year plan: the fleet, deployments and cost lines shown are the final year's (baselines: "
    "each type's staged plan, its final year's fleet; headroom: the final year's fleet, an addition "
    "priced over that year's months; sensitivity: a GPU type's price moved in every year, the mix "
    "held in any year), the whole horizon is in the schedule"
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
        year_end=tuple(discount_factor(rate, y) for y in range(1, plan_years(sum(months)) + 1)),
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
    factors = {w.name: w.demand_factors() for w in request.inference if w.demand_factors()}
    for p, m in enumerate(months):
        periods.append(
            period_instance(
                bases[p],
                months=m,
                demand_factor={name: f[p] for name, f in factors.items()},
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
        # a lease is paid as offered whichever year it is taken (its offer has no price path)
        purchase_multiplier={o.id: price_path(request, book, o, starts) for o in bought if not o.leased},
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


@dataclass(frozen=True, slots=True)
class StagedPlan:
    """One staged solve of a request over a base instance: the plan per period, checked and priced."""

    staged: StagedInstance
    result: StagedResult
    solution: FleetSolution
    """The final period's plan (an empty or discarded solution without a verified plan)."""
    solutions: tuple[FleetSolution, ...] = ()
    """Every period's plan, verified (empty without one)."""
    cost: StagedCost | None = None


def solve_checked(
    resolved: ResolvedRequest, base: FleetInstance, time_limit_s: float, cancel: CancelToken | None
) -> StagedPlan:
    """The staged MIP on ``base``'s periods, each year's plan checked on its own and priced."""
    request, book = resolved.request, resolved.book
    staged = staged_instance(request, book, (base,) * len(period_months(request)))
    opts = request.options
    backend = "scip" if opts.backend == "auto" else opts.backend
    result = solve_staged(
        staged, time_limit_s=time_limit_s, relative_gap=opts.relative_gap, backend=backend, cancel=cancel
    )
    solutions = staged_solutions(staged, result)
    last = staged.periods[-1]
    if not solutions:
        return StagedPlan(staged, result, empty_solution(last, result.stats))
    violations = check_staged(staged, solutions, perf_capacity_checker(request, book))
    if violations:
        return StagedPlan(staged, result, discarded(last, solutions[-1], violations))
    return StagedPlan(staged, result, solutions[-1], solutions, price_staged(staged, solutions))


FinalYearHeadroom = Callable[[FleetInstance, FleetSolution, float, list[str]], Headroom | None]
"""The headroom of a period's plan (instance, solution, deadline, warnings to add to): the
single-period planner's, passed in by ``solver.planner.plan``."""


def plan_staged(
    resolved: ResolvedRequest,
    *,
    time_limit_s: float,
    cancel: CancelToken | None,
    started: float,
    headroom: FinalYearHeadroom | None = None,
    with_extras: bool = True,
) -> PlanResult:
    """The staged plan of ``resolved`` within ``time_limit_s`` (the module docstring), its
    baselines when the request asks for them (``staged_baselines``) and, with sensitivity asked,
    the headroom of the final year's fleet (``headroom``) and the price rows
    (``staged_sensitivity``); ``with_extras=False`` (sweep points) computes none of them."""
    request = resolved.request
    base = build_instance(request, resolved.book)
    opts = request.options
    left = max(0.1, time_limit_s - (time.monotonic() - started))
    limit = max(0.1, min(opts.time_limit_s, left * (_main_share(request) if with_extras else 1.0)))
    main = solve_checked(resolved, base, limit, cancel)
    if main.cost is None:
        return assembled(resolved, main.staged.periods[-1], main.solution, started)
    warnings = [WHAT_IS_SHOWN]
    tco = main.result.tco
    if tco is not None and abs(tco - main.cost.tco) > TCO_TOLERANCE * max(1.0, abs(main.cost.tco)):
        warnings.append(
            f"internal: the staged MIP's TCO {tco:.2f} differs from its priced plan's {main.cost.tco:.2f}"
        )
    plan = staged_answer(resolved, main.staged, main.solutions, main.cost, started)
    deadline = BUDGET.extras_deadline(started, time_limit_s)
    if opts.compute_baselines and with_extras:
        until = BUDGET.baselines_deadline(deadline, with_sensitivity=opts.compute_sensitivity)
        baselines, saving, notes = staged_baselines(resolved, base, plan, deadline=until, cancel=cancel)
        plan = dataclasses.replace(plan, baselines=baselines, baseline_saving=saving)
        warnings += notes
    if opts.compute_sensitivity and headroom is not None:
        until = BUDGET.headroom_deadline(deadline)
        found = headroom(main.staged.periods[-1], main.solution, until, warnings)
        plan = dataclasses.replace(plan, headroom=found)
    if opts.compute_sensitivity and with_extras:
        probe = partial(_horizon_plan, resolved, cancel)
        rows = staged_sensitivity(base, main.solutions, plan.baselines, probe, deadline=deadline)
        if cut_short(rows):
            warnings.append(CUT_SHORT_WARNING)
        plan = dataclasses.replace(plan, sensitivity=rows)
    return dataclasses.replace(plan, warnings=(*warnings, *plan.warnings))


def _horizon_plan(
    resolved: ResolvedRequest, cancel: CancelToken | None, base: FleetInstance, time_limit_s: float
) -> FleetSolution:
    """The staged plan on ``base`` as one solution over the horizon (a sensitivity probe)."""
    found = solve_checked(resolved, base, time_limit_s, cancel)
    return horizon_fleet(found.solutions) if found.solutions else found.solution


def staged_baselines(
    resolved: ResolvedRequest,
    base: FleetInstance,
    plan: PlanResult,
    *,
    deadline: float,
    cancel: CancelToken | None,
) -> tuple[tuple[Baseline, ...], BaselineSaving | None, list[str]]:
    """For each allowed GPU type, the best staged plan of that type alone (what is owned kept, as
    the single-period baselines), by the same staged MIP, check and pricing as the plan; each
    baseline's TCO, extra cost and the saving are on the plan's measure (the schedule's horizon
    TCO: its NPV under objective npv). Baseline fleets are their final year's."""
    currency = plan.currency
    priced: dict[int, StagedPlan] = {}

    def solve(single: FleetInstance, limit: float) -> FleetSolution:
        found = solve_checked(resolved, single, limit, cancel)
        priced[id(single)] = found
        return found.solution

    warnings: list[str] = []
    runs = solve_baselines(base, resolved.allowed_gpus, solve, deadline, warnings)
    assert plan.schedule is not None
    plan_total = plan.schedule.horizon_tco
    result: list[Baseline] = []
    for run in runs:
        found = priced.get(id(run.instance)) if run.instance is not None else None
        if found is None or found.cost is None:
            result.append(Baseline(run.gpu, False, (), None, None, run.reason or "no plan", ""))
            continue
        last = found.staged.periods[-1]
        shown, _ = shown_schedule(resolved.request, found.staged, found.solutions, found.cost, currency)
        total = shown.horizon_tco
        lines = plan_fleet_lines(found.solution, last, solution_tco(found.solution, last, currency), currency)
        result.append(
            Baseline(
                gpu=run.gpu,
                feasible=True,
                fleet=lines,
                horizon_tco=total,
                extra_cost=Money(amount=total.amount - plan_total.amount, currency=currency),
                reason=run.reason,
                fleet_summary=describe_fleet(found.solution),
                capex=to_money(sum(t.capex for t in found.cost.tranches), currency),
            )
        )
    cheaper = [b.gpu for b in result if b.extra_cost is not None and b.extra_cost.amount < 0]
    if cheaper:
        warnings.append(
            f"the staged plan of {', '.join(cheaper)} alone is cheaper than this plan, which was not "
            "proven optimal in the time limit (see the gap)"
        )
    return (*result,), saving_over(result, plan_total, resolved.request), warnings


def _main_share(request: PlanRequest) -> float:
    """The staged solve's share of the call's time: all of it, or with baselines or headroom the
    main solve's share of ``solver.budget`` (they end by its extras' end)."""
    opts = request.options
    return BUDGET.main_solve if opts.compute_baselines or opts.compute_sensitivity else 1.0


def shown_schedule(
    request: PlanRequest,
    staged: StagedInstance,
    solutions: Sequence[FleetSolution],
    cost: StagedCost,
    currency: Currency,
) -> tuple[StagedSchedule, CashFlows | None]:
    """The schedule and yearly cash flows as the answer shows them: under objective npv the
    schedule's horizon TCO is the NPV of the years' rounded rows (the one rounding rule), so a plan
    and its baselines are compared on the same figures."""
    sched = schedule(staged, tuple(solutions), cost, request.constraints.objective_discount_rate, currency)
    flows = staged_cash_flows(request, sched, currency)
    whole_years = all(y.months == MONTHS_PER_YEAR for y in sched.years)
    if flows is not None and flows.objective is CostObjective.NPV and whole_years:
        sched = dataclasses.replace(sched, horizon_tco=flows.npv)  # else the MIP's monthly discounting
    return sched, flows


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
    sched, flows = shown_schedule(request, staged, solutions, cost, plan.currency)
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
