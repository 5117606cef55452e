"""Break-even answers: buy vs rent per GPU type, self-host vs a per-token API per workload.

Buy vs rent — one definition of owning cost (``OwningCost``), used by the break-even
utilisation, the payback months, the verdict and the self-host vs API comparison. Per GPU of a BUY
option, at the plan's packing (k = GPUs per server the plan fills; a full server without a plan),
horizon H months, market value v(m) (the GPU class's residual curve)::

    purchase P         = capex per GPU + host capex / k
    installation I     = installation per GPU + per server / k   (no market value; the multi-node
                         fabric is left out: one more GPU in one server needs none)
    running R (/month) = support + colocation + idle power + software (per GPU) + host colocation,
                         power and support / k
    fixed F (/month)   = (P · (1 − v(H)) + I) / H + R
    busy p (/GPU-hour) = power above idle while busy
    owning at utilisation u, per month   = F + p · 730 · u
    on-demand at u, per month            = price_per_hour · 730 · u
    reserved, per month                  = reserved_per_hour · 730      (paid busy or idle)

    break-even vs on-demand:  u* = F / (730 · (price_per_hour − p))
    break-even vs reserved:   u* = (reserved_per_hour · 730 − F) / (730 · p)
                              (owning is cheaper below u*: above it the extra power outweighs the saving)
    payback months at u:      the months of saving against on-demand that repay the capital owning
                              consumes over the horizon (the purchase less its market value then):
                              (P · (1 − v(H)) + I) / ((price_per_hour − p) · 730 · u − R)
                              At u = u* the payback is exactly H (both sides cost the same over the
                              horizon), above u* shorter, below it longer: one verdict throughout.

With a discount rate r (``constraints.discount_rate_annual``; ``solver.pricing.discounting``) every
amount is today's value: the horizon's months H become W = Σ_y months_y (1 + r)^−y (a month's cost
paid at its year's end) and the market value v(H) becomes v(H) (1 + r)^−⌈H/12⌉, so F is the level
monthly cost whose value today equals owning's (an equivalent annual cost ÷ 12) and u* compares like
with like. The payback is discounted: the months of saving whose value today repays
P · (1 − v(H) (1 + r)^−⌈H/12⌉) + I (``months_to_repay``); at u* it is again exactly H.

Self-host vs API (per inference workload)::

    api price per token  p = (input_tokens · in_price + output_tokens · out_price) / (input + output)
    one replica costs C per day (its GPUs fully held, busy all day) and serves at most
    Q = capacity tokens/s × 86,400 / peak-to-average tokens a day at the SLA.
    Self-hosting at V tokens/day costs ceil(V / Q) · C; the API costs V · p.
    If C / Q ≥ p self-hosting never wins. Otherwise, with r = C / p (< Q): on the k-replica range
    ((k−1)·Q, k·Q] self-hosting is cheaper from V = k·r on, so it loses somewhere in that range
    only while k·r > (k−1)·Q, i.e. k < Q / (Q − r). The break-even reported is the volume above
    which self-hosting is cheaper at *every* volume: V* = k_max · r, k_max = ⌈Q / (Q − r)⌉ − 1.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from pricebook.catalog import model as catalogue_model
from pricebook.errors import UnknownEntryError
from pricebook.money import OVERRIDE_SOURCE
from pricebook.schema import ApiPrice, Currency, GpuId, ModelArch, Money, Pricebook
from solver.analysis.tco import daily_requests, to_money, to_unit_price
from solver.domain import AcquisitionMode, Constraints, InferenceWorkload
from solver.perf.models import model_from_spec
from solver.pricing import discounting
from solver.pricing.costs import priced
from solver.pricing.options import AcquisitionOption
from solver.units import (
    DAYS_PER_MONTH,
    HOURS_PER_DAY,
    HOURS_PER_MONTH,
    TOKENS_PER_MILLION,
)

# --------------------------------------------------------------------------------------------
# Plain arithmetic the seeds check
# --------------------------------------------------------------------------------------------


def rental_cost(gpus: int, price_per_gpu_hour: float, hours: float) -> float:
    """What renting ``gpus`` GPUs for ``hours`` hours costs (seed 001: 2 × $3.5 × 24 h = $168)."""
    return gpus * price_per_gpu_hour * hours


def gpus_within_budget(budget: float, price_per_gpu: float) -> float:
    """How many GPUs (fractional, as a budget table shows) a budget buys (seed 000: 60M / 15M = 4.00)."""
    if price_per_gpu <= 0:
        msg = "price per GPU must be positive"
        raise ValueError(msg)
    return budget / price_per_gpu


def budget_table(options: Sequence[AcquisitionOption], budget: float) -> dict[GpuId, float]:
    """GPUs each bought GPU type's budget buys, at its cheapest purchase option's price per GPU
    (host included per GPU when the options carry host costs)."""
    table: dict[GpuId, float] = {}
    for opt in options:
        if opt.mode is not AcquisitionMode.BUY or opt.owned:
            continue
        units = gpus_within_budget(budget, opt.capex_per_gpu_with_host)
        table[opt.gpu] = max(table.get(opt.gpu, 0.0), units)
    return dict(sorted(table.items()))


# --------------------------------------------------------------------------------------------
# Buy vs rent
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BuyVsRent:
    gpu: GpuId
    currency: Currency
    buy_option_id: str | None
    owned_fixed_monthly_per_gpu: float | None
    """Capex net of residual spread over the horizon + support, colocation, host power, per GPU."""
    owned_cost_per_gpu_hour: Money | None
    """``owned_fixed_monthly_per_gpu`` ÷ 730 h: owning one GPU per hour of the horizon, idle or busy."""
    power_per_busy_gpu_hour: float
    purchase_per_gpu: float
    """GPU price plus its share of the host."""
    on_demand_price_per_gpu_hour: Money | None
    reserved_price_per_gpu_hour: Money | None
    break_even_utilization_on_demand: float | None
    """Owning beats on-demand above this utilization; None = never within 0–100 %."""
    break_even_utilization_reserved: float | None
    """Owning beats reserving below this utilization; None = no tie within 0–100 %."""
    plan_utilization: float | None
    payback_months: float | None
    """Months until the purchase is paid back by not renting on demand, at the plan's utilization."""
    verdict: str


@dataclass(frozen=True, slots=True)
class OwningCost:
    """What owning one GPU of a BUY option costs (the module docstring's P, R, F, p, v)."""

    option: AcquisitionOption
    horizon_months: int
    gpus_per_server: float
    """k: GPUs per server at the plan's packing (the option's slots without a plan)."""
    purchase: float
    running_monthly: float
    fixed_monthly: float
    busy_hourly: float
    installation: float = 0.0
    """One-off installation per GPU (its share of the server's): no market value at the horizon.
    The multi-node fabric is left out: one more GPU in a single server needs none."""
    discount_rate: float = 0.0
    """Annual rate cash is discounted at (0: nominal)."""

    def monthly_at(self, utilization: float) -> float:
        """Owning cost per month at ``utilization`` (F + p · 730 · u)."""
        return self.fixed_monthly + self.busy_hourly * HOURS_PER_MONTH * utilization

    @property
    def capital_consumed(self) -> float:
        """Purchase less its market value at the end of the horizon, plus installation:
        P · (1 − v(H)) + I (the market value in today's money with a discount rate)."""
        return _capital_consumed(
            self.option, self.purchase, self.installation, self.horizon_months, self.discount_rate
        )


def _capital_consumed(
    opt: AcquisitionOption, purchase: float, installation: float, horizon_months: int, rate: float
) -> float:
    keep = 1.0 - opt.residual_fraction * discounting.residual_weight(rate, horizon_months)
    return purchase * keep + installation


def owning_cost(
    opt: AcquisitionOption,
    horizon_months: int,
    gpus_per_server: float | None = None,
    discount_rate: float = 0.0,
) -> OwningCost:
    """``OwningCost`` of one GPU of ``opt`` with ``gpus_per_server`` GPUs sharing each host (None =
    a full server), cash discounted at ``discount_rate`` a year."""
    k = gpus_per_server if gpus_per_server is not None and gpus_per_server > 0 else float(opt.gpus_per_server)
    purchase = opt.capex_per_gpu + opt.capex_per_server / k
    installation = opt.installation_capex_per_gpu + opt.installation_capex_per_server / k
    running = opt.fixed_monthly_per_gpu + opt.fixed_monthly_per_server / k
    # (P · (1 − v(H)) + I) / H + R; discounted: (P · (1 − v(H) · d) + I) / W + R
    capital = _capital_consumed(opt, purchase, installation, horizon_months, discount_rate)
    fixed = capital / discounting.opex_month_weight(discount_rate, horizon_months) + running
    return OwningCost(
        opt, horizon_months, k, purchase, running, fixed, opt.busy_hourly_per_gpu, installation, discount_rate
    )


def gpu_day_cost(
    option: AcquisitionOption,
    horizon_months: int,
    gpus_per_server: float | None = None,
    discount_rate: float = 0.0,
) -> float:
    """One GPU of ``option`` held and busy for a whole day (``OwningCost`` at full utilisation; on
    demand: 24 rented hours): the ``C / gpus per replica`` of the self-host vs API comparison."""
    if option.mode is AcquisitionMode.ON_DEMAND:
        return option.busy_hourly_per_gpu * HOURS_PER_DAY
    if option.mode is AcquisitionMode.RESERVED:
        return option.fixed_monthly_per_gpu / DAYS_PER_MONTH
    owning = owning_cost(option, horizon_months, gpus_per_server, discount_rate)
    return owning.monthly_at(1.0) / DAYS_PER_MONTH


def buy_vs_rent(
    gpu: GpuId,
    options: Sequence[AcquisitionOption],
    *,
    horizon_months: int,
    currency: Currency,
    plan_utilization: float | None,
    plan_packing: tuple[str, float] | None = None,
    discount_rate: float = 0.0,
) -> BuyVsRent:
    """Buy vs on-demand and reserved for one GPU type (cheapest option of each rental mode).

    ``plan_packing`` = (BUY option id, GPUs per server) the plan uses for this GPU: owning is then
    priced on that option at that packing; otherwise on the cheapest BUY option, full servers.
    ``discount_rate`` > 0 compares today's values (module docstring)."""
    mine = [o for o in options if o.gpu == gpu and not o.owned]
    buys = [o for o in mine if o.mode is AcquisitionMode.BUY]
    on_demand = min(
        (o for o in mine if o.mode is AcquisitionMode.ON_DEMAND),
        key=lambda o: o.busy_hourly_per_gpu,
        default=None,
    )
    reserved = min(
        (o for o in mine if o.mode is AcquisitionMode.RESERVED),
        key=lambda o: o.fixed_monthly_per_gpu,
        default=None,
    )
    od_hourly = on_demand.busy_hourly_per_gpu if on_demand else None
    res_hourly = reserved.fixed_monthly_per_gpu / HOURS_PER_MONTH if reserved else None
    od_money = to_unit_price(od_hourly, currency) if od_hourly is not None else None
    res_money = to_unit_price(res_hourly, currency) if res_hourly is not None else None
    if not buys:
        return BuyVsRent(
            gpu=gpu, currency=currency, buy_option_id=None, owned_fixed_monthly_per_gpu=None,
            owned_cost_per_gpu_hour=None, power_per_busy_gpu_hour=0.0, purchase_per_gpu=0.0,
            on_demand_price_per_gpu_hour=od_money, reserved_price_per_gpu_hour=res_money,
            break_even_utilization_on_demand=None, break_even_utilization_reserved=None,
            plan_utilization=plan_utilization, payback_months=None,
            verdict=f"{gpu}: no purchase offer in the pricebook, so no buy-vs-rent comparison",
        )  # fmt: skip
    owning = _owning_of(buys, horizon_months, plan_packing, discount_rate)
    fixed, power = owning.fixed_monthly, owning.busy_hourly
    u_od = _tie_on_demand(fixed, power, od_hourly)
    u_res = _tie_reserved(fixed, power, res_hourly)
    payback = None
    if plan_utilization is not None and od_hourly is not None:
        payback = payback_months(owning, od_hourly, plan_utilization)
    return BuyVsRent(
        gpu=gpu,
        currency=currency,
        buy_option_id=owning.option.id,
        owned_fixed_monthly_per_gpu=fixed,
        owned_cost_per_gpu_hour=to_unit_price(fixed / HOURS_PER_MONTH, currency),
        power_per_busy_gpu_hour=power,
        purchase_per_gpu=owning.purchase,
        on_demand_price_per_gpu_hour=od_money,
        reserved_price_per_gpu_hour=res_money,
        break_even_utilization_on_demand=u_od,
        break_even_utilization_reserved=u_res,
        plan_utilization=plan_utilization,
        payback_months=payback,
        verdict=_buy_verdict(
            gpu,
            u_od=u_od,
            u=plan_utilization,
            payback=payback,
            has_od=od_hourly is not None,
            horizon_months=horizon_months,
        )
        + _reserved_verdict(fixed, power, res_hourly, u_res)
        + _packing_note(owning, planned=plan_packing is not None)
        + (f" (cash discounted at {discount_rate:.2%} a year)" if discount_rate > 0 else ""),
    )


def _owning_of(
    buys: Sequence[AcquisitionOption],
    horizon_months: int,
    plan_packing: tuple[str, float] | None,
    discount_rate: float,
) -> OwningCost:
    if plan_packing is not None:
        planned = next((o for o in buys if o.id == plan_packing[0]), None)
        if planned is not None:
            return owning_cost(planned, horizon_months, plan_packing[1], discount_rate)
    return min(
        (owning_cost(o, horizon_months, discount_rate=discount_rate) for o in buys),
        key=lambda c: (c.fixed_monthly, c.option.id),
    )


def _packing_note(owning: OwningCost, *, planned: bool) -> str:
    """Where the owning cost's host share comes from, when it is not the plan's own packing."""
    if planned or owning.option.server_id is None:
        return ""
    k = owning.gpus_per_server
    return f" (owning priced on full {k:g}-GPU {owning.option.server_id} servers: the plan buys none)"


def _tie_on_demand(fixed_monthly: float, power_hourly: float, od_hourly: float | None) -> float | None:
    if od_hourly is None or od_hourly <= power_hourly:
        return None
    u = fixed_monthly / (HOURS_PER_MONTH * (od_hourly - power_hourly))
    return u if u <= 1.0 else None


def _tie_reserved(fixed_monthly: float, power_hourly: float, reserved_hourly: float | None) -> float | None:
    if reserved_hourly is None:
        return None
    saving = reserved_hourly * HOURS_PER_MONTH - fixed_monthly
    if saving <= 0:
        return None  # owning costs more than reserving even when idle
    if power_hourly <= 0:
        return None  # owning is cheaper at every utilization
    u = saving / (HOURS_PER_MONTH * power_hourly)
    return u if u <= 1.0 else None


def payback_months(owning: OwningCost, od_hourly: float, utilization: float) -> float | None:
    """Months of not renting on demand at ``utilization`` that repay the capital owning consumes over
    the horizon (purchase less its market value at the end: module docstring); None if owning never
    saves anything per month."""
    monthly_saving = (od_hourly - owning.busy_hourly) * HOURS_PER_MONTH * utilization - owning.running_monthly
    return discounting.months_to_repay(owning.capital_consumed, monthly_saving, owning.discount_rate)


def _reserved_verdict(
    fixed_monthly: float, power: float, res_hourly: float | None, u_res: float | None
) -> str:
    if res_hourly is None:
        return ""
    if u_res is not None:
        return f"; buying beats reserving below {u_res:.0%} utilization"
    if res_hourly * HOURS_PER_MONTH <= fixed_monthly:
        return "; reserving is cheaper than buying at any utilization"
    # Owning is cheaper even when every hour is busy (the tie lies above 100 %).
    return "; buying is cheaper than reserving at any utilization"


def _buy_verdict(
    gpu: GpuId,
    *,
    u_od: float | None,
    u: float | None,
    payback: float | None,
    has_od: bool,
    horizon_months: int,
) -> str:
    parts: list[str] = []
    if not has_od:
        parts.append(f"{gpu}: no on-demand offer to compare with")
    elif u_od is None:
        parts.append(f"{gpu}: renting on demand is cheaper than buying at any utilization")
    else:
        parts.append(f"{gpu}: buying beats on-demand above {u_od:.0%} utilization")
    if u is not None:
        if payback is not None:
            beyond = f", beyond the {horizon_months}-month horizon" if payback > horizon_months else ""
            parts.append(f"at the plan's {u:.0%} it pays back in {payback:.1f} months{beyond}")
        elif has_od:
            parts.append(f"at the plan's {u:.0%} buying never pays back against on-demand")
    return "; ".join(parts)


# --------------------------------------------------------------------------------------------
# Self-host vs API
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ApiBreakEven:
    workload: str
    currency: Currency
    api_price_id: str | None
    provider: str
    api_model: str
    """The model the API price is for (the workload's own, or the closest class)."""
    same_model: bool
    self_hosted_per_million_tokens: Money | None
    api_per_million_tokens: Money | None
    break_even_daily_tokens: float | None
    """Daily tokens above which self-hosting (on the workload's main deployment) is cheaper than the
    API at every volume; None = self-hosting never wins."""
    workload_daily_tokens: float
    self_hosting_cheaper: bool | None
    monthly_difference: Money | None
    """API cost − self-hosted cost per month at the workload's volume (positive = self-hosting saves)."""
    verdict: str


def blended_api_price_per_token(
    price: ApiPrice, workload: InferenceWorkload, constraints: Constraints, book: Pricebook
) -> float:
    """API price per token at the workload's input/output mix, in the request currency and VAT
    basis (API list prices are taken as excluding VAT, as the providers publish them)."""
    per_mtok_in = priced(price.input_per_mtok, False, constraints, book)
    per_mtok_out = priced(price.output_per_mtok, False, constraints, book)
    blended = (workload.input_tokens * per_mtok_in + workload.output_tokens * per_mtok_out) / (
        workload.tokens_per_request
    )
    return blended / TOKENS_PER_MILLION


SAME_CLASS_SIZE_RATIO = 2.0
"""Another model's API price stands in only for a model of the same class: both dense or both MoE,
total and active parameters each within this factor."""


def same_class(a: ModelArch, b: ModelArch) -> bool:
    """Whether ``b``'s API price may stand in for ``a`` (``SAME_CLASS_SIZE_RATIO``, same kind)."""

    def within(x: float, y: float) -> bool:
        return max(x, y) / min(x, y) <= SAME_CLASS_SIZE_RATIO

    return (
        a.kind == b.kind
        and a.is_moe == b.is_moe
        and within(a.params_b, b.params_b)
        and within(a.active_params_b, b.active_params_b)
    )


def api_prices_for_class(
    book: Pricebook, model_id: str | None, arch: ModelArch | None
) -> tuple[list[ApiPrice], bool]:
    """API prices for the model itself (a request's own price first: ``pricebook.overrides``), else
    for the catalogue models of the same class (``same_class``) closest in size (total and active
    parameters, log scale); else none. Returns (prices, same_model)."""
    if model_id is not None:
        exact = [p for p in book.api_prices if p.model == model_id]
        own = [p for p in exact if p.source.startswith(OVERRIDE_SOURCE)]
        if own or exact:
            return own or exact, True
    if arch is None:
        return [], False
    by_id = {m.id: m for m in book.models}
    sized: list[tuple[float, ApiPrice]] = []
    for price in book.api_prices:
        other = by_id.get(price.model)
        if other is not None and same_class(arch, other):
            distance = abs(math.log(other.params_b / arch.params_b)) + abs(
                math.log(other.active_params_b / arch.active_params_b)
            )
            sized.append((distance, price))
    if not sized:
        return [], False
    closest = min(d for d, _ in sized)
    return [p for d, p in sized if d == closest], False


def daily_tokens(workload: InferenceWorkload) -> float:
    """Input + output tokens a day (given, or implied by the hourly request rates)."""
    if workload.daily_tokens is not None:
        return float(workload.daily_tokens)
    return daily_requests(workload) * workload.tokens_per_request


def api_break_even(
    workload: InferenceWorkload,
    *,
    model_id: str | None,
    arch: ModelArch | None,
    self_hosted_per_token: float | None,
    replica_day_cost: float | None,
    replica_day_tokens: float | None,
    book: Pricebook,
    constraints: Constraints,
) -> ApiBreakEven:
    """Self-hosting vs the cheapest API for the workload's model (class)."""
    currency = constraints.currency
    prices, same = api_prices_for_class(book, model_id, arch)
    volume = daily_tokens(workload)
    if not prices:
        return ApiBreakEven(
            workload=workload.name, currency=currency, api_price_id=None, provider="", api_model="",
            same_model=False,
            self_hosted_per_million_tokens=_per_m(self_hosted_per_token, currency),
            api_per_million_tokens=None, break_even_daily_tokens=None, workload_daily_tokens=volume,
            self_hosting_cheaper=None, monthly_difference=None,
            verdict=f"{workload.name}: no comparable API price (no API serves this model or one of its "
            f"class: {'MoE' if arch is not None and arch.is_moe else 'dense'}, total and active parameters "
            f"within {SAME_CLASS_SIZE_RATIO:g}×)",
        )  # fmt: skip
    price = min(prices, key=lambda p: (blended_api_price_per_token(p, workload, constraints, book), p.id))
    p = blended_api_price_per_token(price, workload, constraints, book)
    break_even = None
    if replica_day_cost is not None and replica_day_tokens is not None:
        break_even = self_hosting_break_even(replica_day_cost, replica_day_tokens, p)
    cheaper = None if self_hosted_per_token is None else self_hosted_per_token < p
    difference = None
    if self_hosted_per_token is not None:
        difference = to_money((p - self_hosted_per_token) * volume * DAYS_PER_MONTH, currency)
    class_note = (
        ""
        if same
        else f" (no API price for this model: compared with {price.model}, the closest of its class)"
    )
    has_deployment = replica_day_cost is not None and replica_day_tokens is not None
    verdict = _api_verdict(
        workload.name,
        own=self_hosted_per_token,
        api=p,
        break_even=break_even,
        volume=volume,
        has_deployment=has_deployment,
        currency=currency,
    )
    return ApiBreakEven(
        workload=workload.name,
        currency=currency,
        api_price_id=price.id,
        provider=price.provider,
        api_model=price.model,
        same_model=same,
        self_hosted_per_million_tokens=_per_m(self_hosted_per_token, currency),
        api_per_million_tokens=_per_m(p, currency),
        break_even_daily_tokens=break_even,
        workload_daily_tokens=volume,
        self_hosting_cheaper=cheaper,
        monthly_difference=difference,
        verdict=verdict + class_note,
    )


def self_hosting_break_even(
    replica_day_cost: float, replica_day_tokens: float, api_per_token: float
) -> float | None:
    """Daily tokens above which self-hosting is cheaper than the API at every volume (docstring
    of this module); None when even a fully used replica costs more per token than the API."""
    if replica_day_tokens <= 0 or api_per_token <= 0:
        return None
    one_replica_tie = replica_day_cost / api_per_token
    if one_replica_tie >= replica_day_tokens:
        return None
    k_max = math.ceil(replica_day_tokens / (replica_day_tokens - one_replica_tie)) - 1
    return max(1, k_max) * one_replica_tie


def _per_m(per_token: float | None, currency: Currency) -> Money | None:
    return None if per_token is None else to_unit_price(per_token * TOKENS_PER_MILLION, currency)


def _api_verdict(
    name: str,
    *,
    own: float | None,
    api: float,
    break_even: float | None,
    volume: float,
    has_deployment: bool,
    currency: Currency,
) -> str:
    parts = [f"{name}: API {api * TOKENS_PER_MILLION:.4g} {currency} per 1M tokens"]
    if own is not None and own > 0:
        ratio = api / own
        if ratio > 1:
            parts.append(f"self-hosting in this plan is {ratio:.2f}× cheaper per token")
        else:
            parts.append(f"the API is {1 / ratio:.2f}× cheaper per token than self-hosting in this plan")
    if not has_deployment:
        parts.append("no self-hosted deployment in the plan to size a break-even on")
    elif break_even is None:
        parts.append("self-hosting never beats the API at any volume on the plan's main deployment")
    else:
        side = "above" if volume >= break_even else "below"
        parts.append(
            f"on its main deployment self-hosting wins at any volume above {break_even:,.0f} tokens/day "
            f"(the workload's {volume:,.0f} is {side}; the per-token comparison uses the plan's "
            "fully allocated cost: peak sizing, redundancy and shared GPUs)"
        )
    return "; ".join(parts)


def resolve_params(book: Pricebook, workload: InferenceWorkload) -> tuple[str | None, ModelArch | None]:
    """(catalogue model id or None, architecture or None) of a workload's model."""
    ref = workload.model
    if ref.spec is not None:
        return None, model_from_spec(ref.spec)
    assert ref.model_id is not None  # ModelRef guarantees exactly one
    try:
        arch = catalogue_model(book, ref.model_id)
    except UnknownEntryError:
        return ref.model_id, None
    return arch.id, arch
