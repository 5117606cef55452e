"""Pools on a measured deployment (issue 29): the sharing rule times the mix on the measured clock —
the modelled replica at rates ÷ the throughput factor, its latencies × the latency factors — so a
mix is rejected exactly when that timing misses the SLA (expected verdicts from
``mixed_open_loop_timing`` read here)."""

from __future__ import annotations

import pytest

from bench.melange import melange_request
from pricebook import catalog, load_default
from solver.domain import MeasuredPoint
from solver.optimizer.candidates import build_instance, perf_capacity_checker
from solver.optimizer.instance import Candidate
from solver.perf import ClosedLoop, Deployment, WorkloadShape, estimate_inference, resolve_model
from solver.perf.inference import build_replica
from solver.perf.measured import fit_corrections
from solver.perf.mixed import mixed_open_loop_timing

BOOK = load_default()
BASE = melange_request(3, 60.0)
(WORKLOAD,) = BASE.inference
MODEL = resolve_model(WORKLOAD.model, BOOK)
SPEED = 1.25


def _deployment(c: Candidate) -> Deployment:
    return Deployment(gpu=catalog.gpu(BOOK, c.gpu), tp=c.tp, precision=c.precision)


def _faster(c: Candidate) -> MeasuredPoint:
    shape = WorkloadShape(1000, 200)
    est = estimate_inference(MODEL, _deployment(c), shape, ClosedLoop(8))
    return MeasuredPoint(
        gpu=c.gpu,
        model=MODEL.id,
        precision=c.precision,
        input_len=1000,
        output_len=200,
        concurrency=8,
        measured_output_tok_s=est.output_tok_s * SPEED,
        measured_tpot_ms=est.tpot_ms / SPEED,
        measured_ttft_ms=est.ttft_ms / SPEED,
        label="box",
    )


FIRST_POOL = next(c for c in build_instance(BASE, BOOK).candidates if c.pool)
REQUEST = BASE.model_copy(update={"measurements": (_faster(FIRST_POOL),)})
INSTANCE = build_instance(REQUEST, BOOK)
MEMBERS = [c for c in INSTANCE.candidates if c.pool == FIRST_POOL.pool]


def _measured_timing_misses(rates: list[float]) -> bool:
    correction = fit_corrections(REQUEST.measurements, BOOK).of(MODEL, _deployment(MEMBERS[0]))
    assert correction is not None
    streams = [
        (WorkloadShape(c.input_tokens, c.output_tokens), r / correction.throughput_factor)
        for c, r in zip(MEMBERS, rates, strict=True)
        if r > 0
    ]
    timing = mixed_open_loop_timing(build_replica(MODEL, _deployment(MEMBERS[0]), None), streams)
    if timing is None:
        return True
    sla = WORKLOAD.sla
    assert sla.ttft_p95_ms is not None and sla.tpot_p95_ms is not None
    ttft = max(timing.ttft_p95_s) * 1e3 * correction.ttft_factor
    return ttft > sla.ttft_p95_ms or timing.tpot_s * 1e3 * correction.tpot_factor > sla.tpot_p95_ms


@pytest.mark.parametrize("load", [0.3, 0.7, 0.95, 1.1, 1.3])
def test_a_measured_pool_is_rejected_exactly_when_its_measured_timing_misses(load: float) -> None:
    assert len(MEMBERS) > 1 and all(c.measured_by == ("box",) for c in MEMBERS)
    rates = [load / len(MEMBERS) * c.capacity_req_s for c in MEMBERS]
    scale, miss = perf_capacity_checker(REQUEST, BOOK).pool_scale(list(zip(MEMBERS, rates, strict=True)))
    assert bool(miss) == _measured_timing_misses(rates)
    assert (scale < 1.0) == bool(miss)
