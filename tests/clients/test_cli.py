"""The ``fleetplan`` CLI through its in-process server (real server, real client)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from clients import cli
from pricebook import load_default

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    out = io.StringIO()
    code = cli.main(list(argv), out=out)
    return code, out.getvalue(), capsys.readouterr().err


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


def test_invalid_scenario_names_file_path_and_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "workloads:\n  - name: a\n    inference:\n      model: {model_id: meta-llama/Llama-3.1-8B}\n"
        "      input_tokens: 100\n      output_tokens: 10\n      daily_tokens: -5\n",
        encoding="utf-8",
    )
    code, _, err = run(capsys, "plan", str(bad))
    assert code == cli.EXIT_INVALID
    assert f"{bad}: workloads[0].inference.daily_tokens: must be greater than 0" in err


def test_unknown_field_in_scenario_is_refused_before_any_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("constraints: {budget: 5}\n", encoding="utf-8")
    code, _, err = run(capsys, "plan", str(bad))
    assert code == cli.EXIT_INVALID
    assert f"{bad}: constraints.budget: unknown field" in err


def test_estimate_cases_file_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        '{"gpu": "h100-sxm", "model": "meta-llama/Llama-3.1-8B", "input_len": 1000, "output_len": 200, '
        '"concurrency": 8}\n'
        '{"gpu": "h100-sxm", "model": "meta-llama/Llama-3.1-8B", "input_len": 1000, "output_len": 200, '
        '"concurrency": 8, "tp": 3}\n'
        "not json\n",
        encoding="utf-8",
    )
    output = tmp_path / "out.jsonl"
    code, _, _ = run(capsys, "estimate", "--cases", str(cases), "--output", str(output))
    assert code == 0
    rows = [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 3
    assert rows[0]["gpu"] == "h100-sxm" and rows[0]["fits"] is True and rows[0]["output_tok_s_total"] > 0
    assert rows[1]["error"]["field"] == "tp"
    assert rows[2]["error"]["reason"].startswith("not valid JSON")


def test_sweep_streams_progress_and_writes_the_frontier_csv(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frontier = tmp_path / "frontier.csv"
    code, out, err = run(
        capsys,
        "sweep",
        str(EXAMPLES / "60m_krw_single_gpu.yaml"),
        "--dimension",
        "demand_multiplier",
        "--values",
        "0.5,1",
        "--csv",
        str(frontier),
    )
    assert code == 0
    assert "2/2 points" in err
    lines = frontier.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("demand_multiplier,status,horizon_tco")
    assert len(lines) == 3
    assert "Frontier" in out


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
    assert "--fleet: h200-sxm:four: expected GPU:COUNT[:MODE]" in err


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


def test_estimate_flag_errors_name_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(
        capsys,
        "estimate",
        "--gpu",
        "h100-sxm",
        "--model",
        "meta-llama/Llama-3.1-8B",
        "--output-len",
        "100",
        "--concurrency",
        "4",
    )
    assert code == cli.EXIT_INVALID
    assert "--input-len: must be greater than 0" in err
