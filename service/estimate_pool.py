"""Large EstimatePerformance requests estimated in worker processes (issue 16: 100,000 cases in
≤ 30 s on the 2-core machine).

An estimate is pure Python arithmetic: threads share one interpreter lock, so a request of 1,000
cases keeps one core busy while the other idles — and the in-process CLI's own work (reading the
batch file, building the next request, writing rows) waits for the same lock. Here a request with
at least ``MIN_POOLED_CASES`` cases is split into one part per worker process and estimated by the
same ``domain_calls.estimate_cases`` there, so the numbers are the ones the server's own thread
would give (same functions, same inputs; each part keeps its cases' order). Smaller requests, and
a server started with ``estimate_processes: 0``, estimate in the server's threads as before.

Workers are started once, by the first large request, each with the server's pricebook, and
stopped with the server. They are forked from a fresh ``forkserver`` process that imports this
module (and so the solver) once for all of them; forking the gRPC server itself would be unsafe.
Until all have started (a second or more) requests are estimated in the server's threads, so
starting them delays no answer. They pay on a long-lived server (``fleetplan serve``) and on long
batches: the CLI's in-process server gets them only for a batch file of
``clients.cli.estimate.WORKER_BATCH_CASES`` lines or more (a shorter one is done before they would
have started, and the process would wait for them at exit). A worker that dies answers its part in
the server's own thread instead (the pool is rebuilt on the next large request); workers that
cannot start (no process to spare, or a script that starts a server without multiprocessing's
``if __name__ == "__main__"`` guard) turn the pool off, with a warning.
"""

from __future__ import annotations

import asyncio
import functools
import multiprocessing
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

import structlog

from pricebook import load_default, load_dir
from pricebook.schema import Pricebook
from service import domain_calls

log = structlog.get_logger("fleetplan.service")

MIN_POOLED_CASES = 200
"""Smaller requests are estimated in the server's thread: ~0.3 ms a case is less than the
round trip to a worker."""

_worker_book: Pricebook | None = None


def _start_worker(pricebook_dir: Path | None, content_hash: str) -> None:
    """Load the server's pricebook here (sending it would block the server until the worker has
    imported everything) and check it is the server's, byte for byte."""
    global _worker_book  # noqa: PLW0603 - the one pricebook of this worker process
    book = load_dir(pricebook_dir) if pricebook_dir is not None else load_default()
    if book.content_hash != content_hash:
        msg = f"worker pricebook {book.content_hash[:12]} is not the server's {content_hash[:12]}"
        raise RuntimeError(msg)
    _worker_book = book


def _worker_context() -> multiprocessing.context.BaseContext:
    """``forkserver`` preloading this module; ``spawn`` where there is no forkserver (Windows)."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__])
    return context


def _ready() -> None:
    """A task that returns once its worker has started (imports done, pricebook received)."""


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
    def __init__(
        self, book: Pricebook, pricebook_dir: Path | None, processes: int, in_thread: InThread
    ) -> None:
        self._book = book
        self._pricebook_dir = pricebook_dir
        self._processes = processes
        self._in_thread = in_thread
        """Where small requests (and all of them while the workers start) are estimated."""
        self._pool: ProcessPoolExecutor | None = None
        self._warming: list[Future[None]] = []
        self._lock = threading.Lock()

    def _ready_pool(self) -> ProcessPoolExecutor | None:
        """The worker pool once every worker has started; until then None (the first call starts
        them: a few seconds of imports, while requests are estimated in the server's threads)."""
        with self._lock:
            if self._processes < 1:
                return None
            if self._pool is None:
                try:
                    self._pool = ProcessPoolExecutor(
                        max_workers=self._processes,
                        mp_context=_worker_context(),
                        initializer=_start_worker,
                        initargs=(self._pricebook_dir, self._book.content_hash),
                    )
                    self._warming = [self._pool.submit(_ready) for _ in range(self._processes)]
                except (OSError, RuntimeError) as exc:  # no process to spare, or spawning refused
                    self._disable(exc)
                    return None
            if not all(f.done() for f in self._warming):
                return None
            failed = next((f.exception() for f in self._warming if f.exception() is not None), None)
            if failed is not None:  # e.g. a script without a main guard (multiprocessing's rule)
                self._disable(failed)
            return self._pool

    def _disable(self, error: BaseException) -> None:
        """No workers from now on: every request is estimated in the server's threads."""
        log.warning("estimate_pool.disabled", error=repr(error))
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        self._pool, self._processes = None, 0

    async def estimate(self, cases: Sequence[Mapping[str, Any]]) -> Rows:
        """``domain_calls.estimate_cases(cases, book)``: in worker processes when it is large."""
        # Off the event loop: starting the workers spawns processes.
        pool = await asyncio.to_thread(self._ready_pool) if len(cases) >= MIN_POOLED_CASES else None
        if pool is None:
            return await self._in_thread(functools.partial(domain_calls.estimate_cases, cases, self._book))
        answers = await asyncio.gather(*(self._part(pool, part) for part in _parts(cases, self._processes)))
        return [row for answer in answers for row in answer]

    async def _part(self, pool: ProcessPoolExecutor, part: Sequence[Mapping[str, Any]]) -> Rows:
        try:
            return await asyncio.wrap_future(pool.submit(_estimate_in_worker, list(part)))
        except BrokenProcessPool:  # a worker died: this part here, a new pool for later requests
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
