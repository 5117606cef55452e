"""Graceful shutdown: what happens between SIGTERM and exit.

1. At once: health flips to NOT_SERVING (load balancers stop routing here) and the solve gate
   drains — every queued solve (not started) and every new one is answered UNAVAILABLE
   ``SHUTTING_DOWN`` with RetryInfo, so its caller can retry on another replica now rather than
   time out here.
2. For ``notice_s`` the server still accepts calls (cheap ones are served; solves are refused as
   above) — so a probe sees NOT_SERVING instead of a refused connection. Then it stops accepting.
3. Running solves go on; near the end of the grace period each is *wrapped up*: its MIP is
   interrupted and it answers with its best verified plan (status FEASIBLE with its gap).
4. ``FINAL_CANCEL_LEAD_S`` before the end, whatever still runs (a solve still building its
   candidates, or verifying) is cancelled and its call answered ``SHUTTING_DOWN`` at once — the
   solver stops within a fraction of a second (``solver.optimizer.cancel``), and its slot frees
   when it has: every in-flight call gets an answer before gRPC would cancel it.
5. The server stops as soon as the last call is answered (not at the end of the grace period),
   and the process exits 0.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

import grpc
import structlog

from service.limits import StopReason

log = structlog.get_logger("fleetplan.shutdown")

MAX_NOTICE_S = 1.0
"""Longest wait between NOT_SERVING and refusing new calls (a quarter of the grace period at most)."""
MIN_WRAP_UP_MARGIN_S = 1.0
WRAP_UP_SHARE = 0.3
"""Solves are wrapped up with max(1 s, 30 % of the remaining grace) left (at most half of it), for
them to verify, assemble and send their answers."""
FINAL_CANCEL_LEAD_S = 1.5
"""What still runs this long before the grace period ends is cancelled (at most a fifth of the
remaining grace): a cancel stops the solver in ~0.1 s (``bench/cancel.py``), ~1 s on a box loaded
by other work, and the answer must be sent before gRPC cancels the call (0.6 s lost one answer of
eight in a full test run)."""


class DrainsSolves(Protocol):
    def start_draining(self) -> int: ...

    def wrap_up_all(self, reason: str) -> int: ...

    def cancel_all(self, reason: StopReason | None = None) -> int: ...


def notice_s(grace_s: float) -> float:
    return min(MAX_NOTICE_S, grace_s / 4)


def stop_schedule(remaining_s: float) -> tuple[float, float]:
    """Seconds from now (``remaining_s`` of grace left) to wrap up the running solves, and to cancel
    what still runs."""
    margin = min(remaining_s / 2, max(MIN_WRAP_UP_MARGIN_S, WRAP_UP_SHARE * remaining_s))
    cancel_at = max(0.0, remaining_s - min(FINAL_CANCEL_LEAD_S, remaining_s / 5))
    return max(0.0, remaining_s - margin), cancel_at


async def graceful_stop(
    server: grpc.aio.Server,
    set_serving: Callable[[bool], Awaitable[None]],
    solves: DrainsSolves | None,
    grace_s: float,
) -> None:
    started = time.monotonic()
    await set_serving(False)
    if solves is not None:
        queued = solves.start_draining()
        if queued:
            log.info("server.refused_queued_solves", solves=queued)
    await asyncio.sleep(notice_s(grace_s))
    remaining = max(0.0, grace_s - (time.monotonic() - started))
    timers: list[asyncio.TimerHandle] = []
    if solves is not None:
        wrap_after, cancel_after = stop_schedule(remaining)
        loop = asyncio.get_running_loop()
        timers = [
            loop.call_later(wrap_after, _wrap_up, solves),
            loop.call_later(cancel_after, _cancel_rest, solves),
        ]
    log.info("server.draining", grace_remaining_s=round(remaining, 2))
    try:
        # Returns as soon as every call has been answered (gRPC cancels the rest at ``remaining``).
        await server.stop(remaining)
    finally:
        for timer in timers:
            timer.cancel()


def _wrap_up(solves: DrainsSolves) -> None:
    count = solves.wrap_up_all(StopReason.SHUTDOWN)
    if count:
        log.info("server.wrapping_up_solves", solves=count)


def _cancel_rest(solves: DrainsSolves) -> None:
    count = solves.cancel_all(StopReason.SHUTDOWN)
    if count:
        log.info("server.cancelling_unfinished_solves", solves=count)
