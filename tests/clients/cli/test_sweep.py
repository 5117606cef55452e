"""``fleetplan sweep``: progress on stderr, the frontier as a table and as CSV."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import EXAMPLES, run


def test_sweep_streams_progress_and_writes_the_frontier_csv(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frontier = tmp_path / "frontier.csv"
    code, out, err = run(
        capsys,
        "sweep",
        str(EXAMPLES / "60m_krw_single_gpu.yaml"),
        "--dimension",
        "demand_multiplier",
        "--values",
        "0.5,1",
        "--csv",
        str(frontier),
    )
    assert code == 0
    assert "2/2 points" in err
    lines = frontier.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("demand_multiplier,status,horizon_tco")
    assert len(lines) == 3
    assert "Frontier" in out
