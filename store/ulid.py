"""ULIDs: 26-character, lexicographically sortable plan ids (48-bit millisecond time + 80 random bits).

Crockford base32 (no I, L, O, U), as in the ULID spec. Ids made by one process are strictly
increasing even within one millisecond (the random part of the previous id is incremented,
"monotonic" mode), so sorting by id is sorting by creation order; ids from different replicas
sort by their millisecond. No pinned ULID library exists in the lock file, and this is 40 lines.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
ULID_LENGTH = 26
_TIME_BITS = 48
_RANDOM_BITS = 80
_RANDOM_MAX = (1 << _RANDOM_BITS) - 1


def encode(value: int) -> str:
    """The 26-character base32 text of a 128-bit integer."""
    chars = []
    for _ in range(ULID_LENGTH):
        chars.append(ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def decode(text: str) -> int:
    """The 128-bit integer of a ULID; ValueError if ``text`` is not one."""
    if len(text) != ULID_LENGTH:
        msg = f"a ULID has {ULID_LENGTH} characters, not {len(text)}"
        raise ValueError(msg)
    value = 0
    for char in text.upper():
        index = ALPHABET.find(char)
        if index < 0:
            msg = f"{char!r} is not a ULID character"
            raise ValueError(msg)
        value = (value << 5) | index
    if value >> 128:
        msg = "a ULID's first character is at most 7"
        raise ValueError(msg)
    return value


def timestamp(text: str) -> datetime:
    """When the ULID was made (millisecond precision, UTC)."""
    return datetime.fromtimestamp((decode(text) >> _RANDOM_BITS) / 1000, tz=UTC)


def is_ulid(text: str) -> bool:
    try:
        decode(text)
    except ValueError:
        return False
    return True


class UlidGenerator:
    """Thread-safe monotonic ULIDs; ``clock_ms`` is injectable for tests."""

    def __init__(self, clock_ms: Callable[[], int] | None = None) -> None:
        self._clock_ms = clock_ms or (lambda: time.time_ns() // 1_000_000)
        self._lock = threading.Lock()
        self._last_ms = -1
        self._last_random = 0

    def new(self) -> str:
        with self._lock:
            now = int(self._clock_ms())
            if now <= self._last_ms:
                # Same (or an earlier: the clock stepped back) millisecond: keep the last time and
                # count up, so ids stay strictly increasing.
                if self._last_random == _RANDOM_MAX:
                    self._last_ms += 1
                    self._last_random = secrets.randbits(_RANDOM_BITS - 1)
                else:
                    self._last_random += 1
            else:
                self._last_ms = now
                self._last_random = secrets.randbits(_RANDOM_BITS - 1)  # top bit 0: room to count up
            return encode((self._last_ms << _RANDOM_BITS) | self._last_random)


_DEFAULT = UlidGenerator()


def new_ulid() -> str:
    """A new ULID from the process-wide generator."""
    return _DEFAULT.new()
