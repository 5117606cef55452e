"""Reproduction 10 of round 3 (``10-pooled-replicas-shown-zero.yaml``, a Korean public-sector RAG
bid): workloads served from shared pools were shown with 0 replicas (and 0 tok/s in the quote),
rag-qa's tok/s differed between the plan (911) and the quote (560), the bought L40S appeared in no
workload row, and a TP1 + TP2 mix was shown as one TP.

What is right, checked on one plan through every consumer (the JSON answer, the CLI table, the
quote data and its HTML): every served workload has replica-equivalents > 0 and its tok/s is its
capacity × output tokens of the request; the same figures in all of them; each deployment serving
a workload at its peak is named with its own TP; every GPU type of the fleet and the BOM is named
by a deployment group (or training run) with the workloads it serves.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from openpyxl import load_workbook

from api.fleetplan.v1 import common_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients.render import render_plan
from clients.scenario import load_scenario
from pricebook import load_default
from report import Language, build_quote
from report.data import BomKind
from report.html import render_html
from report.xlsx import render_xlsx
from service.convert.plan import plan_to_proto
from service.convert.scenario import scenario_request
from solver.planner.plan import plan_request

SCENARIO = Path(__file__).parent / "10-pooled-replicas-shown-zero.yaml"
OUTPUT_TOKENS = {"rag-qa": 500, "chatbot": 400, "embedding": 1}
"""Output tokens per request of each inference workload, as the scenario states them."""

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def planned() -> dict[str, Any]:
    request = load_scenario(SCENARIO, api.PlanFleetRequest)
    # Room for the pool-timing re-solves on a loaded machine (the scenario's own limit is 10 s).
    request.solver_options.time_limit_s = 60
    resolved = scenario_request(request, load_default())
    result = plan_request(resolved, time_limit_s=60, cancel=None, with_extras=False)
    plan = plan_to_proto(result)
    quote = build_quote(result, resolved, quoted_on=dt.date(2026, 12, 6), title="rp10")
    return {
        "plan": plan,
        "json": json.loads(json_format.MessageToJson(plan, preserving_proto_field_name=True)),
        "text": render_plan(plan, common_pb2.Provenance()),
        "quote": quote,
        "html": render_html(quote, Language.EN),
        "xlsx": render_xlsx(quote, Language.EN),
    }


def test_every_served_workload_has_replicas_and_the_tok_s_of_its_capacity(planned: dict[str, Any]) -> None:
    rows = {w["workload_name"]: w for w in planned["json"]["workload_rows"]}
    assert set(rows) == set(OUTPUT_TOKENS)
    for name, w in rows.items():
        assert w["served"]
        assert w["replicas"] > 0, name
        assert w["capacity_req_s"] >= w["demand_req_s"] > 0
        assert w["output_tok_s"] == pytest.approx(w["capacity_req_s"] * OUTPUT_TOKENS[name], rel=1e-6)
        # The workload's part of every group at its peak hour adds up to its replicas.
        hour = w.get("peak_hour", 0)
        parts = [
            s.get("replicas_by_hour", [0.0] * 24)[hour]
            for g in planned["json"]["deployment_groups"]
            for s in g["shares"]
            if s["workload_name"] == name
        ]
        assert sum(parts) == pytest.approx(w["replicas"])


def test_the_cli_table_and_the_quote_show_the_plans_figures(planned: dict[str, Any]) -> None:
    rows = {w["workload_name"]: w for w in planned["json"]["workload_rows"]}
    table = planned["text"].split("\nWorkloads\n")[1].split("\n\n")[0]
    for line in table.splitlines()[2:]:
        name = line.split()[0]
        if name not in rows:
            continue
        cells = re.split(r"\s{2,}", line.strip())
        replicas = float(cells[2])
        assert replicas > 0 and replicas == pytest.approx(rows[name]["replicas"], abs=0.005)
        assert float(cells[6].replace(",", "")) == pytest.approx(rows[name]["output_tok_s"], abs=0.5)
        assert not re.search(r"(^|\+ )0 ×", cells[1]), cells[1]
    for q in planned["quote"].workloads:
        assert q.served and q.replicas == pytest.approx(rows[q.name]["replicas"])
        assert q.aggregate_tok_s == pytest.approx(rows[q.name]["output_tok_s"])
    html_table = planned["html"].split('id="workloads-table"')[1].split("</table>")[0]
    embeddings = {e.name for e in planned["quote"].embeddings}  # shown as embeddings/s instead
    for w in rows.values():
        if w["workload_name"] not in embeddings:
            assert f"{w['output_tok_s']:,.0f}" in html_table


def _name(group: dict[str, Any]) -> str:
    """A group's deployment as the tables name it: the planner's words for a shared card, else
    GPU and TP or MIG slice."""
    if group.get("deployment"):
        return str(group["deployment"])
    size = f"MIG 1/{group['mig_slice']}" if group.get("mig_slice") else f"TP{group['tp']}"
    return f"{group['gpu_id']} {size}"


def test_a_tp_mix_names_each_deployment_at_peak(planned: dict[str, Any]) -> None:
    table = planned["text"].split("\nWorkloads\n")[1].split("\n\n")[0]
    for w in planned["json"]["workload_rows"]:
        line = next(x for x in table.splitlines() if x.startswith(w["workload_name"] + " "))
        at_peak = line.split("; other hours")[0]
        for use in w["uses"]:
            if round(use.get("replicas", 0.0), 2) > 0:
                assert _name(use) in at_peak


def test_every_gpu_of_the_fleet_and_the_bom_serves_a_named_workload(planned: dict[str, Any]) -> None:
    data = planned["json"]
    groups_by_gpu: dict[str, set[str]] = {}
    for g in data["deployment_groups"]:
        assert g["replicas_peak"] > 0
        assert sum(s.get("share", 0.0) for s in g["shares"]) == pytest.approx(1.0)
        groups_by_gpu.setdefault(g["gpu_id"], set()).update(s["workload_name"] for s in g["shares"])
    for t in data.get("training", []):
        groups_by_gpu.setdefault(t["gpu_id"], set()).add(t["workload_name"])
    for line in data["fleet"]:
        assert set(line["workload_names"]) == groups_by_gpu[line["gpu_id"]]
    quote = planned["quote"]
    assert quote.bom is not None
    training = {t["gpu_id"] for t in data.get("training", [])}
    for item in quote.bom.lines:
        if item.kind is BomKind.GPU:
            assert item.item_id in training or any(g.gpu_id == item.item_id for g in quote.groups), (
                item.item_id
            )
    html_groups = planned["html"].split('id="groups-table"')[1].split("</table>")[0]
    for gpu in groups_by_gpu:
        if any(g["gpu_id"] == gpu for g in data["deployment_groups"]):
            assert gpu in html_groups
    sheet = load_workbook(io.BytesIO(planned["xlsx"]))["Workloads"]
    cells = [str(c) for row in sheet.iter_rows(values_only=True) for c in row if c is not None]
    for g in data["deployment_groups"]:
        assert any(c.startswith(_name(g)) for c in cells)
    assert not [w for w in data.get("warnings", []) if "serves no workload" in w or "groups occupy" in w]
