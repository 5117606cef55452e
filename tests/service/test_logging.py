"""Log lines go to the current stderr as JSON (not a stream captured at configuration time)."""

from __future__ import annotations

import io
import json
import sys

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
