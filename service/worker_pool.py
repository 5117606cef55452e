"""Worker processes for the server's CPU-bound work: solves (PlanFleet, EvaluateFleet, SweepPlans)
and large EstimatePerformance batches.

A solve is mostly Python (candidate building, the performance model, verification) between SCIP
calls; run on the server's threads it holds the interpreter lock, and every cheap RPC (catalogue,
health, one estimate) waits for it — up to a switch interval per hand-over, 133–158 ms at p99 under
a burst of big solves. In a worker process it holds a lock of its own.

``WorkerPool`` is one such pool: ``processes`` workers forked from a fresh ``forkserver`` process
that imports this module (and so the solver) once for all of them — forking the gRPC server itself
would be unsafe — each loading the server's pricebook (checked byte for byte) and running
``niceness`` nicer than the server, so the event loop is scheduled first when every core solves.
``start()`` begins starting them (a second or more of imports) without waiting; until every worker
is up, ``ready()`` is None and callers do the work in their own thread, so starting them delays no
answer. A pool whose workers cannot start (no process to spare, or a script that starts a server
without multiprocessing's ``if __name__ == "__main__"`` guard) turns itself off with a warning.

Jobs that take a ``CancelToken`` (``call``, ``stream``) run on a *lane*: a pair of shared integers
through which the server's token reaches the worker's. Every ``FORWARD_S`` the server thread waiting
for the job copies its token's state (wrap-up and its reason, cancellation and its reason) to the
lane, and a watcher thread in the worker applies it to the worker's own ``SolveToken`` — so a
deadline's wrap-up returns the best verified plan and a cancel raises ``SolveCancelled``, exactly
as in a thread. Results and errors come back pickled (domain objects; the service converts them as
before). ``stream`` jobs send each item through one shared outbox queue, tagged with their lane.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import multiprocessing
import os
import queue
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import structlog
import structlog.contextvars

from pricebook import load_default, load_dir
from pricebook.schema import Pricebook
from service.errors import WorkerLost
from service.interceptors import configure_logging
from service.limits import SolveToken, StopReason

log = structlog.get_logger("fleetplan.service")
_T = TypeVar("_T")

FORWARD_S = 0.02
"""How often a waiting server thread copies its token to the lane (and the worker reads it)."""
LANES = 256
"""Jobs that may be in a pool at once (queued or running): far more than solve slots."""

_WRAP, _CANCEL = 0, 1
"""A lane's two integers: the wrap-up reason and the cancellation reason (codes below; 0 = none)."""
_REASONS: tuple[str, ...] = ("", "plain", StopReason.DEADLINE, StopReason.SHUTDOWN)
_END = "end"

_worker_book: Pricebook | None = None
_lanes: Any = None
"""The pool's lanes (``multiprocessing.Array`` of 2 × ``LANES`` ints) in a worker process."""
_outbox: Any = None
"""The pool's outbox (``multiprocessing.Queue`` of (lane, kind, item)) in a worker process."""


def worker_book() -> Pricebook:
    """The pricebook of this worker process (jobs that take none look it up here)."""
    assert _worker_book is not None, "worker started without its pricebook"
    return _worker_book


@dataclass(frozen=True, slots=True)
class _Setup:
    """What a worker is started with."""

    pricebook_dir: Path | None
    content_hash: str
    niceness: int
    log_json: bool | None
    log_level: int
    """The server's: a CLI's in-process server logs warnings only, and so do its workers."""


def _start_worker(setup: _Setup, lanes: Any, outbox: Any) -> None:
    """Load the server's pricebook here (sending it would block the server until the worker has
    imported everything), check it is the server's, byte for byte, and run nicer than the server."""
    global _worker_book, _lanes, _outbox
    configure_logging(json=setup.log_json, level=setup.log_level)
    if setup.niceness > 0:
        with contextlib.suppress(OSError):
            os.nice(setup.niceness)
    book = load_dir(setup.pricebook_dir) if setup.pricebook_dir is not None else load_default()
    if book.content_hash != setup.content_hash:
        msg = f"worker pricebook {book.content_hash[:12]} is not the server's {setup.content_hash[:12]}"
        raise RuntimeError(msg)
    _worker_book, _lanes, _outbox = book, lanes, outbox


PRELOAD = (__name__, "service.domain_calls")
"""Imported once by the forkserver, before it forks any worker: this module and what the jobs call
(the planner and the performance model). A worker that imported them at its first job would take
seconds longer over it (a solve cut short at a shutdown then had no plan yet)."""


def _worker_context() -> multiprocessing.context.BaseContext:
    """``forkserver`` preloading ``PRELOAD``; ``spawn`` where there is no forkserver (Windows)."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(PRELOAD))
    return context


def _ready() -> None:
    """A task that returns once its worker has started (imports done, pricebook loaded)."""


# -- in the worker ------------------------------------------------------------------------------


def _watch(lane: int, token: SolveToken, done: threading.Event) -> None:
    """Apply the server's signals on ``lane`` to this worker's ``token`` until the job is done."""
    while not done.wait(FORWARD_S):
        wrap, cancel = _lanes[2 * lane + _WRAP], _lanes[2 * lane + _CANCEL]
        if wrap and not token.wrapped_up:
            token.wrap_up(_REASONS[wrap])
        if cancel and not token.cancelled:
            reason = _REASONS[cancel]
            if reason in (StopReason.DEADLINE, StopReason.SHUTDOWN):
                token.stop(StopReason(reason))
            else:
                token.cancel()


@contextlib.contextmanager
def _lane_token(lane: int, log_context: dict[str, Any]) -> Iterator[SolveToken]:
    """The job's token, fed from ``lane``; the solver's log lines carry the call's request id."""
    token = SolveToken()
    bound = structlog.contextvars.bind_contextvars(**log_context)
    done = threading.Event()
    watcher = threading.Thread(target=_watch, args=(lane, token, done), name="fleetplan-lane", daemon=True)
    watcher.start()
    try:
        yield token
    finally:
        done.set()
        token.finish()
        structlog.contextvars.reset_contextvars(**bound)


def _call_job(lane: int, job: Callable[[SolveToken], _T], log_context: dict[str, Any]) -> _T:
    with _lane_token(lane, log_context) as token:
        return job(token)


def _stream_job(lane: int, job: Callable[[SolveToken], Iterator[Any]], log_context: dict[str, Any]) -> None:
    try:
        with _lane_token(lane, log_context) as token:
            for item in job(token):
                _outbox.put((lane, "item", item))
    finally:
        _outbox.put((lane, _END, None))  # after every item (one queue, one feeder thread: in order)


# -- in the server ------------------------------------------------------------------------------


def _log_level() -> int:
    """The lowest level this process logs at (structlog's configuration)."""
    logger = structlog.get_logger().bind()
    levels = (logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR)
    return next((level for level in levels if logger.is_enabled_for(level)), logging.CRITICAL)


def _log_context() -> dict[str, Any]:
    """The call's structlog context (its request id), for the worker's log lines."""
    return dict(structlog.contextvars.get_contextvars())


def _code(reason: str, *, cancelled: bool) -> int:
    if reason in _REASONS[2:]:
        return _REASONS.index(reason)
    return 1 if cancelled else 0


class WorkerPool:
    """``processes`` worker processes (0 = none: every job runs in the caller's thread)."""

    def __init__(
        self,
        book: Pricebook,
        pricebook_dir: Path | None,
        processes: int,
        *,
        name: str,
        niceness: int = 0,
        log_json: bool | None = None,
    ) -> None:
        self._name = name
        """What the pool is for (its log lines say)."""
        self._book = book
        self._pricebook_dir = pricebook_dir
        self._processes = processes
        self._niceness = niceness
        self._log_json = log_json
        self._pool: ProcessPoolExecutor | None = None
        self._warming: list[Future[None]] = []
        self._lock = threading.Lock()
        self._lanes: Any = None
        self._outbox: Any = None
        self._free_lanes = list(range(LANES))
        self._inboxes: dict[int, queue.SimpleQueue[tuple[str, Any]]] = {}
        self._reader: threading.Thread | None = None
        self._announced = False

    @property
    def processes(self) -> int:
        return self._processes

    def start(self) -> None:
        """Begin starting the workers on a thread of their own (returns at once: starting the
        forkserver waits for its imports; ``ready()`` says when the workers are up)."""
        if self._processes > 0:
            threading.Thread(target=self._start_and_wait, name="fleetplan-workers-start", daemon=True).start()

    def _start_and_wait(self) -> None:
        self.wait_ready(None)

    def wait_ready(self, timeout_s: float | None) -> bool:
        """Start the workers if need be and wait (at most ``timeout_s``) until they are up; says so
        once (``worker_pool.ready``). False: none (off, failed, or still starting)."""
        if self._processes < 1:
            return False
        self.ready()
        with self._lock:
            warming = list(self._warming)
        concurrent.futures.wait(warming, timeout=timeout_s)
        return self.ready() is not None

    def _start_locked(self) -> None:
        if self._processes < 1 or self._pool is not None:
            return
        try:
            context = _worker_context()
            if self._lanes is None:
                self._lanes = context.Array("i", 2 * LANES, lock=False)
                self._outbox = context.Queue()
            self._pool = ProcessPoolExecutor(
                max_workers=self._processes,
                mp_context=context,
                initializer=_start_worker,
                initargs=(
                    _Setup(
                        self._pricebook_dir,
                        self._book.content_hash,
                        self._niceness,
                        self._log_json,
                        _log_level(),
                    ),
                    self._lanes,
                    self._outbox,
                ),
            )
            self._warming = [self._pool.submit(_ready) for _ in range(self._processes)]
        except (OSError, RuntimeError) as exc:  # no process to spare, or spawning refused
            self._disable(exc)

    def ready(self) -> ProcessPoolExecutor | None:
        """The pool once every worker has started; until then (and when off) None. The first call
        starts the workers if ``start()`` was not called."""
        with self._lock:
            self._start_locked()
            if self._pool is None or not all(f.done() for f in self._warming):
                return None
            failed = next((f.exception() for f in self._warming if f.exception() is not None), None)
            if failed is not None:  # e.g. a script without a main guard (multiprocessing's rule)
                self._disable(failed)
            elif not self._announced:
                self._announced = True
                log.info("worker_pool.ready", pool=self._name, processes=self._processes)
            return self._pool

    def _disable(self, error: BaseException) -> None:
        """No workers from now on: every job runs in its caller's thread."""
        log.warning("worker_pool.disabled", pool=self._name, error=repr(error))
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        self._pool, self._processes = None, 0

    def forget(self, pool: ProcessPoolExecutor) -> None:
        """A worker of ``pool`` died: the next job starts a new pool."""
        with self._lock:
            if self._pool is pool:
                self._pool = None
                pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    # -- jobs with a token ---------------------------------------------------------------------

    @contextlib.contextmanager
    def _lane(self) -> Iterator[int]:
        with self._lock:
            lane = self._free_lanes.pop()
        self._lanes[2 * lane + _WRAP] = self._lanes[2 * lane + _CANCEL] = 0
        try:
            yield lane
        finally:
            with self._lock:
                self._free_lanes.append(lane)

    def _forward(self, lane: int, token: SolveToken) -> None:
        if token.wrapped_up:
            self._lanes[2 * lane + _WRAP] = _code(token.wrap_up_reason, cancelled=False) or 2
        if token.cancelled:
            self._lanes[2 * lane + _CANCEL] = _code(token.wrap_up_reason, cancelled=True)

    def call(self, job: Callable[[SolveToken], _T], token: SolveToken) -> _T:
        """``job(token)`` in a worker (the caller's thread while the workers start, or when off).
        Blocks until the job has ended; ``token`` reaches the worker (module docstring)."""
        pool = self.ready()
        if pool is None:
            return job(token)
        with self._lane() as lane:
            future: Future[_T] = self._submit(pool, _call_job, lane, job, _log_context())
            while True:
                self._forward(lane, token)
                try:
                    return future.result(timeout=FORWARD_S)
                except TimeoutError:
                    continue
                except BrokenProcessPool as exc:
                    raise self._lost(pool) from exc

    def stream(self, job: Callable[[SolveToken], Iterator[_T]], token: SolveToken) -> Iterator[_T]:
        """Iterate ``job(token)`` in a worker, yielding each item as the worker produces it."""
        pool = self.ready()
        if pool is None:
            yield from job(token)
            return
        with self._lane() as lane:
            inbox: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
            with self._lock:
                self._inboxes[lane] = inbox
                self._start_reader()
            future: Future[None] | None = None
            try:
                future = self._submit(pool, _stream_job, lane, job, _log_context())
                while True:
                    self._forward(lane, token)
                    try:
                        kind, item = inbox.get(timeout=FORWARD_S)
                    except queue.Empty:
                        if future.done() and isinstance(future.exception(), BrokenProcessPool):
                            raise self._lost(pool) from future.exception()
                        continue
                    if kind == _END:
                        future.result()  # the job's error, if it raised
                        return
                    yield item
            finally:
                with self._lock:
                    self._inboxes.pop(lane, None)
                # The lane is free only once the worker has let go of it.
                while future is not None and not future.done():
                    token.cancel()
                    self._forward(lane, token)
                    with contextlib.suppress(Exception):
                        future.result(timeout=FORWARD_S)

    def _submit(self, pool: ProcessPoolExecutor, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        try:
            return pool.submit(fn, *args)
        except (BrokenProcessPool, RuntimeError) as exc:  # broken, or shut down meanwhile
            raise self._lost(pool) from exc

    def _lost(self, pool: ProcessPoolExecutor) -> WorkerLost:
        log.warning("worker_pool.broken", pool=self._name)
        self.forget(pool)
        return WorkerLost("the worker process running this call stopped; retry")

    def _start_reader(self) -> None:
        if self._reader is None:
            self._reader = threading.Thread(target=self._read_outbox, name="fleetplan-outbox", daemon=True)
            self._reader.start()

    def _read_outbox(self) -> None:
        while True:
            lane, kind, item = self._outbox.get()
            with self._lock:
                inbox = self._inboxes.get(lane)
            if inbox is not None:
                inbox.put((kind, item))
