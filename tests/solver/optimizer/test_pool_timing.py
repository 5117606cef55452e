"""The pool sharing rule (``solver.optimizer.pool_timing``): pools start from the linear rule on
the model's single-stream capacities, are rejected only when the mixed batch's timing misses the
SLA, and are derated only then. Expected verdicts come from ``mixed_open_loop_timing`` read here,
not from the rule's code."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.melange import melange_request
from pricebook import catalog, load_default
from solver.domain import Sla
from solver.optimizer import driver, solve
from solver.optimizer.candidates import build_instance, perf_capacity_checker
from solver.optimizer.evaluate import check_pools
from solver.optimizer.instance import Candidate, FleetInstance
from solver.optimizer.pool_timing import (
    DERATE_MARGIN,
    PerfCapacity,
    PoolVerdict,
    derated,
    pool_loads,
    pool_verdicts,
)
from solver.perf import Deployment, WorkloadShape, capacity_at_sla, resolve_model
from solver.perf.inference import build_replica
from solver.perf.mixed import mixed_open_loop_timing

BOOK = load_default()
REQUEST = melange_request(4, 80.0)
(WORKLOAD,) = REQUEST.inference
MODEL = resolve_model(WORKLOAD.model, BOOK)
INSTANCE = build_instance(REQUEST, BOOK)
PROPERTY = settings(
    max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


def _deployment(c: Candidate) -> Deployment:
    return Deployment(gpu=catalog.gpu(BOOK, c.gpu), tp=c.tp, precision=c.precision)


def _shape(c: Candidate) -> WorkloadShape:
    return WorkloadShape(c.input_tokens, c.output_tokens)


def _timing_misses(c: Candidate, streams: list[tuple[WorkloadShape, float]], sla: Sla) -> bool:
    timing = mixed_open_loop_timing(build_replica(MODEL, _deployment(c), None), streams)
    if timing is None:
        return True
    assert sla.ttft_p95_ms is not None and sla.tpot_p95_ms is not None
    return max(timing.ttft_p95_s) * 1e3 > sla.ttft_p95_ms or timing.tpot_s * 1e3 > sla.tpot_p95_ms


def _pools(instance: FleetInstance) -> dict[str, list[Candidate]]:
    out: dict[str, list[Candidate]] = {}
    for c in instance.candidates:
        if c.pool:
            out.setdefault(c.pool, []).append(c)
    return out


def test_pools_start_from_the_single_stream_capacities() -> None:
    """Never stricter than Mélange's linear rule without evidence: every pooled candidate's
    capacity is its size's single-stream capacity at the SLA (no headroom in this request)."""
    pooled = [c for c in INSTANCE.candidates if c.pool]
    assert pooled
    for c in pooled:
        alone = capacity_at_sla(MODEL, _deployment(c), _shape(c), WORKLOAD.sla)
        assert c.capacity_req_s == alone.max_request_rate_per_s, c.id


@PROPERTY
@given(st.data())
def test_a_pool_is_rejected_exactly_when_its_mixed_timing_misses(data: st.DataObject) -> None:
    """Mixes within and beyond the linear rule (Σ x/cap up to 1.3) on every pool of the 4×4
    instance: the rule rejects a mix if and only if the mixed-stream timing misses the SLA."""
    pools = _pools(INSTANCE)
    members = pools[data.draw(st.sampled_from(sorted(pools)))]
    weights = data.draw(st.lists(st.floats(0, 1), min_size=len(members), max_size=len(members)))
    if sum(weights) <= 0:
        return
    load = data.draw(st.floats(0.05, 1.3))
    rates = [load * w / sum(weights) * c.capacity_req_s for w, c in zip(weights, members, strict=True)]
    scale, miss = perf_capacity_checker(REQUEST, BOOK).pool_scale(list(zip(members, rates, strict=True)))
    streams = [(_shape(c), r) for c, r in zip(members, rates, strict=True) if r > 0]
    assert bool(miss) == _timing_misses(members[0], streams, WORKLOAD.sla), (members[0].pool, load)
    assert (scale < 1.0) == bool(miss)


def test_a_planned_pool_meets_its_timing_and_one_replica_less_is_judged_by_it() -> None:
    """Every pool of a plan meets its mixed timing, and the evaluator rejects the same pool on
    fewer replicas exactly when the timing of that heavier mix misses the SLA."""
    checker = perf_capacity_checker(REQUEST, BOOK)
    plan = solve(INSTANCE, time_limit_s=20, capacity_of=checker, explain=False)
    assert plan.pools
    for pool in plan.pools:
        loads = pool_loads(plan)[pool.id][0]
        for replicas in range(1, pool.replicas[0] + 1):
            streams = [(_shape(c), rate / replicas) for c, rate in loads]
            fewer = dataclasses.replace(
                plan,
                pools=tuple(
                    dataclasses.replace(p, replicas=(replicas,)) if p.id == pool.id else p for p in plan.pools
                ),
            )
            misses = _timing_misses(loads[0][0], streams, WORKLOAD.sla)
            assert misses == (replicas < pool.replicas[0] and misses)  # the plan's own count meets it
            verdict = next(v for v in pool_verdicts(fewer, checker) if v.pool == pool.id)
            assert bool(verdict.miss) == misses
            assert any(v.subject == pool.id for v in check_pools(INSTANCE, fewer, checker)) == misses


def test_only_pools_that_miss_are_derated_and_by_the_measured_share() -> None:
    pools = sorted(_pools(INSTANCE))
    missing, meeting = pools[0], pools[1]
    verdicts = [
        PoolVerdict(missing, 0, 3, 0.9, "p95 TTFT too long"),
        PoolVerdict(missing, 0, 3, 0.95, "p95 TTFT too long"),
        PoolVerdict(meeting, 0, 2, 1.0, ""),
    ]
    after = {c.id: c for c in derated(INSTANCE, verdicts).candidates}
    for c in INSTANCE.candidates:
        factor = 0.9 * (1 - DERATE_MARGIN) if c.pool == missing else 1.0
        assert after[c.id].capacity_req_s == c.capacity_req_s * factor


class _AlwaysMisses(PerfCapacity):
    """A sharing rule that rejects every mix: the planner must end without mixing pools."""

    def pool_scale(self, loads: Sequence[tuple[Candidate, float]]) -> tuple[float, str]:
        return 0.5, "rejected by the test"


def test_pools_that_keep_missing_are_dropped_and_the_plan_still_verifies() -> None:
    checker = _AlwaysMisses(REQUEST, BOOK)
    plan = solve(INSTANCE, time_limit_s=20, capacity_of=checker, explain=False)
    assert plan.has_plan
    assert all(len(set(u.candidate.pool_shapes)) <= 1 for a in plan.assignments for u in a.uses if u.pooled)
    assert not plan.pools


def test_the_plan_without_pools_is_solved_once_across_the_rounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Derating changes pooled candidates only: every round's model without pools is the same, so
    it is solved once per call, and the plan is the one solving it every round gives."""
    solved: list[bool] = []
    real = driver.solve_one

    def counted(instance: FleetInstance, **kwargs: Any) -> Any:
        solved.append(any(c.pool for c in instance.candidates))
        return real(instance, **kwargs)

    monkeypatch.setattr(driver, "solve_one", counted)
    checker = _AlwaysMisses(REQUEST, BOOK)
    plan = solve(INSTANCE, time_limit_s=20, capacity_of=checker, explain=False)
    assert solved.count(False) == 1 and solved.count(True) > 1
    monkeypatch.setattr(driver.OwnPlans, "get", lambda self, own: None)
    solved.clear()
    every_round = solve(INSTANCE, time_limit_s=20, capacity_of=checker, explain=False)
    assert solved.count(False) > 1
    assert plan.cost is not None and every_round.cost is not None
    assert plan.cost.total == every_round.cost.total
    assert plan.options == every_round.options
