"""What changed between two answers, field by field on the Plan messages: ComparePlans (two saved
plans) and RepricePlan (a saved plan against today's evaluation of its fleet).

Money differences are exact decimal subtraction of the Money amounts, only within one currency.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from api.fleetplan.v1 import common_pb2, plan_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import plan_store_pb2 as store_api
from report.text import deployment, disaggregated, role, uses_text
from service.convert.money import decimal_text

TOTALS = ("capex", "opex_monthly", "residual_value", "horizon_tco")
"""CostBreakdown totals compared (field names)."""
VERSIONS = ("pricebook_version", "pricebook_content_hash", "performance_model_version", "server_version")

LineKey = tuple[str, int, str, bool]


def _money(message: common_pb2.Money | None) -> Decimal | None:
    return Decimal(message.amount) if message is not None and message.amount else None


def money_change(base: common_pb2.Money | None, other: common_pb2.Money | None) -> common_pb2.Money | None:
    """other − base, or None when either is missing or the currencies differ."""
    if base is None or other is None or not base.amount or not other.amount:
        return None
    if base.currency_code != other.currency_code:
        return None
    return common_pb2.Money(
        amount=decimal_text(Decimal(other.amount) - Decimal(base.amount)), currency_code=base.currency_code
    )


def money_text(message: common_pb2.Money | None) -> str:
    if message is None or not message.amount:
        return "—"
    return f"{Decimal(message.amount):,} {message.currency_code}"


def _mode_name(mode: int) -> str:
    return common_pb2.AcquisitionMode.Name(mode).removeprefix("ACQUISITION_MODE_").lower()  # type: ignore[arg-type]


def _line_key(line: plan_pb2.FleetLine) -> LineKey:
    return (line.gpu_id, int(line.mode), line.server_id, line.owned)


def _line_name(key: LineKey) -> str:
    gpu, mode, server, owned = key
    where = f" on {server}" if server else ""
    return f"{gpu} {'owned' if owned else _mode_name(mode)}{where}"


@dataclass
class _LineTotal:
    gpus: int = 0
    cost: common_pb2.Money | None = None


def _lines(plan: plan_pb2.Plan) -> dict[LineKey, _LineTotal]:
    out: dict[LineKey, _LineTotal] = {}
    for line in plan.fleet:
        total = out.setdefault(_line_key(line), _LineTotal())
        total.gpus += line.gpu_count
        cost = line.horizon_cost if line.HasField("horizon_cost") else None
        if total.cost is None:
            total.cost = cost
        elif cost is not None:
            total.cost = common_pb2.Money(
                amount=decimal_text(Decimal(total.cost.amount) + Decimal(cost.amount)),
                currency_code=cost.currency_code,
            )
    return out


def fleet_changes(base: plan_pb2.Plan, other: plan_pb2.Plan) -> list[store_api.FleetLineChange]:
    before, after = _lines(base), _lines(other)
    changes = []
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key, _LineTotal()), after.get(key, _LineTotal())
        delta = money_change(old.cost, new.cost)
        if (
            old.gpus == new.gpus
            and (delta is None or Decimal(delta.amount) == 0)
            and (old.cost is None) == (new.cost is None)
        ):
            continue
        change = store_api.FleetLineChange(
            gpu_id=key[0],
            mode=key[1],  # type: ignore[arg-type]
            server_id=key[2],
            owned=key[3],
            base_gpu_count=old.gpus,
            other_gpu_count=new.gpus,
            description=f"{_line_name(key)}: {old.gpus} → {new.gpus} GPUs "
            f"({money_text(old.cost)} → {money_text(new.cost)})",
        )
        for name, value in (("base_horizon_cost", old.cost), ("other_horizon_cost", new.cost)):
            if value is not None:
                getattr(change, name).CopyFrom(value)
        if delta is not None:
            change.horizon_cost_change.CopyFrom(delta)
        changes.append(change)
    return changes


def _cost_change(
    name: str, old: common_pb2.Money | None, new: common_pb2.Money | None
) -> store_api.CostChange | None:
    if (
        old is not None
        and new is not None
        and old.amount == new.amount
        and old.currency_code == new.currency_code
    ):
        return None
    if old is None and new is None:
        return None
    change = store_api.CostChange(name=name)
    if old is not None:
        change.base_amount.CopyFrom(old)
    if new is not None:
        change.other_amount.CopyFrom(new)
    delta = money_change(old, new)
    if delta is not None:
        change.change.CopyFrom(delta)
    return change


def total_changes(base: plan_pb2.CostBreakdown, other: plan_pb2.CostBreakdown) -> list[store_api.CostChange]:
    found = (
        _cost_change(
            name,
            getattr(base, name) if base.HasField(name) else None,  # type: ignore[arg-type]
            getattr(other, name) if other.HasField(name) else None,  # type: ignore[arg-type]
        )
        for name in TOTALS
    )
    return [c for c in found if c is not None]


def component_changes(
    base: plan_pb2.CostBreakdown, other: plan_pb2.CostBreakdown
) -> list[store_api.CostChange]:
    before = {c.name: c.horizon_amount for c in base.components}
    after = {c.name: c.horizon_amount for c in other.components}
    names = [*before, *(n for n in after if n not in before)]
    found = (_cost_change(n, before.get(n), after.get(n)) for n in names)
    return [c for c in found if c is not None]


def _precision(value: int) -> str:
    return common_pb2.Precision.Name(value).removeprefix("PRECISION_").lower()  # type: ignore[arg-type]


def deployment_text(deployment: plan_pb2.WorkloadDeployment | None) -> str:
    if deployment is None:
        return "not served"
    groups = list(deployment.replica_groups)
    if len(groups) > 1:
        return " + ".join(f"{g.gpu_id} TP{g.tp} {_precision(g.precision)} ×{g.replicas}" for g in groups)
    return f"{deployment.gpu_id} TP{deployment.tp} {_precision(deployment.precision)} ×{deployment.replicas}"


def _deployment_shape(deployment: plan_pb2.WorkloadDeployment) -> tuple[object, ...]:
    groups = tuple(
        (g.gpu_id, g.tp, g.mig_slice, g.precision, g.kv_precision, g.replicas)
        for g in deployment.replica_groups
    )
    return (
        deployment.gpu_id,
        deployment.tp,
        deployment.precision,
        deployment.kv_precision,
        deployment.replicas,
        groups,
    )


def _role_text(r: plan_pb2.DisaggregatedRole) -> str:
    return role(r.gpu_id, r.tp, r.ep, r.attention_dp, _precision(r.precision))


def disaggregated_units(plan: plan_pb2.Plan) -> dict[str, str]:
    """Group id → the unit of each disaggregated group, in words."""
    return {
        g.group_id: disaggregated(
            _role_text(g.disaggregation.prefill),
            g.disaggregation.prefill.engines_per_unit,
            _role_text(g.disaggregation.decode),
            g.disaggregation.decode.engines_per_unit,
        )
        for g in plan.deployment_groups
        if g.HasField("disaggregation")
    }


def row_text(row: plan_pb2.WorkloadRow | None, units: dict[str, str] | None = None) -> str:
    """A workload as the planner's row says it runs: each deployment at its peak with its
    replica-equivalents (a shared pool's share included; a disaggregated group by its unit, from
    ``units``), then those used only in other hours."""
    if row is None or not row.served:
        return "not served"
    units = units or {}
    uses = [
        (
            u.replicas,
            u.replicas_max,
            (units.get(u.group_id) or deployment(u.gpu_id, u.tp, u.mig_slice, _precision(u.precision)))
            + (" shared" if u.shared else ""),
        )
        for u in row.uses
    ]
    return uses_text(uses, "other hours")


def _row_shape(row: plan_pb2.WorkloadRow | None, units: dict[str, str]) -> tuple[object, ...]:
    if row is None:
        return ()
    return tuple(
        (
            u.gpu_id,
            u.tp,
            u.mig_slice,
            u.precision,
            u.shared,
            round(u.replicas, 3),
            round(u.replicas_max, 3),
            units.get(u.group_id, ""),
        )
        for u in row.uses
    )


def _change_text(name: str, base: plan_pb2.Plan, other: plan_pb2.Plan) -> str | None:
    """How a workload's deployment changed (None: it did not), from the plans' rows when both have
    them (plans saved before the rows existed: from their deployments)."""
    if base.workload_rows and other.workload_rows:
        old_row = next((w for w in base.workload_rows if w.workload_name == name), None)
        new_row = next((w for w in other.workload_rows if w.workload_name == name), None)
        old_units, new_units = disaggregated_units(base), disaggregated_units(other)
        if (
            old_row is not None
            and new_row is not None
            and _row_shape(old_row, old_units) == _row_shape(new_row, new_units)
        ):
            return None
        return f"{name}: {row_text(old_row, old_units)} → {row_text(new_row, new_units)}"
    old = next((d for d in base.deployments if d.workload_name == name), None)
    new = next((d for d in other.deployments if d.workload_name == name), None)
    if old is not None and new is not None and _deployment_shape(old) == _deployment_shape(new):
        return None
    return f"{name}: {deployment_text(old)} → {deployment_text(new)}"


def deployment_changes(base: plan_pb2.Plan, other: plan_pb2.Plan) -> list[store_api.DeploymentChange]:
    before = {d.workload_name: d for d in base.deployments}
    after = {d.workload_name: d for d in other.deployments}
    changes = []
    for name in [*before, *(n for n in after if n not in before)]:
        old, new = before.get(name), after.get(name)
        text = _change_text(name, base, other)
        if text is None:
            continue
        change = store_api.DeploymentChange(workload_name=name, description=text)
        if old is not None:
            change.base.CopyFrom(old)
        if new is not None:
            change.other.CopyFrom(new)
        changes.append(change)
    return changes


def version_changes(
    base: common_pb2.Provenance, other: common_pb2.Provenance
) -> list[store_api.VersionChange]:
    return [
        store_api.VersionChange(name=name, base_value=getattr(base, name), other_value=getattr(other, name))
        for name in VERSIONS
        if getattr(base, name) != getattr(other, name)
    ]


def _cost_words(changes: Iterable[store_api.CostChange]) -> list[str]:
    return [
        f"{c.name}: {money_text(c.base_amount if c.HasField('base_amount') else None)} → "
        f"{money_text(c.other_amount if c.HasField('other_amount') else None)}"
        for c in changes
    ]


def compare(base: api.PlanFleetResponse, other: api.PlanFleetResponse) -> store_api.ComparePlansResponse:
    """Everything that differs from ``base`` to ``other`` (base and other SavedPlans left unset)."""
    response = store_api.ComparePlansResponse(
        fleet_changes=fleet_changes(base.plan, other.plan),
        total_changes=total_changes(base.plan.cost, other.plan.cost),
        component_changes=component_changes(base.plan.cost, other.plan.cost),
        deployment_changes=deployment_changes(base.plan, other.plan),
        version_changes=version_changes(base.provenance, other.provenance),
    )
    messages = [c.description for c in response.fleet_changes]
    messages += _cost_words(response.total_changes)
    messages += [c.description for c in response.deployment_changes]
    messages += [f"{v.name}: {v.base_value} → {v.other_value}" for v in response.version_changes]
    response.messages.extend(messages or ["the two plans are the same"])
    return response


_PRICE_FIELDS = (("price_per_gpu", "price per GPU"), ("price_per_gpu_hour", "price per GPU-hour"))


def _optional(message: plan_pb2.FleetLine, field: str) -> common_pb2.Money | None:
    return getattr(message, field) if message.HasField(field) else None  # type: ignore[arg-type]


def _percent(old: common_pb2.Money, new: common_pb2.Money) -> str:
    before, after = Decimal(old.amount), Decimal(new.amount)
    if before == 0 or old.currency_code != new.currency_code:
        return ""
    return f" ({(after - before) / before * 100:+.1f}%)"


def price_changes(saved: plan_pb2.Plan, current: plan_pb2.Plan) -> list[store_api.PriceChange]:
    """Offer prices of the saved fleet's lines that are different in today's pricing of it."""
    now = {_line_key(line): line for line in current.fleet}
    changes: dict[tuple[str, str], store_api.PriceChange] = {}
    for line in saved.fleet:
        today = now.get(_line_key(line))
        if today is None:
            continue
        for field, words in _PRICE_FIELDS:
            old, new = _optional(line, field), _optional(today, field)
            if (
                old is None
                or new is None
                or (old.amount, old.currency_code) == (new.amount, new.currency_code)
            ):
                continue
            offer = (
                line.offer_id if line.offer_id == today.offer_id else f"{line.offer_id} → {today.offer_id}"
            )
            changes.setdefault(
                (offer, field),
                store_api.PriceChange(
                    offer_id=today.offer_id or line.offer_id,
                    gpu_id=line.gpu_id,
                    mode=line.mode,
                    saved_price=old,
                    current_price=new,
                    description=f"offer {offer}: {words} {money_text(old)} → {money_text(new)}"
                    + _percent(old, new),
                ),
            )
    return list(changes.values())


def reprice(
    saved: api.PlanFleetResponse, evaluation: api.EvaluateFleetResponse
) -> store_api.RepricePlanResponse:
    """What the saved plan's fleet costs today and why it changed (``saved`` left unset)."""
    old_cost, new_cost = saved.plan.cost, evaluation.plan.cost
    response = store_api.RepricePlanResponse(
        still_feasible=evaluation.feasible,
        price_changes=price_changes(saved.plan, evaluation.plan),
        cost_changes=total_changes(old_cost, new_cost) + component_changes(old_cost, new_cost),
        version_changes=version_changes(saved.provenance, evaluation.provenance),
        evaluation=evaluation,
    )
    if old_cost.HasField("horizon_tco"):
        response.saved_horizon_tco.CopyFrom(old_cost.horizon_tco)
    if new_cost.HasField("horizon_tco"):
        response.current_horizon_tco.CopyFrom(new_cost.horizon_tco)
    delta = money_change(
        old_cost.horizon_tco if old_cost.HasField("horizon_tco") else None,
        new_cost.horizon_tco if new_cost.HasField("horizon_tco") else None,
    )
    if delta is not None:
        response.horizon_tco_change.CopyFrom(delta)
    response.reasons.extend(_reprice_reasons(response, evaluation))
    return response


def _reprice_reasons(
    response: store_api.RepricePlanResponse, evaluation: api.EvaluateFleetResponse
) -> list[str]:
    reasons = [] if response.still_feasible else _failures(evaluation)
    tco_text = (
        f"horizon TCO {money_text(response.saved_horizon_tco)} → {money_text(response.current_horizon_tco)}"
        + (
            _percent(response.saved_horizon_tco, response.current_horizon_tco)
            if response.HasField("horizon_tco_change")
            else ""
        )
    )
    moved = response.HasField("horizon_tco_change") and Decimal(response.horizon_tco_change.amount) != 0
    reasons.append(
        tco_text if moved else f"horizon TCO unchanged at {money_text(response.current_horizon_tco)}"
    )
    reasons += [p.description for p in response.price_changes]
    if moved and not response.price_changes:
        reasons.append(
            "no offer price of the fleet changed: see cost_changes (site assumptions, FX, the model)"
        )
    reasons += [f"{v.name}: {v.base_value} → {v.other_value}" for v in response.version_changes]
    return reasons


def _failures(evaluation: api.EvaluateFleetResponse) -> list[str]:
    """What fails today, each by how much (EvaluateFleet's messages: each workload the fleet no
    longer serves at its SLA, each cap it now exceeds), and whether every workload is still served."""
    served = all(f.served_fraction >= 1 for f in evaluation.fits)
    still = ["every workload is still served at its SLA"] if served else []
    return still + [f"no longer feasible: {m}" for m in evaluation.messages]
