"""Large EstimatePerformance requests estimated in worker processes (issue 16: 100,000 cases in
≤ 30 s on the 2-core machine).

An estimate is pure Python arithmetic: threads share one interpreter lock, so a request of 1,000
cases keeps one core busy while the other idles — and the in-process CLI's own work (reading the
batch file, building the next request, writing rows) waits for the same lock. Here a request with
at least ``MIN_POOLED_CASES`` cases is split into one part per worker process and estimated by the
same ``domain_calls.estimate_cases`` there, so the numbers are the ones the server's own thread
would give (same functions, same inputs; each part keeps its cases' order). Smaller requests, and
a server started with ``estimate_processes: 0``, estimate in the server's threads as before.

Workers are started lazily (``spawn``: a forked gRPC server is unsafe), each with the server's
pricebook, and stopped with the server. A worker that dies answers its part in the server's own
thread instead (the pool is then rebuilt on the next large request).
"""

from __future__ import annotations

import asyncio
import functools
import multiprocessing
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import structlog

from pricebook.schema import Pricebook
from service import domain_calls

log = structlog.get_logger("fleetplan.service")

MIN_POOLED_CASES = 200
"""Smaller requests are estimated in the server's thread: ~0.3 ms a case is less than the
round trip to a worker."""

_worker_book: Pricebook | None = None


def _start_worker(book: Pricebook) -> None:
    global _worker_book  # noqa: PLW0603 - the one pricebook of this worker process
    _worker_book = book


def _estimate_in_worker(cases: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    assert _worker_book is not None, "worker started without its pricebook"
    return domain_calls.estimate_cases(cases, _worker_book)


def _parts(cases: Sequence[Mapping[str, Any]], count: int) -> list[Sequence[Mapping[str, Any]]]:
    """``cases`` cut into ``count`` consecutive parts of nearly equal size (order kept)."""
    size, extra = divmod(len(cases), count)
    parts, start = [], 0
    for i in range(count):
        end = start + size + (1 if i < extra else 0)
        parts.append(cases[start:end])
        start = end
    return [p for p in parts if p]


Rows = list[dict[str, Any]]
InThread = Callable[[Callable[[], Rows]], Awaitable[Rows]]
"""Runs a function on the server's cheap-RPC threads (``FleetPlannerServicer._cheap_call``)."""


class EstimatePool:
    def __init__(self, book: Pricebook, processes: int, in_thread: InThread) -> None:
        self._book = book
        self._processes = processes
        self._in_thread = in_thread
        """Where small requests (and parts a dead worker left) are estimated."""
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    def _executor(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(
                    max_workers=self._processes,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=_start_worker,
                    initargs=(self._book,),
                )
            return self._pool

    async def estimate(self, cases: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """``domain_calls.estimate_cases(cases, book)``: in worker processes when it is large."""
        if self._processes < 1 or len(cases) < MIN_POOLED_CASES:
            return await self._in_thread(functools.partial(domain_calls.estimate_cases, cases, self._book))
        pool = self._executor()
        answers = await asyncio.gather(*(self._part(pool, part) for part in _parts(cases, self._processes)))
        return [row for answer in answers for row in answer]

    async def _part(self, pool: ProcessPoolExecutor, part: Sequence[Mapping[str, Any]]) -> Rows:
        try:
            return await asyncio.wrap_future(pool.submit(_estimate_in_worker, list(part)))
        except BrokenProcessPool:
            log.warning("estimate_pool.broken", cases=len(part))
            with self._lock:
                if self._pool is pool:
                    self._pool = None
            return await self._in_thread(functools.partial(domain_calls.estimate_cases, part, self._book))

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
