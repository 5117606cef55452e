"""Reuse of complete plan answers for identical requests.

A plan is a pure function of the request and the pricebook: the solver runs with fixed seeds and
deterministic settings, so a *complete* answer (main solve proven optimal, baselines and
sensitivity not cut short — ``PlanResult.complete``) is exactly what the same request would get
again. Bid pipelines re-send the same scenario many times; answering those from memory keeps the
solve slots free for new work. Only complete answers are kept: one cut short by a deadline depends
on that deadline, not only on the request.

Identical requests that arrive while the first is still being solved wait for it ("single
flight") instead of solving it again; if the first fails or is incomplete, each waiter solves it
itself. The key is the deterministic serialisation of the request plus the pricebook's content
hash, so an override or a different pricebook never hits another answer.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from google.protobuf.message import Message

_V = TypeVar("_V")

DEFAULT_MAX_ENTRIES = 256


def request_key(request: Message, pricebook_hash: str) -> str:
    """sha256 over the request's deterministic wire form and the pricebook content hash."""
    digest = hashlib.sha256(request.SerializeToString(deterministic=True))
    digest.update(b"\0pricebook:")
    digest.update(pricebook_hash.encode())
    return digest.hexdigest()


class PlanCache(Generic[_V]):
    """A bounded LRU of complete answers with single-flight computation (one event loop)."""

    def __init__(self, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        self._max_entries = max_entries
        self._entries: OrderedDict[str, _V] = OrderedDict()
        self._in_flight: dict[str, asyncio.Future[_V]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def answers(self, key: str) -> bool:
        """Whether ``key`` is answered without a new solve (a stored answer, or one being computed)."""
        return self._max_entries > 0 and (key in self._entries or key in self._in_flight)

    def _get(self, key: str) -> _V | None:
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def _put(self, key: str, value: _V) -> None:
        self._entries[key] = value
        self._entries.move_to_end(key)
        while len(self._entries) > self._max_entries:
            self._entries.popitem(last=False)

    async def get_or_compute(
        self, key: str, compute: Callable[[], Awaitable[_V]], *, reusable: Callable[[_V], bool]
    ) -> tuple[_V, bool]:
        """The stored answer for ``key`` (and True), or ``compute()``'s (and False).

        ``reusable(value)`` decides whether a computed answer may be stored and shared. With
        ``max_entries`` 0 nothing is reused, not even between identical calls in flight.
        """
        if self._max_entries <= 0:
            return await compute(), False
        stored = self._get(key)
        if stored is not None:
            return stored, True
        pending = self._in_flight.get(key)
        if pending is not None:
            # Shield: a waiter whose own call is cancelled must not cancel the first caller's solve.
            with _SuppressFirstCallerFailure():
                value = await asyncio.shield(pending)
                if reusable(value):
                    return value, True
            # The first caller failed, was cancelled or got an incomplete answer: solve it here.
            return await compute(), False
        future: asyncio.Future[_V] = asyncio.get_running_loop().create_future()
        self._in_flight[key] = future
        try:
            value = await compute()
        except BaseException as exc:
            future.set_exception(exc if isinstance(exc, Exception) else asyncio.CancelledError())
            future.exception()  # retrieved here, so an unawaited failure is never logged as lost
            raise
        finally:
            del self._in_flight[key]
        if reusable(value):
            self._put(key, value)
        future.set_result(value)
        return value, False


class _SuppressFirstCallerFailure:
    """Swallow the first caller's failure (a waiter then solves on its own), never our own cancel."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> bool:
        if exc is None:
            return False
        # Our own cancellation propagates; the shielded future's failure (including the first
        # caller's CancelledError) is swallowed.
        task = asyncio.current_task()
        return not (task is not None and task.cancelling())
