"""A disaggregated unit's capacity at an SLA (``solver.perf.disagg_capacity``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pricebook import catalog
from pricebook.loader import load_default
from pricebook.schema import Pricebook
from solver.domain import Engine, Precision, Sla
from solver.perf.disagg import DisaggDeployment, Pool, estimate_disagg
from solver.perf.disagg_capacity import refine_unit, timing_meets, ttft_p95, unit_capacities
from solver.perf.replica import WorkloadShape

SHAPE = WorkloadShape(8000, 400)
SLA = Sla(ttft_p95_ms=3000, tpot_p95_ms=20)
RATIOS = [(1, 1), (1, 2), (2, 1), (1, 3)]


@pytest.fixture(scope="module")
def book() -> Pricebook:
    return load_default()


def _deployment(book: Pricebook) -> DisaggDeployment:
    b200, h200 = catalog.gpu(book, "b200"), catalog.gpu(book, "h200-sxm")
    return DisaggDeployment(
        Pool(h200, tp=2, ep=2), Pool(b200, tp=4, ep=4), Precision.FP8, engine=Engine.TRTLLM
    )


def test_the_p95_adds_the_exponential_tail_of_the_waits() -> None:
    # Busy half the time, a mean wait of 0.2 s: the 95th percentile wait is 0.2 / 0.5 × ln(0.5 / 0.05).
    p95 = ttft_p95(np.array([1.0, 1.0]), np.array([0.2, 0.2]), np.array([0.5, 0.01]))
    assert p95[0] == pytest.approx(1.0 - 0.2 + 0.2 / 0.5 * math.log(10))
    assert p95[1] == pytest.approx(1.0)  # hardly ever busy: no tail beyond the mean


def test_a_units_capacity_is_the_most_whole_users_within_the_sla(book: Pricebook) -> None:
    model = catalog.model(book, "Qwen/Qwen3-235B-A22B")
    dep = _deployment(book)
    for cap in unit_capacities(model, dep, SHAPE, SLA, RATIOS):
        unit = DisaggDeployment(
            Pool(dep.prefill.gpu, 2, cap.prefill_engines, 2),
            Pool(dep.decode.gpu, 4, cap.decode_engines, 4),
            Precision.FP8,
            engine=Engine.TRTLLM,
        )
        users = round(cap.users)
        at, beyond = (
            estimate_disagg(model, unit, SHAPE, users),
            estimate_disagg(model, unit, SHAPE, users + 1),
        )
        assert timing_meets(at.timing, SLA)
        assert cap.req_s == at.timing.req_s
        assert not timing_meets(beyond.timing, SLA) or beyond.timing.req_s == pytest.approx(at.timing.req_s)


def test_the_grid_answers_are_within_two_percent_and_refine_to_the_exact_ones(book: Pricebook) -> None:
    model = catalog.model(book, "Qwen/Qwen3-235B-A22B")
    dep = _deployment(book)
    exact = unit_capacities(model, dep, SHAPE, SLA, RATIOS)
    grid = unit_capacities(model, dep, SHAPE, SLA, RATIOS, exact=False)
    for e, g in zip(exact, grid, strict=True):
        assert g.req_s == pytest.approx(e.req_s, rel=0.02)
        assert refine_unit(model, dep, SHAPE, SLA, g) == e


def test_no_ratio_no_answer(book: Pricebook) -> None:
    assert (
        unit_capacities(catalog.model(book, "Qwen/Qwen3-235B-A22B"), _deployment(book), SHAPE, SLA, []) == []
    )
