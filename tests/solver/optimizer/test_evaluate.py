"""The independent evaluator: each constraint family, and capacities it computes itself."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest
from opt_factories import chat_workload, two_gpu_instance

from pricebook.schema import Pricebook
from solver.domain import Constraints, PlanRequest
from solver.optimizer import Caps, SolveStatus, check_solution, solve
from solver.optimizer.candidates import build_instance
from solver.optimizer.evaluate import _domains, _pack, _with_tolerance, perf_capacity_checker
from solver.optimizer.instance import FleetInstance
from solver.perf import capacity as perf_capacity


def _chat_request() -> PlanRequest:
    w = chat_workload(20.0)
    return PlanRequest(inference=(w,), constraints=Constraints(allowed_gpus=("l40s", "h100-sxm")))


def _claiming(instance: FleetInstance, factor: float) -> FleetInstance:
    """``instance`` whose candidates claim ``factor`` × the capacity the performance model gives."""
    return dataclasses.replace(
        instance,
        candidates=tuple(
            dataclasses.replace(c, capacity_req_s=c.capacity_req_s * factor) for c in instance.candidates
        ),
    )


def test_evaluator_rejects_a_tampered_plan() -> None:
    inst = two_gpu_instance(55.0)
    sol = solve(inst, time_limit_s=5)
    weaker = two_gpu_instance(65.0)  # same plan (60 req/s) cannot serve 65 req/s
    violations = check_solution(weaker, sol)
    assert any(v.kind == "demand" for v in violations)


def test_an_honest_instance_of_a_real_request_passes(book: Pricebook) -> None:
    request = _chat_request()
    instance = build_instance(request, book)
    plan = solve(instance, time_limit_s=10, capacity_of=perf_capacity_checker(request, book), explain=False)
    assert plan.has_plan


def test_a_candidate_claiming_twice_its_capacity_is_refused(book: Pricebook) -> None:
    # The builder's candidates say 2× what the performance model gives, so the MIP buys half the
    # replicas needed; the checker's own capacities see both the claim and the shortfall.
    request = _chat_request()
    planted = _claiming(build_instance(request, book), 2.0)
    refused = solve(planted, time_limit_s=10, capacity_of=perf_capacity_checker(request, book), explain=False)
    assert refused.status is SolveStatus.NO_SOLUTION
    assert refused.diagnosis is not None and "capacity" in refused.diagnosis.messages[0]
    plan = solve(planted, time_limit_s=10, explain=False)  # trusting the candidates, it plans
    violations = check_solution(planted, plan, perf_capacity_checker(request, book))
    assert {v.kind for v in violations} == {"capacity", "demand"}


def test_the_checker_computes_capacities_without_the_builders_cache(book: Pricebook) -> None:
    request = _chat_request()
    instance = build_instance(request, book)
    check = perf_capacity_checker(request, book)
    before = perf_capacity._capacity.cache_info()
    capacities = [check(c) for c in instance.candidates]
    after = perf_capacity._capacity.cache_info()
    assert (after.hits, after.misses) == (before.hits, before.misses)
    # Same physics: the builder's (cached) capacities agree with the checker's fresh ones.
    assert capacities == pytest.approx([c.capacity_req_s for c in instance.candidates])


def test_each_cap_is_checked_and_named_in_words() -> None:
    plan = solve(two_gpu_instance(55.0), time_limit_s=5)  # b×2: capex 500, 4 kW, 4 U
    tight = two_gpu_instance(55.0, Caps(capex_budget=400, power_cap_kw=3.0, rack_units_cap=4))
    violations = check_solution(tight, plan)
    assert [(v.kind, v.subject) for v in violations] == [("cap", "capex budget"), ("cap", "power cap")]


def _domains_one_by_one(gpus: int, per_server: int, domain: int) -> list[float]:
    """The domains ``gpus`` GPUs fill, listed one at a time (servers filled one after another)."""
    sizes: list[float] = []
    while gpus > 0:
        in_server = min(per_server, gpus)
        gpus -= in_server
        while in_server > 0:
            sizes.append(float(min(domain, in_server)))
            in_server -= min(domain, in_server)
    return sizes


@pytest.mark.parametrize("per_server", [1, 2, 4, 8])
@pytest.mark.parametrize("domain", [1, 2, 4, 8])
@pytest.mark.parametrize("gpus", [0, 1, 3, 7, 8, 9, 17, 64, 101])
def test_domains_are_counted_as_listing_them_would(gpus: int, per_server: int, domain: int) -> None:
    domain = min(domain, per_server)
    assert _domains(gpus, per_server, domain) == Counter(_domains_one_by_one(gpus, per_server, domain))


def test_packing_is_exact_below_a_million_gpus_and_tolerant_above() -> None:
    # Seven 1-GPU replicas do not fit three 2-GPU domains: refused, however small the shortfall.
    assert not _pack(Counter({1.0: 7}), _with_tolerance(Counter({2.0: 3}), Counter({1.0: 7})))
    # 2·10^9 GPUs of 4-GPU replicas one GPU short of their domains: within REL_TOL, as demand is.
    items = Counter({4.0: 500_000_000, 1.0: 1})
    bins = Counter({8.0: 250_000_000})
    assert not _pack(items, bins)
    assert _pack(items, _with_tolerance(bins, items))
