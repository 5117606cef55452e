"""How one value of a response reads: money, enum names, and the provenance line under every answer."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from api.fleetplan.v1 import common_pb2, plan_pb2


def money(value: common_pb2.Money) -> str:
    if not value.currency_code:
        return "-"
    try:
        amount = Decimal(value.amount)
    except InvalidOperation:
        return f"{value.amount} {value.currency_code}"
    places = 0 if value.currency_code == "KRW" or abs(amount) >= 1000 else 2
    return f"{amount:,.{places}f} {value.currency_code}"


def enum_name(enum: object, number: int, prefix: str) -> str:
    name: str = enum.Name(number)  # type: ignore[attr-defined]
    return name.removeprefix(prefix).lower()


def mode_name(number: int) -> str:
    return enum_name(common_pb2.AcquisitionMode, number, "ACQUISITION_MODE_")


def precision_name(number: int) -> str:
    return enum_name(common_pb2.Precision, number, "PRECISION_") if number else "-"


def status_name(number: int) -> str:
    return enum_name(plan_pb2.PlanStatus, number, "PLAN_STATUS_")


def render_provenance(p: common_pb2.Provenance) -> str:
    text = f"\npricebook {p.pricebook_version} (sha256 {p.pricebook_content_hash[:16]}…)"
    if p.performance_model_version:
        text += f", performance model {p.performance_model_version}"
    if p.fx_rate_note:
        text += f"\nFX rate: {p.fx_rate_note}"
    text += "".join(f"\noverride applied: {o}" for o in p.overrides_applied)
    return text
