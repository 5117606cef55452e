"""The request annex prints the request compactly: a list of plain values on one line (an hourly
profile was one number per line, 2.3 of 10 PDF pages), the same JSON document."""

from __future__ import annotations

import json

from report.formatting import compact_json


def test_lists_of_values_go_on_one_line_and_the_document_is_unchanged() -> None:
    request = {
        "workloads": [{"name": "rag", "inference": {"hourly_profile": [0.1] * 8 + [3, 10, 12] + [1] * 13}}]
    }
    text = json.dumps(request, indent=2)
    compact = compact_json(text)
    assert json.loads(compact) == request
    assert len(compact.splitlines()) < len(text.splitlines()) / 3
    assert any(line.strip().startswith('"hourly_profile": [0.1, 0.1') for line in compact.splitlines())


def test_text_that_is_not_json_is_left_as_it_is() -> None:
    assert compact_json("not json {") == "not json {"
