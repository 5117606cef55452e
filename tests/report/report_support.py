"""Plans and quotes the report tests share, and the plan's own JSON to check the quote against.

The expected numbers come from the plan as the API answers it (``PlanFleetResponse`` JSON via
``service.convert.plan.plan_to_proto``: fleet lines' prices and counts, the cost breakdown) and from
the pricebook, never from ``report``'s own formatting: tests read the rendered numbers back.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path
from typing import Any

from google.protobuf import json_format

from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients.scenario import load_scenario
from pricebook import load_default
from pricebook.schema import Pricebook
from report import QuoteData, build_quote
from service.convert.plan import plan_to_proto
from service.convert.scenario import scenario_request
from service.domain_calls import rent_only
from solver import planner
from solver.planner.plan import plan_request
from solver.resolve import ResolvedRequest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE_NAMES = tuple(sorted(p.stem for p in EXAMPLES.glob("*.yaml")))
QUOTED_ON = dt.date(2026, 12, 3)
TIME_LIMIT_S = 20.0


@dataclass(frozen=True)
class Planned:
    resolved: ResolvedRequest
    result: planner.PlanResult
    rentals: planner.PlanResult
    quote: QuoteData
    plan_json: dict[str, Any]
    """The plan as PlanFleet answers it (protobuf JSON, proto field names)."""


def resolved_of(request: api.PlanFleetRequest) -> ResolvedRequest:
    return scenario_request(request, load_default())


def plan_and_quote(resolved: ResolvedRequest, title: str) -> Planned:
    result = planner.plan(resolved, time_limit_s=TIME_LIMIT_S)
    rentals = plan_request(rent_only(resolved), time_limit_s=TIME_LIMIT_S, cancel=None, with_extras=False)
    quote = build_quote(result, resolved, rent_only=rentals, quoted_on=QUOTED_ON, title=title)
    plan_json = json.loads(json_format.MessageToJson(plan_to_proto(result), preserving_proto_field_name=True))
    return Planned(resolved, result, rentals, quote, plan_json)


@functools.cache
def example(name: str) -> Planned:
    request = load_scenario(EXAMPLES / f"{name}.yaml", api.PlanFleetRequest)
    return plan_and_quote(resolved_of(request), name)


def amount(money: dict[str, Any] | None) -> Decimal:
    """A Money message's amount from the plan JSON (absent = 0, as proto3 omits it)."""
    return Decimal(money["amount"]) if money and "amount" in money else Decimal(0)


NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def numbers_in(text: str) -> list[Decimal]:
    """Every number written in ``text`` (thousands separators dropped), in order."""
    return [Decimal(m.group().replace(",", "")) for m in NUMBER.finditer(text)]


def exact_amount(text: str) -> Decimal:
    """The exact amount of a money cell as printed: the last number in it (a Korean summary figure
    reads ``2억 4,759만 원 (247,591,848원)``: the exact amount is the one in brackets)."""
    found = numbers_in(text)
    assert found, f"no number in {text!r}"
    return found[-1]


def expected_gpu_lines(plan_json: dict[str, Any]) -> list[Decimal]:
    """Each bought fleet line's GPU amount: price per GPU × GPUs, from the plan JSON."""
    return [
        amount(line.get("price_per_gpu")) * int(line.get("gpu_count", 0))
        for line in plan_json.get("fleet", [])
        if line.get("mode") == "ACQUISITION_MODE_BUY"
    ]


def _in_currency(value: Decimal, currency: str, target: str, book: Pricebook) -> Decimal:
    if currency != target:
        fx = book.site.fx_rates
        rate = next((Decimal(str(r.rate)) for r in fx if (r.base, r.quote) == (currency, target)), None)
        if rate is None:
            rate = 1 / next(Decimal(str(r.rate)) for r in fx if (r.base, r.quote) == (target, currency))
        value = value * rate
    quantum = Decimal(1) if target == "KRW" else Decimal("0.01")
    return value.quantize(quantum, rounding=ROUND_HALF_EVEN)


def bom_lines_of(plan_json: dict[str, Any], book: Pricebook, *, with_hosts: bool) -> list[Decimal]:
    """Each purchase line's amount in BOM order: a bought fleet line's GPUs (price per GPU × GPUs,
    from the plan JSON), then its hosts when the request counts them (the pricebook's host cost of
    the line's server model × servers, in the plan's currency at the pricebook's FX rate, rounded
    to the currency's minor unit as a price is)."""
    target = plan_json.get("cost", {}).get("horizon_tco", {}).get("currency_code", "")
    out = []
    for line in plan_json.get("fleet", []):
        if line.get("mode") != "ACQUISITION_MODE_BUY":
            continue
        out.append(amount(line.get("price_per_gpu")) * int(line.get("gpu_count", 0)))
        server_id = line.get("server_id")
        if with_hosts and server_id:
            host = next(s.host_cost for s in book.servers if s.id == server_id)
            if host.amount:
                unit = _in_currency(host.amount, host.currency, target, book)
                out.append(unit * int(line.get("server_count", 0)))
    # 단수 조정: the plan's capex less the lines (unit prices rounded to the minor unit); at most
    # half a minor unit per unit bought.
    capex = amount(plan_json["cost"]["capex"]) if "cost" in plan_json else sum(out, Decimal(0))
    rounding = capex - sum(out, Decimal(0))
    fleet = plan_json.get("fleet", [])
    units = sum(int(f.get("gpu_count", 0)) + int(f.get("server_count", 0)) for f in fleet)
    minor = Decimal("0.01") if target == "USD" else Decimal(1)
    assert abs(rounding) <= units * minor / 2 + minor, (capex, out)
    if rounding:
        out.append(rounding)
    return out


def expected_bom_lines(planned: Planned) -> list[Decimal]:
    """``bom_lines_of`` the planned example's plan JSON, with its pricebook."""
    with_hosts = planned.resolved.request.constraints.include_host_costs
    return bom_lines_of(planned.plan_json, planned.resolved.book, with_hosts=with_hosts)


BIDS = EXAMPLES / "bids"


@functools.cache
def bid_example(name: str) -> Planned:
    """A bid of ``examples/bids/`` planned and quoted."""
    request = load_scenario(BIDS / f"{name}.yaml", api.PlanFleetRequest)
    return plan_and_quote(resolved_of(request), name)
