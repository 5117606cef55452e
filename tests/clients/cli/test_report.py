"""``fleetplan report`` (through the in-process server) and ``fleetplan plan --csv``."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from cli_support import EXAMPLES, run

from clients.cli.exits import EXIT_INVALID, EXIT_OK


def test_report_writes_the_format_its_suffix_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "quote.html"
    code, out, _ = run(
        capsys, "report", str(EXAMPLES / "rtx5090_cluster.yaml"), "--output", str(output), "--lang", "ko"
    )
    assert code == EXIT_OK
    html = output.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and '<html lang="ko">' in html
    assert "<h1>견적서</h1>" in html and f"wrote {output}" in out


def test_report_refuses_an_unknown_suffix_before_any_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "quote.docx"
    code, _, err = run(capsys, "report", str(EXAMPLES / "rtx5090_cluster.yaml"), "--output", str(output))
    assert code == EXIT_INVALID
    assert "unknown report format '.docx'; use .html, .pdf or .xlsx" in err
    assert not output.exists()


def test_plan_csv_writes_the_plans_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = str(EXAMPLES / "rtx5090_cluster.yaml")
    code, out, _ = run(capsys, "plan", scenario, "--csv", str(tmp_path / "tables"), "--json")
    assert code == EXIT_OK
    plan = json.loads(out)["plan"]
    names = sorted(p.name for p in (tmp_path / "tables").glob("*.csv"))
    assert {"fleet.csv", "workloads.csv", "cost.csv", "baselines.csv"} <= set(names)
    with (tmp_path / "tables" / "workloads.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    deployment = plan["deployments"][0]
    assert rows[0]["workload"] == deployment["workload_name"]
    # per-user and aggregate tok/s side by side, as the plan's deployment says
    assert float(rows[0]["tok/s/user"]) == pytest.approx(deployment["per_user_tok_s"])
    assert float(rows[0]["agg tok/s"]) == pytest.approx(deployment["output_tok_s"])
    with (tmp_path / "tables" / "fleet.csv").open(encoding="utf-8") as handle:
        fleet = list(csv.DictReader(handle))
    assert [row["horizon cost"] for row in fleet] == [
        line["horizon_cost"]["amount"] for line in plan["fleet"]
    ]


def test_report_writes_every_output_from_one_call(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    html, xlsx = tmp_path / "quote.html", tmp_path / "quote.xlsx"
    scenario = str(EXAMPLES / "rtx5090_cluster.yaml")
    code, out, _ = run(capsys, "report", scenario, "--output", str(html), "--output", str(xlsx))
    assert code == EXIT_OK
    assert html.read_bytes().startswith(b"<!DOCTYPE html>") and xlsx.read_bytes().startswith(b"PK")
    assert f"wrote {html}" in out and f"wrote {xlsx}" in out


def test_report_refuses_one_format_twice_before_any_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = tmp_path / "a.html", tmp_path / "b.HTML"
    code, _, err = run(
        capsys,
        "report",
        str(EXAMPLES / "rtx5090_cluster.yaml"),
        "--output",
        str(first),
        "--output",
        str(second),
    )
    assert code == EXIT_INVALID
    assert "two outputs of the same format (.html)" in err
    assert not first.exists() and not second.exists()


def test_report_puts_the_supplier_profile_and_flags_in_the_header(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "quote.html"
    profile = EXAMPLES / "bids" / "supplier_profile.yaml"
    code, _, _ = run(
        capsys,
        "report",
        str(EXAMPLES / "rtx5090_cluster.yaml"),
        "--output",
        str(output),
        "--lang",
        "ko",
        "--supplier-profile",
        str(profile),
        "--customer",
        "한국연구원",
        "--quote-number",
        "제7호",
        "--title",
        "연구용 GPU 서버",
        "--audience",
        "internal",
    )
    assert code == EXIT_OK
    html = output.read_text(encoding="utf-8")
    for shown in (
        "<dd>한국연구원</dd>",
        "<dd>제7호</dd>",
        "<dd>주식회사 한빛인프라</dd>",
        "<dd>123-45-67890</dd>",
    ):
        assert shown in html
    assert "<title>연구용 GPU 서버</title>" in html and 'id="sourcing"' in html


def test_report_refuses_an_unknown_supplier_profile_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = tmp_path / "supplier.yaml"
    profile.write_text("supplier_nmae: 주식회사 예시\n", encoding="utf-8")
    output = tmp_path / "quote.html"
    code, _, err = run(
        capsys,
        "report",
        str(EXAMPLES / "rtx5090_cluster.yaml"),
        "--output",
        str(output),
        "--supplier-profile",
        str(profile),
    )
    assert code == EXIT_INVALID
    assert "supplier_nmae" in err and not output.exists()
