"""Layout shared by every renderer: cells, plain-text or Markdown tables, headings, verdict bullets."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

Cell = str | int | float


def cell_text(value: Cell) -> str:
    """Floats to three significant figures below 1, two decimals below 100, whole numbers above."""
    if isinstance(value, float):
        if value == 0:
            return "0"
        if abs(value) >= 100:
            return f"{value:,.0f}"
        if abs(value) >= 1:
            return f"{value:,.2f}"
        return f"{value:.3g}"
    return str(value)


def table(headers: Sequence[str], rows: Iterable[Sequence[Cell]], *, markdown: bool = False) -> str:
    body = [[cell_text(c) for c in row] for row in rows]
    if markdown:
        return _markdown_table(headers, body)
    widths = [max(len(h), *(len(r[i]) for r in body)) if body else len(h) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        # The first column and text read from the left, numbers line up on the right.
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w) if _numeric(c) else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    return "\n".join([line(list(headers)), line(["-" * w for w in widths]), *(line(r) for r in body)])


def _markdown_table(headers: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(" --- " for _ in headers) + "|"]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in body]
    return "\n".join(lines)


def _numeric(text: str) -> bool:
    return text.replace(",", "").replace(".", "", 1).replace("-", "", 1).replace("%", "").isdigit()


def section(
    title: str, headers: Sequence[str], rows: Iterable[Sequence[Cell]], *, markdown: bool = False
) -> list[str]:
    """A heading and its table."""
    return [heading(title, markdown=markdown), table(headers, rows, markdown=markdown)]


@dataclass(frozen=True, slots=True)
class Table:
    """One titled table of an answer: rendered as text or Markdown, or written as CSV."""

    name: str
    """File-name stem for CSV (``fleet``, ``workloads``, …)."""
    title: str
    headers: Sequence[str]
    rows: Sequence[Sequence[Cell]]

    def section(self, *, markdown: bool) -> list[str]:
        return section(self.title, self.headers, self.rows, markdown=markdown)

    def write_csv(self, directory: Path) -> Path:
        """``<directory>/<name>.csv``: the headers, then each row's cells (numbers unformatted, money
        as its exact amount in the answer's currency)."""
        path = directory / f"{self.name}.csv"
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(self.headers)
            writer.writerows([_csv_cell(c) for c in row] for row in self.rows)
        return path


def _csv_cell(cell: Cell) -> Cell:
    amount = getattr(cell, "amount", None)  # values.MoneyText
    if isinstance(amount, str):
        return amount
    return cell.strip() if isinstance(cell, str) else cell


def heading(text: str, *, markdown: bool) -> str:
    return f"\n## {text}\n" if markdown else f"\n{text}\n{'=' * len(text)}"


def verdicts(texts: Sequence[str], *, markdown: bool) -> list[str]:
    """Sentences under a table, one bullet each (in Markdown after a blank line, so that the list
    does not run into the table)."""
    bullets = [f"- {t}" for t in texts if t]
    return ["", *bullets] if markdown and bullets else bullets
