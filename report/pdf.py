"""The quote as PDF: the HTML page laid out by WeasyPrint (a real CSS paged-media engine, A4, the
print rules of ``quote.css``). Fonts come from the system through fontconfig — Debian's
``fonts-noto-cjk`` for Hangul — and WeasyPrint embeds the subset the document uses."""

from __future__ import annotations

import logging

from weasyprint import HTML

from report.data import QuoteData
from report.html import render_html
from report.labels import Language

# WeasyPrint logs every CSS property it does not know at WARNING; the page has none, and the
# service's logs should not carry a layout engine's chatter.
logging.getLogger("weasyprint").setLevel(logging.ERROR)
logging.getLogger("fontTools").setLevel(logging.ERROR)


def render_pdf(quote: QuoteData, lang: Language) -> bytes:
    document = HTML(string=render_html(quote, lang), base_url=None)
    pdf = document.write_pdf()
    if pdf is None:  # only when a target is given
        msg = "WeasyPrint returned no PDF"
        raise RuntimeError(msg)
    return bytes(pdf)
