"""Progress of a long command on stderr, stage by stage, once the command has run longer than
``PROGRESS_AFTER_S`` (short answers print nothing extra).

A terminal sees one status line, rewritten in place with the stage's elapsed seconds and cleared when
the command ends, so the answer that follows starts on a clean line. A file or a pipe (CI logs, a
wrapper script) gets one line per stage, written once when the stage is reached, and nothing else.

A stage is what the command can observe: starting the in-process server, a call to the server (its
words say what the server does in it: a unary call reports no finer progress), a streamed sweep's
points as the server reports them."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import TextIO

from api.fleetplan.v1 import scenario_pb2

PROGRESS_AFTER_S = 2.0
"""Commands that answer sooner print no progress."""
PROGRESS_EVERY_S = 1.0
"""How often a terminal's status line shows the elapsed time anew."""
CLEAR_TO_END = "\x1b[K"
"""ANSI erase-in-line (to the end of the line): what is left of a longer earlier status goes."""


class StatusLine:
    """The stages of one command on ``err`` (see the module docstring); ``show`` moves to a stage,
    ``close`` ends the line. Safe to use from the command's thread while a ticker redraws it."""

    def __init__(self, err: TextIO, *, after_s: float, lines: bool = False) -> None:
        self.err = err
        self.live = err.isatty() and not lines
        self.shown_after = time.monotonic() + after_s
        self._lock = threading.Lock()
        self._stage = ""
        self._stage_started = time.monotonic()
        self._printed: set[str] = set()
        self._drawn = False

    def show(self, stage: str) -> None:
        """The command has reached ``stage`` (shown now if the command has already run long)."""
        with self._lock:
            self._stage, self._stage_started = stage, time.monotonic()
            if time.monotonic() >= self.shown_after:
                self._write()

    def tick(self) -> None:
        """Show the stage if it is time (a terminal's line: with its elapsed time anew)."""
        with self._lock:
            if time.monotonic() >= self.shown_after:
                self._write()

    def close(self) -> None:
        """A terminal's line is cleared; a file or pipe has its lines already."""
        with self._lock:
            if self._drawn:
                self.err.write(f"\r{CLEAR_TO_END}")
                self.err.flush()
            self._drawn, self._stage = False, ""

    def _write(self) -> None:
        if not self._stage:
            return
        if self.live:
            elapsed = time.monotonic() - self._stage_started
            self.err.write(f"\r{self._stage}… {elapsed:.0f} s{CLEAR_TO_END}")
            self._drawn = True
        elif self._stage not in self._printed:
            self._printed.add(self._stage)
            self.err.write(f"{self._stage}…\n")
        else:
            return
        self.err.flush()


def planning_stage(options: scenario_pb2.SolverOptions) -> str:
    """What the server does in a PlanFleet call, as the options ask (unset: computed)."""
    steps = ["main solve"]
    if not options.HasField("compute_baselines") or options.compute_baselines:
        steps.append("baselines")
    if not options.HasField("compute_sensitivity") or options.compute_sensitivity:
        steps += ["headroom", "sensitivity"]
    return f"planning ({', '.join(steps)})"


@contextlib.contextmanager
def status_line(err: TextIO, *, after_s: float | None = None, lines: bool = False) -> Iterator[StatusLine]:
    """A ``StatusLine`` for the block, kept up to date by a ticker thread, closed when it ends;
    shown from ``after_s`` on (default ``PROGRESS_AFTER_S``). ``lines``: one line per stage even on
    a terminal (``--verbose``: the server's log lines share stderr, a rewritten line would mix
    with them)."""
    after_s = PROGRESS_AFTER_S if after_s is None else after_s
    line = StatusLine(err, after_s=after_s, lines=lines)
    done = threading.Event()

    def ticker() -> None:
        if done.wait(after_s):
            return
        while True:
            line.tick()
            if done.wait(PROGRESS_EVERY_S):
                return

    thread = threading.Thread(target=ticker, name="cli-progress", daemon=True)
    thread.start()
    try:
        yield line
    finally:
        done.set()
        thread.join()
        line.close()
