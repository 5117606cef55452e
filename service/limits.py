"""Limits that keep one caller from taking the server down once a request is within its size caps
(``service.request_limits``): bounded solve concurrency with a bounded queue, and the caller's
deadline enforced on the solver.

- ``SolveGate``: at most ``slots`` solves at once (one per core by default) and ``max_waiting``
  queued; past that RESOURCE_EXHAUSTED with a ``RetryInfo`` hint (the expected wait for a slot).
  Admission control: each solve comes with an estimate of its length from its size
  (``service.solve_time``), and the expected wait for a slot is worked out from the running solves'
  remaining and the queued ones' estimates (``service.admission.SolveClock``). A call that would
  have to wait is admitted only when that wait plus its own estimate (at least ``MIN_SOLVE_S``)
  ends before its deadline's wrap-up (a call without an estimate: before the deadline less the
  margin); otherwise it is refused the same way at once, and a queued
  call is re-checked every ``REASSESS_S`` with the estimates as they update (a solve that ends
  early or runs long), so it is refused as soon as it no longer fits — never left to time out in
  the queue. A call that gets a slot at once is never refused for its size: its deadline wraps it
  up with its best verified plan. Solves run on the gate's own (nicer) threads, which hand them to
  worker processes (``service.worker_pool``), so cheap RPCs never wait behind them.
- Deadlines: once a solve has its slot, a timer fires at the caller's remaining deadline minus
  ``margin_s`` and *wraps up* the solve: the MIP is interrupted and its best verified plan comes
  back (status FEASIBLE with its gap). If it had none, the call fails with DEADLINE_EXCEEDED.
  ``HARD_STOP_LEAD_S`` before the deadline whatever still runs (e.g. candidate building of a big
  portfolio) is cancelled and answered DEADLINE_EXCEEDED with its ErrorInfo, before gRPC would end
  the call with a bare status. Client cancellation *cancels* the solve (``SolveCancelled`` inside
  the solver) and the slot is only released when the worker thread has really stopped.
- Shutdown (``service.shutdown``): ``SolveGate.start_draining()`` answers every queued solve (and
  every new one) UNAVAILABLE ``SHUTTING_DOWN`` + RetryInfo at once; ``wrap_up_all()`` asks every
  running solve for its best verified result; ``cancel_all(SHUTDOWN)`` stops what is still running
  just before the grace period ends, and those calls are answered ``SHUTTING_DOWN`` too (never a
  bare cancellation by gRPC).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
import threading
import time
from collections.abc import AsyncGenerator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from enum import StrEnum
from types import SimpleNamespace
from typing import Any, TypeVar

import grpc
import structlog

from service.admission import SolveClock
from service.errors import ResourceExhausted, ShuttingDown
from solver.errors import DeadlineExceeded, SolveCancelled
from solver.optimizer.cancel import CancelToken

log = structlog.get_logger("fleetplan.limits")
_T = TypeVar("_T")

MIN_SOLVE_S = 0.5
"""A queued solve gives up (RESOURCE_EXHAUSTED) when less than its expected length — and never
less than this — would be left to solve in (``SolveGate.time_to_solve_s``)."""
MIN_MIP_SLICE_S = 0.3
"""After a wrap-up, the main MIP still gets this long from its start before it is interrupted, so it
can find a first verified plan."""
DEADLINE_WRAP_UP_SHARE = 0.2
MAX_DEADLINE_WRAP_UP_S = 3.0
"""A solve is wrapped up max(margin, min(20 % of the caller's remaining time, 3 s)) before the caller's
deadline: after the interrupt the planner still verifies the plan and starts (then stops) its optional
solves, which takes about a second for 50 workloads."""
REASSESS_S = 0.5
"""How often a waiting solve's expected wait is estimated again (see ``SolveGate._acquire``)."""
HARD_STOP_LEAD_S = 1.0
"""What still runs this long before the caller's deadline is cancelled (half the wrap-up's lead when
that is shorter): a cancel stops the solver in ~0.1 s (``bench/cancel.py``), longer on a loaded box,
and the answer must reach the caller before gRPC ends the call with a bare DEADLINE_EXCEEDED."""
WRAP_UP_REPEAT_S = 0.05
"""After a wrap-up, interrupt each newly started MIP this often (an interrupt before a solve starts is
ignored by the backend, so later solves of the same call — baselines, sensitivity — are caught here)."""


# -- deadlines ---------------------------------------------------------------------------------


def solve_budget_s(time_remaining_s: float | None, *, default_s: float, margin_s: float) -> float:
    """Seconds a solve may use: the caller's remaining deadline minus a margin (or the default)."""
    if time_remaining_s is None:
        return default_s
    return max(0.05, min(default_s, time_remaining_s - margin_s))


class StopReason(StrEnum):
    """Why a solve was told to stop early (``SolveToken.wrap_up_reason``)."""

    DEADLINE = "deadline"
    SHUTDOWN = "shutdown"


QUEUED_AT_SHUTDOWN = "the server is shutting down and this solve had not started; retry on another replica"
STOPPED_AT_SHUTDOWN = (
    "the server is shutting down and the solve had no verified plan within the grace period; "
    "retry on another replica"
)


class SolveToken(CancelToken):
    """A ``CancelToken`` that can also *wrap up* a solve: interrupt the running MIP so it returns its
    best verified plan (the solver sees a time limit, not a cancellation)."""

    def __init__(self) -> None:
        super().__init__()
        self._live: list[tuple[float, int, Callable[[], None]]] = []
        """Registered MIP interrupts: when each MIP started, and its number within the call."""
        self._mips = 0
        self._live_lock = threading.Lock()
        self._wrapped = threading.Event()
        self._done = threading.Event()
        self.wrap_up_reason = ""

    def stop(self, reason: StopReason) -> None:
        """Cancel, remembering why (a shutdown's cancellation is answered SHUTTING_DOWN)."""
        if not self.cancelled:
            self.wrap_up_reason = self.wrap_up_reason or reason
        self.cancel()

    def add_callback(self, callback: Callable[[], None]) -> Callable[[], None]:
        with self._live_lock:
            entry = (time.monotonic(), self._mips, callback)
            self._mips += 1
            self._live.append(entry)
        unregister = super().add_callback(callback)

        def remove() -> None:
            with self._live_lock:
                if entry in self._live:
                    self._live.remove(entry)
            unregister()

        return remove

    @property
    def wrapped_up(self) -> bool:
        return self._wrapped.is_set()

    @property
    def expired(self) -> bool:
        """Time is up (deadline or shutdown): solvers return what they have and the planner skips
        its optional work (baselines, sensitivity)."""
        return self._wrapped.is_set()

    def wrap_up(self, reason: str) -> None:
        """Interrupt the running MIP now and every later MIP of this call as soon as it starts — except
        that the call's first (main) MIP always gets ``MIN_MIP_SLICE_S`` to find a first plan."""
        if self._wrapped.is_set() or self._done.is_set():
            return
        self.wrap_up_reason = reason
        self._wrapped.set()
        threading.Thread(target=self._interrupt_until_done, name="fleetplan-wrap-up", daemon=True).start()

    def _interrupt_until_done(self) -> None:
        while not self._done.is_set():
            now = time.monotonic()
            with self._live_lock:
                # The call's first MIP is its main solve: it gets a slice to find a plan. Later ones
                # (runner-ups, baselines, sensitivity) are optional and stop at once.
                callbacks = [
                    callback
                    for started, number, callback in self._live
                    if number > 0 or now - started >= MIN_MIP_SLICE_S
                ]
            for callback in callbacks:
                callback()
            self._done.wait(WRAP_UP_REPEAT_S)

    def finish(self) -> None:
        self._done.set()


def _stopped_error(token: SolveToken, cancelled: SolveCancelled) -> Exception:
    """What a solve the server itself stopped answers: SHUTTING_DOWN, or DEADLINE_EXCEEDED at the
    caller's deadline (a caller's own cancellation stays a cancellation)."""
    if token.wrap_up_reason == StopReason.SHUTDOWN:
        return ShuttingDown(STOPPED_AT_SHUTDOWN)
    if token.wrap_up_reason == StopReason.DEADLINE:
        return DeadlineExceeded("the solver had no verified plan when the caller's deadline came")
    return cancelled


def _has_no_plan(outcome: Any) -> bool:
    """Whether a domain outcome (a planner result, or one holding ``.plan``) carries no plan at all."""
    for holder in (outcome, getattr(outcome, "plan", None)):
        solution = getattr(holder, "solution", None)
        status = getattr(solution, "status", None)
        if status is not None:
            return str(getattr(status, "value", status)) == "no_solution"
    stats = getattr(outcome, "log_stats", None)
    return isinstance(stats, dict) and stats.get("status") == "no_solution"


def require_plan_within_deadline(
    solution: Any, request_time_limit_s: float, *, has_deadline: bool, deadline_limited: bool
) -> None:
    """DEADLINE_EXCEEDED when the caller's deadline — not the request's own ``time_limit_s`` — ended
    the solve before any plan was found (``deadline_limited``: the planner says which limit set the
    solve's); without a plan under the request's own limit the answer is NO_SOLUTION, as without
    a deadline."""
    if not has_deadline or not deadline_limited or not _has_no_plan(SimpleNamespace(solution=solution)):
        return
    mip_limit_s = getattr(getattr(solution, "stats", None), "time_limit_s", None) or 0.0
    raise DeadlineExceeded(
        f"no plan found in the {mip_limit_s:.1f} s the caller's deadline left for the solve "
        f"(the request allows {request_time_limit_s:.1f} s); retry with a longer deadline"
    )


# -- bounded solve concurrency -----------------------------------------------------------------


def _lower_priority(niceness: int) -> None:
    """Executor initializer: make this solve thread (and the solver threads it starts) ``niceness``
    nicer, so that when every core is solving the kernel still schedules the event loop (health,
    catalogue, estimates) first (``ServerSettings.solve_niceness``)."""
    if niceness <= 0:
        return
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + niceness)
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        pass


class SolveGate:
    """At most ``slots`` solves at once and ``max_waiting`` waiting; beyond that RESOURCE_EXHAUSTED."""

    def __init__(self, slots: int, max_waiting: int, *, margin_s: float = 0.25, niceness: int = 0) -> None:
        self._slots = slots
        self._max_waiting = max_waiting
        self._margin_s = margin_s
        self._semaphore = asyncio.Semaphore(slots)
        self._waiting = 0
        self._running = 0
        self._threads = 0
        # Cancelled solves keep their thread until the MIP stops, so allow a few more threads than slots.
        self._executor = ThreadPoolExecutor(
            max_workers=slots * 2 + 2,
            thread_name_prefix="fleetplan-solve",
            initializer=_lower_priority,
            initargs=(niceness,),
        )
        self._active: set[SolveToken] = set()
        """Running solves (their expected times are the clock's)."""
        self._clock = SolveClock(slots)
        self._draining = asyncio.Event()
        self._answer_now: dict[SolveToken, asyncio.Future[None]] = {}
        """Set when the server stops a running solve (deadline, shutdown): its call is answered then."""
        self._queue: list[asyncio.Future[Any]] = []
        """Waiting solves' slot requests in arrival order (the semaphore wakes them in this order)."""

    @property
    def running(self) -> int:
        """Solves holding a slot (a cancelled solve holds it until its thread has stopped)."""
        return self._running

    @property
    def waiting(self) -> int:
        return self._waiting

    def retry_after_s(self) -> float:
        """Expected wait for a slot of a new arrival, 0.5…30 s."""
        return round(min(30.0, max(0.5, self._clock.wait_s())), 1)

    def time_to_solve_s(self, estimate_s: float | None = None) -> float:
        """What a queued solve must still have when it gets its slot: its expected length (its
        estimate scaled by how recent solves compared with theirs; the recent mean solve time
        without one), at least ``MIN_SOLVE_S``. Reserving only a fixed half second let a solve that
        waited most of its deadline start with too little time to find any plan, and time out
        (DEADLINE_EXCEEDED) on a busy box instead of being refused with RetryInfo."""
        return max(MIN_SOLVE_S, self._clock.expected_s(estimate_s))

    def expected_wait_s(self, position: int | None = None) -> float:
        """Expected wait for a slot of the solve at ``position`` in the queue (0 = next; None = a new
        arrival, behind every waiting one)."""
        if self._running < self._slots:
            return 0.0
        return self._clock.wait_s(position)

    def wrap_up_all(self, reason: str) -> int:
        """Ask every running solve for its best verified result now (graceful shutdown)."""
        tokens = list(self._active)
        for token in tokens:
            token.wrap_up(reason)
        return len(tokens)

    def start_draining(self) -> int:
        """Shutdown: queued solves and new ones are answered SHUTTING_DOWN at once (running ones go
        on). Returns how many were waiting."""
        self._draining.set()
        return self._waiting

    @property
    def draining(self) -> bool:
        return self._draining.is_set()

    def cancel_all(self, reason: StopReason | None = None) -> int:
        """Stop every running solve (``reason`` SHUTDOWN: their calls are answered SHUTTING_DOWN)."""
        tokens = list(self._active)
        for token in tokens:
            if reason is None:
                token.cancel()
            else:
                self._stop(token, reason)
        return len(tokens)

    def _stop(self, token: SolveToken, reason: StopReason) -> None:
        """Cancel ``token``'s solve and answer its call now (``run``): its worker thread may take a
        moment to unwind (SCIP presolve answers an interrupt late on a loaded box), and the caller
        must have its answer before the deadline or the grace period ends. The slot stays taken
        until the thread has stopped."""
        token.stop(reason)
        answer_now = self._answer_now.get(token)
        if answer_now is not None and not answer_now.done():
            answer_now.set_result(None)

    def admit(
        self, context: grpc.aio.ServicerContext | None, estimate_s: float | None = None
    ) -> float | None:
        """Refuse now (``ShuttingDown``, ``ResourceExhausted``) a solve that could not be admitted —
        queue full, or its expected wait plus ``time_to_solve_s(estimate_s)`` past its deadline — else
        return how long it may wait for a slot (None = no deadline). Handlers call it before converting
        a big request, so a refusal costs microseconds, not the conversion (issue 19: ≤ 100 ms)."""
        if self._draining.is_set():
            raise ShuttingDown(QUEUED_AT_SHUTDOWN)
        if self._running >= self._slots and self._waiting >= self._max_waiting:
            raise ResourceExhausted(
                f"{self._running} solves running and {self._waiting} waiting "
                f"(limit solve_slots={self._slots}, max_queued_solves={self._max_waiting}); retry later",
                retry_after_s=self.retry_after_s(),
            )
        remaining: float | None = context.time_remaining() if context is not None else None
        if remaining is None:
            return None
        needed_s = self.time_to_solve_s(estimate_s)
        patience_s = remaining - self._reserve_s(remaining, estimate_s) - needed_s
        if self._running >= self._slots:
            # Admission control: do not queue work that would not be done by its deadline.
            expected_wait_s = self.expected_wait_s()
            if expected_wait_s > patience_s:
                raise self._no_time(expected_wait_s, remaining, needed_s)
        return patience_s

    def _wrap_up_lead_s(self, remaining_s: float) -> float:
        """How long before the caller's deadline its solve is wrapped up."""
        return max(self._margin_s, min(DEADLINE_WRAP_UP_SHARE * remaining_s, MAX_DEADLINE_WRAP_UP_S))

    def _reserve_s(self, remaining_s: float, estimate_s: float | None) -> float:
        """What a queued solve leaves of its deadline after solving: a solve with an estimate must
        end before its wrap-up to be complete; one without is given up to the margin."""
        return self._margin_s if estimate_s is None else self._wrap_up_lead_s(remaining_s)

    async def _enter(
        self, context: grpc.aio.ServicerContext | None, estimate_s: float | None
    ) -> tuple[SolveToken, list[asyncio.TimerHandle]]:
        """Wait for a slot (or refuse when the queue is full, or when the caller's deadline would pass
        in the queue); arm the caller's deadline (wrap-up, then hard stop)."""
        patience_s = self.admit(context, estimate_s)
        self._waiting += 1
        try:
            await self._acquire(patience_s, estimate_s, context)
        finally:
            self._waiting -= 1
        self._running += 1
        token = SolveToken()
        remaining = context.time_remaining() if context is not None else None
        self._active.add(token)
        self._clock.start(token, estimate_s, None if remaining is None else time.monotonic() + remaining)
        self._answer_now[token] = asyncio.get_running_loop().create_future()
        timers = []
        if remaining is not None:
            # The caller's deadline, measured now that the solve has its slot (queueing ate some of it).
            loop = asyncio.get_running_loop()
            lead_s = self._wrap_up_lead_s(remaining)
            timers.append(loop.call_later(max(0.0, remaining - lead_s), token.wrap_up, StopReason.DEADLINE))
            # After the wrap-up (half its lead), at least the margin, at most HARD_STOP_LEAD_S before.
            stop_s = max(0.0, remaining - min(max(self._margin_s, HARD_STOP_LEAD_S), lead_s / 2))
            timers.append(loop.call_later(stop_s, self._stop, token, StopReason.DEADLINE))
        return token, timers

    def _no_time(
        self, expected_wait_s: float | None, left: float, needed_s: float, queued_s: float | None = None
    ) -> ResourceExhausted:
        """The refusal of a solve that needs ``needed_s`` with ``left`` seconds to its deadline
        (expected wait, or the wait already over when None), after ``queued_s`` in the queue (None:
        refused on arrival)."""
        why = (
            f"expected wait for a solve slot ≈{expected_wait_s:.1f} s leaves no time to solve"
            if expected_wait_s is not None
            else "no solve slot freed in time to solve"
        )
        if queued_s is not None:
            why = f"after {queued_s:.1f} s in the queue, {why}"
        return ResourceExhausted(
            f"{why} within the deadline ({left:.1f} s left; about {needed_s:.1f} s to solve); "
            "retry later or with a longer deadline",
            retry_after_s=self.retry_after_s(),
        )

    async def _acquire(
        self,
        patience_s: float | None,
        estimate_s: float | None,
        context: grpc.aio.ServicerContext | None,
    ) -> None:
        """Take a slot, waiting at most ``patience_s`` (None = as long as it takes). Every
        ``REASSESS_S`` the wait is estimated again from the queue position and the estimates as
        they stand: a solve that no longer fits its deadline is refused then, not when its deadline
        is near. A shutdown while waiting raises ``ShuttingDown`` at once."""
        if not self._semaphore.locked():
            await self._semaphore.acquire()
            return
        attempt = asyncio.ensure_future(self._semaphore.acquire())
        self._queue.append(attempt)
        self._clock.queue(attempt, estimate_s)
        drained = asyncio.ensure_future(self._draining.wait())
        queued_at = time.monotonic()
        give_up_at = None if patience_s is None else queued_at + patience_s
        try:
            while True:
                timeout = (
                    None if give_up_at is None else max(0.0, min(REASSESS_S, give_up_at - time.monotonic()))
                )
                done, _ = await asyncio.wait(
                    {attempt, drained}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
                )
                if self._draining.is_set():
                    self._abandon(attempt)  # a slot it got in the meantime goes straight back
                    raise ShuttingDown(QUEUED_AT_SHUTDOWN)
                if attempt in done:
                    return
                if give_up_at is None:
                    continue
                left = give_up_at - time.monotonic()
                expected = self.expected_wait_s(self._clock.position(attempt))
                if left <= 0 or expected > left:
                    self._abandon(attempt)
                    remaining = context.time_remaining() if context is not None else None
                    raise self._no_time(
                        expected if left > 0 else None,
                        remaining or 0.0,
                        self.time_to_solve_s(estimate_s),
                        time.monotonic() - queued_at,
                    )
        except asyncio.CancelledError:
            self._abandon(attempt)
            raise
        finally:
            drained.cancel()
            self._queue.remove(attempt)
            self._clock.leave_queue(attempt)

    def _abandon(self, attempt: asyncio.Future[Any]) -> None:
        """Give up a pending acquire; a slot it got in the meantime goes straight back."""
        if attempt.done():
            if not attempt.cancelled() and attempt.exception() is None:
                self._semaphore.release()
            return
        attempt.cancel()
        attempt.add_done_callback(
            lambda a: self._semaphore.release() if not a.cancelled() and a.exception() is None else None
        )

    def _release(self, token: SolveToken, timers: list[asyncio.TimerHandle], *, counted: bool) -> None:
        """Free the slot once the worker thread has stopped (idempotent). A ``counted`` run that was
        not cancelled corrects the expected solve times behind retry hints and admission control
        (one its deadline wrapped up only upwards: ``SolveClock.finish``)."""
        for timer in timers:
            timer.cancel()
        if token not in self._active:
            return
        token.finish()
        self._active.discard(token)
        self._answer_now.pop(token, None)
        self._clock.finish(token, counted=counted and not token.cancelled, cut_short=token.wrapped_up)
        self._running -= 1
        self._semaphore.release()

    async def run(
        self,
        fn: Callable[[SolveToken], _T],
        context: grpc.aio.ServicerContext | None = None,
        estimate_s: float | None = None,
    ) -> _T:
        """``fn(token)`` on a solve thread once a slot is free; ``context`` gives the caller's deadline
        and ``estimate_s`` the model's estimate of its length (None = the recent mean)."""
        token, timers = await self._enter(context, estimate_s)
        loop = asyncio.get_running_loop()
        work = loop.run_in_executor(
            self._executor, functools.partial(contextvars.copy_context().run, fn, token)
        )

        def done(finished: asyncio.Future[_T]) -> None:
            if not finished.cancelled():
                finished.exception()  # retrieved: a gone caller's SolveCancelled is expected, not news
            self._release(token, timers, counted=True)

        work.add_done_callback(done)
        answer_now = self._answer_now[token]  # made in _enter; popped when the worker has stopped
        try:
            waits: set[asyncio.Future[Any]] = {work, answer_now}
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            if not work.done():
                raise SolveCancelled("stopped by the server; the worker is still unwinding")
            outcome = work.result()
        except asyncio.CancelledError:
            # Client went away or its deadline passed: stop the MIP; the slot frees when the thread does.
            token.cancel()
            raise
        except SolveCancelled as exc:
            raise _stopped_error(token, exc) from exc
        if token.wrapped_up and _has_no_plan(outcome):
            if token.wrap_up_reason == StopReason.SHUTDOWN:
                raise ShuttingDown(STOPPED_AT_SHUTDOWN)
            raise DeadlineExceeded("the solver found no plan before the caller's deadline")
        return outcome

    async def stream(
        self,
        fn: Callable[[SolveToken], Iterator[_T]],
        context: grpc.aio.ServicerContext | None = None,
        estimate_s: float | None = None,
    ) -> AsyncGenerator[_T, None]:
        """Iterate ``fn(token)`` on a solve thread, yielding each item as it is produced."""
        token, timers = await self._enter(context, estimate_s)
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

        def pump() -> None:
            try:
                for item in fn(token):
                    loop.call_soon_threadsafe(queue.put_nowait, ("item", item))
            except BaseException as exc:
                loop.call_soon_threadsafe(queue.put_nowait, ("error", exc))
            finally:
                loop.call_soon_threadsafe(queue.put_nowait, ("done", None))

        work = loop.run_in_executor(self._executor, functools.partial(contextvars.copy_context().run, pump))
        # A sweep runs many solves: its length says nothing about one solve, so it is not measured.
        work.add_done_callback(lambda _: self._release(token, timers, counted=False))
        try:
            while True:
                kind, value = await queue.get()
                if kind == "done":
                    break
                if kind == "error":
                    raise _stopped_error(token, value) if isinstance(value, SolveCancelled) else value
                yield value
        finally:
            if not work.done():
                token.cancel()

    def close(self) -> None:
        self.cancel_all()
        self._executor.shutdown(wait=False, cancel_futures=True)


__all__ = [
    "SolveGate",
    "SolveToken",
    "StopReason",
    "require_plan_within_deadline",
    "solve_budget_s",
]
