"""Batch what-ifs: the JSONL contract of ``fleetplan estimate --cases``."""

from __future__ import annotations

import json

import pytest

from pricebook import catalog
from pricebook.loader import load_default
from solver.domain import Precision
from solver.perf import ClosedLoop, Deployment, OfflineMax, WorkloadShape, estimate_inference
from solver.perf.cases import estimate_cases

BOOK = load_default()


def _run(*cases: object) -> list[dict[str, object]]:
    lines = [c if isinstance(c, str) else json.dumps(c) for c in cases]
    return list(estimate_cases(lines, BOOK))


def test_each_line_gets_one_result_and_bad_lines_name_the_field() -> None:
    good = {
        "gpu": "H100",
        "model": "meta-llama/Llama-3.1-8B",
        "input_len": 1000,
        "output_len": 200,
        "concurrency": 8,
    }
    out = _run(
        good,
        {**good, "gpu": "no-such-gpu"},
        {**good, "concurrency": "lots"},
        "{not json",
        {**good, "model": None, "model_spec": {"params_b": 7, "layers": -1}},
        {k: v for k, v in good.items() if k != "concurrency"},
        {**good, "tp": 16, "num_gpus": 16},
        good,
    )
    assert len(out) == 8
    assert out[0]["fits"] is True and out[7]["fits"] is True
    assert out[1] == {"error": {"field": "gpu", "reason": out[1]["error"]["reason"]}, "line": 2}  # type: ignore[index]
    assert "no-such-gpu" in out[1]["error"]["reason"]  # type: ignore[index]
    assert out[2]["error"]["field"] == "concurrency" and out[2]["line"] == 3  # type: ignore[index]
    assert out[3]["error"]["field"] == "" and out[3]["line"] == 4  # type: ignore[index]
    assert out[4]["error"]["field"] == "model_spec.layers"  # type: ignore[index]
    assert out[5]["error"]["field"] == "concurrency"  # type: ignore[index]
    assert out[6]["error"]["field"] == "tp" and "one server" in out[6]["error"]["reason"]  # type: ignore[index]


def test_replicas_add_up_and_the_output_echoes_the_case() -> None:
    case = {
        "gpu": "rtx-pro-6000-server",
        "num_gpus": 4,
        "tp": 1,
        "model": "meta-llama/Llama-3.1-8B",
        "precision": "fp8",
        "input_len": 2000,
        "output_len": 500,
        "concurrency": "max",
    }
    (out,) = _run(case)
    single = estimate_inference(
        catalog.model(BOOK, "meta-llama/Llama-3.1-8B"),
        Deployment(catalog.gpu(BOOK, "rtx-pro-6000-server"), 1, Precision.FP8),
        WorkloadShape(2000, 500),
        OfflineMax(),
    )
    assert out["replicas"] == 4
    assert out["output_tok_s_total"] == pytest.approx(4 * single.output_tok_s)
    assert out["output_tok_s_low"] < out["output_tok_s_total"] < out["output_tok_s_high"]  # type: ignore[operator]
    for key, value in case.items():
        assert out[key] == value
    for key in (
        "total_tok_s",
        "req_s",
        "ttft_ms",
        "tpot_ms",
        "per_user_tok_s",
        "max_concurrency",
        "bottleneck",
    ):
        assert key in out


def test_closed_loop_users_are_split_over_replicas() -> None:
    case = {
        "gpu": "H100",
        "num_gpus": 2,
        "tp": 1,
        "model": "meta-llama/Llama-3.1-8B",
        "input_len": 1000,
        "output_len": 100,
        "concurrency": 32,
    }
    (out,) = _run(case)
    half = estimate_inference(
        catalog.model(BOOK, "meta-llama/Llama-3.1-8B"),
        Deployment(catalog.gpu(BOOK, "H100"), 1, Precision.BF16),
        WorkloadShape(1000, 100),
        ClosedLoop(16),
    )
    assert out["output_tok_s_total"] == pytest.approx(2 * half.output_tok_s)


def test_without_tp_the_estimator_picks_one_that_fits_and_says_so() -> None:
    case = {
        "gpu": "H100",
        "num_gpus": 8,
        "model": "meta-llama/Llama-3.1-70B",
        "precision": "bf16",
        "input_len": 1000,
        "output_len": 200,
        "concurrency": "max",
    }
    (out,) = _run(case)
    assert out["tp_chosen_by_estimator"] is True
    # 70.55e9 × 2 bytes = 141 GB of weights: one 80 GB GPU cannot hold them, two can
    assert out["tp"] in (2, 4, 8)
    assert out["fits"] is True


def test_size_only_model_is_flagged_as_assumed_and_training_cases_work() -> None:
    out = _run(
        {
            "gpu": "L40S",
            "model_spec": {"params_b": 13},
            "input_len": 500,
            "output_len": 100,
            "request_rate": 0.5,
        },
        {
            "mode": "train",
            "gpu": "H100",
            "num_gpus": 8,
            "model": "meta-llama/Llama-3.1-8B",
            "method": "full",
            "tokens": 1e9,
            "seq_len": 2048,
        },
    )
    assert out[0]["assumed_architecture"] is True
    train = out[1]
    assert train["fits"] is True
    assert train["train_tok_s"] == pytest.approx(8 * train["train_tok_s_per_gpu"])  # type: ignore[operator]
    assert train["hours"] == pytest.approx(1e9 / train["train_tok_s"] / 3600)  # type: ignore[operator]
