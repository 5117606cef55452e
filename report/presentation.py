"""Who a quote is for and how it is headed: set when a quote is exported (the same plan's quote
may go to the customer and to the bidder's own team), not when it is built."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict


class Audience(StrEnum):
    CUSTOMER = "customer"
    """The customer: only alternatives that meet the request, no internal sourcing; assumptions
    and provenance in annexes."""
    INTERNAL = "internal"
    """The bidder's team: everything, alternatives outside the requirement marked, and an annex
    with the internal sourcing of every bill-of-materials line."""


class QuoteHeader(BaseModel):
    """The header block of a quote (수신, 견적번호, 유효기간, 공급자 …); empty fields are left out."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    customer: str = ""
    quote_number: str = ""
    validity: str = ""
    delivery: str = ""
    payment_terms: str = ""
    supplier_name: str = ""
    supplier_registration_number: str = ""
    supplier_contact: str = ""
    supplier_representative: str = ""
    supplier_address: str = ""
