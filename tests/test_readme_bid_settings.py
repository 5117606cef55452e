"""The README's bid-settings example is a valid request: its YAML reads, converts and keeps what
the table says (own site, no residual credit, 3억 as 300,000,000 KRW, the space price)."""

from __future__ import annotations

import shlex
from decimal import Decimal
from pathlib import Path

import yaml

from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients.cli.parser import build_parser
from clients.scenario import parse_scenario
from pricebook.loader import load_default
from pricebook.schema import SiteModel
from service.convert.scenario import plan_request_from_proto

README = Path(__file__).resolve().parents[1] / "README.md"
WORKLOAD = {
    "name": "rag",
    "inference": {
        "model": {"model_id": "meta-llama/Llama-3.1-8B"},
        "daily_tokens": 10**8,
        "input_tokens": 2000,
        "output_tokens": 300,
    },
}


def _bid_example() -> dict:  # type: ignore[type-arg]
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Bid settings") :]
    block = section[section.index("```yaml\n") + len("```yaml\n") :]
    return yaml.safe_load(block[: block.index("```")])  # type: ignore[no-any-return]


def test_the_bid_example_reads_as_the_table_says() -> None:
    notes: list[str] = []
    message = parse_scenario(
        {**_bid_example(), "workloads": [WORKLOAD]}, api.PlanFleetRequest, "README", notes
    )
    request = plan_request_from_proto(message, load_default())
    c = request.constraints
    assert (c.site_model, c.residual_value_credit, c.horizon_months) == (SiteModel.OWN_SITE, False, 60)
    assert c.capex_budget is not None and c.capex_budget.amount == Decimal(300_000_000)
    assert notes == ["README: constraints.capex_budget: read '3억' as '300000000 KRW'"]
    assert request.overrides.site == {"own_site_space_price_month": "30000 KRW"}


def _bid_workflow() -> list[list[str]]:
    """The README's bid-workflow commands, each as its words (continuations joined, comments cut)."""
    text = README.read_text(encoding="utf-8")
    start = text.index("**The bid workflow")
    block = text[text.index("```sh\n", start) + 6 : text.index("```", text.index("```sh\n", start) + 6)]
    joined = block.replace("\\\n", " ")
    return [shlex.split(line, comments=True) for line in joined.splitlines() if line.strip()]


def test_the_readme_bid_workflow_is_what_the_cli_accepts() -> None:
    """Plan once and save, then one report of the saved plan writing PDF, HTML and XLSX: the
    commands as written parse, with the header flags and three outputs."""
    plan, report = _bid_workflow()
    assert plan[:2] == ["fleetplan", "plan"] and "--save" in plan
    planned = build_parser().parse_args(plan[1:])
    assert (README.parent / planned.scenario).exists() and planned.save
    reported = build_parser().parse_args(report[1:])
    assert reported.command == "report" and reported.plan_id == "PLAN_ID" and reported.scenario is None
    assert sorted(Path(o).suffix for o in reported.output) == [".html", ".pdf", ".xlsx"]
    assert reported.lang == "ko" and (README.parent / reported.supplier_profile).exists()
    assert reported.customer and reported.quote_number and reported.title
