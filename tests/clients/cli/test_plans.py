"""``fleetplan plan --save`` and ``fleetplan plans list|show|diff|reprice|delete`` through the
in-process server on one SQLite store (``--store``), text and ``--json``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import EXAMPLES, run


def _save(capsys: pytest.CaptureFixture[str], store: str, example: str, *extra: str) -> str:
    code, out, _ = run(capsys, "plan", str(EXAMPLES / example), "--save", "--store", store, *extra, "--json")
    assert code == 0
    plan_id: str = json.loads(out)["plan_id"]
    assert len(plan_id) == 26
    return plan_id


def test_save_list_show_diff_reprice_delete(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = str(tmp_path / "plans.db")
    code, text, _ = run(
        capsys, "plan", str(EXAMPLES / "60m_krw_single_gpu.yaml"), "--save", "--label", "a", "--store", store
    )
    assert code == 0
    first = text.strip().splitlines()[-1].removeprefix("saved as plan ")
    assert len(first) == 26
    second = _save(capsys, store, "14b_finetune.yaml", "--label", "b", "--tag", "lora")

    code, out, _ = run(capsys, "plans", "list", "--store", store, "--json")
    assert code == 0 and [p["plan_id"] for p in json.loads(out)["plans"]] == [second, first]
    code, out, _ = run(capsys, "plans", "list", "--tag", "lora", "--store", store)
    assert code == 0 and second in out and first not in out
    code, out, _ = run(capsys, "plans", "list", "--since", "2999-01-01", "--store", store)
    assert code == 0 and out.strip() == "No saved plans."

    code, out, _ = run(capsys, "plans", "show", first, "--store", store)
    assert code == 0 and first in out and "Saved plan" in out
    code, out, _ = run(capsys, "plans", "show", first, "--store", store, "--json")
    assert json.loads(out)["response"]["plan_id"] == first

    code, out, _ = run(capsys, "plans", "diff", first, first, "--store", store)
    assert code == 0 and "The two plans are the same." in out
    code, out, _ = run(capsys, "plans", "diff", first, second, "--store", store, "--json")
    assert code == 0 and json.loads(out)["fleet_changes"]

    code, out, _ = run(capsys, "plans", "reprice", first, "--store", store)
    assert code == 0 and "still feasible" in out

    code, out, _ = run(capsys, "plans", "delete", first, "--store", store)
    assert code == 0 and f"deleted plan {first}" in out
    code, _, err = run(capsys, "plans", "show", first, "--store", store)
    assert code == 1 and "NOT_FOUND" in err


def test_bad_input_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = str(tmp_path / "plans.db")
    code, _, err = run(capsys, "plans", "show", "nope", "--store", store)
    assert code == 2 and "plan_id" in err
    code, _, err = run(capsys, "plans", "list", "--since", "last tuesday", "--store", store)
    assert code == 2 and "--since" in err
    code, _, err = run(capsys, "plans", "list", "--page-token", "xyz", "--store", store)
    assert code == 2 and "page_token" in err
    code, _, err = run(capsys, "plan", str(EXAMPLES / "60m_krw_single_gpu.yaml"), "--save", "--store", "none")
    assert code == 1 and "FAILED_PRECONDITION" in err
