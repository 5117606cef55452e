"""QuoteData is one JSON document: a stored quote validates back to the same object and renders the
same page, without re-planning (issue 18 stores it per plan)."""

from __future__ import annotations

from report_support import example

from report import Language, QuoteData, ReportFormat, render


def test_quote_json_round_trips_exactly() -> None:
    quote = example("500m_krw_portfolio").quote
    stored = quote.model_dump_json()
    again = QuoteData.model_validate_json(stored)
    assert again == quote
    assert again.model_dump_json() == stored
    # Money stays Decimal (a string in JSON), not a float that would lose a won.
    assert (
        again.economics is not None
        and again.economics.horizon_tco.amount == quote.economics.horizon_tco.amount
    )
    assert '"amount":"' in stored


def test_a_stored_quote_renders_the_same_page_and_workbook() -> None:
    quote = example("rtx5090_cluster").quote
    stored = QuoteData.model_validate_json(quote.model_dump_json())
    for fmt in (ReportFormat.HTML, ReportFormat.XLSX):
        for lang in Language:
            assert render(stored, fmt, lang).content == render(quote, fmt, lang).content


def test_file_name_and_media_type() -> None:
    quote = example("rtx5090_cluster").quote
    document = render(quote, ReportFormat.XLSX, Language.KO)
    assert document.file_name == "quote-rtx5090_cluster-2026-12-03-ko.xlsx"
    assert document.media_type.startswith("application/vnd.openxmlformats-officedocument.spreadsheetml")
    assert document.content[:2] == b"PK"
