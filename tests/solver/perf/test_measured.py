"""Measured points correct the deployments they measured (``solver.perf.measured``, issue 29).

Expected values come from the measurements the tests make up (a deployment 25 % faster than the
model says) and from the rescaled-clock argument, never from the module's own outputs."""

from __future__ import annotations

import math

import pytest

from pricebook import catalog, load_default
from pricebook.schema import Pricebook
from solver.domain import MeasuredPoint, ModelRef, Precision, Sla
from solver.errors import InvalidRequest
from solver.perf import ClosedLoop, Deployment, WorkloadShape, estimate_inference, resolve_model
from solver.perf.measured import (
    NO_CORRECTIONS,
    corrected_capacity,
    corrected_estimate,
    fit_corrections,
)

MODEL = "meta-llama/Llama-3.1-8B"
SHAPE = WorkloadShape(1000, 200)


@pytest.fixture(scope="module")
def book() -> Pricebook:
    return load_default()


FASTER = 1.25
"""The made-up deployment's speed over the model: throughput × 1.25, latencies ÷ 1.25."""


def _deployment(book: Pricebook, gpu: str = "h100-sxm", tp: int = 1) -> Deployment:
    return Deployment(catalog.gpu(book, gpu), tp, Precision.FP8)


def _point(book: Pricebook, concurrency: int, speed: float = FASTER, label: str = "demo") -> MeasuredPoint:
    model = resolve_model(ModelRef(model_id=MODEL), book)
    est = estimate_inference(model, _deployment(book), SHAPE, ClosedLoop(concurrency))
    return MeasuredPoint(
        gpu="h100-sxm",
        model=MODEL,
        precision=Precision.FP8,
        input_len=SHAPE.input_tokens,
        output_len=SHAPE.output_tokens,
        concurrency=concurrency,
        measured_output_tok_s=est.output_tok_s * speed,
        measured_tpot_ms=est.tpot_ms / speed,
        measured_ttft_ms=est.ttft_ms / speed,
        label=label,
    )


def test_estimate_at_the_measured_point_is_within_3_percent(book: Pricebook) -> None:
    model = resolve_model(ModelRef(model_id=MODEL), book)
    point = _point(book, 32)
    correction = fit_corrections([point], book).of(model, _deployment(book))
    assert correction is not None and correction.labels == ("demo",)
    est = corrected_estimate(model, _deployment(book), SHAPE, ClosedLoop(32), correction)
    assert point.measured_output_tok_s and point.measured_tpot_ms and point.measured_ttft_ms
    assert est.output_tok_s == pytest.approx(point.measured_output_tok_s, rel=0.03)
    assert est.tpot_ms == pytest.approx(point.measured_tpot_ms, rel=0.03)
    assert est.ttft_ms == pytest.approx(point.measured_ttft_ms, rel=0.03)
    # The band narrows where measured.
    plain = estimate_inference(model, _deployment(book), SHAPE, ClosedLoop(32))
    assert est.output_tok_s_high / est.output_tok_s_low < plain.output_tok_s_high / plain.output_tok_s_low


@pytest.mark.parametrize("concurrency", [8, 16, 64])
def test_neighbouring_concurrencies_move_the_same_way(book: Pricebook, concurrency: int) -> None:
    model = resolve_model(ModelRef(model_id=MODEL), book)
    correction = fit_corrections([_point(book, 32)], book).of(model, _deployment(book))
    plain = estimate_inference(model, _deployment(book), SHAPE, ClosedLoop(concurrency))
    est = corrected_estimate(model, _deployment(book), SHAPE, ClosedLoop(concurrency), correction)
    assert est.output_tok_s > plain.output_tok_s * 1.2
    assert est.tpot_ms < plain.tpot_ms / 1.2


def test_few_points_are_shrunk_and_agreeing_points_sharpen(book: Pricebook) -> None:
    model = resolve_model(ModelRef(model_id=MODEL), book)
    one = fit_corrections([_point(book, 32)], book).of(model, _deployment(book))
    three = fit_corrections([_point(book, c, label=f"c{c}") for c in (8, 32, 64)], book).of(
        model, _deployment(book)
    )
    assert one is not None and three is not None and one.throughput and three.throughput
    # One point: pulled slightly toward the model (1.0), never past the measurement.
    assert 1.0 < one.throughput.factor < FASTER
    assert three.throughput.factor == pytest.approx(FASTER, rel=0.01)
    assert abs(math.log(three.throughput.factor / FASTER)) < abs(math.log(one.throughput.factor / FASTER))
    assert three.throughput.spread < one.throughput.spread


def test_never_carried_to_another_gpu_or_tp(book: Pricebook) -> None:
    model = resolve_model(ModelRef(model_id=MODEL), book)
    fitted = fit_corrections([_point(book, 32)], book)
    assert fitted.of(model, _deployment(book, "h200-sxm")) is None
    assert fitted.of(model, _deployment(book, tp=2)) is None
    assert fitted.of(model, Deployment(catalog.gpu(book, "h100-sxm"), 1, Precision.BF16)) is None


def test_capacity_at_sla_uses_the_measured_speed(book: Pricebook) -> None:
    model = resolve_model(ModelRef(model_id=MODEL), book)
    sla = Sla(ttft_p95_ms=1500, tpot_p95_ms=30)
    plain = corrected_capacity(model, _deployment(book), SHAPE, sla, NO_CORRECTIONS)
    fitted = fit_corrections([_point(book, 32)], book)
    measured = corrected_capacity(model, _deployment(book), SHAPE, sla, fitted)
    # A clock 25 % faster meets the same targets at ≥ 1.25 × the rate (its latencies at rate λ are
    # the model's at λ / 1.25, shortened): allow the one-point shrinkage.
    assert measured.max_request_rate_per_s >= plain.max_request_rate_per_s * FASTER * 0.97
    assert measured.measured_by == ("demo",) and "demo" in measured.measured_note
    assert measured.ttft_p95_ms <= 1500 and measured.tpot_ms <= 30


def test_contradicting_points_are_refused_naming_the_field(book: Pricebook) -> None:
    points = [_point(book, 32, 1.0, "a"), _point(book, 32, 3.0, "b")]
    with pytest.raises(InvalidRequest) as caught:
        fit_corrections(points, book)
    assert caught.value.violations[0].field.startswith("measurements[1].measured_")


def test_inconsistent_point_is_refused() -> None:
    with pytest.raises(ValueError, match="measured_output_tok_s"):
        MeasuredPoint(
            gpu="h100-sxm",
            model=MODEL,
            input_len=100,
            output_len=100,
            concurrency=4,
            measured_tpot_ms=10.0,
            measured_output_tok_s=4 * 100.0 * 2,  # twice what 4 users at 100 tok/s each can produce
        )


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"measured_ttft_ms": 1e-6}, "measured_ttft_ms"),  # microseconds written as milliseconds
        ({"tp": 3}, "tp"),  # does not divide the heads
        ({"concurrency": None, "request_rate_per_s": 1e6}, "request_rate_per_s"),  # beyond any capacity
        ({"input_len": 1_000_000}, "input_len"),  # beyond the model's context
    ],
)
def test_impossible_points_name_the_field(book: Pricebook, change: dict[str, object], field: str) -> None:
    point = MeasuredPoint.model_validate(_point(book, 32).model_dump() | change)
    with pytest.raises(InvalidRequest) as caught:
        fit_corrections([point], book)
    assert [v.field for v in caught.value.violations] == [f"measurements[0].{field}"]
