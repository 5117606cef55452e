"""service.plan_cache: complete answers reused for identical requests, single flight, LRU."""

from __future__ import annotations

import asyncio

import pytest

from api.fleetplan.v1 import common_pb2, scenario_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from service.plan_cache import PlanCache, request_key


def _request(daily_tokens: int) -> api.PlanFleetRequest:
    return api.PlanFleetRequest(
        workloads=[
            scenario_pb2.Workload(
                name="chat",
                inference=scenario_pb2.InferenceWorkload(
                    model=common_pb2.ModelRef(model_id="meta-llama/Llama-3.1-8B"),
                    input_tokens=1000,
                    output_tokens=200,
                    daily_tokens=daily_tokens,
                ),
            )
        ]
    )


def test_key_depends_on_request_and_pricebook() -> None:
    base = request_key(_request(10**8), "hash-a")
    assert base == request_key(_request(10**8), "hash-a")
    assert base != request_key(_request(10**8 + 1), "hash-a")
    assert base != request_key(_request(10**8), "hash-b")


def test_reusable_answers_are_stored_and_others_are_not() -> None:
    async def scenario() -> list[tuple[str, bool]]:
        cache: PlanCache[str] = PlanCache(4)
        calls = 0

        async def compute() -> str:
            nonlocal calls
            calls += 1
            return f"answer-{calls}"

        out = [await cache.get_or_compute("k", compute, reusable=lambda v: v == "answer-1")]
        out.append(await cache.get_or_compute("k", compute, reusable=lambda v: True))
        out.append(await cache.get_or_compute("other", compute, reusable=lambda v: False))
        out.append(await cache.get_or_compute("other", compute, reusable=lambda v: False))
        return out

    assert asyncio.run(scenario()) == [
        ("answer-1", False),
        ("answer-1", True),  # stored: the second compute never ran
        ("answer-2", False),
        ("answer-3", False),  # not reusable: solved again
    ]


def test_identical_requests_in_flight_are_solved_once() -> None:
    async def scenario() -> tuple[list[tuple[str, bool]], int]:
        cache: PlanCache[str] = PlanCache()
        calls = 0

        async def compute() -> str:
            nonlocal calls
            calls += 1
            await asyncio.sleep(0.05)
            return "plan"

        results = await asyncio.gather(
            *(cache.get_or_compute("k", compute, reusable=lambda v: True) for _ in range(5))
        )
        return list(results), calls

    results, calls = asyncio.run(scenario())
    assert calls == 1
    assert sorted(results) == [("plan", False)] + [("plan", True)] * 4


def test_a_failed_first_caller_makes_waiters_solve_themselves() -> None:
    async def scenario() -> tuple[list[object], int]:
        cache: PlanCache[str] = PlanCache()
        calls = 0

        async def compute() -> str:
            nonlocal calls
            calls += 1
            await asyncio.sleep(0.02)
            if calls == 1:
                raise RuntimeError("first solve failed")
            return "plan"

        results = await asyncio.gather(
            *(cache.get_or_compute("k", compute, reusable=lambda v: True) for _ in range(2)),
            return_exceptions=True,
        )
        return list(results), calls

    results, calls = asyncio.run(scenario())
    assert calls == 2
    assert isinstance(results[0], RuntimeError)
    assert results[1] == ("plan", False)


def test_least_recently_used_entry_is_evicted() -> None:
    async def scenario() -> PlanCache[str]:
        cache: PlanCache[str] = PlanCache(2)
        for key in ("a", "b", "a", "c"):  # "a" used again before "c" arrives: "b" is the oldest

            async def compute(key: str = key) -> str:
                return key

            await cache.get_or_compute(key, compute, reusable=lambda v: True)
        return cache

    cache = asyncio.run(scenario())
    assert len(cache) == 2

    async def probe(key: str) -> bool:
        async def fail() -> str:
            raise AssertionError("should not solve")

        try:
            return (await cache.get_or_compute(key, fail, reusable=lambda v: True))[1]
        except AssertionError:
            return False

    assert asyncio.run(probe("a")) and asyncio.run(probe("c"))
    assert not asyncio.run(probe("b"))


@pytest.mark.parametrize("entries", [0])
def test_zero_entries_disables_reuse(entries: int) -> None:
    async def scenario() -> int:
        cache: PlanCache[str] = PlanCache(entries)
        calls = 0

        async def compute() -> str:
            nonlocal calls
            calls += 1
            return "plan"

        for _ in range(3):
            await cache.get_or_compute("k", compute, reusable=lambda v: True)
        return calls

    assert asyncio.run(scenario()) == 3
