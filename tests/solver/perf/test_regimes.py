"""solver.perf.regimes, open loop: every rate below the capacity the model reports (its offline
throughput, quoted in every refusal) is served; at or above it the refusal quotes a capacity
above nothing it refused (issue 29: the secant step overshot and rates below the quoted capacity
were refused)."""

from __future__ import annotations

import re

import pytest

from pricebook import catalog
from pricebook.loader import load_default
from pricebook.schema import ModelArch
from solver.domain import Precision
from solver.perf import Deployment, OpenLoop, WorkloadShape, estimate_inference
from solver.perf.inference import build_replica, open_loop_timing, saturation_rate

BOOK = load_default()
Case = tuple[str, str, int, Precision, int, int]
CASES: list[Case] = [
    # (gpu, model, tp, precision, input, output): each was refused on main below its quoted capacity
    ("a100-sxm-80gb", "meta-llama/Llama-3.1-8B-Instruct", 1, Precision.FP8, 7000, 1024),
    ("a100-sxm-80gb", "meta-llama/Llama-3.1-8B-Instruct", 2, Precision.BF16, 128, 128),
    ("h100-sxm", "meta-llama/Llama-3.1-8B-Instruct", 1, Precision.FP8, 128, 128),
    ("h100-sxm", "Qwen/Qwen3.6-27B", 2, Precision.FP8, 7000, 1024),
    ("h100-nvl", "meta-llama/Llama-3.1-8B-Instruct", 1, Precision.FP8, 2000, 500),
]
FRACTIONS = (0.01, 0.3, 0.6, 0.8, 0.9, 0.95, 0.99, 0.999)


def _setup(case: Case) -> tuple[ModelArch, Deployment, WorkloadShape]:
    gpu, model, tp, precision, lin, lout = case
    deployment = Deployment(catalog.gpu(BOOK, gpu), tp, precision)
    return catalog.model(BOOK, model), deployment, WorkloadShape(lin, lout)


@pytest.mark.parametrize("case", CASES)
def test_every_rate_below_the_reported_capacity_is_served(case: Case) -> None:
    arch, deployment, shape = _setup(case)
    above = estimate_inference(arch, deployment, shape, OpenLoop(1e6))
    assert not above.fits
    quoted = float(re.search(r"about ([0-9.e+]+) req/s", above.reason).group(1))  # type: ignore[union-attr]
    capacity = saturation_rate(build_replica(arch, deployment, None), shape)
    assert quoted == pytest.approx(capacity, rel=1e-2)
    for fraction in FRACTIONS:
        est = estimate_inference(arch, deployment, shape, OpenLoop(fraction * capacity))
        assert est.fits, (fraction, est.reason)
        # what it serves is what was asked, at a finite latency
        assert est.req_s == pytest.approx(fraction * capacity)
        assert est.ttft_ms < float("inf")
        assert est.tpot_ms < float("inf")


@pytest.mark.parametrize("case", CASES[:2])
def test_at_or_above_the_capacity_the_rate_is_refused(case: Case) -> None:
    arch, deployment, shape = _setup(case)
    replica = build_replica(arch, deployment, None)
    capacity = saturation_rate(replica, shape)
    assert open_loop_timing(replica, shape, capacity) is None
    assert open_loop_timing(replica, shape, 1.001 * capacity) is None
    assert open_loop_timing(replica, shape, 0.999 * capacity) is not None
