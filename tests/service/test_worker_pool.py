"""Jobs in worker processes (``service.worker_pool``): the job runs in another process, its result
and its errors come back as objects, and the server's token — cancellation, deadline wrap-up —
reaches the worker's."""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

import pytest
import structlog
import structlog.contextvars

from pricebook.loader import load_default
from service.errors import WorkerLost
from service.limits import SolveToken, StopReason
from service.worker_pool import WorkerPool
from solver.errors import InvalidRequest, SolveCancelled
from tests.service import worker_jobs

BOOK = load_default()


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    workers = WorkerPool(BOOK, None, 1, name="test")
    workers.start()
    deadline = time.monotonic() + 120
    while workers.ready() is None:
        assert time.monotonic() < deadline, "the worker did not start in 120 s"
        time.sleep(0.1)
    yield workers
    workers.close()


def _later(seconds: float, action: object) -> None:
    threading.Timer(seconds, action).start()  # type: ignore[arg-type]


def test_the_job_runs_in_a_worker_process(pool: WorkerPool) -> None:
    assert pool.call(worker_jobs.where, SolveToken()) != os.getpid()


def test_no_processes_runs_in_the_callers_thread() -> None:
    assert WorkerPool(BOOK, None, 0, name="test").call(worker_jobs.where, SolveToken()) == os.getpid()


@pytest.mark.parametrize("stop", [None, StopReason.DEADLINE])
def test_cancellation_reaches_the_worker(pool: WorkerPool, stop: StopReason | None) -> None:
    token = SolveToken()
    _later(0.3, token.cancel if stop is None else functools.partial(token.stop, stop))
    with pytest.raises(SolveCancelled, match="cancelled in the worker"):
        pool.call(worker_jobs.until_cancelled, token)


@pytest.mark.parametrize("reason", [StopReason.DEADLINE, StopReason.SHUTDOWN])
def test_a_wrap_up_reaches_the_worker_with_its_reason(pool: WorkerPool, reason: StopReason) -> None:
    token = SolveToken()
    _later(0.3, functools.partial(token.wrap_up, reason))
    pid, seen = pool.call(worker_jobs.until_wrapped_up, token)
    token.finish()
    assert pid != os.getpid()
    assert seen == reason


def test_bad_input_found_in_the_worker_names_its_field(pool: WorkerPool) -> None:
    with pytest.raises(InvalidRequest) as caught:
        pool.call(worker_jobs.bad_field, SolveToken())
    assert [(v.field, v.reason) for v in caught.value.violations] == [("workloads[0].sla", "cannot be met")]


def test_a_stream_yields_every_item_in_order(pool: WorkerPool) -> None:
    items = list(pool.stream(functools.partial(worker_jobs.counting, 50), SolveToken()))
    assert items == list(range(50))
    # The lane is free again: the next job runs.
    assert pool.call(worker_jobs.where, SolveToken()) != os.getpid()


def test_a_worker_that_dies_is_answered_worker_lost_and_replaced() -> None:
    workers = WorkerPool(BOOK, None, 1, name="test")
    try:
        dead = set(_started(workers)._processes)
        with pytest.raises(WorkerLost):
            workers.call(worker_jobs.die, SolveToken())
        # Later jobs run (in the caller's thread until a new worker is up), never on the dead one.
        assert workers.call(worker_jobs.where, SolveToken()) not in dead
        assert set(_started(workers)._processes).isdisjoint(dead)
        assert workers.call(worker_jobs.where, SolveToken()) not in {*dead, os.getpid()}
    finally:
        workers.close()


def _started(workers: WorkerPool) -> ProcessPoolExecutor:
    deadline = time.monotonic() + 120
    while (pool := workers.ready()) is None:
        assert time.monotonic() < deadline, "no worker started in 120 s"
        time.sleep(0.1)
    return pool


def test_the_workers_log_lines_carry_the_calls_request_id(pool: WorkerPool) -> None:
    with structlog.contextvars.bound_contextvars(request_id="req-31"):
        seen = pool.call(worker_jobs.log_context, SolveToken())
    assert seen == {"request_id": "req-31"}
    assert pool.call(worker_jobs.log_context, SolveToken()) == {}  # not left behind in the worker


def test_the_workers_log_at_the_servers_level() -> None:
    """A CLI's in-process server logs warnings only: its workers' info lines stay quiet too."""
    saved = structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    workers = WorkerPool(BOOK, None, 1, name="test")
    try:
        _started(workers)
        assert workers.call(worker_jobs.logs_info, SolveToken()) is False
    finally:
        workers.close()
        structlog.configure(**saved)


def test_workers_start_with_the_planner_imported(pool: WorkerPool) -> None:
    assert pool.call(worker_jobs.imported, SolveToken()) is True
