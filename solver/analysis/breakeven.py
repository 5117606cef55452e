"""Break-even answers: buy vs rent per GPU type, self-host vs a per-token API per workload.

Buy vs rent (per GPU, one full server's worth of a BUY option, request currency)::

    owned_fixed_monthly = [(capex_gpu·g + capex_host)·(1 − residual) / horizon
                           + fixed_gpu·g + fixed_server] / g            (g = GPUs per server)
    owned cost at utilization u, per month = owned_fixed_monthly + power_per_busy_hour · 730 · u
    on-demand at u, per month              = price_per_hour · 730 · u
    reserved, per month                    = reserved_per_hour · 730      (paid busy or idle)

    break-even vs on-demand:  u* = owned_fixed_monthly / (730 · (price_per_hour − power_per_busy_hour))
    break-even vs reserved:   u* = (reserved_per_hour · 730 − owned_fixed_monthly)
                                   / (730 · power_per_busy_hour)
                              (owning is cheaper below u*: above it the extra power outweighs the saving)
    payback months at u:      purchase per GPU / (on-demand at u − running cost at u), where the
                              running cost excludes the purchase (support, power, colocation)

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
from pricebook.schema import ApiPrice, Currency, GpuId, Money, Pricebook
from solver.analysis.tco import daily_requests, to_money, to_unit_price
from solver.domain import AcquisitionMode, Constraints, InferenceWorkload
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


def _owned_per_gpu(opt: AcquisitionOption, horizon_months: int) -> tuple[float, float, float]:
    """(fixed monthly incl. capex spread, running monthly excl. capex, purchase) per GPU of a full server."""
    g = opt.gpus_per_server
    purchase = opt.capex_per_gpu * g + opt.capex_per_server
    running = opt.fixed_monthly_per_gpu * g + opt.fixed_monthly_per_server
    fixed = purchase * (1.0 - opt.residual_fraction) / horizon_months + running
    return fixed / g, running / g, purchase / g


def gpu_day_cost(option: AcquisitionOption, horizon_months: int) -> float:
    """One GPU of ``option`` held and busy for a whole day (a full server's share of the host):
    the ``C / gpus per replica`` of the self-host vs API comparison (module docstring)."""
    if option.mode is AcquisitionMode.ON_DEMAND:
        return option.busy_hourly_per_gpu * HOURS_PER_DAY
    per_server = option.gpus_per_server
    capex = option.capex_per_gpu_with_host * (1 - option.residual_fraction)
    monthly = (
        capex / horizon_months + option.fixed_monthly_per_gpu + option.fixed_monthly_per_server / per_server
    )
    return monthly / DAYS_PER_MONTH + option.busy_hourly_per_gpu * HOURS_PER_DAY


def buy_vs_rent(
    gpu: GpuId,
    options: Sequence[AcquisitionOption],
    *,
    horizon_months: int,
    currency: Currency,
    plan_utilization: float | None,
) -> BuyVsRent:
    """Buy vs on-demand and reserved for one GPU type (cheapest option of each mode)."""
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
    buy = min(buys, key=lambda o: (_owned_per_gpu(o, horizon_months)[0], o.id))
    fixed, running, purchase = _owned_per_gpu(buy, horizon_months)
    power = buy.busy_hourly_per_gpu
    u_od = _tie_on_demand(fixed, power, od_hourly)
    u_res = _tie_reserved(fixed, power, res_hourly)
    payback = None
    if plan_utilization is not None and od_hourly is not None:
        payback = payback_months(purchase, running, power, od_hourly, plan_utilization)
    return BuyVsRent(
        gpu=gpu,
        currency=currency,
        buy_option_id=buy.id,
        owned_fixed_monthly_per_gpu=fixed,
        owned_cost_per_gpu_hour=to_unit_price(fixed / HOURS_PER_MONTH, currency),
        power_per_busy_gpu_hour=power,
        purchase_per_gpu=purchase,
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
        + _reserved_verdict(fixed, power, res_hourly, u_res),
    )


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


def payback_months(
    purchase_per_gpu: float, running_monthly: float, power_hourly: float, od_hourly: float, utilization: float
) -> float | None:
    """Months until not renting on demand repays the purchase; None if owning never catches up."""
    monthly_saving = (od_hourly - power_hourly) * HOURS_PER_MONTH * utilization - running_monthly
    if monthly_saving <= 0:
        return None
    return purchase_per_gpu / monthly_saving


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


def api_prices_for_class(
    book: Pricebook, model_id: str | None, params_b: float
) -> tuple[list[ApiPrice], bool]:
    """API prices for the model itself, else for the catalogue model of the same kind (decoder or
    embedding) closest in size (log scale). Returns (prices, same_model)."""
    if model_id is not None:
        exact = [p for p in book.api_prices if p.model == model_id]
        if exact:
            return exact, True
    if params_b <= 0:
        return [], False
    by_id = {m.id: m for m in book.models}
    own = by_id.get(model_id) if model_id is not None else None
    kind = own.kind if own is not None else "decoder"
    sized: list[tuple[float, ApiPrice]] = []
    for price in book.api_prices:
        arch = by_id.get(price.model)
        if arch is not None and arch.kind == kind:
            sized.append((abs(math.log(arch.params_b / params_b)), price))
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
    params_b: float,
    self_hosted_per_token: float | None,
    replica_day_cost: float | None,
    replica_day_tokens: float | None,
    book: Pricebook,
    constraints: Constraints,
) -> ApiBreakEven:
    """Self-hosting vs the cheapest API for the workload's model (class)."""
    currency = constraints.currency
    prices, same = api_prices_for_class(book, model_id, params_b)
    volume = daily_tokens(workload)
    if not prices:
        return ApiBreakEven(
            workload=workload.name, currency=currency, api_price_id=None, provider="", api_model="",
            same_model=False,
            self_hosted_per_million_tokens=_per_m(self_hosted_per_token, currency),
            api_per_million_tokens=None, break_even_daily_tokens=None, workload_daily_tokens=volume,
            self_hosting_cheaper=None, monthly_difference=None,
            verdict=f"{workload.name}: no API price in the pricebook for this model class",
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
    class_note = "" if same else f" (closest priced model class: {price.model})"
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


def resolve_params(book: Pricebook, workload: InferenceWorkload) -> tuple[str | None, float]:
    """(catalogue model id or None, total parameters in billions) of a workload's model."""
    ref = workload.model
    if ref.spec is not None:
        return None, ref.spec.params_b
    assert ref.model_id is not None  # ModelRef guarantees exactly one
    try:
        arch = catalogue_model(book, ref.model_id)
    except UnknownEntryError:
        return ref.model_id, 0.0
    return arch.id, arch.params_b
