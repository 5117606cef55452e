"""Admission by estimated solve time (``service.admission``, ``service.limits.SolveGate``): a request
that would have to wait is refused at once, with RetryInfo, when the wait plus its own estimate does
not fit its deadline; a queued one is re-checked as the running solves' estimates change; the
estimates come from the fitted model in ``service/solve_time_model.json``."""

from __future__ import annotations

import asyncio
import json
import math
import threading

import pytest

from api.fleetplan.v1 import common_pb2, scenario_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from bench.solve_time_fit import fit
from pricebook.loader import load_default
from service import admission
from service.admission import SolveClock
from service.errors import ResourceExhausted, status_for
from service.limits import SolveGate, SolveToken
from service.solve_time import FEATURES, MODEL_FILE, SolveSize, SolveTimeModel, default_model, solve_size

BOOK = load_default()


class _Deadline:
    """The part of a ``grpc.aio.ServicerContext`` the gate reads: the time left."""

    def __init__(self, seconds: float) -> None:
        self._seconds = seconds

    def time_remaining(self) -> float:
        return self._seconds


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> _Clock:
    fake = _Clock()
    monkeypatch.setattr(admission, "monotonic", fake)
    return fake


def test_the_wait_hands_out_slots_in_queue_order(clock: _Clock) -> None:
    solves = SolveClock(slots=2)
    solves.start("a", 4.0, None)
    solves.start("b", 10.0, None)
    clock.now += 1.0  # a needs 3 s more, b 9 s
    assert solves.wait_s() == pytest.approx(3.0)
    solves.queue("q1", 5.0)  # takes a's slot at 3 s, frees it at 8 s
    solves.queue("q2", 2.0)  # takes it at 8 s (before b's at 9 s)
    assert solves.wait_s(0) == pytest.approx(3.0)
    assert solves.wait_s(1) == pytest.approx(8.0)
    assert solves.wait_s() == pytest.approx(9.0)  # a new arrival: b's slot at 9 s, before q2's at 10 s


def test_a_solve_past_its_estimate_or_near_its_deadline_updates_the_wait(clock: _Clock) -> None:
    solves = SolveClock(slots=1)
    solves.start("a", 2.0, clock.now + 5.0)
    clock.now += 4.0  # 2 s past its estimate: expected to need a quarter of its age again
    assert solves.wait_s() == pytest.approx(1.0)
    clock.now += 0.5  # its deadline stops it 0.5 s from now
    assert solves.wait_s() == pytest.approx(0.5)


def test_finished_solves_scale_the_model_for_this_machine(clock: _Clock) -> None:
    solves = SolveClock(slots=1)
    solves.start("a", 1.0, None)
    clock.now += 3.0  # three times the model's estimate
    solves.finish("a", counted=True)
    assert solves.scale == pytest.approx(1.0 + admission.SMOOTHING * (3.0 - 1.0))
    assert solves.expected_s(2.0) == pytest.approx(2.0 * solves.scale)
    solves.start("b", 1.0, None)
    clock.now += 50.0
    solves.finish("b", counted=False)  # cancelled: says nothing about its length
    assert solves.scale == pytest.approx(1.0 + admission.SMOOTHING * (3.0 - 1.0))


def test_a_solve_its_deadline_cut_short_can_only_raise_the_scale(clock: _Clock) -> None:
    solves = SolveClock(slots=1)
    solves.start("quick", 10.0, None)
    clock.now += 1.0  # stopped at a tenth of its estimate: it would have taken longer, how long unknown
    solves.finish("quick", counted=True, cut_short=True)
    assert solves.scale == 1.0 and solves.mean_solve_s == admission.DEFAULT_SOLVE_S
    solves.start("slow", 1.0, None)
    clock.now += 5.0  # stopped at five times its estimate: at least that slow
    solves.finish("slow", counted=True, cut_short=True)
    assert solves.scale == pytest.approx(1.0 + admission.SMOOTHING * (5.0 - 1.0))


def test_a_running_solve_past_its_estimate_scales_the_others_at_once(clock: _Clock) -> None:
    solves = SolveClock(slots=1)
    solves.start("a", 1.0, None)
    assert solves.expected_s(2.0) == pytest.approx(2.0)
    clock.now += 3.0  # three times its estimate, and still running
    assert solves.expected_s(2.0) == pytest.approx(6.0)


def _busy_gate(running_estimate_s: float) -> tuple[SolveGate, threading.Event, asyncio.Task[None]]:
    gate = SolveGate(slots=1, max_waiting=8)
    release = threading.Event()

    def hold(_token: SolveToken) -> None:
        release.wait(30)

    task = asyncio.ensure_future(gate.run(hold, None, running_estimate_s))
    return gate, release, task


def test_a_request_whose_estimate_does_not_fit_after_the_wait_is_refused_with_retry_info() -> None:
    async def scenario() -> None:
        gate, release, task = _busy_gate(running_estimate_s=4.0)
        await asyncio.sleep(0.05)  # the running solve has its slot
        try:
            assert gate.running == 1
            # Wait ≈ 4 s: a 1 s solve fits a 10 s deadline, a 7 s one does not.
            assert gate.admit(_Deadline(10.0), estimate_s=1.0) is not None
            with pytest.raises(ResourceExhausted) as refused:
                gate.admit(_Deadline(10.0), estimate_s=7.0)
            assert refused.value.retry_after_s == pytest.approx(4.0, abs=0.2)
            status = status_for(refused.value)
            assert any(d.type_url.endswith("google.rpc.RetryInfo") for d in status.details)
            assert "about 7.0 s to solve" in str(refused.value)
            assert "in the queue" not in str(refused.value)  # refused on arrival
        finally:
            release.set()
            await task
            gate.close()

    asyncio.run(scenario())


def test_an_idle_server_runs_a_solve_longer_than_its_deadline() -> None:
    """It would get a slot at once: the deadline wraps it up with its best plan."""
    gate = SolveGate(slots=1, max_waiting=8)
    assert gate.admit(_Deadline(2.0), estimate_s=30.0) is not None
    gate.close()


def test_a_queued_request_is_refused_when_a_running_solve_overruns() -> None:
    async def scenario() -> None:
        gate, release, task = _busy_gate(running_estimate_s=0.2)
        await asyncio.sleep(0.05)
        try:
            # Admitted: ≈0.15 s of wait and 0.5 s of solving fit 6 s …
            waiting = asyncio.ensure_future(gate.run(lambda _t: None, _Deadline(6.0), 0.5))
            # … but the running solve goes on and on: a re-check refuses the waiting one on its
            # expected wait, before its patience has run out.
            with pytest.raises(
                ResourceExhausted, match=r"after \d+\.\d s in the queue, expected wait for a solve slot"
            ):
                await asyncio.wait_for(waiting, 10)
        finally:
            release.set()
            await task
            gate.close()

    asyncio.run(scenario())


def _request(workloads: int, gpus: tuple[str, ...], *, hourly: bool) -> api.PlanFleetRequest:
    request = api.PlanFleetRequest()
    for i in range(workloads):
        workload = request.workloads.add(name=f"w{i}")
        workload.inference.input_tokens = 100
        if hourly:
            workload.inference.hourly_profile.extend([1.0] * 24)
    request.constraints.allowed_gpu_ids.extend(gpus)
    request.constraints.allowed_modes.extend(
        [common_pb2.ACQUISITION_MODE_BUY, common_pb2.ACQUISITION_MODE_ON_DEMAND]
    )
    request.solver_options.compute_sensitivity = False
    return request


def test_the_size_is_read_off_the_request() -> None:
    size = solve_size(_request(3, ("h200-sxm", "l40s"), hourly=True), BOOK)
    assert (size.workloads, size.gpu_types, size.modes, size.buckets) == (3, 2, 2, 24)
    assert size.baselines and not size.sensitivity
    buy_only = api.PlanFleetRequest(workloads=[scenario_pb2.Workload(name="w")])
    size = solve_size(buy_only, BOOK)
    assert (size.gpu_types, size.modes, size.buckets) == (len(BOOK.gpus), 1, 1)


def test_the_shipped_model_is_the_fit_of_its_measurements() -> None:
    document = json.loads(MODEL_FILE.read_text(encoding="utf-8"))
    rows = document["measurements"]
    assert len(rows) >= len(FEATURES) * 3
    model = default_model()
    assert model == SolveTimeModel.from_document(document)
    # Least squares: the residuals of log seconds are orthogonal to every feature.
    refit = fit(rows)
    assert [refit[name] for name in FEATURES] == pytest.approx(list(model.coefficients), abs=1e-5)
    sizes = [SolveSize(**{k: r[k] for k in SolveSize.__slots__}) for r in rows]
    for j in range(len(FEATURES)):
        residual_dot = sum(
            (math.log(r["seconds"]) - math.log(model.estimate_s(s))) * s.features()[j]
            for r, s in zip(rows, sizes, strict=True)
        )
        assert residual_dot == pytest.approx(0.0, abs=1e-3)


def test_more_workloads_and_gpu_types_take_longer() -> None:
    model = default_model()
    small = model.estimate_s(solve_size(_request(1, ("h200-sxm",), hourly=False), BOOK))
    big = model.estimate_s(solve_size(_request(20, tuple(g.id for g in BOOK.gpus), hourly=True), BOOK))
    assert big > small
