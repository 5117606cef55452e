"""EvaluateFleet on fixed fleets, cancellation of a running solve, and quiet solver output."""

from __future__ import annotations

import logging
import threading
import time

import pytest
import structlog
from opt_factories import ALL_DAY, candidate, flat_demand, option

from bench.solver_scaling import portfolio
from pricebook.loader import load_default
from solver.domain import (
    AcquisitionMode,
    Constraints,
    Fleet,
    FleetItem,
    InferenceWorkload,
    ModelRef,
    PlanRequest,
    Precision,
    Sla,
)
from solver.errors import SolveCancelled
from solver.optimizer import CancelToken, FleetInstance, evaluate_fleet, solve
from solver.optimizer.candidates import build_instance
from solver.optimizer.fleet_eval import evaluate_fixed_fleet


def fixed(count_a: int, rate: float = 55.0) -> FleetInstance:
    # GPU "a": 100 per GPU, 10 req/s per replica (same numbers as test_model.two_gpu_instance).
    return FleetInstance(
        currency="USD",
        horizon_months=36,
        buckets=ALL_DAY,
        options=(option("a", capex=100),),
        inference=(flat_demand("chat", rate),),
        candidates=(candidate("chat", "a", 10.0),),
        fixed_counts={"a/buy": count_a},
    )


def fleet(count: int) -> Fleet:
    return Fleet(items=(FleetItem(gpu="a", mode=AcquisitionMode.BUY, count=count),))


def test_short_fleet_reports_the_share_it_serves() -> None:
    # 3 GPUs × 10 req/s = 30 of 55 req/s.
    ev = evaluate_fixed_fleet(fixed(3), fleet(3), time_limit_s=5)
    assert not ev.feasible
    (fit,) = ev.fits
    assert fit.served_fraction == pytest.approx(30 / 55, rel=1e-6)
    assert fit.headroom_fraction == pytest.approx(30 / 55 - 1, rel=1e-6)
    assert ev.tco == pytest.approx(300)


def test_big_enough_fleet_is_feasible_with_headroom() -> None:
    # 6 GPUs serve 60 req/s: headroom 60/55 − 1; TCO = 6 × 100 (the fleet is paid whether busy or not).
    ev = evaluate_fixed_fleet(fixed(6), fleet(6), time_limit_s=5)
    assert ev.feasible
    assert ev.fits[0].served_fraction == 1.0
    assert ev.fits[0].headroom_fraction == pytest.approx(60 / 55 - 1, rel=1e-6)
    assert ev.tco == pytest.approx(600)


@pytest.fixture(scope="module")
def book():  # type: ignore[no-untyped-def]
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    return load_default()


def test_evaluate_fleet_with_real_models_compares_with_the_optimum(book) -> None:  # type: ignore[no-untyped-def]
    w = InferenceWorkload(
        name="chat",
        model=ModelRef(model_id="Qwen/Qwen3-8B"),
        precision=Precision.FP8,
        input_tokens=1500,
        output_tokens=300,
        peak_request_rate_per_s=4.0,
        sla=Sla(ttft_p95_ms=2000, tpot_p95_ms=50),
    )
    request = PlanRequest(inference=(w,), constraints=Constraints(allowed_gpus=("H100", "L40S")))
    proposal = Fleet(items=(FleetItem(gpu="H100", mode=AcquisitionMode.BUY, count=16),))
    ev = evaluate_fleet(proposal, request, book, time_limit_s=10)
    assert ev.feasible
    assert ev.fits[0].headroom_fraction > 0
    assert ev.tco is not None and ev.optimal_tco is not None
    assert ev.optimal_tco <= ev.tco * (1 + 1e-3)
    assert ev.solution.gpu_counts() == {"h100-sxm": 16}


@pytest.mark.slow
def test_cancel_interrupts_a_running_solve(book) -> None:  # type: ignore[no-untyped-def]
    instance = build_instance(portfolio(5), book)  # takes SCIP well over 10 s to prove optimal
    token = CancelToken()
    timer = threading.Timer(0.5, token.cancel)
    started = time.perf_counter()
    timer.start()
    with pytest.raises(SolveCancelled):
        solve(instance, time_limit_s=60, cancel=token)
    assert time.perf_counter() - started < 5.0


def test_solver_writes_nothing_to_stdout(capfd: pytest.CaptureFixture[str]) -> None:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    for backend in ("scip", "highs", "cp_sat"):
        solve(fixed(6), time_limit_s=5, backend=backend, explain=False)
    out, err = capfd.readouterr()
    assert out == "" and err == ""
