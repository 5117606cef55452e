"""Reading rendered quotes back: an HTML page's tables and ``data-field`` cells (stdlib parser), a
PDF's text (poppler's ``pdftotext``), an XLSX workbook's cached values (openpyxl). Tests compare
what each file shows; nothing here uses ``report``'s own code."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from collections import defaultdict
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import openpyxl


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: dict[str, list[list[str]]] = {}
        self.fields: dict[str, list[str]] = defaultdict(list)
        self._table: str | None = None
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._field = ""
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        if tag in {"svg", "style"}:
            self._skip += 1
        elif tag == "table":
            self._table = attr.get("id") or f"table-{len(self.tables)}"
            self.tables[self._table] = []
        elif tag == "tr" and self._table is not None:
            self._row = []
        elif tag in {"td", "th"} and self._row is not None:
            self._cell, self._field = [], attr.get("data-field") or ""
        elif attr.get("data-field") and self._cell is None:
            self._cell, self._field = [], attr["data-field"] or ""

    def handle_endtag(self, tag: str) -> None:
        if tag in {"svg", "style"}:
            self._skip -= 1
        elif tag in {"td", "th"} and self._row is not None and self._cell is not None:
            self._close_cell(into_row=tag == "td")
        elif tag == "tr" and self._row is not None and self._table is not None:
            if self._row:
                self.tables[self._table].append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None
        elif self._cell is not None and self._row is None:
            self._close_cell(into_row=False)

    def _close_cell(self, *, into_row: bool) -> None:
        assert self._cell is not None
        text = " ".join("".join(self._cell).split())
        if self._field:
            self.fields[self._field].append(text)
        if into_row and self._row is not None:
            self._row.append(text)
        self._cell, self._field = None, ""

    def handle_data(self, data: str) -> None:
        if self._cell is not None and not self._skip:
            self._cell.append(data)


def without_word_spans(html: str) -> str:
    """The page with its table headers' Korean words out of their no-wrap spans (the text as
    written)."""
    return re.sub(r'<span class="kw">([^<]*)</span>', r"\1", html)


def html_tables(html: str) -> dict[str, list[list[str]]]:
    """Each table's body rows (cells' text; header rows of ``th`` cells left out), by table id."""
    page = _Page()
    page.feed(html)
    return page.tables


def html_fields(html: str) -> dict[str, list[str]]:
    """The text of every element with a ``data-field`` attribute, by field, in page order."""
    page = _Page()
    page.feed(html)
    return dict(page.fields)


def pdf_text(content: bytes) -> str:
    """The PDF's text as laid out (``pdftotext -layout``)."""
    exe = shutil.which("pdftotext")
    assert exe, "pdftotext (poppler-utils) is needed"
    done = subprocess.run([exe, "-layout", "-", "-"], input=content, capture_output=True, check=True)
    return done.stdout.decode("utf-8")


def xlsx_values(content: bytes) -> Any:
    """The workbook with its cached values (what a reader without a calculation engine sees)."""
    return openpyxl.load_workbook(io.BytesIO(content), data_only=True)


def xlsx_rows(content: bytes, sheet: str) -> list[list[Any]]:
    return [list(row) for row in xlsx_values(content)[sheet].iter_rows(values_only=True)]


PERCENT = re.compile(r"[+\-−]?\d+(?:\.\d+)?\s?%")


def percents_in(text: str) -> list[str]:
    """Every percentage written in ``text``, spaces dropped and − read as -, in order."""
    return [p.replace(" ", "").replace("−", "-") for p in PERCENT.findall(text)]


def section_text(text: str, heading: str, next_heading: str) -> str:
    """The part of a PDF's text from ``heading`` to ``next_heading`` (both must be there)."""
    start = text.index(heading)
    return text[start : text.index(next_heading, start)]


def ran_rows(rows: list[list[Any]]) -> list[list[Any]]:
    """Rows with at least one value."""
    return [row for row in rows if any(v not in (None, "") for v in row)]


def read(path: Path) -> bytes:
    return path.read_bytes()
