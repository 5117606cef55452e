"""Large EstimatePerformance requests estimated in worker processes (issue 16: 100,000 cases in
≤ 30 s on the 2-core machine).

An estimate is pure Python arithmetic: threads share one interpreter lock, so a request of 1,000
cases keeps one core busy while the other idles — and the in-process CLI's own work (reading the
batch file, building the next request, writing rows) waits for the same lock. Here a request with
at least ``MIN_POOLED_CASES`` cases is split into one part per worker process and estimated by the
same ``domain_calls.estimate_cases`` there, so the numbers are the ones the server's own thread
would give (same functions, same inputs; each part keeps its cases' order). Smaller requests, and
a server started with ``estimate_processes: 0``, estimate in the server's threads as before.

Workers (a ``service.worker_pool.WorkerPool``) are started once, by the first large request, and
stopped with the server. Until all have started (a second or more) requests are estimated in the
server's threads, so starting them delays no answer. They pay on a long-lived server
(``fleetplan serve``) and on long batches: the CLI's in-process server gets them only for a batch
file of ``clients.cli.estimate.WORKER_BATCH_CASES`` lines or more (a shorter one is done before
they would have started, and the process would wait for them at exit). A worker that dies answers
its part in the server's own thread instead (the pool is rebuilt on the next large request).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

import structlog

from pricebook.schema import Pricebook
from service import domain_calls
from service.worker_pool import WorkerPool, worker_book

log = structlog.get_logger("fleetplan.service")

MIN_POOLED_CASES = 200
"""Smaller requests are estimated in the server's thread: ~0.3 ms a case is less than the
round trip to a worker."""


def _estimate_in_worker(cases: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return domain_calls.estimate_cases(cases, worker_book())


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
    def __init__(
        self, book: Pricebook, pricebook_dir: Path | None, processes: int, in_thread: InThread
    ) -> None:
        self._book = book
        self._workers = WorkerPool(book, pricebook_dir, processes, name="estimates")
        self._in_thread = in_thread
        """Where small requests (and all of them while the workers start) are estimated."""

    def _ready_pool(self) -> ProcessPoolExecutor | None:
        """The worker pool once every worker has started; until then None (the first call starts
        them: a few seconds of imports, while requests are estimated in the server's threads)."""
        return self._workers.ready()

    async def estimate(self, cases: Sequence[Mapping[str, Any]]) -> Rows:
        """``domain_calls.estimate_cases(cases, book)``: in worker processes when it is large."""
        # Off the event loop: starting the workers spawns processes.
        pool = await asyncio.to_thread(self._ready_pool) if len(cases) >= MIN_POOLED_CASES else None
        if pool is None:
            return await self._in_thread(functools.partial(domain_calls.estimate_cases, cases, self._book))
        parts = _parts(cases, self._workers.processes)
        answers = await asyncio.gather(*(self._part(pool, part) for part in parts))
        return [row for answer in answers for row in answer]

    async def _part(self, pool: ProcessPoolExecutor, part: Sequence[Mapping[str, Any]]) -> Rows:
        try:
            return await asyncio.wrap_future(pool.submit(_estimate_in_worker, list(part)))
        except BrokenProcessPool:  # a worker died: this part here, a new pool for later requests
            log.warning("estimate_pool.broken", cases=len(part))
            self._workers.forget(pool)
            return await self._in_thread(functools.partial(domain_calls.estimate_cases, part, self._book))

    def close(self) -> None:
        self._workers.close()
