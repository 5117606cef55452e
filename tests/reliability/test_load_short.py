"""The load benchmark in a short, bounded form: 8 concurrent callers in 2 spawned client processes
for 5 s against a real ``fleetplan serve`` process. No status other than OK and the deliberate
RESOURCE_EXHAUSTED; every RPC kind of the mix answered; the result document is complete. (Latency
targets are checked by the full run, ``python -m bench.load``, never here.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.load import DEFAULT_MIX, main, percentile, summarize


def test_percentile_is_nearest_rank() -> None:
    values = sorted(float(v) for v in range(1, 101))  # 1…100
    assert percentile(values, 50) == 50.0
    assert percentile(values, 99) == 99.0
    assert percentile(values, 100) == 100.0
    assert percentile([7.0], 99) == 7.0


def test_summary_counts_statuses_and_uses_only_ok_latencies() -> None:
    samples = [("catalog", 0.010, "OK"), ("catalog", 0.030, "OK"), ("catalog", 5.0, "RESOURCE_EXHAUSTED")]
    row = summarize(samples, seconds=2.0)["catalog"]
    assert row["calls"] == 3 and row["ok"] == 2 and row["ok_per_s"] == 1.0
    assert row["p50_ms"] == 10.0 and row["p99_ms"] == 30.0
    assert row["status_counts"] == {"OK": 2, "RESOURCE_EXHAUSTED": 1}


@pytest.mark.slow
def test_short_load_run_has_no_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A short solve queue (the served process reads FLEETPLAN_* settings) keeps the run bounded: callers
    # past it get the deliberate RESOURCE_EXHAUSTED and retry, instead of queueing for many seconds.
    monkeypatch.setenv("FLEETPLAN_MAX_QUEUED_SOLVES", "2")
    out = tmp_path / "load.json"
    assert (
        main(["--clients", "8", "--seconds", "5", "--processes", "2", "--no-warm-up", "--out", str(out)]) == 0
    )
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["errors_other_than_resource_exhausted"] == {}
    assert document["config"]["clients"] == 8
    assert set(document["rpcs"]) == set(DEFAULT_MIX)
    rows = document["rpcs"]
    for kind, row in rows.items():
        assert row["calls"] > 0 and set(row["status_counts"]) <= {"OK", "RESOURCE_EXHAUSTED"}, kind
        if row["ok"]:
            assert row["p50_ms"] <= row["p95_ms"] <= row["p99_ms"]
    assert rows["catalog"]["ok"] > 0 and rows["estimate"]["ok"] > 0
    assert rows["plan_500m_krw"]["ok"] + rows["plan_small"]["ok"] > 0
    assert document["target"]["plan_500m_krw_p99_ms"] == document["rpcs"]["plan_500m_krw"]["p99_ms"]
