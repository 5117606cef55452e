"""Log lines go to the current stderr as JSON (not a stream captured at configuration time)."""

from __future__ import annotations

import io
import json
import sys
import threading
import time

import pytest
import structlog

from service.interceptors import configure_logging


def test_json_lines_follow_the_current_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    first = io.StringIO()
    saved = sys.stderr
    sys.stderr = first
    try:
        configure_logging(json=True)
        structlog.get_logger("test").info("configured", request_id="r-1")
    finally:
        sys.stderr = saved
    first.close()  # e.g. a test's capture buffer, gone after the test that configured logging
    structlog.get_logger("test").info("later", request_id="r-2")
    line = json.loads(capsys.readouterr().err.strip().splitlines()[-1])
    assert (line["event"], line["request_id"], line["level"]) == ("later", "r-2", "info")


def test_secrets_never_reach_the_log(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(json=True)
    structlog.get_logger("test").info("call", authorization="Bearer s3cret", request_id="r-3")
    text = capsys.readouterr().err
    assert "s3cret" not in text and "r-3" in text


class _SlowStream(io.StringIO):
    """A stream whose writes yield to other threads, as a pipe under load does."""

    def write(self, text: str) -> int:
        written = 0
        for char in text:
            written += super().write(char)
            time.sleep(0)
        return written


def test_records_logged_at_once_from_many_threads_stay_one_per_line() -> None:
    stream = _SlowStream()
    saved = sys.stderr
    sys.stderr = stream
    try:
        configure_logging(json=True)

        def chatter(worker: int) -> None:
            for i in range(20):
                structlog.get_logger("test").info("busy", worker=worker, i=i)

        threads = [threading.Thread(target=chatter, args=(w,)) for w in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.stderr = saved
    lines = stream.getvalue().splitlines()
    assert len(lines) == 160
    assert sorted((r["worker"], r["i"]) for r in map(json.loads, lines)) == [
        (w, i) for w in range(8) for i in range(20)
    ]
