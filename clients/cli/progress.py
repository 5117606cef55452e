"""Progress of a long call on stderr: the stage and the elapsed time, once the call has taken longer
than ``PROGRESS_AFTER_S`` (short answers print nothing extra)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import TextIO

PROGRESS_AFTER_S = 2.0
"""Calls that answer sooner print no progress."""
PROGRESS_EVERY_S = 1.0


@contextlib.contextmanager
def progress(stage: str, err: TextIO, *, after_s: float = PROGRESS_AFTER_S) -> Iterator[None]:
    """Report ``stage`` and the elapsed seconds on ``err`` while the block runs (a terminal sees one
    line rewritten in place, a file or pipe one line per report); the line is closed when done."""
    started = time.monotonic()
    done = threading.Event()
    printed = threading.Event()
    live = err.isatty()

    def report() -> None:
        if done.wait(after_s):
            return
        while True:
            line = f"{stage}… {time.monotonic() - started:.0f} s"
            err.write(f"\r{line}" if live else f"{line}\n")
            err.flush()
            printed.set()
            if done.wait(PROGRESS_EVERY_S):
                return

    thread = threading.Thread(target=report, name="cli-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        if printed.is_set():
            err.write(f"{chr(13) if live else ''}{stage}: done in {time.monotonic() - started:.1f} s\n")
            err.flush()
