"""Progress on stderr (``clients.cli.progress``): silent for quick commands; for slow ones one updating
line on a terminal (cleared at the end) and one line per stage on a file or pipe, nothing else.

The end-to-end tests run the real ``fleetplan`` command in a fresh interpreter with its stderr on a
pipe, or on a pseudo-terminal (stdlib ``pty``), and progress shown from the start
(``PROGRESS_AFTER_S`` = 0) so that a quick example has stages to show."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

from api.fleetplan.v1 import scenario_pb2
from clients.cli.connection import STARTING_STAGE
from clients.cli.progress import CLEAR_TO_END, StatusLine, planning_stage, status_line

REPO_ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = REPO_ROOT / "examples" / "60m_krw_single_gpu.yaml"
RUN_SHOWING_EVERYTHING = """
import sys
from clients.cli import progress
progress.PROGRESS_AFTER_S, progress.PROGRESS_EVERY_S = 0.0, 0.05
from clients.cli import main
sys.exit(main(sys.argv[1:]))
"""
"""``fleetplan ARGV`` with every stage shown from the start and a terminal's line redrawn often."""
ALL_PLANNING = planning_stage(scenario_pb2.SolverOptions())


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_quick_command_prints_nothing() -> None:
    for err in (io.StringIO(), Terminal()):
        with status_line(err, after_s=5.0) as line:
            line.show("planning")
            line.show("rendering")
        assert err.getvalue() == ""


def test_a_pipe_gets_one_line_per_stage_and_nothing_else() -> None:
    err = io.StringIO()
    with status_line(err, after_s=0.0) as line:
        line.show("starting")
        line.show("planning")
        time.sleep(0.05)
        line.tick()
        line.show("planning")  # the same stage again: no second line
        line.show("rendering")
    assert err.getvalue() == "starting…\nplanning…\nrendering…\n"


def test_a_terminal_gets_one_line_rewritten_in_place_and_cleared() -> None:
    err = Terminal()
    line = StatusLine(err, after_s=0.0)
    line.show("planning")
    line.tick()
    line.show("rendering")
    line.close()
    text = err.getvalue()
    assert "\n" not in text
    assert text.split("\r")[1:] == [
        f"planning… 0 s{CLEAR_TO_END}",
        f"planning… 0 s{CLEAR_TO_END}",
        f"rendering… 0 s{CLEAR_TO_END}",
        CLEAR_TO_END,
    ]


def test_a_terminal_shared_with_log_lines_gets_lines() -> None:
    err = Terminal()
    with status_line(err, after_s=0.0, lines=True) as line:
        line.show("planning")
    assert err.getvalue() == "planning…\n"


def test_the_planning_stage_names_what_the_options_ask_for() -> None:
    assert ALL_PLANNING == "planning (main solve, baselines, headroom, sensitivity)"
    lean = scenario_pb2.SolverOptions(compute_baselines=False, compute_sensitivity=False)
    assert planning_stage(lean) == "planning (main solve)"


def _fleetplan(*argv: str, stderr: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-c", RUN_SHOWING_EVERYTHING, *argv]
    return subprocess.Popen(command, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=stderr)


def test_plan_on_a_pipe_prints_each_stage_once() -> None:
    process = _fleetplan("plan", str(EXAMPLE), stderr=subprocess.PIPE)
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    assert err.decode().splitlines() == [f"{STARTING_STAGE}…", f"{ALL_PLANNING}…"]
    assert out.decode().lstrip().startswith("Plan")


def test_sweep_on_a_pipe_prints_each_point_the_server_reports_once(tmp_path: Path) -> None:
    argv = ("sweep", str(EXAMPLE), "--dimension", "demand_multiplier", "--values", "0.5,1")
    process = _fleetplan(*argv, stderr=subprocess.PIPE)
    _, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    lines = err.decode().splitlines()
    assert lines[0] == f"{STARTING_STAGE}…"
    assert [line.split("] ")[1] for line in lines[1:]] == ["0/2 points…", "1/2 points…", "2/2 points…"]


def _read_terminal(fd: int, process: subprocess.Popen[bytes]) -> bytes:
    """Everything written to the pseudo-terminal until the command ends and the terminal drains."""
    seen = b""
    while True:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the other end closed (Linux raises EIO)
                return seen
            seen += chunk
        elif process.poll() is not None:
            return seen


def test_plan_on_a_terminal_is_one_updating_line_cleared_at_the_end() -> None:
    controller, terminal = pty.openpty()
    try:
        process = _fleetplan("plan", str(EXAMPLE), stderr=terminal)
        os.close(terminal)
        shown = _read_terminal(controller, process).decode()
        out = process.stdout.read().decode() if process.stdout else ""
        assert process.wait(timeout=300) == 0
    finally:
        os.close(controller)
    assert "\n" not in shown  # one line: never a new one
    draws = shown.split("\r")[1:]
    assert draws[-1] == CLEAR_TO_END  # cleared at the end: the answer starts on a clean line
    stages = [draw.rsplit("… ", 1)[0] for draw in draws[:-1]]
    assert stages[-1] == ALL_PLANNING and STARTING_STAGE in stages
    assert len(stages) > 2  # redrawn in place as the seconds go by
    assert all(draw.endswith(f" s{CLEAR_TO_END}") for draw in draws[:-1])
    assert out.lstrip().startswith("Plan")
