"""The batch path's replica cache (``solver.perf.batch``) changes no number: every row of a seeded
mix of cases (the benchmark's) is the same with the cache as through ``estimate_inference`` itself,
which builds its replica afresh; and the cache does reuse replicas, per calibration."""

from __future__ import annotations

import math
from typing import Any

import pytest

from bench.estimate_speed import build_cases
from pricebook import catalog
from pricebook.loader import load_default
from solver.domain import Precision
from solver.perf import Deployment, batch, cases, inference
from solver.perf.calibration import calibration_from_dict, load_calibration

BOOK = load_default()


def _same(a: Any, b: Any) -> bool:
    """Equal rows, NaN equal to NaN (an unbounded latency is the same in both)."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


def _no_build(*_args: object) -> None:
    raise AssertionError("a replica was built again")


def test_rows_with_the_cache_equal_rows_through_estimate_inference(monkeypatch: pytest.MonkeyPatch) -> None:
    models = [m.id for m in BOOK.models if m.kind == "decoder"]
    lines = build_cases(models, [g.id for g in BOOK.gpus], 400, seed=23)
    inference._estimate.cache_clear()
    batch._replicas.clear()
    cached = list(cases.estimate_cases(lines, BOOK))
    assert batch._replicas
    with monkeypatch.context() as patch:  # the same cases again: every replica comes from the cache
        patch.setattr(batch, "build_replica", _no_build)
        inference._estimate.cache_clear()
        assert all(_same(a, b) for a, b in zip(list(cases.estimate_cases(lines, BOOK)), cached, strict=True))

    inference._estimate.cache_clear()
    monkeypatch.setattr(cases, "estimate_inference_cached", inference.estimate_inference)
    fresh = list(cases.estimate_cases(lines, BOOK))
    assert len(cached) == len(fresh) == len(lines)
    assert sum(1 for row in fresh if row.get("fits")) > 100  # the sample exercises real estimates
    for one, other in zip(cached, fresh, strict=True):
        assert _same(one, other), (one, other)


def test_one_replica_per_model_deployment_and_calibration() -> None:
    model = catalog.model(BOOK, "meta-llama/Llama-3.1-8B")
    deployment = Deployment(catalog.gpu(BOOK, "H100"), 1, Precision.FP8)
    first = batch.cached_replica(model, deployment)
    assert batch.cached_replica(model, deployment) is first
    assert batch.cached_replica(model, Deployment(deployment.gpu, 2, Precision.FP8)) is not first
    other = calibration_from_dict({"base": {}, "source": "test"})
    assert other is not load_calibration()
    assert batch.cached_replica(model, deployment, other) is not first
    assert (
        batch.cached_replica(model, deployment, other).factors
        == inference.build_replica(model, deployment, other).factors
    )
