"""A small evaluator of the workbook's formulas (cell references across sheets, ranges, SUM,
SUMPRODUCT, ROUND, POWER, + − × ÷), so a test can edit a cell and see what follows — what Excel or
LibreOffice would compute, without either."""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from openpyxl.utils import get_column_letter
from openpyxl.utils.cell import column_index_from_string, coordinate_from_string

REF = r"(?:'((?:[^']|'')+)'!|([A-Za-z_][\w]*)!)?\$?([A-Z]{1,3})\$?(\d+)"
RANGE = re.compile(REF + r":\$?([A-Z]{1,3})\$?(\d+)")
CELL = re.compile(REF)


def _round(value: float, digits: float) -> float:
    """Excel's ROUND: half away from zero."""
    quantum = Decimal(1).scaleb(-int(digits))
    d = Decimal(repr(value))
    rounded = abs(d).quantize(quantum, rounding=ROUND_HALF_UP)
    return float(rounded if d >= 0 else -rounded)


class Evaluator:
    """Values of a workbook loaded with formulas (``data_only=False``); ``overrides`` replace cells."""

    def __init__(self, book: Any) -> None:
        self.book = book
        self.overrides: dict[tuple[str, str], float] = {}

    def set(self, sheet: str, coordinate: str, value: float) -> None:
        self.overrides[(sheet, coordinate)] = value

    def value(self, sheet: str, coordinate: str) -> float:
        if (sheet, coordinate) in self.overrides:
            return self.overrides[(sheet, coordinate)]
        raw = self.book[sheet][coordinate].value
        if isinstance(raw, str) and raw.startswith("="):
            return self.formula(sheet, raw[1:])
        return float(raw or 0)

    def _range(self, sheet: str, first: str, last: str) -> list[float]:
        col1, row1 = coordinate_from_string(first)
        col2, row2 = coordinate_from_string(last)
        c1, c2 = column_index_from_string(col1), column_index_from_string(col2)
        return [
            self.value(sheet, f"{get_column_letter(c)}{r}")
            for r in range(row1, row2 + 1)
            for c in range(c1, c2 + 1)
        ]

    def formula(self, sheet: str, text: str) -> float:
        ranges: list[list[float]] = []
        cells: list[float] = []

        def sheet_of(quoted: str | None, bare: str | None) -> str:
            return quoted.replace("''", "'") if quoted else bare or sheet

        def range_(m: re.Match[str]) -> str:
            ranges.append(self._range(sheet_of(m[1], m[2]), f"{m[3]}{m[4]}", f"{m[5]}{m[6]}"))
            return f"_R[{len(ranges) - 1}]"

        def cell(m: re.Match[str]) -> str:
            cells.append(self.value(sheet_of(m[1], m[2]), f"{m[3]}{m[4]}"))
            return f"_C[{len(cells) - 1}]"

        expression = CELL.sub(cell, RANGE.sub(range_, text))
        functions: dict[str, Callable[..., float]] = {
            "SUM": lambda *xs: sum(sum(x) if isinstance(x, list) else x for x in xs),
            "SUMPRODUCT": lambda a, b: sum(x * y for x, y in zip(a, b, strict=True)),
            "ROUND": _round,
            "POWER": lambda base, exponent: base**exponent,
        }
        return float(eval(expression, {"__builtins__": {}}, {"_R": ranges, "_C": cells, **functions}))
