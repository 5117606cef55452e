"""Per-request pricebook overrides: replace an offer's price, add a vendor quote, change site
assumptions or the FX rate. The result is a new book with its own content hash, plus one sentence
per change so the response can say exactly what was applied.

Bad overrides raise ``InvalidRequest`` (``pricebook.errors``, re-exported by ``solver.errors``)
with field paths such as ``overrides.offers[0].offer_id`` or ``overrides.site.pue``.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from pricebook.catalog import gpu as find_gpu
from pricebook.catalog import model as find_model
from pricebook.errors import FieldViolation, InvalidRequest, UnknownEntryError
from pricebook.loader import check_offer_references, with_content_hash
from pricebook.money import OVERRIDE_SOURCE, usd_krw_override
from pricebook.schema import (
    ApiPrice,
    FxRate,
    GpuId,
    Money,
    Offer,
    OfferKind,
    Pricebook,
    PriceLabel,
    Provenance,
    SiteAssumptions,
)

MAX_FX_RATE = 1e6
"""Largest FX rate an override may state (KRW per USD is ~1,450; 1e300 overflowed the money math)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class OfferOverride(_Frozen):
    """Replace an offer's price (by id) or add a new offer (a vendor quote)."""

    offer_id: str
    kind: OfferKind | None = None
    gpu: GpuId | None = None
    server: str | None = None
    provider: str = "request override"
    price: Money
    term_months: int = 0
    label: PriceLabel = PriceLabel.QUOTE
    as_of: dt.date | None = None
    """Date of the quote; None = the day the request is served (give it for reproducible hashes)."""


class ApiPriceOverride(_Frozen):
    """A request's own per-token API price for a catalogue model (e.g. a vendor's contract rate); it
    is used for that model ahead of the book's API prices."""

    model_id: str
    """Catalogue model id or alias."""
    provider: str = "request override"
    input_per_mtok: Money
    output_per_mtok: Money
    as_of: dt.date | None = None

    @field_validator("input_per_mtok", "output_per_mtok")
    @classmethod
    def _not_negative(cls, value: Money) -> Money:
        if value.amount < 0:
            msg = f"must not be negative, got {value.amount}"
            raise ValueError(msg)
        return value


class PricebookOverrides(_Frozen):
    offers: tuple[OfferOverride, ...] = ()
    api_prices: tuple[ApiPriceOverride, ...] = ()
    site: dict[str, float | str | bool] = Field(default_factory=dict)
    """Site assumption field name → new value (e.g. ``{"pue": 1.3}``)."""
    fx_usd_krw: Annotated[float, Field(gt=0, le=MAX_FX_RATE)] | None = None


_SITE_NOT_OVERRIDABLE = frozenset(
    {"source", "as_of", "field_sources", "estimated_fields", "notes", "fx_rates", "residual_curves"}
)


class _Violation(Exception):
    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


def apply_overrides(
    book: Pricebook, overrides: PricebookOverrides, *, today: dt.date | None = None
) -> tuple[Pricebook, tuple[str, ...]]:
    """A copy of ``book`` with ``overrides`` applied, and what was applied in words.

    Every problem is collected (not just the first) and raised together as ``InvalidRequest``.
    ``today`` dates overrides that carry no date of their own (defaults to the current UTC day).
    """
    if (
        not overrides.offers
        and not overrides.site
        and overrides.fx_usd_krw is None
        and not overrides.api_prices
    ):
        return book, ()
    as_of = today or dt.datetime.now(dt.UTC).date()
    applied: list[str] = []
    violations: list[FieldViolation] = []

    offers = list(book.offers)
    for position, change in enumerate(overrides.offers):
        path = f"overrides.offers[{position}]"
        try:
            applied.append(_apply_offer(book, offers, change, as_of))
        except _Violation as bad:
            violations.append(FieldViolation(f"{path}.{bad.field}", bad.reason))

    api_prices = list(book.api_prices)
    for position, quote in enumerate(overrides.api_prices):
        try:
            api_prices.append(_api_price(book, quote, position, as_of))
            applied.append(
                f"API price for {api_prices[-1].model} from {quote.provider}: "
                f"{_money(quote.input_per_mtok)} in / {_money(quote.output_per_mtok)} out per 1M tokens"
            )
        except _Violation as bad:
            violations.append(FieldViolation(f"overrides.api_prices[{position}].{bad.field}", bad.reason))

    site = book.site
    for name, value in overrides.site.items():
        try:
            site, sentence = _apply_site(site, name, value, as_of)
            applied.append(sentence)
        except _Violation as bad:
            violations.append(FieldViolation(f"overrides.site.{bad.field}", bad.reason))

    if overrides.fx_usd_krw is not None:
        site, sentence = _apply_fx(site, overrides.fx_usd_krw, as_of)
        applied.append(sentence)

    if violations:
        raise InvalidRequest(violations)
    changed = book.model_copy(
        update={"offers": tuple(offers), "api_prices": tuple(api_prices), "site": site, "content_hash": ""}
    )
    return with_content_hash(changed), tuple(applied)


# --------------------------------------------------------------------------------------------
# Offers
# --------------------------------------------------------------------------------------------


def _apply_offer(book: Pricebook, offers: list[Offer], change: OfferOverride, as_of: dt.date) -> str:
    dated = change.as_of or as_of
    position = next((i for i, o in enumerate(offers) if o.id == change.offer_id), None)
    if position is None:
        return _add_offer(book, offers, change, dated)
    current = offers[position]
    gpu_id = _resolve_gpu(book, change.gpu) if change.gpu is not None else current.gpu
    for field, given, existing in (
        ("kind", change.kind, current.kind),
        ("gpu", gpu_id, current.gpu),
        ("server", change.server, current.server),
    ):
        if given is not None and given != existing:
            raise _Violation(
                field, f"offer {current.id!r} is {existing!r}; add a new offer id to quote {given!r}"
            )
    updates: dict[str, Any] = {
        "price": change.price,
        "label": change.label,
        "source": f"{_quoted_by(change)}; replaces: {current.source}",
        "as_of": dated,
        "estimated_fields": tuple(f for f in current.estimated_fields if f != "price"),
        "notes": f"Overridden by the request (was {_money(current.price)}, {current.as_of.isoformat()}).",
    }
    if change.term_months:
        updates["term_months"] = change.term_months
    replaced = _validated_offer(book, {**current.model_dump(), **updates})
    offers[position] = replaced
    return (
        f"offer {current.id}: price {_money(current.price)} → {_money(replaced.price)} ({change.label.value})"
    )


def _add_offer(book: Pricebook, offers: list[Offer], change: OfferOverride, as_of: dt.date) -> str:
    if change.kind is None or change.gpu is None:
        missing = "kind" if change.kind is None else "gpu"
        prefix = change.offer_id.split(".")[0]
        close = [o.id for o in offers if o.id.startswith(prefix + ".")][:3]
        hint = f" (existing offers for {prefix!r}: {', '.join(close)})" if close else ""
        raise _Violation(
            "offer_id" if change.kind is None and change.gpu is None else missing,
            f"unknown offer id {change.offer_id!r}{hint}; to add a new offer give kind and gpu",
        )
    gpu_id = _resolve_gpu(book, change.gpu)
    added = _validated_offer(
        book,
        {
            "id": change.offer_id,
            "kind": change.kind,
            "gpu": gpu_id,
            "server": change.server,
            "provider": change.provider,
            "price": change.price,
            "term_months": change.term_months,
            "label": change.label,
            "source": _quoted_by(change),
            "as_of": as_of,
        },
    )
    offers.append(added)
    where = f" in {added.server}" if added.server else ""
    term = f", {added.term_months}-month term" if added.term_months else ""
    return (
        f"added offer {added.id}: {added.kind.value} {added.gpu}{where} at {_money(added.price)}{term} "
        f"from {added.provider} ({added.label.value})"
    )


def _api_price(book: Pricebook, quote: ApiPriceOverride, position: int, as_of: dt.date) -> ApiPrice:
    try:
        model_id = find_model(book, quote.model_id).id
    except UnknownEntryError as exc:
        raise _Violation("model_id", str(exc)) from exc
    provider = quote.provider.strip() or OVERRIDE_SOURCE
    return ApiPrice(
        id=f"request.{position}",
        provider=provider,
        model=model_id,
        input_per_mtok=quote.input_per_mtok,
        output_per_mtok=quote.output_per_mtok,
        source=OVERRIDE_SOURCE if provider == OVERRIDE_SOURCE else f"{OVERRIDE_SOURCE} ({provider})",
        as_of=quote.as_of or as_of,
    )


def _quoted_by(change: OfferOverride) -> str:
    provider = change.provider.strip()
    return OVERRIDE_SOURCE if provider in ("", OVERRIDE_SOURCE) else f"{OVERRIDE_SOURCE} ({provider})"


def _resolve_gpu(book: Pricebook, key: str) -> str:
    try:
        return find_gpu(book, key).id
    except UnknownEntryError as exc:
        raise _Violation("gpu", str(exc)) from exc


def _validated_offer(book: Pricebook, data: dict[str, Any]) -> Offer:
    try:
        offer = Offer.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else "offer_id"
        raise _Violation("offer_id" if field == "id" else field, first["msg"]) from exc

    def error(field: str, reason: str) -> _Violation:
        return _Violation(field, reason)

    servers = {s.id: s for s in book.servers}
    rental_only = {g.id for g in book.gpus if g.rental_only}
    check_offer_references(offer, (g.id for g in book.gpus), servers, error, rental_only=rental_only)
    return offer


# --------------------------------------------------------------------------------------------
# Site and FX
# --------------------------------------------------------------------------------------------


def _apply_site(site: SiteAssumptions, name: str, value: Any, as_of: dt.date) -> tuple[SiteAssumptions, str]:
    if name not in SiteAssumptions.model_fields or name in _SITE_NOT_OVERRIDABLE:
        allowed = sorted(set(SiteAssumptions.model_fields) - _SITE_NOT_OVERRIDABLE)
        hint = " (use fx_usd_krw for the exchange rate)" if name == "fx_rates" else ""
        raise _Violation(name, f"not an overridable site assumption{hint}; one of: {', '.join(allowed)}")
    old = getattr(site, name)
    if isinstance(value, int | float) and not isinstance(value, bool):
        if isinstance(old, Money):
            value = {"amount": str(value), "currency": old.currency}  # a bare number keeps the currency
        elif old is None and "Money" in str(SiteAssumptions.model_fields[name].annotation):
            raise _Violation(name, f"give the currency, e.g. '{value:g} KRW' or '{value:g} USD'")
    data = site.model_dump()
    data[name] = value
    data["field_sources"] = {
        **data["field_sources"],
        name: Provenance(source=OVERRIDE_SOURCE, as_of=as_of).model_dump(),
    }
    data["estimated_fields"] = tuple(f for f in site.estimated_fields if f != name)
    try:
        updated = SiteAssumptions.model_validate(data)
    except ValidationError as exc:
        raise _Violation(name, exc.errors()[0]["msg"]) from exc
    new = getattr(updated, name)
    return updated, f"site.{name}: {_show(old)} → {_show(new)}"


def _apply_fx(site: SiteAssumptions, usd_krw: float, as_of: dt.date) -> tuple[SiteAssumptions, str]:
    override = usd_krw_override(usd_krw, as_of)
    kept: list[FxRate] = []
    previous: FxRate | None = None
    for rate in site.fx_rates:
        if {rate.base, rate.quote} == {"USD", "KRW"}:
            previous = rate
        else:
            kept.append(rate)
    updated = site.model_copy(update={"fx_rates": (*kept, override)})
    if previous is None:
        was = "none"
    else:
        per_usd = previous.rate if previous.base == "USD" else 1 / previous.rate
        was = f"{per_usd:g} ({previous.as_of.isoformat()})"
    return updated, f"FX USD→KRW: {was} → {usd_krw:g} ({OVERRIDE_SOURCE}, {as_of.isoformat()})"


def _money(money: Money) -> str:
    return f"{format(money.amount.normalize(), 'f')} {money.currency}"


def _show(value: Any) -> str:
    return _money(value) if isinstance(value, Money) else repr(value)
