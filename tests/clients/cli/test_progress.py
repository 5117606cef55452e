"""Progress on stderr (``clients.cli.progress``): silent for quick calls, stage and time for slow ones."""

from __future__ import annotations

import io
import time

from clients.cli.progress import progress


def test_a_quick_call_prints_nothing() -> None:
    err = io.StringIO()
    with progress("planning", err, after_s=5.0):
        pass
    assert err.getvalue() == ""


def test_a_slow_call_prints_its_stage_and_elapsed_time() -> None:
    err = io.StringIO()
    with progress("planning", err, after_s=0.0):
        time.sleep(0.05)
    lines = err.getvalue().splitlines()
    assert lines[0].startswith("planning… ") and lines[0].endswith(" s")
    assert lines[-1].startswith("planning: done in ")
