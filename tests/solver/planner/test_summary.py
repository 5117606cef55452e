"""The plan's summary text (``solver.planner.summary``)."""

from __future__ import annotations

from planner_factories import request

from pricebook.schema import Pricebook
from solver.domain import Constraints
from solver.planner import plan
from solver.resolve import resolve


def test_summary_of_a_plan_that_is_its_own_best_single_gpu_fleet(book: Pricebook) -> None:
    only_h200 = request().model_copy(
        update={"constraints": Constraints(currency="USD", allowed_gpus=("h200-sxm",))}
    )
    result = plan(resolve(only_h200, book), time_limit_s=30)
    assert result.baseline_saving is not None and result.baseline_saving.saving.amount == 0
    assert result.summary.endswith(" It is also the best single-GPU fleet.")
    assert "Saves" not in result.summary
