"""The renderers' text and Markdown of recorded responses are byte-identical to tests/clients/rendered/."""

from __future__ import annotations

from pathlib import Path

import pytest
from recorded import outputs

CASES = list(outputs())


@pytest.mark.parametrize(("path", "text"), CASES, ids=[path.name for path, _ in CASES])
def test_rendered_output_is_byte_identical(path: Path, text: str) -> None:
    assert path.exists(), "record it: python -m tests.clients.render.recorded --write"
    assert text == path.read_text(encoding="utf-8")
