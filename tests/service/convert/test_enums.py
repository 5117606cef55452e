"""Enum tables: every domain value has its proto number, and back."""

from __future__ import annotations

from typing import Any

import pytest

from api.fleetplan.v1 import common_pb2, scenario_pb2
from pricebook.schema import OfferKind
from service.convert import enums
from solver import domain


@pytest.mark.parametrize(
    ("from_proto", "to_proto", "values"),
    [
        (enums.PRECISION_FROM_PROTO, enums.PRECISION_TO_PROTO, domain.Precision),
        (enums.ENGINE_FROM_PROTO, enums.ENGINE_TO_PROTO, domain.Engine),
        (enums.MODE_FROM_PROTO, enums.MODE_TO_PROTO, domain.AcquisitionMode),
        (enums.METHOD_FROM_PROTO, enums.METHOD_TO_PROTO, domain.TrainingMethod),
        (enums.OFFER_KIND_FROM_PROTO, enums.OFFER_KIND_TO_PROTO, OfferKind),
    ],
)
def test_every_domain_value_round_trips(
    from_proto: dict[Any, Any], to_proto: dict[Any, Any], values: Any
) -> None:
    assert set(from_proto.values()) == set(values)
    assert all(from_proto[to_proto[v]] == v for v in values)
    assert 0 not in from_proto  # UNSPECIFIED = "use the default"


def test_the_backend_table_covers_the_domain_literal() -> None:
    backends = set(domain.SolverOptions.model_fields["backend"].annotation.__args__)
    assert set(enums.BACKEND_FROM_PROTO.values()) == backends
    assert enums.BACKEND_TO_PROTO["auto"] == scenario_pb2.SOLVER_BACKEND_UNSPECIFIED


def test_unknown_precision_strings_are_unspecified() -> None:
    assert enums.precision_to_proto("fp8") == common_pb2.PRECISION_FP8
    assert enums.precision_to_proto("fp3") == common_pb2.PRECISION_UNSPECIFIED
