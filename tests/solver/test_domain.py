"""Validated request objects: what a workload's demand means (solver/domain.py)."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from pricebook.loader import load_default
from solver.domain import Constraints, InferenceWorkload, ModelRef, PlanRequest, SolverOptions
from solver.planner import plan
from solver.resolve import resolve


def _workload(**changes: object) -> InferenceWorkload:
    fields: dict[str, object] = {
        "name": "w",
        "model": ModelRef(model_id="meta-llama/Llama-3.1-8B"),
        "input_tokens": 1000,
        "output_tokens": 200,
        "daily_tokens": 1_200_000_000,
    }
    fields.update(changes)
    return InferenceWorkload.model_validate(fields)


def test_interactive_work_is_served_at_its_peak() -> None:
    rates = _workload(peak_to_average=3.0).hourly_request_rates()
    daily_requests = 1_200_000_000 / 1200
    assert rates == (daily_requests / 86_400 * 3.0,) * 24


@pytest.mark.parametrize(
    "demand",
    [
        {"peak_to_average": 3.0},
        {"hourly_profile": tuple(float(h % 6 == 0) + 0.5 for h in range(24))},
        {"daily_tokens": None, "peak_request_rate_per_s": 40.0, "hourly_profile": (1.0,) * 12 + (3.0,) * 12},
    ],
)
def test_batch_work_is_served_at_the_daily_average(demand: dict[str, object]) -> None:
    interactive = _workload(**demand).hourly_request_rates()
    batch = _workload(**demand, interactive=False).hourly_request_rates()
    assert len(set(batch)) == 1
    assert max(batch) < max(interactive)


def test_batch_daily_volume_is_the_stated_one() -> None:
    batch = _workload(peak_to_average=3.0, interactive=False).hourly_request_rates()
    assert math.isclose(sum(batch) * 3600 * 1200, 1_200_000_000, rel_tol=1e-12)
    profiled = {"hourly_profile": tuple(1.0 + h for h in range(24))}
    assert math.isclose(
        sum(_workload(**profiled, interactive=False).hourly_request_rates()),
        sum(_workload(**profiled).hourly_request_rates()),
        rel_tol=1e-12,
    )
    by_rate = _workload(
        daily_tokens=None, peak_request_rate_per_s=30.0, peak_to_average=3.0, interactive=False
    )
    assert by_rate.hourly_request_rates() == (10.0,) * 24


def test_a_flat_batch_day_is_unchanged_bit_for_bit() -> None:
    assert _workload(interactive=False).hourly_request_rates() == _workload().hourly_request_rates()


def test_serving_kind_changes_the_plan_batch_needs_no_peak_capacity() -> None:
    """The same daily volume with a 3× peak: interactive work is sized for the peak hour, batch work
    for the day's average, so the batch fleet is smaller and cheaper."""
    book = load_default()
    results = {}
    for interactive in (True, False):
        workload = _workload(daily_tokens=40_000_000_000, peak_to_average=3.0, interactive=interactive)
        request = PlanRequest(
            inference=(workload,),
            constraints=Constraints(allowed_gpus=("h100-sxm",)),
            options=SolverOptions(compute_baselines=False, compute_sensitivity=False),
        )
        results[interactive] = plan(resolve(request, book), time_limit_s=30)
    interactive_gpus = sum(line.gpus for line in results[True].fleet)
    batch_gpus = sum(line.gpus for line in results[False].fleet)
    assert batch_gpus < interactive_gpus
    assert results[False].horizon_tco is not None and results[True].horizon_tco is not None
    assert results[False].horizon_tco.amount < results[True].horizon_tco.amount


@pytest.mark.parametrize(
    ("constraints", "words"),
    [
        ({"capex_budget": {"amount": "-5", "currency": "USD"}}, "must not be negative"),
        ({"capex_budget": {"amount": "1e400", "currency": "USD"}}, "at most"),
        ({"monthly_opex_cap": {"amount": "-1", "currency": "USD"}}, "must not be negative"),
        ({"count_bounds": [{"gpu": "h100-sxm", "min_count": 5, "max_count": 2}]}, "exceeds max_count"),
    ],
)
def test_constraints_refuse_money_and_bounds_that_cannot_mean_anything(
    constraints: dict[str, object], words: str
) -> None:
    with pytest.raises(ValidationError, match=words):
        Constraints.model_validate(constraints)


def test_a_workload_name_of_spaces_is_refused() -> None:
    with pytest.raises(ValidationError, match="pattern"):
        _workload(name="   ")


def test_a_batch_window_is_for_batch_work_without_spares() -> None:
    assert _workload(interactive=False, batch_deadline_hours=24).batch_deadline_hours == 24
    with pytest.raises(ValueError, match="batch_deadline_hours is for batch work"):
        _workload(batch_deadline_hours=24)
    with pytest.raises(ValueError, match="spare replicas"):
        _workload(interactive=False, batch_deadline_hours=24, redundancy=1)
    with pytest.raises(ValueError, match="batch_deadline_hours"):
        _workload(interactive=False, batch_deadline_hours=0)


@pytest.mark.parametrize("rate", [1e-300, 5e-324, 1e-7])
def test_a_vanishing_peak_rate_is_refused(rate: float) -> None:
    # 1e-300 req/s made the MIP's capacity coefficients infinite: "No plan (no_solution)." with no
    # reason. One request every 11.6 days (1e-6) is the least a plan is made for.
    with pytest.raises(ValidationError, match=r"greater than or equal to 0\.000001"):
        _workload(daily_tokens=None, peak_request_rate_per_s=rate)
    assert _workload(daily_tokens=None, peak_request_rate_per_s=1e-6).peak_request_rate_per_s == 1e-6


def test_repeated_modes_count_once() -> None:
    constraints = Constraints.model_validate({"allowed_modes": ["buy", "on_demand", "on_demand", "buy"]})
    assert [m.value for m in constraints.allowed_modes] == ["buy", "on_demand"]
