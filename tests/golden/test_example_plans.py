"""The five examples' plans are byte-identical to the recorded ones (volatile timings removed).

A refactor must not change an answer; a deliberate change re-records them
(``python -m tests.golden.example_plans --write``) in the same commit.
"""

from __future__ import annotations

import pytest

from tests.golden.example_plans import RECORDED, plans_json


@pytest.mark.slow
def test_example_plans_are_byte_identical_to_the_recorded_answers() -> None:
    answers = dict(plans_json())
    assert sorted(answers) == sorted(p.stem for p in RECORDED.glob("*.json"))
    for name, text in answers.items():
        assert text == (RECORDED / f"{name}.json").read_text(encoding="utf-8"), name
