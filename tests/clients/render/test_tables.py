"""clients.render.tables: cell text, column alignment, Markdown escaping, verdict bullets."""

from __future__ import annotations

from clients.render.tables import cell_text, table, verdicts


def test_floats_read_by_magnitude() -> None:
    assert [cell_text(v) for v in (0.0, 0.01234, 2.5, 1234.5, 7)] == ["0", "0.0123", "2.50", "1,234", "7"]


def test_numbers_line_up_on_the_right_and_text_on_the_left() -> None:
    lines = table(["name", "count", "note"], [["a", 5, "x"], ["bb", 1234.0, "long note"]]).splitlines()
    assert lines == [
        "name  count  note",
        "----  -----  ---------",
        "a         5  x",
        "bb    1,234  long note",
    ]


def test_markdown_escapes_pipes_in_cells() -> None:
    assert table(["a"], [["x|y"]], markdown=True).splitlines() == ["| a |", "| --- |", "| x\\|y |"]


def test_verdicts_skip_empty_sentences_and_leave_a_blank_line_in_markdown() -> None:
    assert verdicts(["one", ""], markdown=False) == ["- one"]
    assert verdicts(["one"], markdown=True) == ["", "- one"]
    assert verdicts([""], markdown=True) == []
