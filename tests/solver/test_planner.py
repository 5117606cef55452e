"""The planner on a small real plan (the default pricebook, the real performance model and MIP).

Expectations are checked against independent re-solves (a changed pricebook, a single allowed
GPU type) and against sums derived here, never against numbers copied from the planner.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from decimal import Decimal

import pytest

from pricebook.loader import load_default
from pricebook.schema import Money, Offer, OfferKind, Pricebook
from solver.analysis.whatif import mix_of
from solver.domain import (
    AcquisitionMode,
    Constraints,
    Fleet,
    FleetItem,
    InferenceWorkload,
    ModelRef,
    OfferOverride,
    PlanRequest,
    PricebookOverrides,
    Sla,
    SolverOptions,
)
from solver.errors import InvalidRequest, SolveCancelled
from solver.optimizer.cancel import CancelToken
from solver.optimizer.results import SolveStatus
from solver.planner import (
    PlanResult,
    SweepAxis,
    SweepFrontier,
    SweepPoint,
    analyze_break_even,
    evaluate,
    frontier,
    plan,
    sweep,
    sweep_request,
)

GPUS = ("h100-sxm", "h200-sxm", "rtx-pro-6000-server")


def request(**options: bool) -> PlanRequest:
    return PlanRequest(
        inference=(
            InferenceWorkload(
                name="chat",
                model=ModelRef(model_id="meta-llama/Llama-3.1-70B"),
                input_tokens=2000,
                output_tokens=500,
                daily_tokens=2_000_000_000,
                sla=Sla(ttft_p95_ms=2000, tpot_p95_ms=50),
            ),
            InferenceWorkload(
                name="batch",
                model=ModelRef(model_id="Qwen/Qwen3-14B"),
                input_tokens=7000,
                output_tokens=1024,
                daily_tokens=5_000_000_000,
                interactive=False,
            ),
        ),
        constraints=Constraints(currency="USD", allowed_gpus=GPUS),
        options=SolverOptions(time_limit_s=10, **options),
    )


BARE = {"compute_baselines": False, "compute_sensitivity": False}


@pytest.fixture(scope="module")
def book() -> Pricebook:
    return load_default()


@pytest.fixture(scope="module")
def full_plan(book: Pricebook) -> PlanResult:
    return plan(request(), book, time_limit_s=30)


def test_plan_carries_consistent_tco(full_plan: PlanResult) -> None:
    assert full_plan.status is SolveStatus.OPTIMAL
    tco = full_plan.tco
    assert tco is not None and full_plan.solution.cost is not None
    # The breakdown reproduces the MIP objective (to the cent after rounding each line).
    assert float(tco.total.horizon_total.amount) == pytest.approx(full_plan.solution.cost.total, abs=1.0)
    # Components add up to the horizon TCO.
    assert sum(c.horizon_amount.amount for c in full_plan.cost_components) == tco.total.horizon_total.amount
    # Fleet lines add up too. Each line rounds its 5 monthly items to the cent (±0.005 each)
    # before multiplying by 36 months, and its 2 purchase items and residual once.
    lines_total = sum(line.horizon_cost.amount for line in full_plan.fleet)
    per_line = Decimal("0.005") * (5 * 36 + 3)
    assert abs(lines_total - tco.total.horizon_total.amount) <= per_line * (len(full_plan.fleet) + 1)
    assert all(m.currency == "USD" for m in (tco.total.capex, tco.total.opex_monthly))
    assert full_plan.pricebook_version and full_plan.pricebook_hash


def test_unit_costs_cover_the_fleet(full_plan: PlanResult) -> None:
    tco = full_plan.tco
    assert tco is not None
    # Workload shares split the exact (unrounded) TCO; each share is rounded to the cent.
    shares = sum(c.horizon_cost.amount for c in full_plan.unit_costs)
    assert float(shares) == pytest.approx(tco.total_float, abs=0.005 * len(full_plan.unit_costs))
    chat = next(c for c in full_plan.unit_costs if c.workload == "chat")
    # 2e9 tokens a day, 500 of every 2,500 are output, 365/12 days a month.
    output_per_month = 2e9 * 500 / 2500 * 365 / 12
    assert chat.per_million_output_tokens is not None
    expected = float(chat.monthly_cost.amount) / output_per_month * 1e6
    assert float(chat.per_million_output_tokens.amount) == pytest.approx(expected, abs=0.006)


def test_baselines_match_independent_single_gpu_plans(full_plan: PlanResult, book: Pricebook) -> None:
    assert {b.gpu for b in full_plan.baselines} == set(GPUS)
    plan_total = full_plan.horizon_tco
    assert plan_total is not None
    for baseline in full_plan.baselines:
        assert baseline.feasible, baseline.reason
        assert baseline.horizon_tco is not None and baseline.extra_cost is not None
        # The chosen plan can use every baseline, so it is never dearer (up to the rounding).
        assert baseline.horizon_tco.amount >= plan_total.amount - Decimal("0.01")
        assert {line.gpu for line in baseline.fleet} == {baseline.gpu}
    # One baseline re-derived through the public entry point with only that GPU allowed.
    gpu = "h200-sxm"
    alone = request(**BARE).model_copy(
        update={"constraints": Constraints(currency="USD", allowed_gpus=(gpu,))}
    )
    independent = plan(alone, book, time_limit_s=10)
    baseline = next(b for b in full_plan.baselines if b.gpu == gpu)
    assert independent.horizon_tco is not None and baseline.horizon_tco is not None
    assert abs(independent.horizon_tco.amount - baseline.horizon_tco.amount) <= Decimal("0.05")
    # Saving over the best baseline, in money and as a share of it.
    best = min(
        full_plan.baselines, key=lambda b: b.horizon_tco.amount if b.horizon_tco else Decimal("Infinity")
    )
    saving = full_plan.baseline_saving
    assert saving is not None and best.horizon_tco is not None
    assert saving.best_baseline_gpu == best.gpu
    assert abs(saving.saving.amount - (best.horizon_tco.amount - plan_total.amount)) <= Decimal("0.02")
    assert saving.saving_fraction == pytest.approx(
        float(saving.saving.amount / best.horizon_tco.amount), abs=1e-6
    )


def scaled_book(book: Pricebook, gpu: str, factor: float) -> Pricebook:
    """The pricebook with every purchase and rental price of ``gpu`` × factor."""

    def scaled(offer: Offer) -> Offer:
        if offer.gpu != gpu:
            return offer
        price = offer.price.model_copy(update={"amount": offer.price.amount * Decimal(repr(factor))})
        return offer.model_copy(update={"price": price})

    return book.model_copy(update={"offers": tuple(scaled(o) for o in book.offers)})


def test_price_sensitivity_threshold_is_where_the_mix_changes(full_plan: PlanResult, book: Pricebook) -> None:
    rows = [s for s in full_plan.sensitivity if s.subject in GPUS and s.change_up_fraction is not None]
    rows += [s for s in full_plan.sensitivity if s.subject in GPUS and s.change_down_fraction is not None]
    assert rows, "expected at least one price threshold in range"
    row = rows[0]
    up = row.change_up_fraction is not None
    changed_at = row.change_up_fraction if up else row.change_down_fraction
    same_at = row.last_same_up_fraction if up else row.last_same_down_fraction
    assert changed_at is not None and same_at is not None
    assert abs(changed_at - same_at) <= 0.02 + 1e-9  # bisection tolerance
    # The purchase offers behind the plan are per-GPU offers, so scaling offer prices in the book
    # is the same move as the sensitivity's price multiplier (support is a % of the price).
    kinds = {o.kind for o in book.offers if o.gpu == row.subject and o.kind is OfferKind.PURCHASE_SERVER}
    assert not kinds
    today = mix_of(full_plan.solution)
    bare = request(**BARE)
    past = plan(bare, scaled_book(book, row.subject, 1 + changed_at), time_limit_s=10)
    before = plan(bare, scaled_book(book, row.subject, 1 + same_at), time_limit_s=10)
    assert mix_of(past.solution) != today
    assert mix_of(before.solution) == today
    described = row.plan_above if up else row.plan_below
    assert described and all(line.gpu in described for line in past.fleet)


def test_demand_sensitivity_reports_a_row(full_plan: PlanResult) -> None:
    demand = next(s for s in full_plan.sensitivity if s.subject == "demand")
    assert (
        demand.change_down_fraction is not None
        or demand.change_up_fraction is not None
        or "unchanged" in (demand.explanation)
    )


def test_break_even_rows(full_plan: PlanResult) -> None:
    gpus_in_plan = {line.gpu for line in full_plan.fleet}
    assert {row.gpu for row in full_plan.break_even.buy_vs_rent} == gpus_in_plan
    assert {row.workload for row in full_plan.break_even.api} == {"chat", "batch"}
    for row in full_plan.break_even.api:
        assert row.api_per_million_tokens is not None and row.self_hosted_per_million_tokens is not None
        cheaper = row.self_hosted_per_million_tokens.amount < row.api_per_million_tokens.amount
        assert row.self_hosting_cheaper is cheaper or (
            row.self_hosted_per_million_tokens.amount == row.api_per_million_tokens.amount
        )


def test_evaluate_a_given_fleet(book: Pricebook, full_plan: PlanResult) -> None:
    fleet = Fleet(items=(FleetItem(gpu="h200-sxm", mode="buy", count=24),))
    result = evaluate(fleet, request(**BARE), book, time_limit_s=10)
    assert result.feasible
    assert result.fleet_horizon_tco is not None and result.optimal_horizon_tco is not None
    assert result.saving_of_optimal is not None
    assert (
        result.saving_of_optimal.amount == result.fleet_horizon_tco.amount - result.optimal_horizon_tco.amount
    )
    assert result.saving_of_optimal.amount > 0  # 24 H200s are more than the optimum needs
    assert {line.gpu for line in result.plan.fleet} == {"h200-sxm"}
    # The optimum is priced like a plan (same rounded report): it is the plan's TCO, and the
    # message quotes the same saving as the field.
    assert full_plan.horizon_tco is not None
    assert result.optimal_horizon_tco == full_plan.horizon_tco
    saving_text = f"{result.saving_of_optimal.amount:,} {result.saving_of_optimal.currency}"
    assert f"the optimal plan costs {saving_text} less over the horizon" in result.messages


def test_break_even_what_if_for_one_gpu(book: Pricebook) -> None:
    analysis = analyze_break_even(request(**BARE), book, gpu="H200", utilisation=0.5, time_limit_s=10)
    assert {line.gpu for line in analysis.plan.fleet} == {"h200-sxm"}
    row = analysis.break_even.buy_vs_rent[0]
    assert row.plan_utilisation == 0.5


def budget_request() -> PlanRequest:
    return request(**BARE)


def test_sweep_streams_points_with_progress_and_a_monotone_frontier(
    book: Pricebook, full_plan: PlanResult
) -> None:
    assert full_plan.tco is not None
    capex = float(full_plan.tco.total.capex.amount)
    budgets = [capex * f for f in (0.6, 0.8, 1.0, 1.3, 1.8)]
    events = list(sweep(budget_request(), book, SweepAxis.CAPEX_BUDGET, budgets, time_limit_s_per_point=10))
    points = [e for e in events if isinstance(e, SweepPoint)]
    assert len(points) == len(budgets)
    assert [p.points_done for p in points] == list(range(1, len(budgets) + 1))
    assert all(p.points_total == len(budgets) for p in points)
    assert sorted(p.index for p in points) == list(range(len(budgets)))
    frontier = events[-1]
    assert isinstance(frontier, SweepFrontier)
    assert [p.value for p in frontier.points] == sorted(budgets)
    # A bigger budget never forces a dearer plan: TCO is non-increasing in the budget.
    costs = [p.horizon_tco.amount for p in frontier.points if p.horizon_tco is not None]
    assert costs == sorted(costs, reverse=True)
    # The unconstrained optimum's capex fits the budgets ≥ 1.0×, which all cost the optimum's TCO.
    for p in frontier.points:
        if p.value >= capex and p.horizon_tco is not None and full_plan.horizon_tco is not None:
            assert abs(p.horizon_tco.amount - full_plan.horizon_tco.amount) <= Decimal("0.05")
    pareto = frontier.pareto
    assert pareto and [p.value for p in pareto] == sorted(p.value for p in pareto)


def test_cancelled_sweep_stops_early(book: Pricebook) -> None:
    cancel = CancelToken()
    values = [1.0 + 0.1 * i for i in range(12)]
    seen: list[SweepPoint] = []
    with pytest.raises(SolveCancelled):
        for event in sweep(budget_request(), book, SweepAxis.DEMAND_MULTIPLIER, values, cancel=cancel):
            if isinstance(event, SweepPoint):
                seen.append(event)
                cancel.cancel()
    assert 1 <= len(seen) < len(values)
    assert not [t for t in threading.enumerate() if t.name.startswith("sweep")]


def test_pricebook_overrides_reach_the_plan(book: Pricebook) -> None:
    base = request(**BARE).model_copy(
        update={"constraints": Constraints(currency="USD", allowed_gpus=("h200-sxm",))}
    )
    before = plan(base, book, time_limit_s=10)
    bought = next(line for line in before.fleet if line.mode == "buy")
    assert bought.price_per_gpu is not None
    doubled = Money(amount=bought.price_per_gpu.amount * 2, currency="USD")
    overridden = base.model_copy(
        update={
            "overrides": PricebookOverrides(offers=(OfferOverride(offer_id=bought.offer_id, price=doubled),))
        }
    )
    after = plan(overridden, book, time_limit_s=10)
    line = next(line for line in after.fleet if line.offer_id == bought.offer_id)
    assert line.price_per_gpu == doubled
    assert after.overrides_applied and after.pricebook_hash != before.pricebook_hash
    assert after.tco is not None and before.tco is not None
    # Same GPUs, each twice the price: GPU capex exactly doubles.
    assert line.gpus == bought.gpus
    assert after.tco.total.purchase_gpus.amount == 2 * before.tco.total.purchase_gpus.amount


def test_demand_threshold_with_a_daily_profile(book: Pricebook) -> None:
    # Office-hours chat: the optimizer groups hours into buckets and checks every hour. The demand
    # threshold found on the instance must match re-planning the request with scaled demand.
    profile = (1.0,) * 8 + (4.0,) * 10 + (2.0,) * 6
    chat = InferenceWorkload(
        name="chat",
        model=ModelRef(model_id="meta-llama/Llama-3.1-8B"),
        input_tokens=1000,
        output_tokens=300,
        daily_tokens=3_000_000_000,
        hourly_profile=profile,
        sla=Sla(ttft_p95_ms=1000, tpot_p95_ms=40),
    )
    req = PlanRequest(
        inference=(chat,),
        constraints=Constraints(currency="USD", allowed_gpus=("l40s", "h100-sxm")),
        options=SolverOptions(time_limit_s=10, compute_baselines=False),
    )
    result = plan(req, book, time_limit_s=30)
    demand = next(s for s in result.sensitivity if s.subject == "demand")
    today = mix_of(result.solution)
    assert demand.change_up_fraction is not None or demand.change_down_fraction is not None
    for changed, same in (
        (demand.change_up_fraction, demand.last_same_up_fraction),
        (demand.change_down_fraction, demand.last_same_down_fraction),
    ):
        if changed is None or same is None:
            continue
        bare = req.model_copy(update={"options": SolverOptions(time_limit_s=10, **BARE)})
        past = plan(sweep_request(bare, SweepAxis.DEMAND_MULTIPLIER, 1 + changed), book, time_limit_s=10)
        before = plan(sweep_request(bare, SweepAxis.DEMAND_MULTIPLIER, 1 + same), book, time_limit_s=10)
        assert mix_of(past.solution) != today
        assert mix_of(before.solution) == today


def test_sla_sweep_rebuilds_candidates(book: Pricebook) -> None:
    chat = InferenceWorkload(
        name="chat",
        model=ModelRef(model_id="meta-llama/Llama-3.1-8B"),
        input_tokens=1000,
        output_tokens=300,
        daily_tokens=3_000_000_000,
        sla=Sla(ttft_p95_ms=1000, tpot_p95_ms=40),
    )
    req = PlanRequest(
        inference=(chat,),
        constraints=Constraints(currency="USD", allowed_gpus=("l40s", "h100-sxm")),
        options=SolverOptions(time_limit_s=10, **BARE),
    )
    events = list(sweep(req, book, SweepAxis.TPOT_P95_MS, [15.0, 50.0]))
    frontier = events[-1]
    assert isinstance(frontier, SweepFrontier)
    strict, loose = frontier.points
    assert strict.horizon_tco is not None and loose.horizon_tco is not None
    # A looser latency target can only widen the deployments that qualify: never dearer.
    assert loose.horizon_tco.amount <= strict.horizon_tco.amount
    # The strict target needs different (more) hardware here, so the SLA really reached the model.
    assert strict.fleet_summary != loose.fleet_summary


def test_allowed_gpu_without_offers_gets_a_baseline_row(book: Pricebook) -> None:
    # Only purchases allowed, and no purchase offer for H100 SXM: its baseline row says why.
    purchases = (OfferKind.PURCHASE_GPU, OfferKind.PURCHASE_SERVER)
    offers = tuple(o for o in book.offers if not (o.gpu == "h100-sxm" and o.kind in purchases))
    unsold = book.model_copy(update={"offers": offers})
    req = request(compute_sensitivity=False).model_copy(
        update={"constraints": Constraints(currency="USD", allowed_gpus=("h200-sxm", "h100-sxm"))}
    )
    result = plan(req, unsold, time_limit_s=20)
    rows = {b.gpu: b for b in result.baselines}
    assert set(rows) == {"h200-sxm", "h100-sxm"}
    assert not rows["h100-sxm"].feasible and "no offer" in rows["h100-sxm"].reason
    assert rows["h200-sxm"].feasible


def test_sweep_refuses_meaningless_input(book: Pricebook) -> None:
    with pytest.raises(InvalidRequest) as bad:
        next(sweep(request(**BARE), book, SweepAxis.TPOT_P95_MS, [30.0, -5.0], workload="nope"))
    fields = {v.field for v in bad.value.violations}
    assert fields == {"values[1]", "workload_name"}


def test_sweep_refuses_points_beyond_the_request_limits(book: Pricebook) -> None:
    # 1e300 × 2e9 daily tokens overflows every limit: refused before any solve, per point.
    with pytest.raises(InvalidRequest) as bad:
        next(sweep(request(**BARE), book, SweepAxis.DEMAND_MULTIPLIER, [1.0, 1e300]))
    assert {v.field for v in bad.value.violations} == {"values[1]"}
    assert "daily_tokens" in bad.value.violations[0].reason


def test_frontier_marks_pareto_points(full_plan: PlanResult) -> None:
    def at(cost: int | None) -> PlanResult:
        if cost is None:
            return replace(full_plan, tco=None, status=SolveStatus.INFEASIBLE)
        assert full_plan.tco is not None
        total = replace(full_plan.tco.total, horizon_total=Money(amount=Decimal(cost), currency="USD"))
        return replace(full_plan, tco=replace(full_plan.tco, total=total))

    # Capex budget: less capital is better. 300 buys nothing over 200; 400 has no plan.
    budget = frontier(
        SweepAxis.CAPEX_BUDGET, [(300.0, at(40)), (100.0, at(50)), (200.0, at(40)), (400.0, at(None))]
    )
    assert [(p.value, p.pareto_optimal) for p in budget.points] == [
        (100.0, True),
        (200.0, True),
        (300.0, False),
        (400.0, False),
    ]
    # Demand: more demand served is better. ×2 costs as much as ×3, so only ×1 and ×3 are efficient.
    demand = frontier(SweepAxis.DEMAND_MULTIPLIER, [(1.0, at(10)), (2.0, at(15)), (3.0, at(15))])
    assert [p.pareto_optimal for p in demand.points] == [True, False, True]


class _ExpiredToken(CancelToken):
    """What the service hands the planner once the caller's deadline (or a shutdown) wrapped up."""

    @property
    def expired(self) -> bool:
        return True


def test_an_expired_call_skips_baselines_and_sensitivity(book: Pricebook) -> None:
    result = plan(request(), book, time_limit_s=30, cancel=_ExpiredToken())
    assert result.solution.has_plan
    assert result.baselines == () and result.sensitivity == ()
    assert any("skipped" in w for w in result.warnings)
    assert not result.complete  # an early-ended answer is never reused for later identical requests


def test_a_plan_that_finished_everything_is_complete(full_plan: PlanResult) -> None:
    # Two workloads, three GPU types, 30 s: the main solve, baselines and sensitivity all finish.
    assert full_plan.status is SolveStatus.OPTIMAL
    assert full_plan.baselines and full_plan.sensitivity
    assert not any("cut short" in w or "skipped" in w for w in full_plan.warnings)
    assert full_plan.complete


def test_turned_away_deployments_are_reported_per_workload(full_plan: PlanResult) -> None:
    rejected = dict(full_plan.rejected)
    assert rejected, "a 70B chat SLA turns some deployments away on these GPUs"
    for reasons in rejected.values():
        assert reasons and all(r.split(" ")[0] in GPUS for r in reasons)


def test_summary_of_a_plan_that_is_its_own_best_single_gpu_fleet(book: Pricebook) -> None:
    only_h200 = request().model_copy(
        update={"constraints": Constraints(currency="USD", allowed_gpus=("h200-sxm",))}
    )
    result = plan(only_h200, book, time_limit_s=30)
    assert result.baseline_saving is not None and result.baseline_saving.saving.amount == 0
    assert result.summary.endswith(" It is also the best single-GPU fleet.")
    assert "Saves" not in result.summary


def test_frontier_point_without_a_plan_says_why(book: Pricebook, full_plan: PlanResult) -> None:
    assert full_plan.tco is not None
    capex = float(full_plan.tco.total.capex.amount)
    buy_only = budget_request().model_copy(
        update={
            "constraints": Constraints(
                currency="USD", allowed_gpus=GPUS, allowed_modes=(AcquisitionMode.BUY,)
            )
        }
    )
    events = list(sweep(buy_only, book, SweepAxis.CAPEX_BUDGET, [capex * 0.2], time_limit_s_per_point=10))
    frontier = events[-1]
    assert isinstance(frontier, SweepFrontier)
    (point,) = frontier.points
    assert point.horizon_tco is None
    assert point.fleet_summary.startswith("No plan (infeasible).") and "capex budget" in point.fleet_summary
