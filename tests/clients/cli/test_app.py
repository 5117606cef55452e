"""clients.cli.app: errors become a message naming the file and field, and an exit status."""

from __future__ import annotations

import argparse
from pathlib import Path

import grpc
import pytest
from cli_support import run

from clients import cli
from clients.cli.app import rpc_error_message
from clients.client import FleetPlanError, Violation


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


def test_violations_are_named_by_scenario_path_or_by_flag() -> None:
    violation = Violation(field="cases[0].input_len", description="must be greater than 0")
    error = FleetPlanError(grpc.StatusCode.INVALID_ARGUMENT, "invalid", violations=[violation])
    from_flags = argparse.Namespace(command="estimate", cases=None)
    assert rpc_error_message(from_flags, error) == (
        "fleetplan: INVALID_ARGUMENT: the request is invalid\n  --input-len: must be greater than 0\n"
    )
    from_file = argparse.Namespace(command="plan", scenario="s.yaml")
    assert rpc_error_message(from_file, error).endswith(
        "  s.yaml: cases[0].input_len: must be greater than 0\n"
    )
    plain = FleetPlanError(grpc.StatusCode.UNAVAILABLE, "connection refused")
    assert rpc_error_message(from_file, plain) == "fleetplan: UNAVAILABLE: connection refused\n"
