"""Proto enum numbers ↔ domain values of requests, every table derived by name (``by_name``).

Tables of result enums (plan status, limit fired, sweep axis) use the same ``by_name`` and live with
their message family (``plan``, ``sweep``), so encoding a request (the client) does not import the
optimizer.

UNSPECIFIED (0) is absent from the ``*_FROM_PROTO`` tables: it means "use the default", and the
converters decide what that is. A domain value without a proto counterpart fails at import, so the
two sides cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar, get_args

from api.fleetplan.v1 import catalog_pb2, common_pb2, performance_pb2, scenario_pb2
from pricebook import catalog as pb_catalog
from pricebook.schema import OfferKind, SiteModel
from solver import domain
from solver.perf import cases as perf_cases

_K = TypeVar("_K")
_V = TypeVar("_V")

SOLVER_BACKENDS: tuple[str, ...] = get_args(domain.SolverOptions.model_fields["backend"].annotation)
"""``domain.SolverOptions.backend`` values; "auto" is SOLVER_BACKEND_UNSPECIFIED, the others have a name."""
ESTIMATE_MODES: tuple[str, ...] = get_args(perf_cases.EstimateCase.model_fields["mode"].annotation)
"""``solver.perf.cases.EstimateCase.mode`` values; UNSPECIFIED is "infer"."""


def by_name(proto_enum: Any, prefix: str, values: Iterable[_V]) -> dict[Any, _V]:
    """Proto enum number → domain value, matched by name (``PRECISION_FP8`` ↔ ``fp8``)."""
    return {proto_enum.Value(f"{prefix}_{str(v).upper()}"): v for v in values}


def inverted(table: Mapping[_K, _V]) -> dict[_V, _K]:
    return {v: k for k, v in table.items()}


PRECISION_FROM_PROTO: dict[common_pb2.Precision.ValueType, domain.Precision] = by_name(
    common_pb2.Precision, "PRECISION", domain.Precision
)
PRECISION_TO_PROTO: dict[domain.Precision, common_pb2.Precision.ValueType] = inverted(PRECISION_FROM_PROTO)
ENGINE_FROM_PROTO: dict[common_pb2.Engine.ValueType, domain.Engine] = by_name(
    common_pb2.Engine, "ENGINE", domain.Engine
)
ENGINE_TO_PROTO: dict[domain.Engine, common_pb2.Engine.ValueType] = inverted(ENGINE_FROM_PROTO)
ARRIVAL_FROM_PROTO: dict[performance_pb2.Arrival.ValueType, domain.Arrival] = by_name(
    performance_pb2.Arrival, "ARRIVAL", domain.Arrival
)
MODE_FROM_PROTO: dict[common_pb2.AcquisitionMode.ValueType, domain.AcquisitionMode] = by_name(
    common_pb2.AcquisitionMode, "ACQUISITION_MODE", domain.AcquisitionMode
)
MODE_TO_PROTO: dict[domain.AcquisitionMode, common_pb2.AcquisitionMode.ValueType] = inverted(MODE_FROM_PROTO)
METHOD_FROM_PROTO: dict[common_pb2.TrainingMethod.ValueType, domain.TrainingMethod] = by_name(
    common_pb2.TrainingMethod, "TRAINING_METHOD", domain.TrainingMethod
)
METHOD_TO_PROTO: dict[domain.TrainingMethod, common_pb2.TrainingMethod.ValueType] = inverted(
    METHOD_FROM_PROTO
)
OFFER_KIND_FROM_PROTO: dict[scenario_pb2.OfferKind.ValueType, OfferKind] = by_name(
    scenario_pb2.OfferKind, "OFFER_KIND", OfferKind
)
OFFER_KIND_TO_PROTO: dict[OfferKind, scenario_pb2.OfferKind.ValueType] = inverted(OFFER_KIND_FROM_PROTO)
OFFER_POLICY_FROM_PROTO: dict[scenario_pb2.OfferPolicy.ValueType, domain.OfferPolicy] = by_name(
    scenario_pb2.OfferPolicy, "OFFER_POLICY", domain.OfferPolicy
)
OFFER_POLICY_TO_PROTO: dict[domain.OfferPolicy, scenario_pb2.OfferPolicy.ValueType] = inverted(
    OFFER_POLICY_FROM_PROTO
)
DEPLOYMENT_POLICY_FROM_PROTO: dict[scenario_pb2.DeploymentPolicy.ValueType, domain.DeploymentPolicy] = (
    by_name(scenario_pb2.DeploymentPolicy, "DEPLOYMENT_POLICY", domain.DeploymentPolicy)
)
DEPLOYMENT_POLICY_TO_PROTO: dict[domain.DeploymentPolicy, scenario_pb2.DeploymentPolicy.ValueType] = inverted(
    DEPLOYMENT_POLICY_FROM_PROTO
)
SITE_MODEL_FROM_PROTO: dict[scenario_pb2.SiteModel.ValueType, SiteModel] = by_name(
    scenario_pb2.SiteModel, "SITE_MODEL", SiteModel
)
SITE_MODEL_TO_PROTO: dict[SiteModel, scenario_pb2.SiteModel.ValueType] = inverted(SITE_MODEL_FROM_PROTO)
COST_OBJECTIVE_FROM_PROTO: dict[scenario_pb2.CostObjective.ValueType, domain.CostObjective] = by_name(
    scenario_pb2.CostObjective, "COST_OBJECTIVE", domain.CostObjective
)
COST_OBJECTIVE_TO_PROTO: dict[domain.CostObjective, scenario_pb2.CostObjective.ValueType] = inverted(
    COST_OBJECTIVE_FROM_PROTO
)
BACKEND_FROM_PROTO: dict[scenario_pb2.SolverBackend.ValueType, str] = {
    scenario_pb2.SOLVER_BACKEND_UNSPECIFIED: "auto",
    **by_name(scenario_pb2.SolverBackend, "SOLVER_BACKEND", (b for b in SOLVER_BACKENDS if b != "auto")),
}
BACKEND_TO_PROTO: dict[str, scenario_pb2.SolverBackend.ValueType] = inverted(BACKEND_FROM_PROTO)
CATALOG_KIND_FROM_PROTO: dict[catalog_pb2.CatalogKind.ValueType, str] = by_name(
    catalog_pb2.CatalogKind, "CATALOG_KIND", pb_catalog.CATALOG_KINDS
)
ISOLATION_FROM_PROTO: dict[scenario_pb2.Isolation.ValueType, domain.Isolation] = by_name(
    scenario_pb2.Isolation, "ISOLATION", domain.Isolation
)
ISOLATION_TO_PROTO: dict[domain.Isolation, scenario_pb2.Isolation.ValueType] = inverted(ISOLATION_FROM_PROTO)
QUANTILE_FROM_PROTO: dict[scenario_pb2.CapacityQuantile.ValueType, domain.CapacityQuantile] = by_name(
    scenario_pb2.CapacityQuantile, "CAPACITY_QUANTILE", domain.CapacityQuantile
)
QUANTILE_TO_PROTO: dict[domain.CapacityQuantile, scenario_pb2.CapacityQuantile.ValueType] = inverted(
    QUANTILE_FROM_PROTO
)
ESTIMATE_MODE_FROM_PROTO: dict[performance_pb2.EstimateMode.ValueType, str] = {
    performance_pb2.ESTIMATE_MODE_UNSPECIFIED: "infer",
    **by_name(performance_pb2.EstimateMode, "ESTIMATE_MODE", ESTIMATE_MODES),
}


def precision_to_proto(value: str) -> common_pb2.Precision.ValueType:
    """A precision string of the optimizer's candidates; anything unknown → UNSPECIFIED."""
    try:
        return PRECISION_TO_PROTO.get(domain.Precision(value), common_pb2.PRECISION_UNSPECIFIED)
    except ValueError:
        return common_pb2.PRECISION_UNSPECIFIED
