"""Graceful shutdown: what happens between SIGTERM and exit.

1. Health flips to NOT_SERVING (load balancers stop routing here) while the server still accepts
   calls for ``notice_s`` — so a probe can see NOT_SERVING instead of a refused connection.
2. The server stops accepting new calls; in-flight calls keep running.
3. Near the end of the grace period every running solve is *wrapped up*: its MIP is interrupted
   and it answers with its best verified plan (status FEASIBLE with its gap) instead of running on;
   a solve with no plan yet answers UNAVAILABLE (``SHUTTING_DOWN``, retry on another replica).
4. At ``grace_s`` whatever is still running is cancelled; then the process exits 0.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

import grpc
import structlog

log = structlog.get_logger("fleetplan.shutdown")

MAX_NOTICE_S = 1.0
"""Longest wait between NOT_SERVING and refusing new calls (a quarter of the grace period at most)."""
MIN_WRAP_UP_MARGIN_S = 1.0
WRAP_UP_SHARE = 0.3
"""Solves are wrapped up with max(1 s, 30 % of the remaining grace) left (at most half of it), for
them to verify, assemble and send their answers."""


class WrapsUpSolves(Protocol):
    def wrap_up_all(self, reason: str) -> int: ...


def notice_s(grace_s: float) -> float:
    return min(MAX_NOTICE_S, grace_s / 4)


async def graceful_stop(
    server: grpc.aio.Server,
    set_serving: Callable[[bool], Awaitable[None]],
    solves: WrapsUpSolves | None,
    grace_s: float,
) -> None:
    started = time.monotonic()
    await set_serving(False)
    await asyncio.sleep(notice_s(grace_s))
    remaining = max(0.0, grace_s - (time.monotonic() - started))
    wrap_up = None
    if solves is not None:
        margin = min(remaining / 2, max(MIN_WRAP_UP_MARGIN_S, WRAP_UP_SHARE * remaining))
        wrap_after = max(0.0, remaining - margin)
        loop = asyncio.get_running_loop()
        wrap_up = loop.call_later(wrap_after, _wrap_up, solves)
    log.info("server.draining", grace_remaining_s=round(remaining, 2))
    try:
        await server.stop(remaining)
    finally:
        if wrap_up is not None:
            wrap_up.cancel()


def _wrap_up(solves: WrapsUpSolves) -> None:
    count = solves.wrap_up_all("shutdown")
    if count:
        log.info("server.wrapping_up_solves", solves=count)
