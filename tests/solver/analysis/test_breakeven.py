"""Break-even formulas against hand-computed examples, and the seeds' arithmetic."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
from econ_factories import AS_OF, SRC, gpu, offer

from pricebook.overrides import ApiPriceOverride, PricebookOverrides, apply_overrides
from pricebook.schema import ApiPrice, ModelArch, Pricebook
from solver.analysis.breakeven import (
    ApiBreakEven,
    BuyVsRent,
    api_break_even,
    budget_table,
    buy_vs_rent,
    gpu_day_cost,
    owning_cost,
    payback_months,
    rental_cost,
    self_hosting_break_even,
)
from solver.domain import AcquisitionMode, Constraints, InferenceWorkload, ModelRef, ModelSpec
from solver.pricing.costs import acquisition_options
from solver.pricing.options import AcquisitionOption

BookFactory = Callable[..., Pricebook]
MODES = (AcquisitionMode.BUY, AcquisitionMode.RESERVED, AcquisitionMode.ON_DEMAND)


# --- seeds ------------------------------------------------------------------------------------


def test_seed_001_two_h200_rented() -> None:
    # Seed 001: "두 장을 상시로 돌리면 GPU 렌탈비만 하루 168~624달러, 30일이면 5040~1만8720달러".
    assert rental_cost(2, 3.5, 24) == pytest.approx(168)
    assert rental_cost(2, 13, 24) == pytest.approx(624)
    assert rental_cost(2, 3.5, 24 * 30) == pytest.approx(5_040)
    assert rental_cost(2, 13, 24 * 30) == pytest.approx(18_720)


def test_seed_000_budget_table_follows_from_prices(make_book: BookFactory) -> None:
    # Seed 000's table: a 60M KRW budget buys RTX PRO 6000 ×4.00, H100 ×1.43, H200 ×1.20 at
    # 15M, 42M and 50M KRW per card (cards only: the hosts are not part of the table).
    gpus = (
        gpu("rtx-pro-6000", tdp_w=600, form_factor="pcie", domain=1),
        gpu("h100-sxm", tdp_w=700, form_factor="sxm", domain=8),
        gpu("h200-sxm", tdp_w=700, form_factor="sxm", domain=8),
    )
    offers = (
        offer("rtx", "purchase_gpu", "rtx-pro-6000", "15000000 KRW"),
        offer("h100", "purchase_gpu", "h100-sxm", "42000000 KRW"),
        offer("h200", "purchase_gpu", "h200-sxm", "50000000 KRW"),
    )
    book = make_book(gpus=gpus, servers=(), offers=offers)
    options = acquisition_options(book, Constraints(currency="KRW", include_host_costs=False))
    table = budget_table(options, 60_000_000)
    assert {g: round(n, 2) for g, n in table.items()} == {
        "rtx-pro-6000": 4.00,
        "h100-sxm": 1.43,
        "h200-sxm": 1.20,
    }


def test_a_gpu_day_held_and_busy(make_book: BookFactory) -> None:
    # What one replica-GPU costs a day in the self-host vs API comparison.
    opts = acquisition_options(
        make_book(), Constraints(currency="USD", horizon_months=36, allowed_modes=MODES)
    )
    by_id = {o.id: o for o in opts}
    bought = by_id["h200-sxm/buy/hgx-h200-8gpu"]
    # $35,000 + an eighth of the $40,000 host, 70 % of it lost over 36 months (market value 30 %);
    # support $350 a GPU, $1,375.20 a server a month (host support, colocation, host power); $0.063
    # power a busy hour.
    monthly = 40_000 * 0.70 / 36 + 350 + 1_375.2 / 8
    assert gpu_day_cost(bought, 36) == pytest.approx(monthly / (365 / 12) + 0.063 * 24)
    # Rented by the hour: 24 busy hours at the cheapest $3.50.
    assert gpu_day_cost(by_id["h200-sxm/on_demand/h200-od-cheap"], 36) == pytest.approx(3.5 * 24)


# --- buy vs rent ------------------------------------------------------------------------------


def h200_buy_vs_rent(make_book: BookFactory, utilization: float | None) -> BuyVsRent:
    options = acquisition_options(
        make_book(), Constraints(currency="USD", horizon_months=36, allowed_modes=MODES)
    )
    return buy_vs_rent("h200-sxm", options, horizon_months=36, currency="USD", plan_utilization=utilization)


def test_buy_vs_on_demand_break_even_utilization(make_book: BookFactory) -> None:
    result = h200_buy_vs_rent(make_book, 0.5)
    # One full HGX server: 8 × $35,000 + $40,000 host = $320,000; 70 % of it is lost over 36 months.
    capex_per_month = 320_000 * 0.70 / 36
    # Support 8 × $350 + host $400, colocation $800, host power $175.20 a month.
    running = 8 * 350 + 400 + 800 + 175.2
    owned_fixed_per_gpu = (capex_per_month + running) / 8
    assert result.owned_fixed_monthly_per_gpu == pytest.approx(owned_fixed_per_gpu)
    # Busy power costs $0.063/h; on-demand $3.50/h. Tie: fixed = 730·u·(3.5 − 0.063).
    u_tie = owned_fixed_per_gpu / (730 * (3.5 - 0.063))
    assert result.break_even_utilization_on_demand == pytest.approx(u_tie)
    assert 0.50 < u_tie < 0.55
    # Payback at 50 %: each month saves (3.5 − 0.063)·730·0.5 of rent minus the running costs; it
    # must repay the $28,000 of the $40,000 per GPU the horizon consumes (its market value is 30 %).
    saving = (3.5 - 0.063) * 730 * 0.5 - running / 8
    assert result.payback_months == pytest.approx(40_000 * 0.70 / saving)
    # Reserved $2.50/h = $1,825/month > owning even at 100 % busy: no tie in 0–100 %.
    assert result.break_even_utilization_reserved is None
    assert "buying is cheaper than reserving at any utilization" in result.verdict
    assert "pays back in" in result.verdict
    # 28,000 / 732.6 ≈ 38.2 months: longer than the horizon (50 % is below the break-even), and the
    # verdict says so.
    assert "beyond the 36-month horizon" in result.verdict


def test_payback_never_when_rent_saving_does_not_cover_running_costs(make_book: BookFactory) -> None:
    bought = h200_options(make_book)["h200-sxm/buy/hgx-h200-8gpu"]
    owning = owning_cost(bought, 36)
    # Running per GPU: support $350 + ($400 + $800 + $175.20) / 8 = $521.90 a month.
    assert owning.running_monthly == pytest.approx(350 + 1_375.2 / 8)
    # At 20 % busy, on-demand would save (3.5 − 0.063) × 730 × 0.2 = $501.80 a month: less than
    # the running costs, so owning never pays back.
    assert payback_months(owning, 3.5, 0.2) is None
    # At 100 %: saving 2,509.01 − 521.90 a month repays the $28,000 the horizon consumes.
    saving = (3.5 - 0.063) * 730 - (350 + 1_375.2 / 8)
    assert payback_months(owning, 3.5, 1.0) == pytest.approx(40_000 * 0.70 / saving)


def h200_options(make_book: BookFactory) -> dict[str, AcquisitionOption]:
    options = acquisition_options(
        make_book(), Constraints(currency="USD", horizon_months=36, allowed_modes=MODES)
    )
    return {o.id: o for o in options}


@pytest.mark.parametrize("packing", [None, 1.0, 3.0, 8.0])
@pytest.mark.parametrize("horizon", [12, 36, 60])
def test_at_the_break_even_both_sides_cost_the_same(
    make_book: BookFactory, packing: float | None, horizon: int
) -> None:
    # One definition of owning cost: at the reported break-even utilization owning one GPU costs
    # what renting it on demand costs (per month and over the horizon), and the payback is the horizon.
    options = acquisition_options(
        make_book(), Constraints(currency="USD", horizon_months=horizon, allowed_modes=MODES)
    )
    plan = ("h200-sxm/buy/hgx-h200-8gpu", packing) if packing is not None else None
    result = buy_vs_rent(
        "h200-sxm", options, horizon_months=horizon, currency="USD", plan_utilization=None, plan_packing=plan
    )
    u = result.break_even_utilization_on_demand
    if u is None:  # a short horizon: owning never ties within 0-100 %
        assert horizon == 12 or packing == 1.0
        return
    bought = {o.id: o for o in options}["h200-sxm/buy/hgx-h200-8gpu"]
    owning = owning_cost(bought, horizon, packing)
    owning_total = owning.capital_consumed + (owning.running_monthly + 0.063 * 730 * u) * horizon
    renting_total = 3.5 * 730 * u * horizon
    assert owning_total == pytest.approx(renting_total, rel=1e-3)
    assert owning.monthly_at(u) == pytest.approx(3.5 * 730 * u, rel=1e-3)
    assert payback_months(owning, 3.5, u) == pytest.approx(horizon, rel=1e-3)
    # A little busier and owning wins within the horizon; a little idler and it does not.
    assert payback_months(owning, 3.5, min(1.0, u * 1.05)) < horizon  # type: ignore[operator]
    slower = payback_months(owning, 3.5, u * 0.95)
    assert slower is None or slower > horizon


def test_the_host_share_follows_the_plans_packing(make_book: BookFactory) -> None:
    bought = h200_options(make_book)["h200-sxm/buy/hgx-h200-8gpu"]
    # Half a board's GPUs carry the whole host: $40,000 / 4 instead of / 8 per GPU.
    assert owning_cost(bought, 36, 4.0).purchase == pytest.approx(35_000 + 40_000 / 4)
    assert owning_cost(bought, 36).purchase == pytest.approx(35_000 + 40_000 / 8)


def test_reserved_tie_inside_range(make_book: BookFactory) -> None:
    # A cheap reservation at $1.40/h = $1,022/month: owning ($1,299.68 fixed) loses even idle.
    base = make_book()
    cheap = offer("h200-res-cheap", "reserved", "h200-sxm", "1.40 USD", term_months=12)
    options = acquisition_options(
        make_book(offers=(*base.offers, cheap)), Constraints(horizon_months=36, allowed_modes=MODES)
    )
    result = buy_vs_rent("h200-sxm", options, horizon_months=36, currency="USD", plan_utilization=None)
    assert result.break_even_utilization_reserved is None
    assert "reserving is cheaper than buying at any utilization" in result.verdict
    # With power at $0.063/h a tie needs fixed ($1,299.68) < reserved < fixed + 0.063 × 730: try
    # $1.80/h = $1,314/month.
    mid = offer("h200-res-mid", "reserved", "h200-sxm", "1.80 USD", term_months=12)
    options = acquisition_options(
        make_book(offers=(*base.offers, mid)), Constraints(horizon_months=36, allowed_modes=MODES)
    )
    result = buy_vs_rent("h200-sxm", options, horizon_months=36, currency="USD", plan_utilization=None)
    fixed = result.owned_fixed_monthly_per_gpu
    assert fixed is not None
    expected = (1.80 * 730 - fixed) / (730 * 0.063)
    assert result.break_even_utilization_reserved == pytest.approx(expected)
    assert 0 < expected < 1


def test_no_purchase_offer(make_book: BookFactory) -> None:
    options = acquisition_options(make_book(), Constraints(allowed_modes=(AcquisitionMode.ON_DEMAND,)))
    result = buy_vs_rent("h200-sxm", options, horizon_months=36, currency="USD", plan_utilization=0.5)
    assert result.buy_option_id is None
    assert "no purchase offer" in result.verdict


# --- self-host vs API -------------------------------------------------------------------------


def chat(daily_tokens: int = 100_000_000, model: ModelRef | None = None) -> InferenceWorkload:
    return InferenceWorkload(
        name="chat",
        model=model or ModelRef(model_id="meta-llama/Llama-3.1-70B"),
        input_tokens=900,
        output_tokens=100,
        daily_tokens=daily_tokens,
    )


def test_api_break_even_volume(make_book: BookFactory) -> None:
    # The test book's API for this model: $0.50 in / $1.00 out per 1M tokens.
    # At 900 in / 100 out: (900·0.5 + 100·1.0) / 1000 = $0.55 per 1M tokens.
    p = 0.55 / 1e6
    result = api_break_even(
        chat(),
        model_id="meta-llama/Llama-3.1-70B",
        arch=arch("meta-llama/Llama-3.1-70B", 70),
        self_hosted_per_token=0.8 / 1e6,
        replica_day_cost=100.0,
        replica_day_tokens=500e6,
        book=make_book(),
        constraints=Constraints(),
    )
    assert result.api_per_million_tokens is not None
    assert float(result.api_per_million_tokens.amount) == pytest.approx(0.55)
    # One replica costs $100 a day and serves up to 500M tokens ($0.20/1M < $0.55): tie at 100/p.
    assert result.break_even_daily_tokens == pytest.approx(100 / p)
    assert result.self_hosting_cheaper is False  # $0.80/1M at this volume vs $0.55
    # API saves (0.80 − 0.55) per 1M × 100M tokens × 365/12 days a month.
    assert result.monthly_difference is not None
    assert float(result.monthly_difference.amount) == pytest.approx(-0.25 * 100 * 365 / 12, abs=0.01)
    assert "is below" in result.verdict
    assert result.same_model


def test_self_hosting_never_wins_when_full_replica_costs_more_per_token(make_book: BookFactory) -> None:
    result = api_break_even(
        chat(),
        model_id="meta-llama/Llama-3.1-70B",
        arch=arch("meta-llama/Llama-3.1-70B", 70),
        self_hosted_per_token=2e-6,
        replica_day_cost=1000.0,
        replica_day_tokens=1e9,  # $1.00 per 1M tokens even fully used, above the API's $0.55
        book=make_book(),
        constraints=Constraints(),
    )
    assert result.break_even_daily_tokens is None
    assert "never beats the API" in result.verdict


def arch(
    model_id: str, params_b: float, kind: str = "decoder", *, active_b: float | None = None, experts: int = 0
) -> ModelArch:
    return ModelArch(
        id=model_id, family="llama", kind=kind, params_b=params_b, active_params_b=active_b or params_b,
        layers=80, hidden=8192, intermediate=28672, heads=64, kv_heads=8, head_dim=128, vocab=128256,
        max_context=131072, attention="gqa", full_attention_layers=80, experts=experts,
        experts_per_token=4 if experts else 0, source=SRC, as_of=AS_OF,
    )  # fmt: skip


def test_api_price_by_model_class(make_book: BookFactory) -> None:
    base = make_book()
    book = make_book(models=(arch("meta-llama/Llama-3.1-70B", 70), arch("small-8b", 8)))
    assert base.api_prices[0].model == "meta-llama/Llama-3.1-70B"
    inline = chat(model=ModelRef(spec=ModelSpec(params_b=72)))
    result = api_break_even(
        inline,
        model_id=None,
        arch=arch("inline-72b", 72),
        self_hosted_per_token=0.3 / 1e6,
        replica_day_cost=None,
        replica_day_tokens=None,
        book=book,
        constraints=Constraints(),
    )
    assert result.api_model == "meta-llama/Llama-3.1-70B"
    assert not result.same_model
    assert result.self_hosting_cheaper is True
    assert "compared with meta-llama/Llama-3.1-70B, the closest of its class" in result.verdict
    assert "no self-hosted deployment in the plan" in result.verdict


def api_price(price_id: str, model: str, per_mtok: str) -> ApiPrice:
    return ApiPrice(
        id=price_id, provider="p", model=model, input_per_mtok=per_mtok, output_per_mtok=per_mtok,
        source=SRC, as_of=AS_OF,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("workload_arch", "comparable"),
    [
        (arch("dense-100b", 100), "dense-70b"),  # dense, 100 / 70 < 2: same class
        (arch("dense-200b", 200), None),  # dense, but 200 / 70 > 2: no comparable price
        (arch("moe-100b", 100, active_b=10, experts=64), "moe-120b-a5b"),  # MoE, 10 / 5 = 2
        (arch("moe-100b-a20b", 100, active_b=20, experts=64), None),  # MoE, but 20 / 5 > 2 active
    ],
)
def test_api_comparison_only_like_for_like(
    make_book: BookFactory, workload_arch: ModelArch, comparable: str | None
) -> None:
    # A dense 100B model is never compared with a cheap 5B-active MoE API (issue 15), nor an MoE with
    # a dense one; sizes must be within 2× in total and in active parameters.
    models = (arch("dense-70b", 70), arch("moe-120b-a5b", 120, active_b=5, experts=128), workload_arch)
    prices = (api_price("dense", "dense-70b", "0.9 USD"), api_price("moe", "moe-120b-a5b", "0.1 USD"))
    book = make_book(models=models, api_prices=prices)
    result = api_break_even(
        chat(model=ModelRef(model_id=workload_arch.id)),
        model_id=workload_arch.id,
        arch=workload_arch,
        self_hosted_per_token=1e-6,
        replica_day_cost=None,
        replica_day_tokens=None,
        book=book,
        constraints=Constraints(),
    )
    assert not result.same_model
    if comparable is None:
        assert result.api_price_id is None
        assert "no comparable API price" in result.verdict
    else:
        assert result.api_model == comparable
        assert comparable in result.verdict


def llama_70b_api_price(book: Pricebook, constraints: Constraints) -> ApiBreakEven:
    """The API comparison of the chat workload on Llama-3.1-70B, without a self-hosted deployment."""
    return api_break_even(
        chat(),
        model_id="meta-llama/Llama-3.1-70B",
        arch=arch("meta-llama/Llama-3.1-70B", 70),
        self_hosted_per_token=None,
        replica_day_cost=None,
        replica_day_tokens=None,
        book=book,
        constraints=constraints,
    )


def test_a_requests_own_api_price_comes_first(make_book: BookFactory) -> None:
    base = make_book(models=(arch("meta-llama/Llama-3.1-70B", 70),))
    overrides = PricebookOverrides(
        api_prices=(
            ApiPriceOverride(
                model_id="meta-llama/Llama-3.1-70B",
                provider="Vendor X contract",
                input_per_mtok="0.70 USD",
                output_per_mtok="0.70 USD",
            ),
        )
    )
    book, applied = apply_overrides(base, overrides, today=AS_OF)
    result = llama_70b_api_price(book, Constraints())
    # Dearer than the book's $0.55 blend, but it is the buyer's own rate: used.
    assert result.provider == "Vendor X contract"
    assert result.api_per_million_tokens is not None
    assert float(result.api_per_million_tokens.amount) == pytest.approx(0.70)
    assert "Vendor X contract" in applied[0]


def test_break_even_volume_holds_for_every_larger_volume() -> None:
    # One replica: $100 a day, 120 tokens a day; the API charges $1 a token. Brute force: find the
    # smallest volume above which ceil(V / 120) · 100 ≤ V · 1 for every V checked.
    cost, capacity, price = 100.0, 120.0, 1.0
    volumes = [v / 4 for v in range(1, 4 * 3000)]
    dearer = [v for v in volumes if math.ceil(v / capacity) * cost > v * price]
    last_dearer = max(dearer)
    found = self_hosting_break_even(cost, capacity, price)
    assert found is not None
    assert last_dearer < found <= last_dearer + 0.25 + 1e-9
    # 500 (5 replicas × 100 tokens tie each): at 480 tokens 4 replicas cost 400 < 480, but at
    # 490 five replicas cost 500 > 490.
    assert found == pytest.approx(500.0)
    assert self_hosting_break_even(130.0, capacity, price) is None  # a full replica costs more


def test_api_price_in_won_ex_vat(make_book: BookFactory) -> None:
    # $0.55 per 1M tokens at this mix (see above) → × 1,400 KRW/USD = 770 KRW, ex-VAT like every
    # amount compared (the VAT is a line of the answer).
    result = llama_70b_api_price(make_book(), Constraints(currency="KRW", include_vat=True))
    assert result.api_per_million_tokens is not None
    assert float(result.api_per_million_tokens.amount) == pytest.approx(0.55 * 1400, abs=0.5)
    assert result.api_per_million_tokens.currency == "KRW"


def test_embedding_models_are_not_priced_like_chat_models(make_book: BookFactory) -> None:
    # The only API price is for a 70B decoder; a 0.6B embedding model has no priced class.
    book = make_book(models=(arch("meta-llama/Llama-3.1-70B", 70), arch("embed-small", 0.6, "embedding")))
    result = api_break_even(
        chat(model=ModelRef(model_id="embed-small")),
        model_id="embed-small",
        arch=arch("embed-small", 0.6, "embedding"),
        self_hosted_per_token=1e-8,
        replica_day_cost=None,
        replica_day_tokens=None,
        book=book,
        constraints=Constraints(),
    )
    assert result.api_price_id is None
    assert "no comparable API price" in result.verdict
