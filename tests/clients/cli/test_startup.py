"""What the ``fleetplan`` command imports (issue 31: it starts at once). ``--help`` and every command
with ``--target`` load neither the server, the solver, the pricebook and the store, nor the report
stack and the libraries behind them; a command without ``--target`` runs the real server in-process,
which loads the quote renderers (matplotlib, WeasyPrint, XlsxWriter) only for a quote, and the plan
store (SQLAlchemy) only for a command that saves or reads saved plans.

Each command runs in a fresh interpreter, which writes ``sys.modules`` as it exits."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.server import ThreadedServer, start_in_thread
from service.settings import ServerSettings

REPO_ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = REPO_ROOT / "examples" / "60m_krw_single_gpu.yaml"
SERVER_SIDE = ("service", "solver", "pricebook", "store", "report", "sqlalchemy", "ortools", "pyscipopt")
RENDERERS = ("report.html", "report.pdf", "report.xlsx", "matplotlib", "weasyprint", "xlsxwriter")
PROBE = """
import atexit, json, sys
atexit.register(lambda: open(sys.argv[1], "w").write(json.dumps(sorted(sys.modules))))
from clients.cli import main
sys.exit(main(sys.argv[2:]))
"""


def imported(tmp_path: Path, *argv: str) -> set[str]:
    """The modules loaded by ``fleetplan ARGV`` run in a fresh interpreter (whatever its exit)."""
    written = tmp_path / "modules.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}
    subprocess.run(
        [sys.executable, "-c", PROBE, str(written), *argv],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    modules: list[str] = json.loads(written.read_text(encoding="utf-8"))
    return set(modules)


LIGHT = frozenset({"report", "report.text"})
"""The report package's lazy ``__init__`` and its standard-library text module (the rows' words
the CLI tables share with the quote): loading them loads nothing else."""


def among(modules: set[str], names: tuple[str, ...]) -> list[str]:
    """The loaded modules that are one of ``names`` or inside one of them (but ``LIGHT``)."""
    return sorted(
        m for m in modules if m not in LIGHT and any(m == n or m.startswith(n + ".") for n in names)
    )


@pytest.fixture(scope="module")
def server() -> Iterator[ThreadedServer]:
    with start_in_thread(ServerSettings(address="127.0.0.1:0", store="none")) as running:
        yield running


@pytest.mark.parametrize("argv", [["--help"], ["plan", "--help"], ["estimate", "--help"]])
def test_help_loads_no_server_side_module(tmp_path: Path, argv: list[str]) -> None:
    assert among(imported(tmp_path, *argv), SERVER_SIDE + RENDERERS) == []


@pytest.mark.parametrize(
    "argv",
    [
        ["catalog"],
        [
            "estimate",
            "--gpu",
            "h100-sxm",
            "--model",
            "ministral-3-14b",
            "--precision",
            "fp8",
            "--input-len",
            "7000",
            "--output-len",
            "1024",
            "--concurrency",
            "50",
        ],
        ["plan", str(EXAMPLE), "--no-baselines", "--no-sensitivity"],
        ["report", str(EXAMPLE), "--output", "quote.html"],
        ["plans", "list"],
    ],
    ids=["catalog", "estimate", "plan", "report", "plans-list"],
)
def test_a_command_with_target_loads_no_server_side_module(
    tmp_path: Path, server: ThreadedServer, argv: list[str]
) -> None:
    modules = imported(tmp_path, *argv, "--target", server.address)
    assert "clients.cli.connection" in modules  # it did connect
    assert among(modules, SERVER_SIDE + RENDERERS) == []


def test_serve_help_loads_the_server(tmp_path: Path) -> None:
    """The probe sees what a command loads: ``serve`` builds its flags from the server's settings."""
    modules = imported(tmp_path, "serve", "--help")
    assert among(modules, ("service.settings", "service.server")) == ["service.server", "service.settings"]


@pytest.mark.slow
def test_the_in_process_server_loads_the_renderers_only_for_a_quote(tmp_path: Path) -> None:
    catalog = imported(tmp_path, "catalog")
    assert "service.server" in catalog
    assert among(catalog, RENDERERS) == []
    assert among(catalog, ("sqlalchemy",)) == []  # no saved plan is read or written: no store
    quote = imported(tmp_path, "report", str(EXAMPLE), "--output", "quote.xlsx")
    assert (tmp_path / "quote.xlsx").stat().st_size > 0
    assert {"report.xlsx", "xlsxwriter"} <= quote
