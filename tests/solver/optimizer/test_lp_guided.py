"""The LP-guided restricted MIP on its own: every plan it finds is a plan of the full model."""

from __future__ import annotations

import pytest
from opt_factories import random_portfolio

from solver.optimizer.driver import build_model, lp_guided_search, solve_mip
from solver.optimizer.evaluate import check_solution
from solver.optimizer.model import MipResult
from solver.optimizer.solution import build_solution

SEEDS = tuple(range(6))


@pytest.mark.parametrize("seed", SEEDS)
def test_restricted_plan_is_a_verified_plan_of_the_full_model(seed: int) -> None:
    inst = random_portfolio(seed)
    builder = build_model(inst, "scip")
    search = lp_guided_search(builder, relative_gap=1e-6)
    found = search.run(time_limit_s=20)
    assert found is not None
    assert found.lp_bound is not None and found.lp_bound <= found.objective * (1 + 1e-9)
    assert found.kept_replica_vars < sum(len(vs) for vs in builder.r.values())  # it did restrict
    full = solve_mip(inst, time_limit_s=20, relative_gap=1e-9, lp_guided=False)
    assert full.stats.objective is not None
    # A plan of the full model costs at least the full model's optimum.
    assert found.objective * builder.unit >= full.stats.objective * (1 - 1e-6)
    values = builder.values(lambda var: found.values[var.index()])
    solution = build_solution(inst, MipResult(stats=full.stats, values=values))
    assert check_solution(inst, solution) == []
