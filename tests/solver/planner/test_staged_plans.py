"""Multi-year plans through the planner (issue 32): a plan of one period with flat prices is
today's plan; a growing demand is bought in stages, each year checked on its own, and the schedule
adds up."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from planner_factories import h200_l40s_request

from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients.scenario import load_scenario
from pricebook.schema import Pricebook
from service.convert.plan import plan_to_proto
from service.convert.scenario import scenario_request
from solver.domain import AcquisitionMode, Fleet, FleetItem, GpuAvailability, PlanRequest, PricePath
from solver.errors import InvalidRequest
from solver.planner import PlanResult, evaluate, plan
from solver.planner.plan import plan_request
from solver.planner.schedule import StagedSchedule, TrancheLine
from solver.planner.staged_evaluate import fleet_of_schedule, is_staged_fleet
from solver.resolve import resolve


def _request(**constraints: object) -> PlanRequest:
    return h200_l40s_request(constraints)


def _grown(req: PlanRequest, growth: tuple[float, ...]) -> PlanRequest:
    inference = tuple(w.model_copy(update={"demand_by_year": growth}) for w in req.inference)
    return req.model_copy(update={"inference": inference})


def _plan(book: Pricebook, req: PlanRequest) -> PlanResult:
    return plan(resolve(req, book), time_limit_s=30)


def test_one_period_with_flat_prices_is_todays_plan(book: Pricebook) -> None:
    today = _plan(book, _request())
    staged = _plan(
        book,
        _request(
            period_months=36,
            price_by_year=(
                PricePath(gpu="h200-sxm", multipliers=(1.0,)),
                PricePath(gpu="l40s", multipliers=(1.0,)),
            ),
        ),
    )
    assert staged.schedule is not None and today.tco is not None
    assert staged.schedule.horizon_tco.amount == pytest.approx(today.tco.total.horizon_total.amount, abs=1)
    assert [(f.gpu, f.gpus) for f in staged.fleet] == [(f.gpu, f.gpus) for f in today.fleet]


def test_growing_demand_is_bought_in_stages(book: Pricebook) -> None:
    flat = (PricePath(gpu="h200-sxm", multipliers=(1.0,) * 3), PricePath(gpu="l40s", multipliers=(1.0,) * 3))
    result = _plan(book, _grown(_request(price_by_year=flat), (1.0, 2.0, 3.0)))
    tripled = _request()
    tripled = tripled.model_copy(
        update={
            "inference": tuple(
                w.model_copy(update={"daily_tokens": 3 * (w.daily_tokens or 0)}) for w in tripled.inference
            )
        }
    )
    at_once = _plan(book, tripled)
    sched = result.schedule
    assert sched is not None
    assert [y.year for y in sched.years] == [1, 2, 3]
    # every year's capex is its tranches' capex, the first year's includes nothing else here
    for y in sched.years:
        assert y.capex.amount == sum((i.capex.amount for i in y.added if i.capex is not None), 0)
    # the year-3 fleet in service is at least year 1's bought hardware
    bought = [sum(i.gpus for i in y.fleet if i.mode is AcquisitionMode.BUY) for y in sched.years]
    assert bought == sorted(bought)
    assert sched.nominal_tco.amount == sched.horizon_tco.amount  # no discounting asked
    assert not [w for w in result.warnings if w.startswith("internal")]
    # buying the year-3 fleet in year 1 (today's plan for the tripled demand) is one staged plan
    assert at_once.tco is not None
    assert sched.horizon_tco.amount <= at_once.tco.total.horizon_total.amount + 1


def test_evaluating_the_planners_staged_fleet_is_feasible_at_its_cost(book: Pricebook) -> None:
    req = _grown(_request(discount_rate_annual=0.1), (1.0, 2.0, 3.0))
    resolved = resolve(req, book)
    planned = plan(resolved, time_limit_s=30)
    assert planned.schedule is not None
    fleet = fleet_of_schedule(planned.schedule)
    assert is_staged_fleet(fleet)
    evaluated = evaluate(fleet, resolved, time_limit_s=30)
    assert evaluated.feasible, evaluated.messages
    assert evaluated.fleet_horizon_tco == planned.schedule.horizon_tco
    assert evaluated.plan.schedule is not None

    # the same purchases, costs and fleet every year (deployments may differ at the same cost)
    def bought(s: StagedSchedule) -> list[object]:
        return [(y.added, y.capex, y.opex_monthly, y.fleet) for y in s.years]

    assert bought(evaluated.plan.schedule) == bought(planned.schedule)


def test_a_staged_fleet_short_in_a_later_year_is_named_by_year(book: Pricebook) -> None:
    req = _grown(_request(), (1.0, 2.0, 3.0))
    resolved = resolve(req, book)
    planned = plan(resolved, time_limit_s=30)
    assert planned.schedule is not None
    year_one = [i for i in fleet_of_schedule(planned.schedule).items if i.from_year == 1]
    kept = Fleet(items=tuple(i.model_copy(update={"until_year": None}) for i in year_one))
    evaluated = evaluate(kept, resolved, time_limit_s=30)
    assert not evaluated.feasible
    assert any(m.startswith("year 3") for m in evaluated.messages), evaluated.messages


def test_the_schedule_reaches_the_proto(book: Pricebook) -> None:
    result = _plan(book, _grown(_request(), (1.0, 2.0, 3.0)))
    assert result.schedule is not None
    proto = plan_to_proto(result).schedule
    assert [y.year for y in proto.years] == [1, 2, 3]
    assert [Decimal(y.capex.amount) for y in proto.years] == [y.capex.amount for y in result.schedule.years]
    assert [t.gpus for t in proto.tranches] == [t.gpus for t in result.schedule.tranches]
    assert Decimal(proto.horizon_tco.amount) == result.schedule.horizon_tco.amount


def test_a_gpu_available_from_year_two_is_not_in_year_one(book: Pricebook) -> None:
    later = (GpuAvailability(gpu="h200-sxm", from_year=2),)
    result = _plan(book, _grown(_request(available_from_year=later), (1.0, 1.0, 1.0)))
    sched = result.schedule
    assert sched is not None
    assert sched.years[0].fleet and all(i.gpu != "h200-sxm" for i in sched.years[0].fleet)
    assert any(i.gpu == "h200-sxm" for y in sched.years[1:] for i in y.fleet)


def test_an_offers_path_wins_over_its_gpus(book: Pricebook) -> None:
    """Nothing to serve in year 1, H200 bought in year 2: at the offer's ×0.5 (its GPU's path says
    ×2) the tranche's hardware is half what it is at ×1."""

    def tranche(offer_path: tuple[float, ...]) -> TrancheLine:
        paths = (
            PricePath(gpu="h200-sxm", multipliers=(1.0, 2.0, 2.0)),
            PricePath(offer=offer, multipliers=offer_path),
            PricePath(gpu="l40s", multipliers=(1.0, 1.0, 1.0)),
        )
        result = _plan(book, _grown(_request(price_by_year=paths), (0.0, 1.0, 1.0)))
        assert result.schedule is not None
        return next(t for t in result.schedule.tranches if t.offer_id == offer)

    today = _plan(book, _request())
    offer = next(f.offer_id for f in today.fleet if f.mode is AcquisitionMode.BUY and f.gpu == "h200-sxm")
    at_one, at_half = tranche((1.0, 1.0, 1.0)), tranche((4.0, 0.5, 0.5))
    assert at_one.year == at_half.year == 2 and at_one.gpus == at_half.gpus
    assert at_half.hardware.amount == pytest.approx(at_one.hardware.amount / 2, abs=Decimal("0.01"))


def test_the_vat_line_covers_every_payment_of_the_horizon(book: Pricebook) -> None:
    result = _plan(book, _grown(_request(include_vat=True), (1.0, 2.0, 3.0)))
    sched, vat = result.schedule, result.vat
    assert sched is not None and vat is not None
    supply = sum(y.capex.amount + y.opex_monthly.amount * y.months for y in sched.years)
    assert vat.supply.amount == supply
    assert vat.vat.amount == (vat.supply.amount * Decimal("0.1")).quantize(Decimal("0.01"))
    assert result.depreciation == ()


def test_a_fleet_line_after_the_last_year_is_refused(book: Pricebook) -> None:
    resolved = resolve(_grown(_request(), (1.0, 2.0, 3.0)), book)
    fleet = Fleet(items=(FleetItem(gpu="h200-sxm", mode=AcquisitionMode.BUY, count=8, from_year=4),))
    with pytest.raises(InvalidRequest) as caught:
        evaluate(fleet, resolved, time_limit_s=10)
    assert [v.field for v in caught.value.violations] == ["fleet.items[0].from_year"]


def test_a_staged_fleet_over_the_opex_cap_in_one_year_is_refused(book: Pricebook) -> None:
    req = _grown(_request(), (1.0, 2.0, 3.0))
    planned = plan(resolve(req, book), time_limit_s=30)
    assert planned.schedule is not None
    dearest = max((y.opex_monthly for y in planned.schedule.years), key=lambda m: m.amount)
    capped = req.model_copy(
        update={
            "constraints": req.constraints.model_copy(
                update={"monthly_opex_cap": dearest.model_copy(update={"amount": dearest.amount - 1})}
            )
        }
    )
    evaluated = evaluate(fleet_of_schedule(planned.schedule), resolve(capped, book), time_limit_s=30)
    assert not evaluated.feasible
    assert any("opex cap" in m for m in evaluated.messages), evaluated.messages


GOLDEN_EXAMPLES = (
    "100b_tp_serving",
    "14b_finetune",
    "500m_krw_portfolio",
    "60m_krw_single_gpu",
    "rtx5090_cluster",
)
EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


@pytest.mark.slow
@pytest.mark.parametrize("name", GOLDEN_EXAMPLES)
def test_every_golden_example_as_one_flat_period_is_its_plan(book: Pricebook, name: str) -> None:
    """Each golden example asked as a multi-year plan of one period with flat prices: the staged
    model buys the same fleet at the same TCO (to the rounding of the answer's lines: the golden's
    TCO adds rounded lines, the schedule rounds the total once)."""
    resolved = scenario_request(load_scenario(EXAMPLES / f"{name}.yaml", api.PlanFleetRequest), book)
    req = resolved.request
    today = plan(resolved, time_limit_s=60)
    flat = tuple(PricePath(gpu=g, multipliers=(1.0,)) for g in sorted({o.gpu for o in book.offers}))
    constraints = req.constraints.model_copy(
        update={"period_months": req.constraints.horizon_months, "price_by_year": flat}
    )
    staged = plan(resolved.with_request(req.model_copy(update={"constraints": constraints})), time_limit_s=60)
    assert today.tco is not None and staged.schedule is not None
    assert [(f.option_id, f.gpus, f.servers) for f in staged.fleet] == [
        (f.option_id, f.gpus, f.servers) for f in today.fleet
    ]
    # the golden rounds each line's monthly amount once (half a minor unit, × the months): the most
    # the two can differ is half a minor unit per line, fleet-wide line and month, and the total's
    total = today.tco.total.horizon_total.amount
    minor = Decimal("1") if today.currency == "KRW" else Decimal("0.01")
    bound = minor / 2 * ((len(today.fleet) + 2) * req.constraints.horizon_months + 1)
    assert abs(staged.schedule.horizon_tco.amount - total) <= bound
    assert not [w for w in staged.warnings if w.startswith("internal")]


def test_absolute_daily_tokens_plan_as_their_multipliers(book: Pricebook) -> None:
    flat = (PricePath(gpu="h200-sxm", multipliers=(1.0,) * 3), PricePath(gpu="l40s", multipliers=(1.0,) * 3))
    req = _request(price_by_year=flat)
    growth = (1.0, 1.5, 2.25)
    absolute = tuple(
        w.model_copy(update={"daily_tokens_by_year": tuple(round(f * (w.daily_tokens or 0)) for f in growth)})
        for w in req.inference
    )
    by_tokens = _plan(book, req.model_copy(update={"inference": absolute}))
    by_multipliers = _plan(book, _grown(req, growth))
    assert by_tokens.schedule is not None and by_multipliers.schedule is not None
    assert by_tokens.schedule.horizon_tco == by_multipliers.schedule.horizon_tco
    assert [[(i.gpu, i.gpus) for i in y.added] for y in by_tokens.schedule.years] == [
        [(i.gpu, i.gpus) for i in y.added] for y in by_multipliers.schedule.years
    ]


def test_baselines_of_a_staged_plan_are_the_staged_plans_of_one_type(book: Pricebook) -> None:
    # each baseline is derived again as the staged plan of a request allowing only its GPU type
    req = _grown(_request(), (1.0, 2.0, 3.0))
    opts = req.options.model_copy(update={"compute_baselines": True, "time_limit_s": 60})
    result = plan(resolve(req.model_copy(update={"options": opts}), book), time_limit_s=60)
    assert result.schedule is not None
    assert [b.gpu for b in result.baselines] == ["h200-sxm", "l40s"]
    for b in result.baselines:
        alone = req.model_copy(
            update={"constraints": req.constraints.model_copy(update={"allowed_gpus": (b.gpu,)})}
        )
        expected = _plan(book, alone)
        if expected.schedule is None:
            assert not b.feasible
            continue
        assert b.feasible and b.horizon_tco == expected.schedule.horizon_tco
        assert b.extra_cost is not None and b.extra_cost.amount >= 0  # the plan may use both types
        assert b.extra_cost.amount == b.horizon_tco.amount - result.schedule.horizon_tco.amount
    extra = {b.gpu: b.extra_cost for b in result.baselines if b.extra_cost is not None}
    cheapest = min(extra, key=lambda g: extra[g].amount)
    assert result.baseline_saving is not None
    assert result.baseline_saving.best_baseline_gpu == cheapest
    assert result.baseline_saving.saving == extra[cheapest]


def test_headroom_of_a_staged_plan_is_its_final_years_fleets(book: Pricebook) -> None:
    # checked by EvaluateFleet alone: the final year's fleet serves the final year's demand
    # × (1 + growth) as a one-period request, and not one point more
    flat = (PricePath(gpu="h200-sxm", multipliers=(1.0,) * 3), PricePath(gpu="l40s", multipliers=(1.0,) * 3))
    req = _grown(_request(price_by_year=flat), (1.0, 2.0, 3.0))
    opts = req.options.model_copy(update={"compute_sensitivity": True, "time_limit_s": 60})
    result = plan(resolve(req.model_copy(update={"options": opts}), book), time_limit_s=60)
    h = result.headroom
    fleet = result.solution.fleet()
    assert h is not None and fleet is not None

    def serves(factor: float) -> bool:
        inference = tuple(
            w.model_copy(update={"daily_tokens": (w.daily_tokens or 0) * 3 * factor, "demand_by_year": ()})
            for w in req.inference
        )
        one_period = _request().model_copy(update={"inference": inference})
        return evaluate(fleet, resolve(one_period, book), compare_with_optimal=False).feasible

    assert serves(1 + h.demand_growth_served)
    if not h.at_least:
        assert not serves(1 + h.demand_growth_served + 0.01)


def test_a_sweep_point_of_a_staged_request_computes_no_extras(book: Pricebook) -> None:
    req = _grown(_request(), (1.0, 2.0))
    req = req.model_copy(update={"constraints": req.constraints.model_copy(update={"horizon_months": 24})})
    opts = req.options.model_copy(update={"compute_baselines": True, "compute_sensitivity": True})
    resolved = resolve(req.model_copy(update={"options": opts}), book)
    point = plan_request(resolved, time_limit_s=30, cancel=None, with_extras=False)
    assert point.schedule is not None
    assert point.baselines == () and point.headroom is None
