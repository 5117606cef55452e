"""Independent re-solves run side by side (runner-ups, sensitivity searches).

OR-Tools releases the GIL while SCIP/HiGHS solve, so on a 2-core machine two re-solves at once take
about the wall time of one. Each job gets, when it starts, an equal share of the time left among
the waves still to run (``ceil(jobs not started / workers)``): with one worker this is the old
sequential rule "time left ÷ jobs left"; with two, twice as long per job in the same wall time.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

EXTRA_SOLVE_WORKERS = 2
"""Re-solves of one call at once (the machine's 2 cores; the main solve is done by then)."""


class _Shares:
    """Hands each starting job its deadline: an equal share of the time left per remaining wave."""

    def __init__(self, jobs: int, workers: int, deadline: float) -> None:
        self._unstarted = jobs
        self._workers = workers
        self._deadline = deadline
        self._lock = threading.Lock()

    def next_deadline(self) -> float:
        with self._lock:
            waves = max(1, math.ceil(self._unstarted / self._workers))
            self._unstarted -= 1
        now = time.monotonic()
        return now + max(0.0, self._deadline - now) / waves


def run_side_by_side(
    jobs: Sequence[Callable[[float], T]],
    *,
    deadline: float,
    workers: int = EXTRA_SOLVE_WORKERS,
) -> list[T | BaseException]:
    """Run ``jobs`` (each called with its own deadline, ``time.monotonic()`` seconds) on up to
    ``workers`` threads; results in the jobs' order, an exception a job raised in its place (the
    caller decides what a cancelled job means)."""
    shares = _Shares(len(jobs), max(1, workers), deadline)

    def run(job: Callable[[float], T]) -> T | BaseException:
        try:
            return job(shares.next_deadline())
        except Exception as exc:  # returned in order; the caller re-raises what it must
            return exc

    if workers <= 1 or len(jobs) <= 1:
        return [run(job) for job in jobs]
    with ThreadPoolExecutor(max_workers=min(workers, len(jobs)), thread_name_prefix="fleet-extra") as pool:
        return list(pool.map(run, jobs))
