"""Request caps (each refusal names its limit) and the solve gate (slots, queue, retry hint,
deadline wrap-up, cancellation that frees the slot only when the worker has stopped)."""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from typing import Any

import pytest

from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import performance_pb2, scenario_pb2
from service.errors import ResourceExhausted, ShuttingDown
from service.limits import (
    REASSESS_S,
    SolveGate,
    SolveToken,
    StopReason,
    solve_budget_s,
)
from service.request_limits import RequestLimits, check_request
from solver import domain
from solver.errors import DeadlineExceeded, SolveCancelled


def _workload(i: int) -> scenario_pb2.Workload:
    return scenario_pb2.Workload(name=f"w{i}", inference=scenario_pb2.InferenceWorkload(input_tokens=10))


def test_workload_cap_names_the_limit() -> None:
    request = api.PlanFleetRequest(workloads=[_workload(i) for i in range(domain.MAX_WORKLOADS + 1)])
    [violation] = check_request(request)
    assert violation.field == "workloads"
    assert "max_workloads" in violation.reason
    assert str(domain.MAX_WORKLOADS) in violation.reason
    assert (
        check_request(api.PlanFleetRequest(workloads=[_workload(i) for i in range(domain.MAX_WORKLOADS)]))
        == []
    )


def test_sweep_range_points_refused_before_any_allocation() -> None:
    # 2^31 − 1 points would build a 2-billion-element list if it reached the converter.
    request = api.SweepPlansRequest(range=api.SweepRange(start=1, stop=2, points=2**31 - 1))
    started = time.perf_counter()
    violations = check_request(request)
    assert time.perf_counter() - started < 0.5
    assert [v.field for v in violations] == ["range.points"]
    assert "max_sweep_points" in violations[0].reason


def test_sweep_values_and_base_workloads_are_capped() -> None:
    limits = RequestLimits(max_sweep_points=3, max_workloads=2)
    request = api.SweepPlansRequest(
        values=[1, 2, 3, 4], base=api.PlanFleetRequest(workloads=[_workload(i) for i in range(3)])
    )
    fields = {v.field for v in check_request(request, limits)}
    assert fields == {"values", "base.workloads"}


def test_horizon_hour_buckets_lists_and_fleet_items() -> None:
    limits = RequestLimits(max_list_items=2, max_fleet_items=1)
    workload = _workload(0)
    workload.inference.hourly_profile.extend([1.0] * 25)
    request = api.EvaluateFleetRequest(
        workloads=[workload],
        constraints=scenario_pb2.Constraints(
            horizon_months=domain.MAX_HORIZON_MONTHS + 1, allowed_gpu_ids=["a", "b", "c"]
        ),
        fleet=scenario_pb2.Fleet(items=[scenario_pb2.FleetItem(), scenario_pb2.FleetItem()]),
    )
    by_field = {v.field: v.reason for v in check_request(request, limits)}
    assert set(by_field) == {
        "workloads[0].inference.hourly_profile",
        "constraints.horizon_months",
        "constraints.allowed_gpu_ids",
        "fleet.items",
    }
    assert "hour_buckets" in by_field["workloads[0].inference.hourly_profile"]
    assert "max_horizon_months" in by_field["constraints.horizon_months"]
    assert "max_list_items" in by_field["constraints.allowed_gpu_ids"]
    assert "max_fleet_items" in by_field["fleet.items"]


def test_performance_cases_capped() -> None:
    limits = RequestLimits(max_performance_cases=2)
    request = api.EstimatePerformanceRequest(cases=[performance_pb2.PerformanceCase()] * 3)
    assert [v.field for v in check_request(request, limits)] == ["cases"]


def test_budget_is_remaining_deadline_minus_margin() -> None:
    assert solve_budget_s(None, default_s=60, margin_s=0.25) == 60
    assert solve_budget_s(5.0, default_s=60, margin_s=0.25) == pytest.approx(4.75)
    assert solve_budget_s(500.0, default_s=60, margin_s=0.25) == 60
    assert solve_budget_s(0.1, default_s=60, margin_s=0.25) == pytest.approx(0.05)


class FakeContext:
    def __init__(self, remaining_s: float | None) -> None:
        self._deadline = None if remaining_s is None else time.monotonic() + remaining_s

    def time_remaining(self) -> float | None:
        return None if self._deadline is None else max(0.0, self._deadline - time.monotonic())


def _interruptible(stop_after_interrupt_s: float = 0.0) -> Any:
    """A fake solve: runs until its token's callback (the MIP interrupt) fires, then returns what happened."""

    def solve(token: SolveToken) -> dict[str, Any]:
        interrupted = threading.Event()
        remove = token.add_callback(interrupted.set)
        try:
            interrupted.wait(30)
        finally:
            remove()
        time.sleep(stop_after_interrupt_s)
        return {
            "cancelled": token.cancelled,
            "wrapped": token.wrapped_up,
            "log_stats": {"status": "feasible"},
        }

    return solve


def _append(out: list[str], item: str, token: SolveToken) -> None:
    out.append(item)


async def _hold_the_slot(gate: SolveGate) -> tuple[threading.Event, asyncio.Future[Any]]:
    """A solve that holds a slot until the returned event is set (and the future of its call)."""
    release = threading.Event()
    running = asyncio.ensure_future(gate.run(lambda token: release.wait(10), FakeContext(None)))
    await asyncio.sleep(0.05)
    return release, running


def test_queue_full_gives_resource_exhausted_with_retry_hint() -> None:
    async def scenario() -> None:
        gate = SolveGate(slots=1, max_waiting=1)
        release = threading.Event()
        running = asyncio.ensure_future(gate.run(lambda token: release.wait(10), FakeContext(None)))
        await asyncio.sleep(0.05)
        queued = asyncio.ensure_future(gate.run(lambda token: True, FakeContext(None)))
        await asyncio.sleep(0.05)
        assert (gate.running, gate.waiting) == (1, 1)
        with pytest.raises(ResourceExhausted) as info:
            await gate.run(lambda token: True, FakeContext(None))
        assert info.value.retry_after_s >= 0.5
        release.set()
        assert await running is True
        assert await queued is True
        gate.close()

    asyncio.run(scenario())


def test_deadline_wraps_up_the_solve_and_keeps_its_result() -> None:
    async def scenario() -> None:
        gate = SolveGate(slots=1, max_waiting=0, margin_s=0.2)
        started = time.perf_counter()
        outcome = await gate.run(_interruptible(), FakeContext(0.6))
        elapsed = time.perf_counter() - started
        assert outcome == {"cancelled": False, "wrapped": True, "log_stats": {"status": "feasible"}}
        assert 0.3 < elapsed < 0.6  # interrupted at 0.6 − 0.2 s, before the caller's deadline
        gate.close()

    asyncio.run(scenario())


def test_deadline_without_any_plan_is_deadline_exceeded() -> None:
    def no_plan(token: SolveToken) -> dict[str, Any]:
        token.add_callback(lambda: None)
        while not token.wrapped_up:
            time.sleep(0.01)
        return {"log_stats": {"status": "no_solution"}}

    async def scenario() -> None:
        gate = SolveGate(slots=1, max_waiting=0, margin_s=0.1)
        with pytest.raises(DeadlineExceeded):
            await gate.run(lambda token: type("O", (), no_plan(token))(), FakeContext(0.3))
        gate.close()

    asyncio.run(scenario())


def test_wrap_up_catches_a_solve_started_after_it() -> None:
    """Baselines and sensitivity solve after the main MIP: a wrap-up must interrupt them too."""

    def two_solves(token: SolveToken) -> int:
        interrupted = 0
        for _ in range(2):
            event = threading.Event()
            remove = token.add_callback(event.set)
            interrupted += event.wait(5)
            remove()
        return interrupted

    async def scenario() -> None:
        gate = SolveGate(slots=1, max_waiting=0, margin_s=0.0)
        started = time.perf_counter()
        # Wrap-up at 2.0 − 0.4 s; the hard stop (0.2 s later) is not needed: both MIPs were interrupted.
        assert await gate.run(two_solves, FakeContext(2.0)) == 2
        assert time.perf_counter() - started < 1.8
        gate.close()

    asyncio.run(scenario())


def test_cancel_frees_the_slot_only_when_the_worker_stops() -> None:
    async def scenario() -> None:
        gate = SolveGate(slots=1, max_waiting=0)
        task = asyncio.ensure_future(gate.run(_interruptible(stop_after_interrupt_s=0.3), FakeContext(None)))
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert gate.running == 1  # the worker is still unwinding its solve
        await asyncio.sleep(0.5)
        assert gate.running == 0
        gate.close()

    asyncio.run(scenario())


def test_shutdown_wrap_up_all() -> None:
    async def scenario() -> None:
        gate = SolveGate(slots=2, max_waiting=0)
        tasks = [asyncio.ensure_future(gate.run(_interruptible(), FakeContext(None))) for _ in range(2)]
        await asyncio.sleep(0.1)
        assert gate.wrap_up_all("shutdown") == 2
        results = await asyncio.gather(*tasks)
        assert all(r["wrapped"] and not r["cancelled"] for r in results)
        gate.close()

    asyncio.run(scenario())


def test_stream_yields_items_and_a_closed_consumer_cancels_the_producer() -> None:
    def producer(token: SolveToken) -> Any:
        for i in range(1000):
            if token.cancelled:
                return
            yield i
            time.sleep(0.01)

    async def scenario() -> None:
        gate = SolveGate(slots=1, max_waiting=0)
        items = []
        stream = gate.stream(producer, FakeContext(None))
        async for item in stream:
            items.append(item)
            if len(items) == 3:
                break
        await stream.aclose()
        assert items == [0, 1, 2]
        for _ in range(50):  # the producer notices the cancellation within one item
            if gate.running == 0:
                break
            await asyncio.sleep(0.02)
        assert gate.running == 0
        gate.close()

    asyncio.run(scenario())


def test_admission_control_refuses_work_whose_deadline_would_pass_in_the_queue() -> None:
    async def scenario() -> None:
        gate = SolveGate(slots=1, max_waiting=10, margin_s=0.25)
        release, running = await _hold_the_slot(gate)
        # Expected wait = mean solve time (1 s before any measurement) > 0.9 − 0.25 margin − 1 s to solve.
        started = time.perf_counter()
        with pytest.raises(ResourceExhausted, match="expected wait"):
            await gate.run(lambda token: True, FakeContext(0.9))
        assert time.perf_counter() - started < 0.1  # refused at once, not after waiting
        # Admitted (1 s expected < 2.5 − 0.25 − 1 s = 1.25 s of patience), but the slot does not free: at
        # the next assessment (REASSESS_S) the same 1 s no longer fits the 0.75 s of patience left, so it
        # is refused then — not when its patience runs out.
        started = time.perf_counter()
        with pytest.raises(ResourceExhausted, match="expected wait"):
            await gate.run(lambda token: True, FakeContext(2.5))
        assert REASSESS_S - 0.05 < time.perf_counter() - started < REASSESS_S + 0.3
        assert gate.waiting == 0
        release.set()
        assert await running is True
        # No slot leaked by the abandoned wait: the gate still runs one solve at a time, and runs it.
        assert await gate.run(lambda token: "ran", FakeContext(5.0)) == "ran"
        assert gate.running == 0
        gate.close()

    asyncio.run(scenario())


def test_draining_answers_queued_and_new_solves_shutting_down_at_once() -> None:
    async def scenario() -> None:
        gate = SolveGate(slots=1, max_waiting=10)
        ran: list[str] = []
        running = asyncio.ensure_future(gate.run(_interruptible(), FakeContext(None)))
        await asyncio.sleep(0.05)
        queued = [
            asyncio.ensure_future(gate.run(functools.partial(_append, ran, f"q{i}"), FakeContext(30.0)))
            for i in range(3)
        ]
        await asyncio.sleep(0.05)
        assert gate.waiting == 3
        started = time.perf_counter()
        assert gate.start_draining() == 3
        outcomes = await asyncio.gather(*queued, return_exceptions=True)
        assert time.perf_counter() - started < 0.1
        assert all(isinstance(o, ShuttingDown) for o in outcomes), outcomes
        with pytest.raises(ShuttingDown):
            await gate.run(lambda token: ran.append("new"), FakeContext(None))
        assert ran == [], "no queued or new solve started while draining"
        assert not running.done()  # the running solve goes on
        assert gate.wrap_up_all(StopReason.SHUTDOWN) == 1
        assert (await running)["wrapped"] is True
        assert gate.running == 0 and gate.waiting == 0
        gate.close()

    asyncio.run(scenario())


def test_a_solve_cancelled_for_shutdown_is_answered_shutting_down() -> None:
    def never_finishes(token: SolveToken) -> None:
        token.wait(30)
        raise SolveCancelled("stopped")

    async def scenario() -> None:
        gate = SolveGate(slots=1, max_waiting=0)
        task = asyncio.ensure_future(gate.run(never_finishes, FakeContext(None)))
        await asyncio.sleep(0.05)
        assert gate.cancel_all(StopReason.SHUTDOWN) == 1
        with pytest.raises(ShuttingDown):
            await task
        await asyncio.sleep(0.1)  # answered at once; the slot frees when the worker has unwound
        task = asyncio.ensure_future(gate.run(never_finishes, FakeContext(None)))
        await asyncio.sleep(0.05)
        gate.cancel_all()  # any other cancellation stays a cancellation
        with pytest.raises(SolveCancelled):
            await task
        gate.close()

    asyncio.run(scenario())


def test_queued_solves_are_refused_as_soon_as_their_wait_no_longer_fits() -> None:
    """Six solves queue behind one that runs for 2.8 s, each with a 10 s deadline (8.75 s of patience:
    less the margin and the 1 s solve-time guess). Admitted on the 1 s guess, the later ones are
    refused once the running solve's age shows the wait will not fit (expected wait = age ×
    (position + 1) > patience − age: from age 2.2 s for the third), seconds before their deadlines;
    the first two run (the second would be refused from age 2.9 s)."""

    async def scenario() -> None:
        gate = SolveGate(slots=1, max_waiting=10, margin_s=0.25)
        release, running = await _hold_the_slot(gate)
        started = time.perf_counter()
        ended: dict[int, float] = {}

        async def queued(position: int) -> object:
            try:
                return await gate.run(lambda token: position, FakeContext(10.0))
            except ResourceExhausted as refused:
                return refused
            finally:
                ended[position] = time.perf_counter() - started

        waiters = []
        for position in range(6):
            waiters.append(asyncio.ensure_future(queued(position)))
            await asyncio.sleep(0.01)  # arrival order = queue order
        await asyncio.sleep(2.8)
        release.set()
        outcomes = await asyncio.gather(*waiters)
        assert await running is True
        assert outcomes[:2] == [0, 1], outcomes
        refused = outcomes[2:]
        assert all(isinstance(o, ResourceExhausted) and "expected wait" in str(o) for o in refused), outcomes
        assert all(ended[p] < 3.0 for p in range(2, 6)), ended  # deadlines were 10 s away
        assert gate.waiting == 0 and gate.running == 0
        gate.close()

    asyncio.run(scenario())


def test_a_solve_that_ignores_the_wrap_up_is_stopped_before_the_deadline() -> None:
    """Candidate building cannot be wrapped up: what still runs just before the caller's deadline is
    cancelled and answered DEADLINE_EXCEEDED by the server, before gRPC would end the call bare."""

    def building(token: SolveToken) -> None:
        token.wait(30)  # only a cancellation stops it
        raise SolveCancelled("stopped")

    async def scenario() -> None:
        gate = SolveGate(slots=1, max_waiting=0, margin_s=0.2)
        started = time.perf_counter()
        with pytest.raises(DeadlineExceeded):
            await gate.run(building, FakeContext(2.0))
        assert 1.5 < time.perf_counter() - started < 2.0  # wrap-up at 1.6 s did nothing; stopped at 1.8 s
        await asyncio.sleep(0.1)  # answered at once; the slot frees when the worker has unwound
        assert gate.running == 0
        gate.close()

    asyncio.run(scenario())


def test_a_stopped_solve_is_answered_before_its_worker_has_unwound() -> None:
    """A solver that answers an interrupt late (SCIP presolve on a loaded box) must not make the
    caller miss its answer: the call is answered when the server stops it, the slot is freed when
    the worker has really stopped."""

    def slow_to_stop(token: SolveToken) -> None:
        token.wait(30)
        time.sleep(0.8)  # still unwinding
        raise SolveCancelled("stopped")

    async def scenario() -> None:
        gate = SolveGate(slots=1, max_waiting=0)
        task = asyncio.ensure_future(gate.run(slow_to_stop, FakeContext(None)))
        await asyncio.sleep(0.05)
        stopped_at = time.perf_counter()
        gate.cancel_all(StopReason.SHUTDOWN)
        with pytest.raises(ShuttingDown):
            await task
        assert time.perf_counter() - stopped_at < 0.2
        assert gate.running == 1  # the worker is still unwinding
        await asyncio.sleep(1.0)
        assert gate.running == 0
        gate.close()

    asyncio.run(scenario())
