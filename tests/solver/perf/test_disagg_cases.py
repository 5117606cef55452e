"""Disaggregated what-ifs in the batch-file contract: results as for aggregated cases plus the roles,
and every bad field named."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pricebook.loader import load_default
from pricebook.schema import Pricebook
from solver.perf.cases import estimate_cases

CASE: dict[str, Any] = {
    "model": "deepseek-ai/DeepSeek-V3",
    "precision": "fp8",
    "engine": "trtllm",
    "input_len": 8192,
    "output_len": 1024,
    "concurrency": 64,
    "prefill_gpu": "h200-sxm",
    "prefill_tp": 8,
    "decode_gpu": "gb200",
    "decode_tp": 1,
    "decode_attention_dp": 8,
    "decode_ep": 8,
    "decode_workers": 2,
}


@pytest.fixture(scope="module")
def book() -> Pricebook:
    return load_default()


def _rows(book: Pricebook, *cases: dict[str, Any]) -> list[dict[str, Any]]:
    return list(estimate_cases([json.dumps(c) for c in cases], book))


def test_a_disaggregated_case_reports_both_roles_and_the_loops_throughput(book: Pricebook) -> None:
    (row,) = _rows(book, CASE)
    assert row["fits"] and "error" not in row
    roles = row["disaggregated"]
    assert (roles["prefill_gpus"], roles["decode_gpus"]) == (8, 16)
    assert row["num_gpus"] == 24
    # two GPU types are two servers: the KV crosses the NICs
    assert roles["kv_link"] == "network"
    # the closed loop's identity: N users each cycle through TTFT and (osl − 1) TPOTs
    cycle_s = (row["ttft_ms"] + 1023 * row["tpot_ms"]) / 1e3
    assert row["output_tok_s_total"] == pytest.approx(64 * 1024 / cycle_s, rel=0.01)
    assert row["output_tok_s_per_gpu"] == pytest.approx(row["output_tok_s_total"] / 24)
    assert row["output_tok_s_low"] < row["output_tok_s_total"] < row["output_tok_s_high"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"prefill_tp": 6}, "prefill_tp"),
        ({"decode_ep": 3}, "decode_ep"),
        ({"prefill_gpu": "no-such-gpu"}, "prefill_gpu"),
        ({"concurrency": "max"}, "concurrency"),
        ({"decode_workers": 0}, "decode_workers"),
        ({"arrival": "burst"}, "arrival"),
    ],
)
def test_a_bad_role_field_is_named(book: Pricebook, change: dict[str, Any], field: str) -> None:
    (row,) = _rows(book, {**CASE, **change})
    assert row["error"]["field"] == field, row


def test_without_roles_the_gpu_is_required_and_with_one_role_gpu_serves_the_other(book: Pricebook) -> None:
    aggregated = {k: v for k, v in CASE.items() if not k.startswith(("prefill_", "decode_"))}
    (row,) = _rows(book, aggregated)
    assert row["error"]["field"] == "gpu"
    one_role = {k: v for k, v in CASE.items() if k != "prefill_gpu"} | {"gpu": "b200"}
    (row,) = _rows(book, one_role)
    assert row["disaggregated"]["prefill"].startswith("1 × b200")


def test_a_pool_that_cannot_hold_the_model_does_not_fit_in_words(book: Pricebook) -> None:
    (row,) = _rows(book, {**CASE, "prefill_tp": 1})
    assert row["fits"] is False
    assert "prefill engine" in row["reason"]
