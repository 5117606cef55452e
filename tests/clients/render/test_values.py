"""clients.render.values: money, enum names and the provenance line."""

from __future__ import annotations

from api.fleetplan.v1 import common_pb2
from clients.render.values import money, precision_name, render_provenance


def test_money_rounds_won_and_large_amounts_to_whole_units() -> None:
    assert money(common_pb2.Money(amount="1234.56", currency_code="USD")) == "1,235 USD"
    assert money(common_pb2.Money(amount="12.346", currency_code="USD")) == "12.35 USD"
    assert money(common_pb2.Money(amount="150.4", currency_code="KRW")) == "150 KRW"
    assert money(common_pb2.Money()) == "-"
    assert money(common_pb2.Money(amount="n/a", currency_code="USD")) == "n/a USD"


def test_an_unspecified_precision_reads_as_a_dash() -> None:
    assert precision_name(common_pb2.PRECISION_UNSPECIFIED) == "-"
    assert precision_name(common_pb2.PRECISION_FP8) == "fp8"


def test_provenance_names_pricebook_model_and_overrides() -> None:
    p = common_pb2.Provenance(
        pricebook_version="2026.12.0",
        pricebook_content_hash="0123456789abcdef0123",
        performance_model_version="analytic",
        overrides_applied=["offer x price"],
    )
    assert render_provenance(p) == (
        "\npricebook 2026.12.0 (sha256 0123456789abcdef…), performance model analytic"
        "\noverride applied: offer x price"
    )
