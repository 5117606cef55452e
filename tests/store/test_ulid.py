"""ULIDs: the spec's encoding, time order, and strict monotonic order within a millisecond."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest

from store import ulid


def test_encoding_follows_the_spec() -> None:
    # The spec's layout: 10 characters of 48-bit millisecond time, then 16 of randomness.
    value = (1_469_918_176_385 << 80) | 0
    text = ulid.encode(value)
    assert text == "01ARYZ6S41" + "0" * 16  # the spec's example time prefix
    assert ulid.decode(text) == value
    assert ulid.timestamp(text) == datetime.fromtimestamp(1_469_918_176.385, tz=UTC)


def test_every_character_is_crockford_base32() -> None:
    text = ulid.new_ulid()
    assert len(text) == 26 and set(text) <= set(ulid.ALPHABET)
    assert not set("ILOU") & set(text)


@pytest.mark.parametrize("bad", ["", "0" * 25, "0" * 27, "8" + "0" * 25, "0" * 25 + "U"])
def test_bad_ids_are_refused(bad: str) -> None:
    assert not ulid.is_ulid(bad)


def test_ids_increase_strictly_within_one_millisecond() -> None:
    generator = ulid.UlidGenerator(clock_ms=lambda: 1_700_000_000_000)
    ids = [generator.new() for _ in range(1000)]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert {ulid.timestamp(i) for i in ids} == {datetime.fromtimestamp(1_700_000_000, tz=UTC)}


def test_a_clock_stepping_back_does_not_break_the_order() -> None:
    times = iter([5_000, 5_001, 4_000, 4_000, 5_002])
    generator = ulid.UlidGenerator(clock_ms=lambda: next(times))
    ids = [generator.new() for _ in range(5)]
    assert ids == sorted(ids) and len(set(ids)) == 5


def test_later_milliseconds_sort_later() -> None:
    now = [1_000]
    generator = ulid.UlidGenerator(clock_ms=lambda: now[0])
    first = generator.new()
    now[0] = 1_001
    assert generator.new() > first


def test_threads_never_get_the_same_id() -> None:
    found: list[str] = []
    lock = threading.Lock()

    def work() -> None:
        mine = [ulid.new_ulid() for _ in range(500)]
        assert mine == sorted(mine)
        with lock:
            found.extend(mine)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(found)) == 4000
