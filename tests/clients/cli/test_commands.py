"""The plan, evaluate, breakeven and catalog commands through the in-process server and real client."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import EXAMPLES, run

from api.fleetplan.v1 import common_pb2
from clients import cli
from clients.cli.commands import parse_fleet
from clients.scenario import ScenarioError
from pricebook import load_default


def test_catalog_json_preserves_proto_field_names(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "catalog", "--kind", "gpu", "--json")
    assert code == 0
    data = json.loads(out)
    assert sorted(g["id"] for g in data["gpus"]) == sorted(g.id for g in load_default().gpus)
    assert "memory_bandwidth_gbs" in data["gpus"][0] and "memoryBandwidthGbs" not in data["gpus"][0]
    assert data["offers"] == [] and data["models"] == []
    # Zeros are printed, not omitted: GPUs without MIG still carry the field.
    assert any(g.mig_max_instances == 0 for g in load_default().gpus)
    assert all("mig_max_instances" in g for g in data["gpus"])


def test_catalog_table_and_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    code, table, _ = run(capsys, "catalog", "--kind", "site")
    assert code == 0 and "PUE" in table and "FX USD→KRW" in table
    code, markdown, _ = run(capsys, "catalog", "--kind", "site", "--markdown")
    assert code == 0 and "| assumption | value |" in markdown


def test_plan_example_prints_a_fleet(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "plan", str(EXAMPLES / "60m_krw_single_gpu.yaml"), "--json")
    assert code == 0
    plan = json.loads(out)["plan"]
    assert plan["status"] in ("PLAN_STATUS_OPTIMAL", "PLAN_STATUS_FEASIBLE")
    assert plan["fleet"] and plan["cost"]["currency_code"] == "KRW"
    # Seed 000's budget: 60M KRW. The plan's capex stays within it.
    assert float(plan["cost"]["capex"]["amount"]) <= 60_000_000


def test_evaluate_a_vendor_fleet_from_flags(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys,
        "evaluate",
        str(EXAMPLES / "60m_krw_single_gpu.yaml"),
        "--fleet",
        "rtx-pro-6000-ws:4:buy",
        "--json",
    )
    data = json.loads(out)
    assert code == (0 if data.get("feasible") else cli.EXIT_NO_PLAN)
    assert [line["gpu_id"] for line in data["plan"]["fleet"]] == ["rtx-pro-6000-ws"]
    assert data["plan"]["fleet"][0]["gpu_count"] == 4
    assert data["fits"][0]["workload_name"] == "bulk-docs-14b"


def test_evaluate_rejects_a_malformed_fleet_flag(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(
        capsys, "evaluate", str(EXAMPLES / "60m_krw_single_gpu.yaml"), "--fleet", "h200-sxm:four"
    )
    assert code == cli.EXIT_INVALID
    assert "--fleet: h200-sxm:four: expected GPU:COUNT[:MODE[:SERVER[:OFFER]]]" in err


def test_breakeven_for_one_gpu_type(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A plan scenario (even with solver options) is accepted as the break-even scenario.
    scenario = tmp_path / "plan.yaml"
    text = (EXAMPLES / "60m_krw_single_gpu.yaml").read_text(encoding="utf-8")
    scenario.write_text(text + "solver_options: {time_limit_s: 5}\n", encoding="utf-8")
    code, out, _ = run(capsys, "breakeven", str(scenario), "--gpu", "h200-sxm", "--json")
    assert code == 0
    data = json.loads(out)
    assert [row["gpu_id"] for row in data["break_even"]["buy_vs_rent"]] == ["h200-sxm"]
    assert data["provenance"]["pricebook_content_hash"] == load_default().content_hash


def test_parse_fleet_reads_gpu_count_and_mode() -> None:
    fleet = parse_fleet("h200-sxm:4, rtx-pro-6000-ws:2:owned,b200:1:on-demand")
    assert [(i.gpu_id, i.count, i.mode, i.owned) for i in fleet.items] == [
        ("h200-sxm", 4, common_pb2.ACQUISITION_MODE_BUY, False),
        ("rtx-pro-6000-ws", 2, common_pb2.ACQUISITION_MODE_BUY, True),
        ("b200", 1, common_pb2.ACQUISITION_MODE_ON_DEMAND, False),
    ]


def test_parse_fleet_reads_an_optional_server_model() -> None:
    fleet = parse_fleet("rtx-4090:8:buy:rig-rtx-4090-8gpu,h200-sxm:4")
    assert [(i.gpu_id, i.count, i.server_id) for i in fleet.items] == [
        ("rtx-4090", 8, "rig-rtx-4090-8gpu"),
        ("h200-sxm", 4, ""),
    ]


def test_parse_fleet_reads_an_optional_offer() -> None:
    fleet = parse_fleet(
        "a100-sxm-80gb:1:on_demand:a100-sxm-80gb.od.runpod-secure,h200-sxm:8:buy:hgx-h200-8gpu:x.buy,l4:2:reserved"
    )
    assert [(i.gpu_id, i.server_id, i.offer_id) for i in fleet.items] == [
        ("a100-sxm-80gb", "", "a100-sxm-80gb.od.runpod-secure"),
        ("h200-sxm", "hgx-h200-8gpu", "x.buy"),
        ("l4", "", ""),
    ]
    with pytest.raises(ScenarioError, match="a rented line names its offer only"):
        parse_fleet("l4:2:reserved:server:offer")


def test_parse_fleet_names_the_part_it_cannot_read() -> None:
    with pytest.raises(ScenarioError) as excinfo:
        parse_fleet("h200-sxm:4:lease")
    assert (excinfo.value.file, excinfo.value.path) == ("--fleet", "h200-sxm:4:lease")
    assert excinfo.value.reason.startswith("unknown mode 'lease'")


def test_plan_can_skip_baselines_and_sensitivity(capsys: pytest.CaptureFixture[str]) -> None:
    scenario = str(EXAMPLES / "60m_krw_single_gpu.yaml")
    code, out, _ = run(capsys, "plan", scenario, "--json")
    assert code == 0
    full = json.loads(out)["plan"]
    assert full["baselines"] and full["sensitivity"]
    code, out, _ = run(capsys, "plan", scenario, "--json", "--no-baselines", "--no-sensitivity")
    assert code == 0
    quick = json.loads(out)["plan"]
    assert not quick.get("baselines") and not quick.get("sensitivity")
    assert quick["fleet"] == full["fleet"]
