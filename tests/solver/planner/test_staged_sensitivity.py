"""Sensitivity of a multi-year plan (issue 32): the price rows re-solved on the staged model; each
row's two sides checked by staged solves of their own at those prices."""

from __future__ import annotations

from planner_factories import h200_l40s_request

from pricebook.schema import Pricebook
from solver.analysis.whatif import mix_of, scale_gpu_price
from solver.domain import PlanRequest, PricePath
from solver.optimizer.candidates import build_instance
from solver.planner import plan
from solver.planner.staged import solve_checked
from solver.planner.staged_sensitivity import horizon_fleet
from solver.resolve import resolve

FLAT = (PricePath(gpu="h200-sxm", multipliers=(1.0,) * 3), PricePath(gpu="l40s", multipliers=(1.0,) * 3))


def _request() -> PlanRequest:
    req = h200_l40s_request(
        {"discount_rate_annual": 0.10, "price_by_year": FLAT},
        options={"compute_baselines": True, "compute_sensitivity": True},
    )
    inference = tuple(w.model_copy(update={"demand_by_year": (1.0, 2.0, 3.0)}) for w in req.inference)
    return req.model_copy(update={"inference": inference})


def test_each_row_of_a_staged_plan_holds_on_both_sides_of_its_threshold(book: Pricebook) -> None:
    req = _request()
    resolved = resolve(req, book)
    result = plan(resolved, time_limit_s=60)
    assert result.schedule is not None
    rows = {s.subject: s for s in result.sensitivity}
    planned = {line.gpu for y in result.schedule.years for line in y.fleet}
    assert planned <= set(rows), "a row for every GPU type the plan holds in some year"
    base = build_instance(req, book)

    def mix_at(gpu: str, fraction: float) -> object:
        found = solve_checked(resolved, scale_gpu_price(base, gpu, 1.0 + fraction), 30, None)
        assert found.solutions
        return mix_of(horizon_fleet(found.solutions))

    today = mix_at("h200-sxm", 0.0)
    changed = 0
    for gpu, row in rows.items():
        for same, past in (
            (row.last_same_down_fraction, row.change_down_fraction),
            (row.last_same_up_fraction, row.change_up_fraction),
        ):
            if past is None:
                continue
            assert same is not None
            assert mix_at(gpu, same) == today
            assert mix_at(gpu, past) != today
            changed += 1
    assert changed, "expected some price within the searched range to change the mix"
    assert not [w for w in result.warnings if "not computed" in w]
