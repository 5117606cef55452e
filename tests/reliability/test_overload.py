"""Overload against a real ``fleetplan serve``: a burst of 20 big solves (the 500M KRW example, each
a new question) with 5 s deadlines on two solve slots. What cannot finish in time is refused
RESOURCE_EXHAUSTED with RetryInfo — most at once, the rest as soon as their expected wait stops
fitting — never DEADLINE_EXCEEDED after queueing; cheap calls keep answering meanwhile.

Latency targets (refusal ≤ 100 ms, cheap p99 ≤ 50 ms) are measured by ``python -m bench.overload``
(``bench/results/overload.json``); the bounds here are generous, for a busy shared box."""

from __future__ import annotations

import pytest

from bench.overload import run_overload


@pytest.mark.slow
def test_a_burst_of_big_solves_is_shed_fast_and_cheap_calls_keep_answering() -> None:
    document = run_overload(solves=20, deadline_s=5.0, probe_s=4.0, server_args=["--solve-slots", "2"])
    counts = document["status_counts"]
    assert set(counts) <= {"OK", "RESOURCE_EXHAUSTED"}, counts  # nothing times out in the queue
    assert counts.get("RESOURCE_EXHAUSTED", 0) >= 10, counts  # 20 × ~1 s of work cannot fit 5 s on 2 slots
    assert document["retry_info_on_every_refusal"]
    # Most refusals come at once (admission), not at the deadline.
    assert document["refusal_ms"]["p50_ms"] < 1000, document["refusal_ms"]
    assert document["refusal_ms"]["max_ms"] < 5000, document["refusal_ms"]
    assert document["cheap_call_failures"] == 0
    for kind, row in document["cheap_calls_ms"].items():
        assert row["count"] > 10 and row["p99_ms"] < 1000, (kind, row)
