"""The README's worked example states what the 500M KRW example's answer is: its TCO ex- and
incl. VAT and its GPU counts match the recorded answer, which ``tests/golden/test_example_plans.py``
keeps identical to what the real server answers today."""

from __future__ import annotations

import json
import re
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def _readme_example_sentence() -> str:
    text = " ".join((REPO_ROOT / "README.md").read_text(encoding="utf-8").split())
    start = text.index("`500m_krw_portfolio.yaml`")
    return text[start : text.index("`rtx5090_cluster.yaml`", start)]


def _recorded_plan() -> dict:  # type: ignore[type-arg]
    path = REPO_ROOT / "tests" / "golden" / "plans" / "500m_krw_portfolio.json"
    return json.loads(path.read_text(encoding="utf-8"))["plan"]  # type: ignore[no-any-return]


def test_readme_states_the_500m_examples_tco_ex_and_incl_vat() -> None:
    sentence = _readme_example_sentence()
    cost = _recorded_plan()["cost"]
    ex_vat = int(cost["horizon_tco"]["amount"])
    with_vat = int(cost["vat"]["horizon_tco_with_vat"]["amount"])
    assert f"{ex_vat:,} KRW over 36 months ex-VAT" in sentence
    assert f"{with_vat:,} KRW with VAT" in sentence


def test_readme_states_the_500m_examples_fleet() -> None:
    sentence = _readme_example_sentence()
    stated = [int(n) for n in re.findall(r"×(\d+)", sentence[sentence.index("plan:") :])]
    recorded = [line["gpu_count"] for line in _recorded_plan()["fleet"]]
    assert sorted(stated) == sorted(recorded)
