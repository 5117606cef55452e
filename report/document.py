"""A rendered quote: ``render(quote, format, language) -> Document`` (bytes, media type, file name)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from report.data import QuoteData
from report.labels import Language


class ReportFormat(StrEnum):
    """The file formats, by their file-name suffix."""

    HTML = "html"
    PDF = "pdf"
    XLSX = "xlsx"


MEDIA_TYPES = {
    ReportFormat.HTML: "text/html; charset=utf-8",
    ReportFormat.PDF: "application/pdf",
    ReportFormat.XLSX: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}


@dataclass(frozen=True, slots=True)
class Document:
    content: bytes
    media_type: str
    file_name: str


def file_name(quote: QuoteData, fmt: ReportFormat, lang: Language) -> str:
    """``quote-<title>-<date>-<lang>.<suffix>`` with the title reduced to safe characters."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", quote.title).strip("-.") or "plan"
    return f"quote-{stem}-{quote.quoted_on.isoformat()}-{lang.value}.{fmt.value}"


def render(quote: QuoteData, fmt: ReportFormat, lang: Language) -> Document:
    # Each renderer (matplotlib, WeasyPrint, XlsxWriter: seconds of imports) is imported by the first
    # quote in its format, so that a server or CLI that renders none starts without them.
    if fmt is ReportFormat.HTML:
        from report.html import render_html  # noqa: PLC0415 - see above

        content = render_html(quote, lang).encode("utf-8")
    elif fmt is ReportFormat.PDF:
        from report.pdf import render_pdf  # noqa: PLC0415 - see above

        content = render_pdf(quote, lang)
    else:
        from report.xlsx import render_xlsx  # noqa: PLC0415 - see above

        content = render_xlsx(quote, lang)
    return Document(content=content, media_type=MEDIA_TYPES[fmt], file_name=file_name(quote, fmt, lang))
