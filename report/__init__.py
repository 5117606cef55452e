"""Bid-ready quotes of a plan: HTML, PDF and XLSX, in English or Korean (issue 17).

Fed by the plan's domain objects, never by protobuf: ``build_quote(PlanResult, ResolvedRequest,
...)`` makes one JSON-serialisable ``QuoteData``; ``render(quote, ReportFormat, Language)`` turns it
into a ``Document`` (bytes, media type, file name). A stored ``QuoteData`` renders again without
re-planning. Layers: above ``solver`` and ``pricebook``, below ``service`` and ``clients``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from report.build import build_quote
    from report.data import QuoteData
    from report.document import Document, ReportFormat, render
    from report.labels import Language

__all__ = ["Document", "Language", "QuoteData", "ReportFormat", "build_quote", "render"]

_HOMES = {
    "build_quote": "report.build",
    "QuoteData": "report.data",
    "Document": "report.document",
    "ReportFormat": "report.document",
    "render": "report.document",
    "Language": "report.labels",
}
"""Where each name lives: loaded on first use, so that importing ``report.text`` (the CLI's
tables) does not load the quote builder, the solver and the pricebook (issue 31)."""


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'report' has no attribute {name!r}")
