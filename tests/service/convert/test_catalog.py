"""ListCatalog: the requested kinds only (all when none), each entry with its source."""

from __future__ import annotations

import pytest

from api.fleetplan.v1 import catalog_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from pricebook.schema import Pricebook
from service.convert.catalog import catalog_kinds_from_proto, catalog_to_proto
from solver.errors import InvalidRequest


def test_all_kinds_when_none_are_asked(book: Pricebook) -> None:
    out = catalog_to_proto(book, ())
    assert (len(out.gpus), len(out.servers), len(out.offers)) == (
        len(book.gpus),
        len(book.servers),
        len(book.offers),
    )
    assert (len(out.api_prices), len(out.models)) == (len(book.api_prices), len(book.models))
    assert out.HasField("site")
    assert all(g.source.as_of_date for g in out.gpus)


def test_only_the_requested_kinds(book: Pricebook) -> None:
    kinds = catalog_kinds_from_proto(api.ListCatalogRequest(kinds=[catalog_pb2.CATALOG_KIND_GPU]))
    out = catalog_to_proto(book, kinds)
    assert kinds == ("gpu",)
    assert len(out.gpus) == len(book.gpus)
    assert not out.servers and not out.models and not out.HasField("site")


def test_an_unknown_kind_is_named() -> None:
    with pytest.raises(InvalidRequest) as info:
        catalog_kinds_from_proto(api.ListCatalogRequest(kinds=[99]))
    assert [(v.field, v.reason) for v in info.value.violations] == [("kinds[0]", "unknown value 99")]


def test_rental_only_gpus_say_so(book: Pricebook) -> None:
    out = catalog_to_proto(book, ())
    flagged = sorted(g.id for g in out.gpus if g.rental_only)
    assert flagged == sorted(g.id for g in book.gpus if g.rental_only) == ["gb200", "gb300"]
