"""Bid-ready quotes of a plan: HTML, PDF and XLSX, in English or Korean (issue 17).

Fed by the plan's domain objects, never by protobuf: ``build_quote(PlanResult, ResolvedRequest,
...)`` makes one JSON-serialisable ``QuoteData``; ``render(quote, ReportFormat, Language)`` turns it
into a ``Document`` (bytes, media type, file name). A stored ``QuoteData`` renders again without
re-planning. Layers: above ``solver`` and ``pricebook``, below ``service`` and ``clients``.
"""

from report.build import build_quote
from report.data import QuoteData
from report.document import Document, ReportFormat, render
from report.labels import Language

__all__ = ["Document", "Language", "QuoteData", "ReportFormat", "build_quote", "render"]
