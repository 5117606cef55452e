"""``build_quote``: a plan's domain objects (``PlanResult`` + the resolved request) → ``QuoteData``.

No arithmetic of its own beyond presentation: every amount is a line of the plan's rounded TCO
report (``solver.analysis.tco``) or a sum of them. Two things a quote shows that the plan does not
spell out are derived here, in the open: the bill of materials' unit prices (a line's purchase
amount ÷ its quantity) with VAT on top of the supply amount (공급가액 × rate, or taken out of the
total when the plan's prices include VAT), and the per-token API alternative (each priced
workload's daily tokens × its blended API price × days over the horizon).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable
from decimal import Decimal

from pricebook.schema import Money, Pricebook
from report.assumptions import assumptions
from report.bom_lines import (
    REQUEST_SUPPLIED,
    bom_line,
    gpu_name,
    network_item,
    rounding_line,
    server_name,
    storage_line,
)
from report.data import (
    Alternative,
    AlternativeKind,
    Bom,
    BomKind,
    BomLine,
    BookDepreciationYear,
    CostComponentRow,
    DiscountedYear,
    Discounting,
    Economics,
    Frontier,
    FrontierRow,
    OpexMonthly,
    Provenance,
    QuoteCap,
    QuoteData,
    QuoteNotice,
    QuoteSite,
    RentalLine,
    SolverInfo,
    VatSummary,
)
from report.disaggregation import why_row
from report.embeddings import embedding_rows, hourly_loads
from report.schedule import schedule_of
from report.schedule_alternatives import staged_alternatives
from report.schedule_quote import staged_bom, staged_economics
from report.sections import (
    api_rows,
    buy_vs_rent_rows,
    group_rows,
    sensitivity_rows,
    training_rows,
    workload_rows,
)
from solver.analysis.tco import OptionTco, add_money, to_money, vat_lines
from solver.analysis.whatif import describe_fleet
from solver.domain import AcquisitionMode, Storage
from solver.optimizer.explain import NEEDED_TOLERANCE
from solver.optimizer.results import CapRelaxation
from solver.perf.calibration import load_calibration
from solver.planner.results import PlanFleetLine, PlanResult, SweepFrontier
from solver.pricing import costs
from solver.resolve import ResolvedRequest
from solver.units import DAYS_PER_MONTH, TOKENS_PER_MILLION

RENTED = (AcquisitionMode.RESERVED, AcquisitionMode.ON_DEMAND)


def build_quote(
    result: PlanResult,
    resolved: ResolvedRequest,
    *,
    request_json: str | None = None,
    rent_only: PlanResult | None = None,
    frontier: SweepFrontier | None = None,
    fleetplan_version: str = "",
    quoted_on: dt.date | None = None,
    title: str = "",
) -> QuoteData:
    """Everything the quote shows. ``request_json`` is the request as the caller sent it (default:
    the domain request's JSON); ``rent_only`` the plan of the same request with rentals only."""
    book = resolved.book
    currency = result.currency
    economics = staged_economics(result, _economics(result))
    plan_tco = economics.horizon_tco if economics is not None else None
    saving = result.baseline_saving
    on_site = [line for line in result.fleet if line.mode is AcquisitionMode.BUY]
    return QuoteData(
        title=title,
        quoted_on=quoted_on or dt.date.today(),
        status=result.status.value,
        summary=result.summary,
        currency=currency,
        horizon_months=_horizon_months(result),
        includes_vat=result.includes_vat,
        fleet_summary=describe_fleet(result.solution),
        gpus=sum(line.gpus for line in result.fleet),
        economics=economics,
        saving=saving.saving if saving is not None else None,
        saving_fraction=saving.saving_fraction if saving is not None else None,
        saving_against=saving.best_baseline_gpu if saving is not None else "",
        alternatives=_alternatives(result, rent_only, plan_tco, rentals_allowed=_rentals_allowed(resolved))
        if result.schedule is None
        else staged_alternatives(result, rent_only, rentals_allowed=_rentals_allowed(resolved)),
        bom=_bom(result, book, resolved.request.constraints.storage)
        if result.schedule is None
        else staged_bom(result, book, resolved.request.constraints.storage),
        workloads=workload_rows(result, resolved.request),
        groups=group_rows(result),
        disaggregation=why_row(result),
        training=training_rows(result, resolved.request),
        buy_vs_rent=buy_vs_rent_rows(result),
        api=api_rows(result),
        sensitivity=sensitivity_rows(result),
        frontier=_frontier(frontier),
        assumptions=assumptions(result, resolved, _all_fleet_lines(result, rent_only)),
        fx_note=result.fx_rate_note,
        vat_rate=book.site.vat_rate,
        uncertainty_low=result.uncertainty.low_factor,
        uncertainty_high=result.uncertainty.high_factor,
        uncertainty_note=result.uncertainty.note,
        depreciation_note=_depreciation_note(book, _horizon_months(result)),
        diagnosis=_diagnosis(result),
        warnings=result.warnings,
        notices=tuple(QuoteNotice(code=n.code, params=n.params) for n in result.notices),
        solver=_solver(result),
        provenance=Provenance(
            fleetplan_version=fleetplan_version,
            pricebook_version=result.pricebook_version,
            pricebook_hash=result.pricebook_hash,
            calibration_date=load_calibration().fit_date,
            overrides_applied=result.overrides_applied,
            request_json=request_json
            or json.dumps(resolved.request.model_dump(mode="json"), indent=2, ensure_ascii=False),
        ),
        allowed_modes=tuple(m.value for m in resolved.request.constraints.allowed_modes),
        capex_budget=resolved.request.constraints.capex_budget,
        embeddings=embedding_rows(result, resolved),
        hourly=hourly_loads(result),
        budget_includes_vat=resolved.request.constraints.capex_budget_includes_vat,
        power_kw=sum(line.power_kw for line in on_site) if result.tco is not None else None,
        rack_units=sum(line.rack_units for line in on_site) if result.tco is not None else None,
        site=_site(resolved),
        schedule=schedule_of(result.schedule),
    )


def _site(resolved: ResolvedRequest) -> QuoteSite:
    constraints, book = resolved.request.constraints, resolved.book
    return QuoteSite(
        site_model=costs.site_model(constraints, book).value,
        colocation_includes_power=book.site.colocation_includes_power,
        residual_value_credit=costs.residual_value_credit(constraints, book),
    )


def _rentals_allowed(resolved: ResolvedRequest) -> bool:
    return bool(set(resolved.request.constraints.allowed_modes) & set(RENTED))


def _economics(result: PlanResult) -> Economics | None:
    if result.tco is None:
        return None
    total = result.tco.total
    return Economics(
        horizon_tco=total.horizon_total,
        capex=total.capex,
        residual_value=total.residual_value,
        depreciation_monthly=total.depreciation_monthly,
        opex=OpexMonthly(
            support=total.support_monthly,
            power=total.power_monthly,
            colocation=total.colocation_monthly,
            reserved=total.reserved_monthly,
            on_demand=total.on_demand_monthly,
            total=total.opex_monthly,
            software=total.software_monthly,
            storage=total.storage_monthly,
        ),
        components=tuple(
            CostComponentRow(
                name=c.name.value,
                horizon_amount=c.horizon_amount,
                monthly_amount=c.monthly_amount,
                explanation=c.explanation,
            )
            for c in result.cost_components
        ),
        vat=VatSummary(
            rate=result.vat.rate,
            supply=result.vat.supply,
            vat=result.vat.vat,
            total=result.vat.total,
            horizon_tco_with_vat=result.vat.horizon_total_with_vat,
        )
        if result.vat is not None
        else None,
        book_depreciation=tuple(
            BookDepreciationYear(
                year=d.year, months=d.months, depreciation=d.depreciation, book_value_end=d.book_value_end
            )
            for d in result.depreciation
        ),
        discounting=_discounting(result),
        lease_by_year=result.lease_by_year,
    )


def _discounting(result: PlanResult) -> Discounting | None:
    flows = result.cash_flows
    if flows is None:
        return None
    return Discounting(
        rate=flows.rate,
        objective=flows.objective.value,
        years=tuple(
            DiscountedYear(year=y.year, months=y.months, nominal=y.nominal, discounted=y.discounted)
            for y in flows.years
        ),
        npv=flows.npv,
        nominal_total=flows.nominal_total,
    )


# --------------------------------------------------------------------------------------------
# Bill of materials
# --------------------------------------------------------------------------------------------


def _purchase_lines(line: PlanFleetLine, tco: OptionTco, book: Pricebook) -> list[BomLine]:
    """The line's GPUs, then its hosts when they were bought (the request counts host costs), the
    fabric of multi-node servers and the installation."""
    label = line.price_label.value if line.price_label is not None else ""
    source = (line.offer_id, line.provider, label)
    items = [(BomKind.GPU, line.gpu, gpu_name(book, line.gpu), tco.tco.purchase_gpus, line.gpus, source)]
    if tco.tco.purchase_hosts.amount != 0 and line.server_id is not None:
        name = server_name(book, line.server_id)
        items.append((BomKind.HOST, line.server_id, name, tco.tco.purchase_hosts, line.servers, source))
    if tco.tco.networking.amount != 0 and line.server_id is not None:
        items.append(network_item(book, line.server_id, tco.tco.networking, line.servers))
    if tco.tco.installation.amount != 0:
        quantity = line.servers or line.gpus
        what = "servers" if line.servers else "GPUs"
        request = (REQUEST_SUPPLIED, REQUEST_SUPPLIED, REQUEST_SUPPLIED)
        name = f"installation / integration of {quantity} {what}"
        # One lump sum: a share of the GPUs' and of the hosts' prices plus a per-server fee has no
        # whole-won price per server when a server is not full.
        items.append((BomKind.INSTALLATION, line.option_id, name, tco.tco.installation, 1, request))
    lines = [
        bom_line(kind, item_id, item_name, total=total, quantity=quantity, origin=origin, owned=line.owned)
        for kind, item_id, item_name, total, quantity, origin in items
    ]
    server = server_name(book, line.server_id) if line.server_id is not None else ""
    details: dict[BomKind, dict[str, object]] = {
        BomKind.INSTALLATION: {"covers": line.servers or line.gpus, "covers_servers": bool(line.servers)},
        BomKind.NETWORKING: {"server_name": server},
    }
    bought = sum((b.amount.amount for b in lines if b.kind in (BomKind.GPU, BomKind.HOST)), Decimal(0))
    if bought:
        rates = {
            "support_rate": float(tco.tco.support_monthly.amount * 12 / bought),
            "residual_fraction": float(tco.tco.residual_value.amount / bought),
        }
        for kind in (BomKind.GPU, BomKind.HOST):
            details[kind] = details.get(kind, {}) | rates
    return [b.model_copy(update=details.get(b.kind, {})) for b in lines]


def _lease_line(line: PlanFleetLine, tco: OptionTco) -> RentalLine:
    """Leased servers: a monthly line (the lease's payments over the horizon ÷ its months, buy-out
    included; the hardware's support and site costs are in the cost lines as for bought servers)."""
    months = tco.tco.horizon_months
    monthly = to_money(float(tco.tco.lease.amount) / months, tco.tco.currency)
    return RentalLine(
        gpu_id=line.gpu,
        mode="lease",
        offer_id=line.offer_id,
        provider=line.provider,
        price_label=line.price_label.value if line.price_label is not None else "",
        gpus=line.gpus,
        price_per_gpu_hour=None,
        busy_gpu_hours_per_month=line.busy_gpu_hours_per_month,
        monthly_amount=monthly,
    )


def _rental_line(line: PlanFleetLine, tco: OptionTco) -> RentalLine:
    monthly = tco.tco.reserved_monthly if line.mode is AcquisitionMode.RESERVED else tco.tco.on_demand_monthly
    return RentalLine(
        gpu_id=line.gpu,
        mode=line.mode.value,
        offer_id=line.offer_id,
        provider=line.provider,
        price_label=line.price_label.value if line.price_label is not None else "",
        gpus=line.gpus,
        price_per_gpu_hour=line.price_per_gpu_hour,
        busy_gpu_hours_per_month=line.busy_gpu_hours_per_month,
        monthly_amount=monthly,
    )


def _bom(result: PlanResult, book: Pricebook, storage: Storage | None = None) -> Bom | None:
    if result.tco is None:
        return None
    currency = result.currency
    by_option = {o.option_id: o for o in result.tco.by_option}
    lines: list[BomLine] = []
    rentals: list[RentalLine] = []
    leased = {o.option_id for o in result.tco.by_option if o.tco.lease.amount}
    for line in result.fleet:
        tco = by_option[line.option_id]
        if line.mode in (AcquisitionMode.RESERVED, AcquisitionMode.ON_DEMAND):
            rentals.append(_rental_line(line, tco))
        elif line.option_id in leased:
            rentals.append(_lease_line(line, tco))
        else:
            lines.extend(_purchase_lines(line, tco, book))
    stored = storage_line(storage, result.tco.total.storage)
    if stored is not None:
        lines.append(stored)
    # The purchases' own support and market value (leased hardware's are on no purchase line).
    kept = [o.tco for o in result.tco.by_option if o.option_id not in leased]
    support = sum((t.support_monthly.amount for t in kept), Decimal(0)) * 12
    residual = sum((t.residual_value.amount for t in kept), Decimal(0))
    lines = _scaled_rates(lines, support, residual)
    rounding = rounding_line(result.tco.total.capex, add_money((b.amount for b in lines), currency))
    if rounding is not None:
        lines.append(rounding)
    supply = add_money((b.amount for b in lines), currency)
    # VAT only when the request asked for it, at its rate (issue 15's line on the purchases)
    rate = result.vat.rate if result.vat is not None else 0.0
    vat = vat_lines(result.tco.total, rate).capex_vat if result.vat is not None else None
    total = add_money((supply, vat), currency) if vat is not None else supply
    return Bom(
        lines=tuple(lines),
        rentals=tuple(rentals),
        supply_amount=supply,
        vat_rate=rate,
        vat=vat,
        total=total,
    )


def _scaled_rates(lines: list[BomLine], support_per_year: Decimal, residual: Decimal) -> list[BomLine]:
    """The lines' support rates and residual fractions scaled so that Σ amount × rate is the
    plan's (rounded) total exactly: each option's figures are rounded on their own."""

    def factor(total: Decimal, attribute: str) -> float:
        found = sum(float(b.amount.amount) * getattr(b, attribute) for b in lines)
        return float(total) / found if found else 1.0

    support, kept = factor(support_per_year, "support_rate"), factor(residual, "residual_fraction")
    return [
        b.model_copy(
            update={"support_rate": b.support_rate * support, "residual_fraction": b.residual_fraction * kept}
        )
        for b in lines
    ]


# --------------------------------------------------------------------------------------------
# Alternatives side by side
# --------------------------------------------------------------------------------------------


def _extra(tco: Money | None, plan_tco: Money | None) -> tuple[Money | None, float | None]:
    if tco is None or plan_tco is None:
        return None, None
    extra = Money(amount=tco.amount - plan_tco.amount, currency=tco.currency)
    fraction = float(extra.amount / plan_tco.amount) if plan_tco.amount else None
    return extra, fraction


def _plan_alternative(
    kind: AlternativeKind, name: str, result: PlanResult, plan_tco: Money | None
) -> Alternative:
    tco = result.horizon_tco
    extra, fraction = _extra(tco, plan_tco) if kind is not AlternativeKind.RECOMMENDED else (None, None)
    return Alternative(
        kind=kind,
        name=name,
        feasible=result.solution.has_plan,
        horizon_tco=tco,
        capex=result.tco.total.capex if result.tco is not None else None,
        gpus=sum(line.gpus for line in result.fleet),
        fleet_summary=describe_fleet(result.solution),
        extra_cost=extra,
        extra_fraction=fraction,
        reason="" if result.solution.has_plan else result.summary,
    )


def _api_alternative(result: PlanResult, plan_tco: Money | None) -> Alternative | None:
    """Every inference workload on its per-token API: comparable only when each has a price and
    the request has no training (an API does not train)."""
    rows = result.break_even.api
    if not rows:
        return None
    currency = result.currency
    priced = [a for a in rows if a.api_per_million_tokens is not None]
    monthly = sum(
        (
            a.api_per_million_tokens.amount * Decimal(repr(a.workload_daily_tokens)) / TOKENS_PER_MILLION
            for a in priced
            if a.api_per_million_tokens is not None
        ),
        Decimal(0),
    ) * Decimal(repr(DAYS_PER_MONTH))
    cost = to_money(float(monthly) * result.horizon_months, currency) if priced else None
    missing = [a.workload for a in rows if a.api_per_million_tokens is None]
    reasons = []
    if missing:
        reasons.append("no API price for: " + ", ".join(missing))
    if result.solution.training:
        reasons.append("training runs are not offered as an API; the amount covers inference only")
    comparable = not reasons
    extra, fraction = _extra(cost, plan_tco) if comparable else (None, None)
    return Alternative(
        kind=AlternativeKind.API,
        name=", ".join(dict.fromkeys(a.provider for a in priced if a.provider)),
        feasible=not missing,
        horizon_tco=cost,
        capex=Money(amount=Decimal(0), currency=currency),
        gpus=0,
        fleet_summary=", ".join(f"{a.workload}: {a.api_price_id}" for a in priced),
        extra_cost=extra,
        extra_fraction=fraction,
        reason="; ".join(reasons),
    )


def _alternatives(
    result: PlanResult, rent_only: PlanResult | None, plan_tco: Money | None, *, rentals_allowed: bool
) -> tuple[Alternative, ...]:
    """The plan, each single-GPU fleet, rent-only, the API; renting and a hosted API meet the
    request only when it allows renting (a buy-only request keeps its GPUs on its own premises)."""
    out = [_plan_alternative(AlternativeKind.RECOMMENDED, "", result, plan_tco)]
    for b in result.baselines:
        extra, fraction = _extra(b.horizon_tco, plan_tco)
        out.append(
            Alternative(
                kind=AlternativeKind.SINGLE_GPU,
                name=b.gpu,
                feasible=b.feasible,
                horizon_tco=b.horizon_tco,
                capex=b.capex,
                gpus=sum(line.gpus for line in b.fleet),
                fleet_summary=b.fleet_summary,
                extra_cost=extra,
                extra_fraction=fraction,
                reason="" if b.feasible else b.reason,
                binding_caps=tuple(_cap(c) for c in b.binding_caps),
            )
        )
    outside = {"meets_requirement": rentals_allowed}
    if rent_only is not None:
        out.append(
            _plan_alternative(AlternativeKind.RENT_ONLY, "", rent_only, plan_tco).model_copy(update=outside)
        )
    api = _api_alternative(result, plan_tco)
    if api is not None:
        out.append(api.model_copy(update=outside))
    return tuple(out)


def _cap(relaxation: CapRelaxation) -> QuoteCap:
    low = relaxation.needed_at_least
    return QuoteCap(
        cap=relaxation.cap,
        limit=relaxation.limit,
        needed=relaxation.needed,
        proven=low is not None and relaxation.needed <= low * (1 + NEEDED_TOLERANCE),
        fleet=relaxation.fleet,
    )


def _all_fleet_lines(result: PlanResult, rent_only: PlanResult | None) -> Iterable[PlanFleetLine]:
    yield from result.fleet
    for b in result.baselines:
        yield from b.fleet
    if rent_only is not None:
        yield from rent_only.fleet


# --------------------------------------------------------------------------------------------
# The rest
# --------------------------------------------------------------------------------------------


def _frontier(frontier: SweepFrontier | None) -> Frontier | None:
    if frontier is None:
        return None
    return Frontier(
        axis=frontier.axis.value,
        points=tuple(
            FrontierRow(
                value=p.value,
                status=p.status.value,
                horizon_tco=p.horizon_tco,
                fleet_summary=p.fleet_summary,
                pareto_optimal=p.pareto_optimal,
            )
            for p in frontier.points
        ),
    )


def _depreciation_note(book: Pricebook, horizon_months: int) -> str:
    site = book.site
    curves = "; ".join(
        f"{c.gpu_class.value}: " + ", ".join(f"{p.fraction:.0%} at {p.age_months} months" for p in c.points)
        for c in site.residual_curves
    )
    return (
        f"the TCO credits the market (resale) value at month {horizon_months} by GPU class ({curves}); "
        f"book depreciation is straight line to zero over {site.depreciation_months} months "
        "(accounting only)"
    )


def _diagnosis(result: PlanResult) -> tuple[str, ...]:
    diagnosis = result.solution.diagnosis
    if diagnosis is None:
        return ()
    lines: list[str] = list(diagnosis.messages)
    for u in diagnosis.unservable:
        lines.extend(f"{u.workload}: {reason}" for reason in u.reasons[:3])
    lines.extend(c.message for c in diagnosis.binding_caps)
    return tuple(dict.fromkeys(lines))


def _solver(result: PlanResult) -> SolverInfo:
    stats = result.solution.stats
    return SolverInfo(
        status=stats.status.value,
        backend=stats.backend,
        objective=stats.objective,
        best_bound=stats.best_bound,
        gap=stats.gap,
        seconds=stats.seconds,
        limit_fired=stats.limit_fired.value,
        complete=result.complete,
    )


def _horizon_months(result: PlanResult) -> int:
    """The plan's months: a multi-year plan's whole horizon (its answer's lines are its last year's)."""
    if result.schedule is None:
        return result.horizon_months
    return sum(y.months for y in result.schedule.years)
