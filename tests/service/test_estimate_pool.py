"""Large EstimatePerformance requests in worker processes (``service.estimate_pool``): the rows are
the ones the server's own thread computes, in the cases' order; small requests and a pool that is
still starting stay in the thread; ``estimate_processes: 0`` never starts a worker."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from bench.estimate_speed import build_cases
from pricebook.loader import load_default
from service import domain_calls, worker_pool
from service.estimate_pool import MIN_POOLED_CASES, EstimatePool, _parts

BOOK = load_default()


def _cases(n: int) -> list[dict[str, Any]]:
    models = [m.id for m in BOOK.models if m.kind == "decoder"]
    lines = build_cases(models, [g.id for g in BOOK.gpus], n, seed=31)
    return [{**json.loads(line), "id": f"case-{i}"} for i, line in enumerate(lines)]


class _Counting:
    """The in-thread runner, counting its calls."""

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, fn: Callable[[], list[dict[str, Any]]]) -> list[dict[str, Any]]:
        self.calls += 1
        return await asyncio.to_thread(fn)


def test_parts_keep_order_and_cover_every_case() -> None:
    cases = [{"i": i} for i in range(7)]
    parts = _parts(cases, 3)
    assert [len(p) for p in parts] == [3, 2, 2]
    assert [c for p in parts for c in p] == cases
    assert _parts(cases[:1], 4) == [cases[:1]]


@pytest.mark.slow
def test_pooled_rows_equal_the_threads_rows() -> None:
    cases = _cases(2 * MIN_POOLED_CASES + 1)
    expected = domain_calls.estimate_cases(cases, BOOK)
    in_thread = _Counting()
    pool = EstimatePool(BOOK, None, 2, in_thread)

    async def run() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        while_starting = await pool.estimate(cases)  # the workers start; this one in the thread
        assert in_thread.calls == 1
        deadline = time.monotonic() + 120
        while pool._ready_pool() is None:
            assert time.monotonic() < deadline, "the workers did not start in 120 s"
            await asyncio.sleep(0.2)
        pooled = await pool.estimate(cases)
        assert in_thread.calls == 1  # estimated by the workers
        small = await pool.estimate(cases[: MIN_POOLED_CASES - 1])
        assert in_thread.calls == 2 and small == expected[: MIN_POOLED_CASES - 1]
        return while_starting, pooled

    try:
        while_starting, pooled = asyncio.run(run())
    finally:
        pool.close()
    assert while_starting == expected
    assert pooled == expected
    assert [row.get("id") for row in pooled] == [c["id"] for c in cases]


def test_no_processes_means_no_worker() -> None:
    in_thread = _Counting()
    pool = EstimatePool(BOOK, None, 0, in_thread)
    cases = _cases(MIN_POOLED_CASES)
    rows = asyncio.run(pool.estimate(cases))
    assert in_thread.calls == 1 and pool._workers._pool is None
    assert rows == domain_calls.estimate_cases(cases, BOOK)


def test_workers_that_cannot_be_started_leave_the_estimates_to_the_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """E.g. a spawn refused while the process is still starting (multiprocessing's main-guard rule):
    the request is answered, in the thread, and the pool is off from then on."""

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("an attempt has been made to start a new process before bootstrapping")

    monkeypatch.setattr(worker_pool, "ProcessPoolExecutor", refuse)
    in_thread = _Counting()
    pool = EstimatePool(BOOK, None, 2, in_thread)
    cases = _cases(MIN_POOLED_CASES)
    rows = asyncio.run(pool.estimate(cases))
    assert rows == domain_calls.estimate_cases(cases, BOOK)
    assert in_thread.calls == 1 and pool._workers._pool is None and pool._workers.processes == 0
