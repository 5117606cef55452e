"""The site's cost line and the residual value read as the plan was priced (issue 30 item 7 in the
quote): the buyer's own machine room is 전산실 공간 / On-site space, a colocation rack whose price
includes the power is IDC 상면(전력 포함), and a residual value not credited says 불용 처리; the
assumptions annex lists the site model, the own-site space price and the residual credit."""

from __future__ import annotations

import io
from decimal import Decimal
from typing import Any

import yaml
from quote_files import html_tables
from report_support import (
    BIDS,
    Planned,
    amount,
    bid_example,
    exact_amount,
    example,
    plan_and_quote,
    resolved_of,
)

from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients.scenario import parse_scenario
from report import Language
from report.html import render_html

SPACE_PER_RU_MONTH = Decimal(30000)


def _row(planned: Planned, table: str, lang: Language, name: str) -> list[str]:
    rows = html_tables(render_html(planned.quote, lang))[table]
    matching = [row for row in rows if row[0] == name]
    assert len(matching) == 1, (name, [row[0] for row in rows])
    return matching[0]


def _bought(plan_json: dict[str, Any]) -> list[dict[str, Any]]:
    return [line for line in plan_json["fleet"] if line.get("mode") == "ACQUISITION_MODE_BUY"]


def test_the_public_bid_runs_on_its_own_site_and_credits_no_residual_value() -> None:
    planned = bid_example("kr_public_rag_bid")
    assert _bought(planned.plan_json)
    assert amount(planned.plan_json["cost"].get("residual_value")) == 0
    for table in ("cashflow-table", "tco-table"):
        row = _row(planned, table, Language.KO, "잔존 가치 없음(불용 처리)")
        assert all(exact_amount(cell) == 0 for cell in row[1:] if cell)
        _row(planned, table, Language.EN, "Residual value: none (disposed of, no resale credit)")
    page = render_html(planned.quote, Language.KO)
    assert "IDC 상면" not in page and "코로케이션" not in page  # no colocation on its own site
    settings = {a.key: a for a in planned.quote.assumptions}
    assert settings["site_model"].value == "own_site"
    assert settings["site_model"].source == "the request (constraints.site_model)"
    assert settings["residual_value_credit"].value == "False"
    assert settings["residual_value_credit"].source == "the request (constraints.residual_value_credit)"
    assert settings["own_site_space_price_month"].value == "0 (none given)"


def test_own_site_space_is_the_rack_units_at_the_space_price() -> None:
    data = yaml.safe_load((BIDS / "kr_public_rag_bid.yaml").read_text(encoding="utf-8"))
    data["pricebook_overrides"] = {
        "site_assumptions": {"own_site_space_price_month": f"{SPACE_PER_RU_MONTH} KRW"}
    }
    request = parse_scenario(data, api.PlanFleetRequest, "space.yaml", echo=io.StringIO())
    planned = plan_and_quote(resolved_of(request), "space")
    rack_units = sum(Decimal(str(line["rack_units"])) for line in _bought(planned.plan_json))
    months = planned.quote.horizon_months
    row = _row(planned, "tco-table", Language.KO, "전산실 공간")
    assert abs(exact_amount(row[1]) - rack_units * SPACE_PER_RU_MONTH * months) <= months  # rounding
    _row(planned, "tco-table", Language.EN, "On-site space")
    settings = {a.key: a.value for a in planned.quote.assumptions}
    assert settings["own_site_space_price_month"] == f"{SPACE_PER_RU_MONTH} KRW"
    assert settings["own_site_space_basis"] == "per_rack_unit"


def test_colocation_with_the_power_included_reads_idc_space_with_power() -> None:
    planned = example("500m_krw_portfolio")  # the default book: colocation per kW, power included
    book = planned.resolved.book.site
    assert book.site_model.value == "colocation" and book.colocation_includes_power
    assert _bought(planned.plan_json)
    korean = _row(planned, "tco-table", Language.KO, "IDC 상면(전력 포함)")
    english = _row(planned, "tco-table", Language.EN, "Colocation (power included)")
    assert exact_amount(korean[1]) == exact_amount(english[1]) > 0
    assert planned.quote.economics is not None and planned.quote.economics.residual_value.amount > 0
    _row(planned, "tco-table", Language.KO, "잔존 가치")  # credited: the plain residual line
    settings = {a.key: a.value for a in planned.quote.assumptions}
    assert settings["site_model"] == "colocation" and settings["residual_value_credit"] == "True"
