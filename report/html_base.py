"""The pieces every part of the quote page is made of: escaped text, tables (cells may carry a
``data-field`` name that tests read back), sections, notes, bullet lists, charts."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from html import escape
from typing import Any

from report.labels import Language, label

Cell = Any
"""Escaped cell text (str), or (escaped text, the cell's ``data-field`` name)."""


HANGUL_WORD = re.compile(r"[^\s<>]*[\uac00-\ud7a3][^\s<>]*")
"""A word (between spaces, outside tags) with a Hangul syllable in it."""


def e(text: object) -> str:
    return escape(str(text))


def keep_words(escaped: str) -> str:
    """Each Korean word of ``escaped`` kept on one line (a ``kw`` span, no wrap inside): WeasyPrint
    breaks Hangul between any two syllables and knows no ``word-break: keep-all``."""
    return HANGUL_WORD.sub(lambda m: f'<span class="kw">{m.group()}</span>', escaped)


def table(
    headers: Sequence[str], rows: Iterable[Sequence[Cell]], table_id: str, foot: Sequence[Sequence[Cell]] = ()
) -> str:
    def cells(row: Sequence[Cell], tag: str) -> str:
        out = []
        for cell in row:
            text, field = cell if isinstance(cell, tuple) else (cell, "")
            attr = f' data-field="{field}"' if field else ""
            out.append(f"<{tag}{attr}>{text}</{tag}>")
        return "<tr>" + "".join(out) + "</tr>"

    head = "".join(f"<th>{keep_words(e(h))}</th>" for h in headers)
    body = "".join(cells(r, "td") for r in rows)
    tfoot = "<tfoot>" + "".join(cells(r, "td") for r in foot) + "</tfoot>" if foot else ""
    return f'<table id="{table_id}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody>{tfoot}</table>'


def section(key: str, section_id: str, body: str, lang: Language) -> str:
    return f'<section id="{section_id}"><h2>{e(label(key, lang))}</h2>{body}</section>'


def numbered(section_html: str, prefix: str) -> str:
    """The section with ``prefix`` (``3. `` or ``부록 1. ``) before its heading."""
    return section_html.replace("<h2>", f"<h2>{e(prefix)}", 1)


def note(text: str) -> str:
    return f'<p class="note">{e(text)}</p>'


def bullets(key: str, items: Iterable[str], lang: Language) -> str:
    return f"<h3>{e(label(key, lang))}</h3><ul>" + "".join(f"<li>{e(i)}</li>" for i in items) + "</ul>"


def chart(chart_id: str, svg: str, caption: str) -> str:
    return f'<figure class="chart" id="chart-{chart_id}">{svg}<figcaption>{e(caption)}</figcaption></figure>'


def facts(items: Iterable[tuple[str, str, str]], css_class: str = "") -> str:
    """A definition list of (label, escaped value, data-field or "")."""
    rows = "".join(
        f"<dt>{e(k)}</dt><dd" + (f' data-field="{f}"' if f else "") + f">{v}</dd>" for k, v, f in items
    )
    attr = f' class="{css_class}"' if css_class else ""
    return f"<dl{attr}>{rows}</dl>"
