"""Running the ``fleetplan`` command in the test process (shared by the tests in this folder)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from clients import cli

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    out = io.StringIO()
    code = cli.main(list(argv), out=out)
    return code, out.getvalue(), capsys.readouterr().err
