"""Expected solve times and queue waits behind admission control (``service.limits.SolveGate``).

Each solve comes with an estimate of its length from its size (``service.solve_time``; None for
calls without one, which count as the recent mean solve). ``SolveClock`` keeps, for the solves
running and waiting:

- how long each running one still needs: its estimate less its age — or, once it has run past its
  estimate, a quarter of its age more — and never past the moment its own deadline stops it;
- the estimates of the waiting ones, in queue order.

A solve without an estimate is taken to need the recent solve time, or — when the running solves
have already taken longer (a burst of big solves, before any has finished) — their mean age, and
a running one without an estimate as much again as it has run (at least the recent solve time).
The clock answers how long a solve at a given queue position will wait for a slot, by handing out slots
in order as they free (``wait_s``). Each finished solve corrects the model for this machine:
``scale`` is the running mean of (measured ÷ estimated) over recent solves, so a busy box (or a
faster one) shifts every estimate — and at once when a running solve has already taken longer
than ``scale`` says (a burst on a box that has just got busier), by its age ÷ its estimate.
Estimates thus update as solves end earlier or later than expected, and the gate re-checks its
queue with them.
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable
from dataclasses import dataclass
from time import monotonic

DEFAULT_SOLVE_S = 1.0
"""The mean solve time before any solve has finished."""
SMOOTHING = 0.2
"""Weight of the newest solve in the running means."""
SCALE_RANGE = (0.2, 10.0)
"""Bounds of the machine's correction of the fitted model (one odd solve must not swing it far)."""
OVERRUN_SHARE = 0.25
"""A solve past its estimate is expected to need this share of its age again."""


@dataclass(slots=True)
class _Running:
    started: float
    expected_s: float | None
    """The scaled estimate (seconds) when it started (None = none)."""
    raw_s: float | None
    """The model's own estimate (None = none: not used to correct the model)."""
    stops_at: float | None
    """``monotonic()`` at which its deadline stops it (None = no deadline)."""


class SolveClock:
    """Running and waiting solves' expected times (see the module docstring)."""

    def __init__(self, slots: int) -> None:
        self._slots = slots
        self._running: dict[Hashable, _Running] = {}
        self._waiting: dict[Hashable, float | None] = {}
        """Waiting solves' estimates (None = none), in arrival order (dicts keep insertion order)."""
        self.mean_solve_s = DEFAULT_SOLVE_S
        self.scale = 1.0

    def current_scale(self) -> float:
        """``scale``, or the largest age ÷ estimate of a running solve when that is larger."""
        now = monotonic()
        overruns = [(now - r.started) / r.raw_s for r in self._running.values() if r.raw_s]
        return min(SCALE_RANGE[1], max([self.scale, *overruns]))

    def expected_s(self, estimate_s: float | None) -> float:
        """A solve's expected length: the model's estimate scaled for this machine, else the mean."""
        return self.mean_solve_s if estimate_s is None else estimate_s * self.current_scale()

    def _queued_s(self, estimate_s: float | None) -> float:
        """How long a waiting solve will hold its slot (see the module docstring)."""
        return (
            max(self.mean_solve_s, self.busy_for_s()) if estimate_s is None else self.expected_s(estimate_s)
        )

    def queue(self, key: Hashable, estimate_s: float | None) -> None:
        self._waiting[key] = estimate_s

    def leave_queue(self, key: Hashable) -> None:
        self._waiting.pop(key, None)

    def position(self, key: Hashable) -> int:
        return list(self._waiting).index(key)

    def start(self, key: Hashable, estimate_s: float | None, stops_at: float | None) -> None:
        now = monotonic()
        expected_s = None if estimate_s is None else self.expected_s(estimate_s)
        self._running[key] = _Running(now, expected_s, estimate_s, stops_at)

    def finish(self, key: Hashable, *, counted: bool, cut_short: bool = False) -> None:
        """``key`` stopped. A ``counted`` solve that ran to its own end feeds the mean solve time and
        the model's correction; one its deadline ``cut_short`` would have taken at least as long as
        it ran, so it can only raise the correction (on a box too busy for any solve to finish in
        time, that is all there is to learn from)."""
        run = self._running.pop(key, None)
        if run is None or not counted:
            return
        took_s = monotonic() - run.started
        if not cut_short:
            self.mean_solve_s += SMOOTHING * (took_s - self.mean_solve_s)
        if run.raw_s is not None and run.raw_s > 0:
            ratio = min(SCALE_RANGE[1], max(SCALE_RANGE[0], took_s / run.raw_s))
            if cut_short and ratio <= self.scale:
                return
            self.scale = min(
                SCALE_RANGE[1], max(SCALE_RANGE[0], self.scale + SMOOTHING * (ratio - self.scale))
            )

    def remaining_s(self, now: float) -> list[float]:
        """How long each running solve still needs."""
        left = []
        for run in self._running.values():
            age = now - run.started
            if run.expected_s is None:
                need = max(self.mean_solve_s, age)
            else:
                need = run.expected_s - age if age < run.expected_s else OVERRUN_SHARE * age
            if run.stops_at is not None:
                need = min(need, run.stops_at - now)
            left.append(max(0.0, need))
        return left

    def wait_s(self, position: int | None = None) -> float:
        """Expected wait for a slot of the waiting solve at ``position`` (0 = next; None = a new
        arrival, behind every waiting one): slots are handed out in queue order as they free."""
        free_at = sorted(self.remaining_s(monotonic()))
        free_at += [0.0] * max(0, self._slots - len(free_at))
        heapq.heapify(free_at)
        ahead = list(self._waiting.values())
        ahead = ahead if position is None else ahead[:position]
        for estimate_s in ahead:
            heapq.heapreplace(free_at, free_at[0] + self._queued_s(estimate_s))
        return free_at[0]

    def busy_for_s(self) -> float:
        """The mean age of the running solves (0 when none runs)."""
        if not self._running:
            return 0.0
        now = monotonic()
        return sum(now - r.started for r in self._running.values()) / len(self._running)
