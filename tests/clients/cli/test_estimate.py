"""``fleetplan estimate``: the JSONL batch file and errors of a case given by flags."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import multiprocessing
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from cli_support import run

from clients import cli
from clients.cli import estimate
from clients.cli.estimate import file_field, flag_name, read_batch_line
from service.estimate_pool import MIN_POOLED_CASES


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


def test_proto_paths_read_as_the_batch_files_fields_and_as_flags() -> None:
    assert file_field("cases[3].model.spec.layers") == "model_spec.layers"
    assert file_field("cases[0].gpu_id") == "gpu"
    assert flag_name("cases[0].input_len") == "--input-len"
    assert flag_name("cases[0].model.spec.params_b") == "--params-b"


def test_a_batch_line_is_a_case_or_the_row_that_says_why_not() -> None:
    good = read_batch_line(
        1, '{"gpu": "h100-sxm", "model": "m", "input_len": 10, "output_len": 5, "concurrency": 1}', "f:1"
    )
    assert good.case is not None and good.case.gpu_id == "h100-sxm" and good.error_row is None
    not_an_object = read_batch_line(2, "[1, 2]", "f:2")
    assert not_an_object.case is None
    assert not_an_object.error_row == {
        "line": 2,
        "error": {"field": "", "reason": "each line must be a JSON object"},
    }
    bad_field = read_batch_line(3, '{"gpu": "h100-sxm", "tp": "two"}', "f:3")
    assert bad_field.case is None and bad_field.error_row is not None
    assert bad_field.error_row["gpu"] == "h100-sxm" and "line" not in bad_field.error_row


def _batch_file(path: Path, lines: int) -> Path:
    case = {"gpu": "h100-sxm", "model": "meta-llama/Llama-3.1-8B", "input_len": 1000, "output_len": 200}
    path.write_text("".join(json.dumps({**case, "concurrency": 1 + i}) + "\n" for i in range(lines)), "utf-8")
    return path


def test_a_short_batch_in_process_starts_no_worker_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Worker processes (seconds to start) would cost a short batch more than they save (issue 31)."""
    cases = _batch_file(tmp_path / "cases.jsonl", MIN_POOLED_CASES)
    code, _, _ = run(capsys, "estimate", "--cases", str(cases), "--output", str(tmp_path / "out.jsonl"))
    assert code == 0
    assert len((tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()) == MIN_POOLED_CASES
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize(
    ("lines", "target", "workers"), [(3, None, True), (2, None, False), (3, "h:1", False)]
)
def test_the_in_process_server_gets_workers_for_a_long_batch_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lines: int, target: str | None, workers: bool
) -> None:
    asked: list[bool] = []

    @contextlib.contextmanager
    def connect(args: argparse.Namespace, *, estimate_workers: bool = False) -> Iterator[Any]:
        asked.append(estimate_workers)
        yield SimpleNamespace(estimate_performance=lambda cases, **_: SimpleNamespace(results=[]))

    monkeypatch.setattr(estimate, "connect", connect)
    monkeypatch.setattr(estimate, "WORKER_BATCH_CASES", 3)
    monkeypatch.setattr(estimate, "_write_rows", lambda *_: None)
    argv = ["estimate", "--cases", str(_batch_file(tmp_path / "cases.jsonl", lines))]
    cli.main([*argv, *(["--target", target] if target else [])], out=io.StringIO())
    assert asked == [workers]
