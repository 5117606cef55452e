"""The ONLY place where protobuf messages and domain objects meet.

Requests: proto → plain dicts in the shape of ``solver.domain`` → pydantic validation. A
``pydantic.ValidationError`` is translated into ``solver.errors.InvalidRequest`` whose field paths
are *proto* paths (``workloads[2].inference.sla.ttft_p95_ms``), so the analyst sees the name they
wrote in their request, never an internal one. References to the pricebook (GPU ids, model ids)
are checked here too, with the closest ids as suggestions, and GPU aliases are resolved to ids.

Responses: domain results → proto messages (``plan_to_proto``, ``catalog_to_proto``, …).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, TypeVar

from google.protobuf import json_format
from google.protobuf.message import Message
from pydantic import BaseModel, ValidationError

from api.fleetplan.v1 import catalog_pb2, common_pb2, performance_pb2, plan_pb2, scenario_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from pricebook import catalog as pb_catalog
from pricebook.errors import UnknownEntryError
from pricebook.overrides import PricebookOverrides, apply_overrides
from pricebook.schema import Money, OfferKind, Pricebook, Sourced
from solver import domain, planner
from solver.analysis.tco import UnitCost
from solver.errors import FieldViolation, InvalidRequest
from solver.optimizer.instance import Bucket
from solver.optimizer.results import Assignment, Diagnosis, FleetSolution, SolverStats
from solver.units import HOURS_PER_DAY

_V = TypeVar("_V")

# --------------------------------------------------------------------------------------------
# Enum tables (proto number ↔ domain value); UNSPECIFIED maps to None = "use the default"
# --------------------------------------------------------------------------------------------

def _by_name(proto_enum: Any, prefix: str, values: Iterable[_V]) -> dict[Any, _V]:
    """Proto enum number → domain value, matched by name (``PRECISION_FP8`` ↔ ``fp8``). A domain
    value without a proto counterpart fails at import, so the two sides cannot drift apart."""
    return {proto_enum.Value(f"{prefix}_{str(v).upper()}"): v for v in values}


PRECISION_FROM_PROTO: dict[common_pb2.Precision.ValueType, domain.Precision] = _by_name(
    common_pb2.Precision, "PRECISION", domain.Precision
)
PRECISION_TO_PROTO: dict[domain.Precision, common_pb2.Precision.ValueType] = {
    v: k for k, v in PRECISION_FROM_PROTO.items()
}
ENGINE_FROM_PROTO: dict[int, domain.Engine] = _by_name(common_pb2.Engine, "ENGINE", domain.Engine)
ENGINE_TO_PROTO = {v: k for k, v in ENGINE_FROM_PROTO.items()}
MODE_FROM_PROTO: dict[common_pb2.AcquisitionMode.ValueType, domain.AcquisitionMode] = _by_name(
    common_pb2.AcquisitionMode, "ACQUISITION_MODE", domain.AcquisitionMode
)
MODE_TO_PROTO: dict[domain.AcquisitionMode, common_pb2.AcquisitionMode.ValueType] = {
    v: k for k, v in MODE_FROM_PROTO.items()
}
METHOD_FROM_PROTO: dict[int, domain.TrainingMethod] = _by_name(
    common_pb2.TrainingMethod, "TRAINING_METHOD", domain.TrainingMethod
)
METHOD_TO_PROTO = {v: k for k, v in METHOD_FROM_PROTO.items()}
OFFER_KIND_FROM_PROTO: dict[int, str] = _by_name(
    scenario_pb2.OfferKind, "OFFER_KIND", (k.value for k in OfferKind)
)
BACKEND_FROM_PROTO: dict[int, str] = {
    scenario_pb2.SOLVER_BACKEND_UNSPECIFIED: "auto",
    **_by_name(scenario_pb2.SolverBackend, "SOLVER_BACKEND", ("scip", "highs", "cp_sat")),
}
CATALOG_KIND_FROM_PROTO: dict[int, str] = _by_name(
    catalog_pb2.CatalogKind, "CATALOG_KIND", pb_catalog.CATALOG_KINDS
)

# Domain field name → proto field name, where they differ (names are unique enough to rename
# without context; everything else is spelled the same on both sides).
_PROTO_NAME: dict[str, str] = {
    "gpu": "gpu_id",
    "server": "server_id",
    "currency": "currency_code",
    "allowed_gpus": "allowed_gpu_ids",
    "owned": "owned_gpus",
    "site": "site_assumptions",
    "reference": "reference_gpu_hours",
    "interactive": "serving_kind",
    "overrides": "pricebook_overrides",
    "options": "solver_options",
}

_E = TypeVar("_E")
_M = TypeVar("_M", bound=BaseModel)


# --------------------------------------------------------------------------------------------
# Field paths
# --------------------------------------------------------------------------------------------


def join_path(*parts: str | int) -> str:
    """``("workloads", 2, "sla")`` → ``workloads[2].sla``."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part:
            out += f".{part}" if out else part
    return out


@dataclass(frozen=True, slots=True)
class PathMap:
    """Where the domain objects of one request came from in the proto request.

    ``inference_at[i]`` / ``training_at[j]`` are the indexes in the proto ``workloads`` list of
    the i-th inference and j-th training domain workload; ``prefix`` is prepended to every path
    (``base`` for a sweep's embedded plan request).
    """

    inference_at: tuple[int, ...] = ()
    training_at: tuple[int, ...] = ()
    prefix: str = ""

    def workload(self, kind: str, index: int) -> str:
        positions = self.inference_at if kind == "inference" else self.training_at
        proto_index = positions[index] if index < len(positions) else index
        return join_path(self.prefix, "workloads", proto_index)

    def to_proto(self, loc: Sequence[str | int]) -> str:
        """Translate a pydantic ``loc`` of a ``PlanRequest`` into a proto field path."""
        if not loc:
            return join_path(self.prefix, "workloads")
        head, rest = loc[0], list(loc[1:])
        if head in ("inference", "training") and rest and isinstance(rest[0], int):
            base = self.workload(str(head), rest[0])
            rest = rest[1:]
            if rest[:1] == ["name"]:
                return join_path(base, "name")
            return join_path(base, str(head), *_renamed(rest))
        if head in ("inference", "training"):
            return join_path(self.prefix, "workloads", *_renamed(rest))
        return join_path(self.prefix, *_renamed([head, *rest]))


def _renamed(loc: Iterable[str | int]) -> list[str | int]:
    return [part if isinstance(part, int) else _PROTO_NAME.get(part, part) for part in loc]


def _reason(error: Mapping[str, Any]) -> str:
    """A pydantic error in words an analyst understands."""
    kind = error.get("type", "")
    ctx = error.get("ctx") or {}
    value = error.get("input")
    shown = "0 or not set" if value in (0, 0.0, "", None) else repr(value)
    match kind:
        case "missing":
            return "is required"
        case "greater_than":
            return f"must be greater than {ctx.get('gt')} (got {shown})"
        case "greater_than_equal":
            return f"must be at least {ctx.get('ge')} (got {shown})"
        case "less_than":
            return f"must be less than {ctx.get('lt')} (got {shown})"
        case "less_than_equal":
            return f"must be at most {ctx.get('le')} (got {shown})"
        case "literal_error":
            return f"must be one of {ctx.get('expected')} (got {shown})"
        case "decimal_parsing" | "decimal_type":
            return f"must be a decimal number such as '500000000' or '3.99' (got {shown})"
        case "too_short":
            return f"needs at least {ctx.get('min_length')} item(s)"
        case "too_long":
            return f"allows at most {ctx.get('max_length')} item(s)"
        case "string_too_short":
            return "must not be empty"
        case "string_too_long":
            return f"must be at most {ctx.get('max_length')} characters"
        case "finite_number":
            return "must be a finite number"
        case "extra_forbidden":
            return "is not a known field"
        case "value_error":
            return str(error.get("msg", "")).removeprefix("Value error, ")
        case _:
            return str(error.get("msg", "invalid value"))


def violations_from(
    error: ValidationError, to_proto: Callable[[Sequence[str | int]], str]
) -> list[FieldViolation]:
    """One violation per bad field, paths translated by ``to_proto``."""
    seen: set[tuple[str, str]] = set()
    out: list[FieldViolation] = []
    errors = error.errors()
    deeper = [tuple(e["loc"]) for e in errors]
    for item in errors:
        loc_key = tuple(item["loc"])
        if item["type"] == "too_short" and any(
            len(d) > len(loc_key) and d[: len(loc_key)] == loc_key for d in deeper
        ):
            continue  # pydantic also calls a list "too short" when its only items are invalid
        loc = [p for p in item["loc"] if not (isinstance(p, str) and p.startswith("function-"))]
        path = to_proto(loc)
        reason = _reason(item)
        if (path, reason) not in seen:
            seen.add((path, reason))
            out.append(FieldViolation(path, reason))
    return out


def _validate(
    model: type[_M],
    data: Mapping[str, Any],
    to_proto: Callable[[Sequence[str | int]], str],
    violations: list[FieldViolation],
) -> _M | None:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        violations.extend(violations_from(exc, to_proto))
        return None


# --------------------------------------------------------------------------------------------
# Proto → domain dicts
# --------------------------------------------------------------------------------------------


class _Collector:
    """Conversion-time violations (unknown enum numbers, non-finite numbers) with their paths."""

    def __init__(self) -> None:
        self.violations: list[FieldViolation] = []

    def enum(self, table: Mapping[Any, _E], value: int, path: str, *, required: bool = False) -> _E | None:
        if value == 0:
            if required:
                self.violations.append(FieldViolation(path, "is required"))
            return None
        found = table.get(value)
        if found is None:
            self.violations.append(FieldViolation(path, f"unknown value {value}"))
        return found

    def number(self, value: float, path: str) -> float:
        if not math.isfinite(value):
            self.violations.append(FieldViolation(path, "must be a finite number"))
            return 0.0
        return value


def _opt(message: Message, name: str) -> Any:
    return getattr(message, name) if message.HasField(name) else None


def _put(out: dict[str, Any], key: str, value: Any) -> None:
    if value is not None:
        out[key] = value


def money_to_dict(message: common_pb2.Money) -> dict[str, Any]:
    return {"amount": message.amount.strip() or "0", "currency": message.currency_code.strip().upper()}


def _model_ref(ref: common_pb2.ModelRef, col: _Collector, path: str) -> dict[str, Any]:
    which = ref.WhichOneof("source")
    if which == "model_id":
        return {"model_id": ref.model_id}
    if which == "spec":
        spec = ref.spec
        out: dict[str, Any] = {"params_b": col.number(spec.params_b, join_path(path, "spec", "params_b"))}
        for name in (
            "active_params_b",
            "layers",
            "hidden",
            "intermediate",
            "heads",
            "kv_heads",
            "head_dim",
            "vocab",
            "experts",
            "experts_per_token",
            "kv_lora_rank",
            "max_context",
        ):
            _put(out, name, _opt(spec, name))
        return {"spec": out}
    return {}


def _inference(msg: scenario_pb2.InferenceWorkload, col: _Collector, path: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "input_tokens": msg.input_tokens,
        "output_tokens": msg.output_tokens,
        "prefix_cache_hit_rate": col.number(
            msg.prefix_cache_hit_rate, join_path(path, "prefix_cache_hit_rate")
        ),
        "redundancy": msg.redundancy,
    }
    if msg.HasField("model"):
        out["model"] = _model_ref(msg.model, col, join_path(path, "model"))
    _put(out, "precision", col.enum(PRECISION_FROM_PROTO, msg.precision, join_path(path, "precision")))
    _put(
        out, "kv_precision", col.enum(PRECISION_FROM_PROTO, msg.kv_precision, join_path(path, "kv_precision"))
    )
    _put(out, "engine", col.enum(ENGINE_FROM_PROTO, msg.engine, join_path(path, "engine")))
    demand = msg.WhichOneof("demand")
    if demand == "daily_tokens":
        out["daily_tokens"] = msg.daily_tokens
    elif demand == "peak_request_rate_per_s":
        out["peak_request_rate_per_s"] = col.number(
            msg.peak_request_rate_per_s, join_path(path, "peak_request_rate_per_s")
        )
    _put(out, "peak_to_average", _opt(msg, "peak_to_average"))
    if msg.hourly_profile:
        out["hourly_profile"] = tuple(
            col.number(v, join_path(path, "hourly_profile", i)) for i, v in enumerate(msg.hourly_profile)
        )
    if msg.HasField("sla"):
        sla: dict[str, Any] = {}
        for name in ("ttft_p95_ms", "tpot_p95_ms", "min_per_user_tok_s"):
            value = _opt(msg.sla, name)
            _put(sla, name, None if value is None else col.number(value, join_path(path, "sla", name)))
        out["sla"] = sla
    kind = msg.serving_kind
    if kind == scenario_pb2.SERVING_KIND_BATCH:
        out["interactive"] = False
    elif kind not in (scenario_pb2.SERVING_KIND_UNSPECIFIED, scenario_pb2.SERVING_KIND_INTERACTIVE):
        col.violations.append(FieldViolation(join_path(path, "serving_kind"), f"unknown value {kind}"))
    return out


def _training(msg: scenario_pb2.TrainingWorkload, col: _Collector, path: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if msg.HasField("model"):
        out["model"] = _model_ref(msg.model, col, join_path(path, "model"))
    method = col.enum(METHOD_FROM_PROTO, msg.method, join_path(path, "method"), required=True)
    _put(out, "method", method)
    demand = msg.WhichOneof("demand")
    if demand == "tokens_per_run":
        out["tokens_per_run"] = col.number(msg.tokens_per_run, join_path(path, "tokens_per_run"))
    elif demand == "reference_gpu_hours":
        ref = msg.reference_gpu_hours
        out["reference"] = {
            "gpu": ref.gpu_id,
            "gpu_hours_per_month": col.number(
                ref.gpu_hours_per_month, join_path(path, "reference_gpu_hours", "gpu_hours_per_month")
            ),
        }
    _put(out, "runs_per_month", _opt(msg, "runs_per_month"))
    _put(out, "seq_len", _opt(msg, "seq_len"))
    _put(out, "deadline_hours", _opt(msg, "deadline_hours"))
    _put(out, "max_gpus_per_run", _opt(msg, "max_gpus_per_run"))
    return out


def _constraints(msg: scenario_pb2.Constraints, col: _Collector, path: str) -> dict[str, Any]:
    out: dict[str, Any] = {"include_vat": msg.include_vat}
    if msg.currency_code:
        out["currency"] = msg.currency_code.strip().upper()
    _put(out, "horizon_months", _opt(msg, "horizon_months"))
    if msg.HasField("capex_budget"):
        out["capex_budget"] = money_to_dict(msg.capex_budget)
    if msg.HasField("monthly_opex_cap"):
        out["monthly_opex_cap"] = money_to_dict(msg.monthly_opex_cap)
    _put(out, "power_cap_kw", _opt(msg, "power_cap_kw"))
    _put(out, "rack_units_cap", _opt(msg, "rack_units_cap"))
    if msg.allowed_gpu_ids:
        out["allowed_gpus"] = tuple(msg.allowed_gpu_ids)
    if msg.allowed_modes:
        modes = [
            col.enum(MODE_FROM_PROTO, m, join_path(path, "allowed_modes", i), required=True)
            for i, m in enumerate(msg.allowed_modes)
        ]
        out["allowed_modes"] = tuple(m for m in modes if m is not None)
    out["owned"] = tuple({"gpu": o.gpu_id, "count": o.count} for o in msg.owned_gpus)
    bounds = []
    for b in msg.count_bounds:
        bound: dict[str, Any] = {"gpu": b.gpu_id}
        _put(bound, "min_count", _opt(b, "min_count"))
        _put(bound, "max_count", _opt(b, "max_count"))
        bounds.append(bound)
    out["count_bounds"] = tuple(bounds)
    _put(out, "include_host_costs", _opt(msg, "include_host_costs"))
    return out


def _overrides(msg: scenario_pb2.PricebookOverrides, col: _Collector, path: str) -> dict[str, Any]:
    offers = []
    for i, o in enumerate(msg.offers):
        offer: dict[str, Any] = {"offer_id": o.offer_id, "term_months": o.term_months}
        _put(offer, "kind", col.enum(OFFER_KIND_FROM_PROTO, o.kind, join_path(path, "offers", i, "kind")))
        _put(offer, "gpu", o.gpu_id or None)
        _put(offer, "server", o.server_id or None)
        _put(offer, "provider", o.provider or None)
        if o.HasField("price"):
            offer["price"] = money_to_dict(o.price)
        offers.append(offer)
    out: dict[str, Any] = {"offers": tuple(offers)}
    if msg.HasField("site_assumptions"):
        out["site"] = json_format.MessageToDict(msg.site_assumptions)
    _put(out, "fx_usd_krw", _opt(msg, "fx_usd_krw"))
    return out


def _options(msg: scenario_pb2.SolverOptions, col: _Collector, path: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in ("time_limit_s", "relative_gap", "compute_baselines", "compute_sensitivity"):
        _put(out, name, _opt(msg, name))
    backend = BACKEND_FROM_PROTO.get(msg.backend)
    if backend is None:
        col.violations.append(FieldViolation(join_path(path, "backend"), f"unknown value {msg.backend}"))
    else:
        out["backend"] = backend
    return out


def _scenario(
    workloads: Sequence[scenario_pb2.Workload],
    *,
    constraints: scenario_pb2.Constraints | None,
    overrides: scenario_pb2.PricebookOverrides | None,
    options: scenario_pb2.SolverOptions | None,
    col: _Collector,
    prefix: str,
) -> tuple[dict[str, Any], PathMap]:
    inference: list[dict[str, Any]] = []
    training: list[dict[str, Any]] = []
    inference_at: list[int] = []
    training_at: list[int] = []
    for index, workload in enumerate(workloads):
        path = join_path(prefix, "workloads", index)
        kind = workload.WhichOneof("kind")
        if kind == "inference":
            item = _inference(workload.inference, col, join_path(path, "inference"))
            item["name"] = workload.name
            inference.append(item)
            inference_at.append(index)
        elif kind == "training":
            item = _training(workload.training, col, join_path(path, "training"))
            item["name"] = workload.name
            training.append(item)
            training_at.append(index)
        else:
            col.violations.append(FieldViolation(path, "set exactly one of inference and training"))
    data: dict[str, Any] = {"inference": tuple(inference), "training": tuple(training)}
    if constraints is not None:
        data["constraints"] = _constraints(constraints, col, join_path(prefix, "constraints"))
    if overrides is not None:
        data["overrides"] = _overrides(overrides, col, join_path(prefix, "pricebook_overrides"))
    if options is not None:
        data["options"] = _options(options, col, join_path(prefix, "solver_options"))
    return data, PathMap(tuple(inference_at), tuple(training_at), prefix)


def _raise_if(violations: list[FieldViolation]) -> None:
    """Raise one violation per field path (the first, most specific reason found for it)."""
    if violations:
        first: dict[str, FieldViolation] = {}
        for v in violations:
            first.setdefault(v.field, v)
        raise InvalidRequest(list(first.values()))


# --------------------------------------------------------------------------------------------
# Pricebook references: unknown ids become field violations; GPU aliases become ids
# --------------------------------------------------------------------------------------------


def _unknown(exc: UnknownEntryError) -> str:
    kind = exc.kind.upper() if exc.kind == "gpu" else exc.kind
    hint = f"; did you mean {', '.join(exc.suggestions)}?" if exc.suggestions else ""
    return f"unknown {kind} {exc.key!r} (not in the pricebook{hint}); see `fleetplan catalog`"


@dataclass
class _Refs:
    book: Pricebook
    violations: list[FieldViolation] = field(default_factory=list)

    def gpu(self, key: str, path: str) -> str:
        try:
            return pb_catalog.gpu(self.book, key).id
        except UnknownEntryError as exc:
            self.violations.append(FieldViolation(path, _unknown(exc)))
            return key

    def model(self, ref: domain.ModelRef, path: str) -> None:
        if ref.model_id is not None:
            try:
                pb_catalog.model(self.book, ref.model_id)
            except UnknownEntryError as exc:
                self.violations.append(FieldViolation(join_path(path, "model_id"), _unknown(exc)))


def _resolve_references(
    request: domain.PlanRequest, paths: PathMap, book: Pricebook, violations: list[FieldViolation]
) -> domain.PlanRequest:
    refs = _Refs(book)
    for i, w in enumerate(request.inference):
        refs.model(w.model, join_path(paths.workload("inference", i), "inference", "model"))
    training = []
    for j, t in enumerate(request.training):
        base = join_path(paths.workload("training", j), "training")
        refs.model(t.model, join_path(base, "model"))
        if t.reference is not None:
            gpu = refs.gpu(t.reference.gpu, join_path(base, "reference_gpu_hours", "gpu_id"))
            training.append(t.model_copy(update={"reference": t.reference.model_copy(update={"gpu": gpu})}))
        else:
            training.append(t)
    c = request.constraints
    cpath = join_path(paths.prefix, "constraints")
    constraints = c.model_copy(
        update={
            "allowed_gpus": tuple(
                refs.gpu(g, join_path(cpath, "allowed_gpu_ids", i)) for i, g in enumerate(c.allowed_gpus)
            ),
            "owned": tuple(
                o.model_copy(update={"gpu": refs.gpu(o.gpu, join_path(cpath, "owned_gpus", i, "gpu_id"))})
                for i, o in enumerate(c.owned)
            ),
            "count_bounds": tuple(
                b.model_copy(update={"gpu": refs.gpu(b.gpu, join_path(cpath, "count_bounds", i, "gpu_id"))})
                for i, b in enumerate(c.count_bounds)
            ),
        }
    )
    opath = join_path(paths.prefix, "pricebook_overrides", "offers")
    offers = []
    for i, offer in enumerate(request.overrides.offers):
        if offer.gpu is not None:
            offers.append(
                offer.model_copy(update={"gpu": refs.gpu(offer.gpu, join_path(opath, i, "gpu_id"))})
            )
        else:
            offers.append(offer)
    violations.extend(refs.violations)
    return request.model_copy(
        update={
            "training": tuple(training),
            "constraints": constraints,
            "overrides": request.overrides.model_copy(update={"offers": tuple(offers)}),
        }
    )


# --------------------------------------------------------------------------------------------
# Public request converters
# --------------------------------------------------------------------------------------------


def _plan_request(
    workloads: Sequence[scenario_pb2.Workload],
    *,
    constraints: scenario_pb2.Constraints | None,
    overrides: scenario_pb2.PricebookOverrides | None,
    options: scenario_pb2.SolverOptions | None,
    book: Pricebook,
    prefix: str = "",
) -> tuple[domain.PlanRequest, PathMap]:
    col = _Collector()
    data, paths = _scenario(
        workloads, constraints=constraints, overrides=overrides, options=options, col=col, prefix=prefix
    )
    violations = list(col.violations)
    request = _validate(domain.PlanRequest, data, paths.to_proto, violations)
    if request is not None and not violations:
        request = _resolve_references(request, paths, book, violations)
    if request is not None and not violations:
        violations.extend(_override_violations(request, paths, book))
    _raise_if(violations)
    assert request is not None  # no violations ⇒ validated
    return request, paths


def parse_path(path: str) -> list[str | int]:
    """``overrides.offers[0].gpu`` → ``["overrides", "offers", 0, "gpu"]``."""
    loc: list[str | int] = []
    for part in path.split("."):
        name, *indexes = part.split("[")
        if name:
            loc.append(name)
        loc.extend(int(i.rstrip("]")) for i in indexes)
    return loc


def _override_violations(
    request: domain.PlanRequest, paths: PathMap, book: Pricebook
) -> list[FieldViolation]:
    """Apply the request's pricebook overrides once here, so a bad one (unknown offer, a site field
    that does not exist, a negative price) is refused with its proto path before any solve."""
    if request.overrides == PricebookOverrides():
        return []
    try:
        apply_overrides(book, request.overrides)
    except InvalidRequest as exc:
        return [FieldViolation(paths.to_proto(parse_path(v.field)), v.reason) for v in exc.violations]
    return []


def path_map(workloads: Sequence[scenario_pb2.Workload], prefix: str = "") -> PathMap:
    """Where each domain workload of a request sits in its proto ``workloads`` list."""
    kinds = [w.WhichOneof("kind") for w in workloads]
    return PathMap(
        tuple(i for i, k in enumerate(kinds) if k == "inference"),
        tuple(i for i, k in enumerate(kinds) if k == "training"),
        prefix,
    )


_DOMAIN_ROOTS = ("inference", "training", "constraints", "overrides", "options")


def domain_violations_to_proto(error: InvalidRequest, paths: PathMap) -> InvalidRequest:
    """An ``InvalidRequest`` raised inside the domain (paths like ``overrides.site.pue`` or
    ``inference[1].sla``) with the request's proto paths instead."""
    return InvalidRequest(
        [
            FieldViolation(
                paths.to_proto(parse_path(v.field)) if v.field.startswith(_DOMAIN_ROOTS) else v.field,
                v.reason,
            )
            for v in error.violations
        ]
    )


def plan_request_from_proto(
    message: api.PlanFleetRequest, book: Pricebook, prefix: str = ""
) -> domain.PlanRequest:
    """A validated ``PlanRequest``; raises ``InvalidRequest`` with proto field paths."""
    return _plan_request(
        message.workloads,
        constraints=message.constraints if message.HasField("constraints") else None,
        overrides=message.pricebook_overrides if message.HasField("pricebook_overrides") else None,
        options=message.solver_options if message.HasField("solver_options") else None,
        book=book,
        prefix=prefix,
    )[0]


def fleet_from_proto(message: scenario_pb2.Fleet, book: Pricebook, path: str = "fleet") -> domain.Fleet:
    col = _Collector()
    items = []
    refs = _Refs(book)
    for i, item in enumerate(message.items):
        entry: dict[str, Any] = {
            "gpu": refs.gpu(item.gpu_id, join_path(path, "items", i, "gpu_id")) if item.gpu_id else "",
            "count": item.count,
            "owned": item.owned,
        }
        _put(
            entry,
            "mode",
            col.enum(MODE_FROM_PROTO, item.mode, join_path(path, "items", i, "mode"), required=True),
        )
        items.append(entry)
    violations = [*col.violations, *refs.violations]
    fleet = _validate(
        domain.Fleet, {"items": tuple(items)}, lambda loc: join_path(path, *_renamed(loc)), violations
    )
    _raise_if(violations)
    assert fleet is not None
    return fleet


def evaluate_request_from_proto(
    message: api.EvaluateFleetRequest, book: Pricebook
) -> tuple[domain.Fleet, domain.PlanRequest]:
    violations: list[FieldViolation] = []
    fleet: domain.Fleet | None = None
    request: domain.PlanRequest | None = None
    if not message.HasField("fleet") or not message.fleet.items:
        violations.append(FieldViolation("fleet.items", "a fleet needs at least one item"))
    else:
        try:
            fleet = fleet_from_proto(message.fleet, book)
        except InvalidRequest as exc:
            violations.extend(exc.violations)
    try:
        request = _plan_request(
            message.workloads,
            constraints=message.constraints if message.HasField("constraints") else None,
            overrides=message.pricebook_overrides if message.HasField("pricebook_overrides") else None,
            options=message.solver_options if message.HasField("solver_options") else None,
            book=book,
        )[0]
    except InvalidRequest as exc:
        violations.extend(exc.violations)
    _raise_if(violations)
    assert fleet is not None and request is not None
    return fleet, request


@dataclass(frozen=True, slots=True)
class BreakEvenQuery:
    """A validated AnalyzeBreakEven request."""

    request: domain.PlanRequest
    gpu: str | None
    fleet: domain.Fleet | None
    utilization: float | None


def break_even_request_from_proto(message: api.AnalyzeBreakEvenRequest, book: Pricebook) -> BreakEvenQuery:
    violations: list[FieldViolation] = []
    request: domain.PlanRequest | None = None
    fleet: domain.Fleet | None = None
    gpu: str | None = None
    try:
        request = _plan_request(
            message.workloads,
            constraints=message.constraints if message.HasField("constraints") else None,
            overrides=message.pricebook_overrides if message.HasField("pricebook_overrides") else None,
            options=None,
            book=book,
        )[0]
    except InvalidRequest as exc:
        violations.extend(exc.violations)
    if message.gpu_id:
        refs = _Refs(book)
        gpu = refs.gpu(message.gpu_id, "gpu_id")
        violations.extend(refs.violations)
    if message.HasField("fleet"):
        if gpu is not None:
            violations.append(FieldViolation("fleet", "give a GPU type or a fleet, not both"))
        try:
            fleet = fleet_from_proto(message.fleet, book)
        except InvalidRequest as exc:
            violations.extend(exc.violations)
    utilization = _opt(message, "utilization")
    if utilization is not None and not (0.0 < utilization <= 1.0):
        violations.append(FieldViolation("utilization", f"must be in (0, 1] (got {utilization!r})"))
    _raise_if(violations)
    assert request is not None
    return BreakEvenQuery(request, gpu, fleet, utilization)


def catalog_kinds_from_proto(message: api.ListCatalogRequest) -> tuple[str, ...]:
    col = _Collector()
    kinds = [
        col.enum(CATALOG_KIND_FROM_PROTO, k, join_path("kinds", i), required=True)
        for i, k in enumerate(message.kinds)
    ]
    _raise_if(col.violations)
    return tuple(k for k in kinds if k is not None)


# --------------------------------------------------------------------------------------------
# Domain → proto: shared pieces
# --------------------------------------------------------------------------------------------


def decimal_text(amount: Decimal | float | int) -> str:
    """A plain decimal string (no exponent), as the Money contract requires."""
    value = (
        amount
        if isinstance(amount, Decimal)
        else Decimal(repr(float(amount)))
        if isinstance(amount, float)
        else Decimal(amount)
    )
    text = format(value, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def money_to_proto(value: Money | None) -> common_pb2.Money | None:
    if value is None:
        return None
    return common_pb2.Money(amount=decimal_text(value.amount), currency_code=value.currency)


def amount_to_proto(amount: float | Decimal, currency: str, *, places: int | None = None) -> common_pb2.Money:
    """A float amount in ``currency``, rounded to the currency's minor unit (KRW 0, USD 2) by default."""
    digits = places if places is not None else (0 if currency == "KRW" else 2)
    quantum = Decimal(1).scaleb(-digits)
    value = Decimal(str(amount)).quantize(quantum)
    return common_pb2.Money(amount=decimal_text(value), currency_code=currency)


def _source(entry: Sourced) -> catalog_pb2.Source:
    return catalog_pb2.Source(
        source=entry.source,
        as_of_date=entry.as_of.isoformat(),
        estimated_fields=list(entry.estimated_fields),
        field_sources={k: f"{v.source} ({v.as_of.isoformat()})" for k, v in entry.field_sources.items()},
        notes=entry.notes,
    )


def catalog_to_proto(book: Pricebook, kinds: Sequence[str]) -> api.ListCatalogResponse:
    """Every entry of the requested kinds (all when empty), each with its source and date."""
    wanted = set(kinds) or set(pb_catalog.CATALOG_KINDS)
    out = api.ListCatalogResponse()
    if "gpu" in wanted:
        for g in book.gpus:
            out.gpus.append(
                catalog_pb2.GpuEntry(
                    id=g.id,
                    name=g.name,
                    aliases=list(g.aliases),
                    vendor=g.vendor.value,
                    architecture=g.architecture.value,
                    form_factor=g.form_factor,
                    memory_gb=g.memory_gb,
                    memory_type=g.memory_type,
                    memory_bandwidth_gbs=g.memory_bandwidth_gbs,
                    bf16_tflops=g.bf16_tflops,
                    fp8_tflops=g.fp8_tflops,
                    fp4_tflops=g.fp4_tflops,
                    int8_tops=g.int8_tops,
                    l2_mb=g.l2_mb,
                    tdp_w=g.tdp_w,
                    scale_up_link=g.scale_up_link.value,
                    scale_up_bandwidth_gbs=g.scale_up_bandwidth_gbs,
                    scale_up_domain_size=g.scale_up_domain_size,
                    pcie_gen=g.pcie_gen,
                    pcie_bandwidth_gbs=g.pcie_bandwidth_gbs,
                    p2p_over_pcie=g.p2p_over_pcie,
                    mig_max_instances=g.mig_max_instances,
                    ecc=g.ecc,
                    server_ids=list(g.servers),
                    source=_source(g),
                )
            )
    if "server" in wanted:
        for s in book.servers:
            out.servers.append(
                catalog_pb2.ServerEntry(
                    id=s.id,
                    name=s.name,
                    gpu_id=s.gpu,
                    gpus_per_server=s.gpus_per_server,
                    scale_up_domain_size=s.scale_up_domain_size,
                    host_cost=money_to_proto(s.host_cost),
                    host_power_w=s.host_power_w,
                    rack_units=s.rack_units,
                    nics=[catalog_pb2.NicEntry(kind=n.kind, gbps=n.gbps, per_gpu=n.per_gpu) for n in s.nics],
                    p2p_groups=";".join(",".join(str(i) for i in group) for group in s.p2p_groups),
                    source=_source(s),
                )
            )
    if "offer" in wanted:
        for o in book.offers:
            out.offers.append(
                catalog_pb2.OfferEntry(
                    id=o.id,
                    kind=o.kind.value,
                    gpu_id=o.gpu,
                    server_id=o.server or "",
                    provider=o.provider,
                    region=o.region,
                    price=money_to_proto(o.price),
                    term_months=o.term_months,
                    label=o.label.value,
                    includes_vat=o.includes_vat,
                    source=_source(o),
                )
            )
    if "api_price" in wanted:
        for p in book.api_prices:
            out.api_prices.append(
                catalog_pb2.ApiPriceEntry(
                    id=p.id,
                    provider=p.provider,
                    model_id=p.model,
                    input_per_million_tokens=money_to_proto(p.input_per_mtok),
                    output_per_million_tokens=money_to_proto(p.output_per_mtok),
                    source=_source(p),
                )
            )
    if "model" in wanted:
        for m in book.models:
            out.models.append(
                catalog_pb2.ModelEntry(
                    id=m.id,
                    aliases=list(m.aliases),
                    family=m.family,
                    kind=m.kind,
                    params_b=m.params_b,
                    active_params_b=m.active_params_b,
                    layers=m.layers,
                    hidden=m.hidden,
                    intermediate=m.intermediate,
                    heads=m.heads,
                    kv_heads=m.kv_heads,
                    head_dim=m.head_dim,
                    vocab=m.vocab,
                    max_context=m.max_context,
                    experts=m.experts,
                    experts_per_token=m.experts_per_token,
                    attention=m.attention.value,
                    kv_lora_rank=m.kv_lora_rank,
                    sliding_window=m.sliding_window,
                    source=_source(m),
                )
            )
    if "site" in wanted:
        site = book.site
        out.site.CopyFrom(
            catalog_pb2.SiteEntry(
                electricity_krw_per_kwh=site.electricity_krw_per_kwh,
                electricity_usd_per_kwh=site.electricity_usd_per_kwh,
                pue=site.pue,
                depreciation_months=site.depreciation_months,
                residual_value_fraction=site.residual_value_fraction,
                support_fraction_per_year=site.support_fraction_per_year,
                colocation_per_rack_unit_month=money_to_proto(site.colocation_per_rack_unit_month),
                average_gpu_power_fraction=site.average_gpu_power_fraction,
                vat_rate=site.vat_rate,
                prices_include_vat=site.prices_include_vat,
                fx_rates=[
                    catalog_pb2.FxRateEntry(
                        base_currency_code=f.base, quote_currency_code=f.quote, rate=f.rate, source=_source(f)
                    )
                    for f in site.fx_rates
                ],
                source=_source(site),
            )
        )
    return out


def provenance_to_proto(
    book: Pricebook,
    *,
    overrides_applied: Sequence[str] = (),
    performance_model_version: str = "",
    server_version: str = "",
) -> common_pb2.Provenance:
    return common_pb2.Provenance(
        pricebook_version=book.version,
        pricebook_content_hash=book.content_hash,
        performance_model_version=performance_model_version,
        server_version=server_version,
        overrides_applied=list(overrides_applied),
    )


# --------------------------------------------------------------------------------------------
# Domain → proto: plans (``solver.planner.PlanResult`` and the optimizer's ``FleetSolution``)
# --------------------------------------------------------------------------------------------

PLAN_STATUS_TO_PROTO: dict[str, plan_pb2.PlanStatus.ValueType] = {
    "optimal": plan_pb2.PLAN_STATUS_OPTIMAL,
    "feasible": plan_pb2.PLAN_STATUS_FEASIBLE,
    "infeasible": plan_pb2.PLAN_STATUS_INFEASIBLE,
    "no_solution": plan_pb2.PLAN_STATUS_NO_SOLUTION,
    "cancelled": plan_pb2.PLAN_STATUS_CANCELLED,
}
LIMIT_TO_PROTO: dict[str, plan_pb2.LimitFired.ValueType] = {
    "none": plan_pb2.LIMIT_FIRED_NONE,
    "time": plan_pb2.LIMIT_FIRED_TIME,
    "cancel": plan_pb2.LIMIT_FIRED_CANCEL,
}


def _finite(value: float | None) -> float:
    return float(value) if value is not None and math.isfinite(value) else 0.0


def _status(value: object) -> plan_pb2.PlanStatus.ValueType:
    return PLAN_STATUS_TO_PROTO.get(str(value), plan_pb2.PLAN_STATUS_UNSPECIFIED)


def _set_money(target: Message, name: str, value: Money | None) -> None:
    if value is not None:
        getattr(target, name).CopyFrom(money_to_proto(value))


def _by_hour(buckets: Sequence[Bucket], per_bucket: Sequence[int]) -> list[int]:
    """Expand per-bucket values to the 24 hours of the day."""
    hours = [0] * HOURS_PER_DAY
    for bucket in buckets:
        for hour in bucket.hours:
            hours[hour] = per_bucket[bucket.index] if bucket.index < len(per_bucket) else 0
    return hours


def solver_stats_to_proto(stats: SolverStats, candidates: int = 0) -> plan_pb2.SolverStatistics:
    return plan_pb2.SolverStatistics(
        status=_status(stats.status),
        objective=_finite(stats.objective),
        best_bound=_finite(stats.best_bound),
        relative_gap=_finite(stats.gap),
        solve_seconds=_finite(stats.seconds),
        time_limit_s=_finite(stats.time_limit_s),
        limit_fired=LIMIT_TO_PROTO.get(str(stats.limit_fired), plan_pb2.LIMIT_FIRED_UNSPECIFIED),
        backend=stats.backend,
        variables=stats.variables,
        constraints=stats.constraints,
        candidates=candidates,
    )


def _gpu_name(book: Pricebook | None, gpu_id: str) -> str:
    if book is None:
        return gpu_id
    try:
        return pb_catalog.gpu(book, gpu_id).name
    except UnknownEntryError:
        return gpu_id


def fleet_line_to_proto(line: planner.PlanFleetLine, book: Pricebook | None) -> plan_pb2.FleetLine:
    out = plan_pb2.FleetLine(
        gpu_id=line.gpu,
        gpu_name=_gpu_name(book, line.gpu),
        mode=MODE_TO_PROTO.get(line.mode, common_pb2.ACQUISITION_MODE_UNSPECIFIED),
        server_id=line.server_id or "",
        gpu_count=line.gpus,
        server_count=line.servers,
        owned=line.owned,
        on_demand_gpus_by_hour=list(line.on_demand_gpus_by_hour),
        offer_id=line.offer_id,
        power_kw=_finite(line.power_kw),
        rack_units=round(_finite(line.rack_units)),
    )
    _set_money(out, "price_per_gpu_hour", line.price_per_gpu_hour)
    _set_money(out, "price_per_gpu", line.price_per_gpu)
    _set_money(out, "horizon_cost", line.horizon_cost)
    return out


def _precision(value: str) -> common_pb2.Precision.ValueType:
    try:
        return PRECISION_TO_PROTO.get(domain.Precision(value), common_pb2.PRECISION_UNSPECIFIED)
    except ValueError:
        return common_pb2.PRECISION_UNSPECIFIED


def _deployment(
    assignment: Assignment, solution: FleetSolution, currency: str, rejected: Sequence[str] = ()
) -> plan_pb2.WorkloadDeployment:
    peak = assignment.peak_bucket
    primary = assignment.primary.candidate
    groups = [
        plan_pb2.ReplicaGroup(
            gpu_id=u.candidate.gpu,
            tp=u.candidate.tp,
            mig_slice=u.candidate.mig_slice,
            precision=_precision(u.candidate.precision),
            kv_precision=_precision(u.candidate.kv_precision),
            replicas=u.replicas[peak],
            replicas_by_hour=_by_hour(solution.buckets, u.replicas),
            capacity_per_replica_req_s=_finite(u.candidate.capacity_req_s),
        )
        for u in assignment.uses
    ]
    out = plan_pb2.WorkloadDeployment(
        workload_name=assignment.workload,
        gpu_id=primary.gpu,
        tp=primary.tp,
        precision=_precision(primary.precision),
        kv_precision=_precision(primary.kv_precision),
        replicas=sum(u.replicas[peak] for u in assignment.uses),
        replica_groups=groups,
        ttft_p95_ms=_finite(primary.ttft_p95_ms),
        tpot_ms=_finite(primary.tpot_ms),
        per_user_tok_s=_finite(primary.per_user_tok_s),
        utilization=_finite(assignment.utilisation),
        demand_req_s=_finite(assignment.demand_req_s[peak]),
        capacity_req_s=_finite(assignment.capacity_req_s[peak]),
        output_tok_s=_finite(sum(u.replicas[peak] * u.candidate.max_output_tok_s for u in assignment.uses)),
        bottleneck=primary.bottleneck,
        runner_up_note=assignment.runner_up_note,
        rejected_deployments=rejected,
    )
    if assignment.runner_up is not None:
        r = assignment.runner_up
        out.runner_up.CopyFrom(
            plan_pb2.RunnerUp(
                gpu_id=r.gpu,
                tp=r.tp,
                precision=_precision(r.precision),
                replicas=r.replicas_at_peak,
                horizon_tco=amount_to_proto(r.total_cost, currency),
                cost_delta=amount_to_proto(r.cost_difference, currency),
            )
        )
    return out


def _diagnosis(diagnosis: Diagnosis) -> plan_pb2.InfeasibilityDiagnosis:
    return plan_pb2.InfeasibilityDiagnosis(
        unservable_workloads=[
            plan_pb2.UnservableWorkload(workload_name=u.workload, reasons=list(u.reasons))
            for u in diagnosis.unservable
        ],
        binding_caps=[
            plan_pb2.BindingCap(
                cap=c.cap,
                limit=_finite(c.limit),
                needed=_finite(c.needed),
                shortfall=_finite(c.shortfall),
                message=c.message,
            )
            for c in diagnosis.binding_caps
        ],
        messages=list(diagnosis.messages),
    )


def _cost(result: planner.PlanResult) -> plan_pb2.CostBreakdown | None:
    if result.tco is None:
        return None
    total = result.tco.total
    out = plan_pb2.CostBreakdown(
        currency_code=result.currency,
        horizon_months=result.horizon_months,
        components=[
            plan_pb2.CostComponent(
                name=c.name,
                horizon_amount=money_to_proto(c.horizon_amount),
                monthly_amount=money_to_proto(c.monthly_amount),
                explanation=c.explanation,
            )
            for c in result.cost_components
        ],
        includes_vat=result.includes_vat,
        fx_rate_note=result.fx_rate_note,
    )
    _set_money(out, "capex", total.capex)
    _set_money(out, "opex_monthly", total.opex_monthly)
    _set_money(out, "residual_value", total.residual_value)
    _set_money(out, "horizon_tco", total.horizon_total)
    return out


def _unit_cost(u: UnitCost) -> plan_pb2.UnitCost:
    out = plan_pb2.UnitCost(workload_name=u.workload)
    _set_money(out, "per_million_output_tokens", u.per_million_output_tokens)
    _set_money(out, "per_million_total_tokens", u.per_million_total_tokens)
    _set_money(out, "per_training_run", u.per_training_run)
    _set_money(out, "monthly_cost", u.monthly_cost)
    return out


def break_even_to_proto(result: planner.BreakEvenResult) -> plan_pb2.BreakEvenAnalysis:
    out = plan_pb2.BreakEvenAnalysis(notes=list(result.notes))
    for b in result.buy_vs_rent:
        row = plan_pb2.BuyVsRent(
            gpu_id=b.gpu,
            break_even_utilization_on_demand=_finite(b.break_even_utilisation_on_demand),
            break_even_utilization_reserved=_finite(b.break_even_utilisation_reserved),
            payback_months=_finite(b.payback_months),
            plan_utilization=_finite(b.plan_utilisation),
            verdict=b.verdict,
        )
        _set_money(row, "owned_cost_per_gpu_hour", b.owned_cost_per_gpu_hour)
        _set_money(row, "on_demand_price_per_gpu_hour", b.on_demand_price_per_gpu_hour)
        _set_money(row, "reserved_price_per_gpu_hour", b.reserved_price_per_gpu_hour)
        out.buy_vs_rent.append(row)
    for a in result.api:
        api_row = plan_pb2.ApiBreakEven(
            workload_name=a.workload,
            api_price_id=a.api_price_id or "",
            provider=a.provider,
            break_even_daily_tokens=_finite(a.break_even_daily_tokens),
            workload_daily_tokens=_finite(a.workload_daily_tokens),
            self_hosting_cheaper=bool(a.self_hosting_cheaper),
            verdict=a.verdict,
        )
        _set_money(api_row, "self_hosted_per_million_tokens", a.self_hosted_per_million_tokens)
        _set_money(api_row, "api_per_million_tokens", a.api_per_million_tokens)
        out.api.append(api_row)
    return out


def _baseline(b: planner.Baseline, book: Pricebook | None) -> plan_pb2.Baseline:
    out = plan_pb2.Baseline(
        gpu_id=b.gpu,
        feasible=b.feasible,
        fleet=[fleet_line_to_proto(x, book) for x in b.fleet],
        reason=b.reason or b.fleet_summary,
    )
    _set_money(out, "horizon_tco", b.horizon_tco)
    _set_money(out, "extra_cost", b.extra_cost)
    return out


def _sensitivity(s: planner.Sensitivity) -> plan_pb2.Sensitivity:
    out = plan_pb2.Sensitivity(
        subject=s.subject,
        parameter=s.parameter,
        plan_below=s.plan_below,
        plan_above=s.plan_above,
        explanation=s.explanation,
    )
    if s.change_down_fraction is not None:
        out.change_down_fraction = s.change_down_fraction
    if s.change_up_fraction is not None:
        out.change_up_fraction = s.change_up_fraction
    return out


def plan_to_proto(result: planner.PlanResult, book: Pricebook | None = None) -> plan_pb2.Plan:
    """A whole plan: fleet, deployments, training, cost, unit costs, break-even, baselines,
    sensitivity, diagnosis, statistics, uncertainty, warnings, cap usage."""
    solution = result.solution
    rejected = dict(result.rejected)
    plan = plan_pb2.Plan(
        status=_status(result.status),
        summary=result.summary,
        fleet=[fleet_line_to_proto(line, book) for line in result.fleet],
        deployments=[
            _deployment(a, solution, result.currency, rejected.get(a.workload, ()))
            for a in solution.assignments
        ],
        training=[
            plan_pb2.TrainingAllocation(
                workload_name=t.workload,
                gpu_id=t.gpu,
                gpus=t.min_gpus,
                gpu_hours_per_month=t.gpu_hours_per_month,
                on_demand_gpu_hours_per_month=t.on_demand_gpu_hours_per_month,
                hours_per_run=t.hours_per_run,
                rejected_gpus=rejected.get(t.workload, ()),
            )
            for t in solution.training
        ],
        unit_costs=[_unit_cost(u) for u in result.unit_costs],
        break_even=break_even_to_proto(result.break_even),
        baselines=[_baseline(b, book) for b in result.baselines],
        sensitivity=[_sensitivity(s) for s in result.sensitivity],
        solver_statistics=solver_stats_to_proto(solution.stats, result.candidates_considered),
        uncertainty=common_pb2.UncertaintyBand(
            low_factor=result.uncertainty.low_factor,
            high_factor=result.uncertainty.high_factor,
            note=result.uncertainty.note,
        ),
        warnings=list(result.warnings),
        cap_usage={k: float(v) for k, v in solution.usage.items() if math.isfinite(v)},
    )
    per_run = {u.workload: u.per_training_run for u in result.unit_costs if u.per_training_run is not None}
    for allocation in plan.training:
        _set_money(allocation, "cost_per_run", per_run.get(allocation.workload_name))
    cost = _cost(result)
    if cost is not None:
        plan.cost.CopyFrom(cost)
    if result.baseline_saving is not None:
        s = result.baseline_saving
        plan.baseline_saving.CopyFrom(
            plan_pb2.BaselineSaving(
                best_baseline_gpu_id=s.best_baseline_gpu,
                saving=money_to_proto(s.saving),
                saving_fraction=_finite(s.saving_fraction),
            )
        )
    if solution.diagnosis is not None:
        plan.diagnosis.CopyFrom(_diagnosis(solution.diagnosis))
    return plan


def plan_provenance(
    result: planner.PlanResult, *, performance_model_version: str = "", server_version: str = ""
) -> common_pb2.Provenance:
    """Provenance of a plan: the pricebook *after* the request's overrides (version + hash)."""
    return common_pb2.Provenance(
        pricebook_version=result.pricebook_version,
        pricebook_content_hash=result.pricebook_hash,
        performance_model_version=performance_model_version,
        server_version=server_version,
        overrides_applied=list(result.overrides_applied),
    )


def evaluation_to_proto(
    result: planner.EvaluationResult, book: Pricebook | None = None
) -> api.EvaluateFleetResponse:
    response = api.EvaluateFleetResponse(
        feasible=result.feasible,
        plan=plan_to_proto(result.plan, book),
        fits=[
            plan_pb2.WorkloadFit(
                workload_name=f.workload,
                served_fraction=_finite(f.served_fraction),
                headroom_fraction=_finite(f.headroom_fraction),
            )
            for f in result.fits
        ],
        messages=list(result.messages),
    )
    _set_money(response, "fleet_horizon_tco", result.fleet_horizon_tco)
    _set_money(response, "optimal_horizon_tco", result.optimal_horizon_tco)
    _set_money(response, "saving_of_optimal", result.saving_of_optimal)
    return response


def break_even_analysis_to_proto(
    result: planner.BreakEvenAnalysis, book: Pricebook | None = None
) -> api.AnalyzeBreakEvenResponse:
    return api.AnalyzeBreakEvenResponse(
        break_even=break_even_to_proto(result.break_even),
        unit_costs=[_unit_cost(u) for u in result.unit_costs],
        plan=plan_to_proto(result.plan, book),
    )


# --------------------------------------------------------------------------------------------
# EstimatePerformance: proto cases ↔ the batch-file case dicts of ``solver.perf.cases``
# --------------------------------------------------------------------------------------------

DEFAULT_TRAINING_SEQ_LEN = 4096
"""``PerformanceCase.seq_len`` when absent (the proto's documented default)."""
_MODE_NAMES = {
    performance_pb2.ESTIMATE_MODE_UNSPECIFIED: "infer",
    performance_pb2.ESTIMATE_MODE_INFER: "infer",
    performance_pb2.ESTIMATE_MODE_TRAIN: "train",
}
# Batch-file key → proto field name (where they differ).
_CASE_PROTO_NAME = {
    "gpu": "gpu_id",
    "model_spec": "model.spec",
    "request_rate": "request_rate_per_s",
    "model": "model.model_id",
}


def _case_dict(case: performance_pb2.PerformanceCase, col: _Collector, path: str) -> dict[str, Any]:
    mode = _MODE_NAMES.get(case.mode)
    if mode is None:
        col.violations.append(FieldViolation(join_path(path, "mode"), f"unknown value {case.mode}"))
        mode = "infer"
    out: dict[str, Any] = {"mode": mode}
    if not case.gpu_id:
        col.violations.append(FieldViolation(join_path(path, "gpu_id"), "is required (a catalogue GPU id)"))
    out["gpu"] = case.gpu_id
    _put(out, "num_gpus", _opt(case, "num_gpus"))
    _put(out, "tp", _opt(case, "tp"))
    ref = _model_ref(case.model, col, join_path(path, "model")) if case.HasField("model") else {}
    if "model_id" in ref:
        out["model"] = ref["model_id"]
    elif "spec" in ref:
        out["model_spec"] = ref["spec"]
    else:
        col.violations.append(FieldViolation(join_path(path, "model"), "is required (model_id or spec)"))
    precision = col.enum(PRECISION_FROM_PROTO, case.precision, join_path(path, "precision"))
    _put(out, "precision", precision.value if precision else None)
    kv = col.enum(PRECISION_FROM_PROTO, case.kv_precision, join_path(path, "kv_precision"))
    _put(out, "kv_precision", kv.value if kv else None)
    engine = col.enum(ENGINE_FROM_PROTO, case.engine, join_path(path, "engine"))
    _put(out, "engine", engine.value if engine else None)
    if mode == "infer":
        for name in ("input_len", "output_len"):
            value = getattr(case, name)
            if value <= 0:
                col.violations.append(
                    FieldViolation(
                        join_path(path, name), f"must be greater than 0 (got {value or '0 or not set'})"
                    )
                )
            out[name] = value
        load = case.WhichOneof("load")
        if load == "concurrency":
            if case.concurrency <= 0:
                col.violations.append(
                    FieldViolation(
                        join_path(path, "concurrency"), f"must be greater than 0 (got {case.concurrency})"
                    )
                )
            out["concurrency"] = case.concurrency
        elif load == "max_concurrency" and case.max_concurrency:
            out["concurrency"] = "max"
        elif load == "request_rate_per_s":
            rate = col.number(case.request_rate_per_s, join_path(path, "request_rate_per_s"))
            if rate <= 0:
                col.violations.append(
                    FieldViolation(
                        join_path(path, "request_rate_per_s"), f"must be greater than 0 (got {rate})"
                    )
                )
            out["request_rate"] = rate
        hit = col.number(case.prefix_hit_rate, join_path(path, "prefix_hit_rate"))
        if not 0.0 <= hit < 1.0:
            col.violations.append(
                FieldViolation(join_path(path, "prefix_hit_rate"), f"must be in [0, 1) (got {hit})")
            )
        if hit:
            out["prefix_hit_rate"] = hit
        _put(out, "max_num_seqs", _opt(case, "max_num_seqs"))
        _put(out, "max_batched_tokens", _opt(case, "max_batched_tokens"))
    else:
        method = col.enum(METHOD_FROM_PROTO, case.method, join_path(path, "method"), required=True)
        _put(out, "method", method.value if method else None)
        tokens = col.number(case.tokens, join_path(path, "tokens"))
        if tokens <= 0:
            col.violations.append(
                FieldViolation(
                    join_path(path, "tokens"), f"must be greater than 0 (got {tokens or '0 or not set'})"
                )
            )
        out["tokens"] = tokens
        out["seq_len"] = _opt(case, "seq_len") or DEFAULT_TRAINING_SEQ_LEN
    return out


def performance_cases_from_proto(
    message: api.EstimatePerformanceRequest, book: Pricebook
) -> list[dict[str, Any] | FieldViolation]:
    """Each case as a batch-file dict, or (with allow_partial_failure) its first violation."""
    if not message.cases:
        raise InvalidRequest([FieldViolation("cases", "needs at least one case")])
    all_violations: list[FieldViolation] = []
    out: list[dict[str, Any] | FieldViolation] = []
    for i, case in enumerate(message.cases):
        col = _Collector()
        path = join_path("cases", i)
        data = _case_dict(case, col, path)
        refs = _Refs(book)
        if case.gpu_id:
            data["gpu"] = refs.gpu(case.gpu_id, join_path(path, "gpu_id"))
        if "model" in data:
            refs.model(domain.ModelRef(model_id=data["model"]), join_path(path, "model"))
        violations = [*refs.violations, *col.violations]
        all_violations.extend(violations)
        out.append(violations[0] if violations else data)
    if all_violations and not message.allow_partial_failure:
        raise InvalidRequest(all_violations)
    return out


def _case_error_path(index: int, field_name: str) -> str:
    head, _, rest = field_name.partition(".")
    name = _CASE_PROTO_NAME.get(head, head) + (f".{rest}" if rest else "")
    return join_path("cases", index, *name.split(".")) if name else join_path("cases", index)


def performance_results_to_proto(
    message: api.EstimatePerformanceRequest,
    cases: Sequence[dict[str, Any] | FieldViolation],
    results: Sequence[Mapping[str, Any]],
) -> api.EstimatePerformanceResponse:
    """Estimates (one row per valid case, in order) → proto. Without ``allow_partial_failure`` a case
    the performance model refuses (e.g. a TP that does not divide the heads) is INVALID_ARGUMENT."""
    response = api.EstimatePerformanceResponse()
    refused: list[FieldViolation] = []
    valid = iter(results)
    for i, (case_msg, case) in enumerate(zip(message.cases, cases, strict=True)):
        result = performance_pb2.PerformanceResult(case_index=i)
        result.case.CopyFrom(case_msg)
        if isinstance(case, FieldViolation):
            result.error.CopyFrom(performance_pb2.CaseError(field=case.field, reason=case.reason))
        else:
            row = next(valid)
            error = row.get("error")
            if isinstance(error, Mapping):
                violation = FieldViolation(
                    _case_error_path(i, str(error.get("field", ""))), str(error.get("reason", ""))
                )
                refused.append(violation)
                result.error.CopyFrom(
                    performance_pb2.CaseError(field=violation.field, reason=violation.reason)
                )
            else:
                _fill_result(result, row)
        response.results.append(result)
    if refused and not message.allow_partial_failure:
        raise InvalidRequest(refused)
    return response


def _num(row: Mapping[str, Any], key: str) -> float:
    value = row.get(key)
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else 0.0


def _fill_result(result: performance_pb2.PerformanceResult, row: Mapping[str, Any]) -> None:
    """One row of ``solver.perf.cases.estimate_case`` into the proto result."""
    result.architecture_assumed = bool(row.get("assumed_architecture"))
    if row.get("mode", "infer") == "train":
        result.training.CopyFrom(
            performance_pb2.TrainingEstimate(
                train_tok_s=_num(row, "train_tok_s"),
                train_tok_s_per_gpu=_num(row, "train_tok_s_per_gpu"),
                mfu=_num(row, "mfu"),
                hours=_num(row, "hours"),
                gpu_hours=_num(row, "gpu_hours"),
                fits=bool(row.get("fits")),
                min_gpus=int(_num(row, "min_gpus")),
                memory_per_gpu_gb=_num(row, "memory_per_gpu_gb"),
                reason=str(row.get("reason") or ""),
            )
        )
        if row.get("hours") is None:
            result.warnings.append("the run never finishes on this configuration (unbounded hours)")
        return
    result.inference.CopyFrom(
        performance_pb2.InferenceEstimate(
            tp=int(_num(row, "tp")),
            tp_chosen=bool(row.get("tp_chosen_by_estimator")),
            replicas=int(_num(row, "replicas")),
            output_tok_s_total=_num(row, "output_tok_s_total"),
            total_tok_s=_num(row, "total_tok_s"),
            req_s=_num(row, "req_s"),
            ttft_ms=_num(row, "ttft_p95_ms" if "request_rate" in row else "ttft_ms"),
            tpot_ms=_num(row, "tpot_ms"),
            per_user_tok_s=_num(row, "per_user_tok_s"),
            max_concurrency=int(_num(row, "max_concurrency")),
            fits=bool(row.get("fits")),
            bottleneck=str(row.get("bottleneck") or ""),
            output_tok_s_low=_num(row, "output_tok_s_low"),
            output_tok_s_high=_num(row, "output_tok_s_high"),
            memory=performance_pb2.MemoryBreakdown(
                weights_gb=_num(row, "weights_gb_per_gpu"),
                kv_cache_gb=_num(row, "kv_gb_per_gpu"),
                reserve_gb=_num(row, "reserve_gb_per_gpu"),
                capacity_gb=_num(row, "usable_gb_per_gpu"),
            ),
            reason=str(row.get("reason") or ""),
        )
    )
    if row.get("ttft_ms") is None or row.get("tpot_ms") is None:
        result.warnings.append("latency is unbounded at this load (the replica cannot keep up)")


# --------------------------------------------------------------------------------------------
# AnalyzeBreakEven and SweepPlans requests
# --------------------------------------------------------------------------------------------

MAX_SWEEP_POINTS = 100
SWEEP_AXIS_FROM_PROTO: dict[int, planner.SweepAxis] = {
    api.SWEEP_DIMENSION_CAPEX_BUDGET: planner.SweepAxis.CAPEX_BUDGET,
    api.SWEEP_DIMENSION_DEMAND_MULTIPLIER: planner.SweepAxis.DEMAND_MULTIPLIER,
    api.SWEEP_DIMENSION_TPOT_P95_MS: planner.SweepAxis.TPOT_P95_MS,
    api.SWEEP_DIMENSION_TTFT_P95_MS: planner.SweepAxis.TTFT_P95_MS,
    api.SWEEP_DIMENSION_MIN_PER_USER_TOK_S: planner.SweepAxis.MIN_PER_USER_TOK_S,
}


@dataclass(frozen=True, slots=True)
class SweepQuery:
    """A validated SweepPlans request."""

    request: domain.PlanRequest
    axis: planner.SweepAxis
    values: tuple[float, ...]
    workload: str | None


def _sweep_values(message: api.SweepPlansRequest, violations: list[FieldViolation]) -> list[float]:
    if message.values:
        values = list(message.values)
        for i, v in enumerate(values):
            if not math.isfinite(v) or v <= 0:
                violations.append(
                    FieldViolation(join_path("values", i), f"must be a positive number (got {v})")
                )
    elif message.HasField("range"):
        r = message.range
        if r.points < 2:
            violations.append(FieldViolation("range.points", f"must be at least 2 (got {r.points})"))
            return []
        if not (math.isfinite(r.start) and math.isfinite(r.stop)) or r.start <= 0 or r.stop <= 0:
            violations.append(FieldViolation("range", "start and stop must be positive numbers"))
            return []
        step = (r.stop - r.start) / (r.points - 1)
        values = [r.start + step * i for i in range(r.points)]
    else:
        violations.append(FieldViolation("values", "give the values to sweep, or a range"))
        return []
    if len(values) > MAX_SWEEP_POINTS:
        violations.append(
            FieldViolation("values", f"at most {MAX_SWEEP_POINTS} sweep points (got {len(values)})")
        )
    return values


def sweep_request_from_proto(message: api.SweepPlansRequest, book: Pricebook) -> SweepQuery:
    violations: list[FieldViolation] = []
    base: domain.PlanRequest | None = None
    if not message.HasField("base"):
        violations.append(FieldViolation("base", "is required (the scenario to sweep)"))
    else:
        try:
            base = plan_request_from_proto(message.base, book, prefix="base")
        except InvalidRequest as exc:
            violations.extend(exc.violations)
    axis = SWEEP_AXIS_FROM_PROTO.get(message.dimension)
    if axis is None:
        violations.append(
            FieldViolation(
                "dimension",
                "choose what to sweep: capex budget, demand multiplier, TPOT, TTFT or per-user tok/s",
            )
        )
    values = _sweep_values(message, violations)
    if (
        base is not None
        and message.workload_name
        and message.workload_name not in {w.name for w in base.inference}
    ):
        violations.append(
            FieldViolation("workload_name", f"no inference workload named {message.workload_name!r}")
        )
    _raise_if(violations)
    assert base is not None and axis is not None
    workload = message.workload_name or None
    _raise_if(
        [v for i, value in enumerate(values) if (v := _sweep_point_violation(base, axis, value, workload, i))]
    )
    return SweepQuery(base, axis, tuple(values), workload)


def _sweep_point_violation(
    base: domain.PlanRequest, axis: planner.SweepAxis, value: float, workload: str | None, index: int
) -> FieldViolation | None:
    """Whether the scenario stays valid at this sweep value (e.g. demand × 1e300 exceeds the daily-token
    cap): the point's request is built as the planner builds it, then validated like any request."""
    try:
        point = planner.sweep_request(base, axis, value, workload)
        domain.PlanRequest.model_validate(point.model_dump())
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return FieldViolation(
            join_path("values", index), f"{value:g} makes {where} invalid: {_reason(first)}"
        )
    except (OverflowError, ValueError) as exc:
        return FieldViolation(join_path("values", index), f"{value:g} is out of range: {exc}")
    return None


def sweep_point_to_proto(point: planner.SweepPoint) -> api.SweepPlansResponse:
    return api.SweepPlansResponse(
        point=api.SweepPoint(index=point.index, value=point.value, plan=plan_to_proto(point.plan))
    )


def frontier_to_proto(frontier: planner.SweepFrontier) -> api.SweepFrontier:
    out = api.SweepFrontier()
    for p in frontier.points:
        point = api.FrontierPoint(
            value=p.value,
            status=_status(p.status),
            fleet_summary=p.fleet_summary,
            pareto_optimal=p.pareto_optimal,
        )
        _set_money(point, "horizon_tco", p.horizon_tco)
        out.points.append(point)
    return out


# --------------------------------------------------------------------------------------------
# Domain → proto requests (the Python client accepts pydantic domain objects)
# --------------------------------------------------------------------------------------------

_DOMAIN_NAME = {v: k for k, v in _PROTO_NAME.items()}


def _money_json(value: Mapping[str, Any]) -> dict[str, str]:
    return {"amount": decimal_text(Decimal(str(value["amount"]))), "currency_code": value["currency"]}


def _model_json(ref: Mapping[str, Any]) -> dict[str, Any]:
    if ref.get("model_id") is not None:
        return {"model_id": ref["model_id"]}
    return {"spec": {k: v for k, v in ref["spec"].items() if v is not None}}


def _enum_json(prefix: str, value: str | None) -> str | None:
    return f"{prefix}_{value.upper()}" if value else None


def plan_request_to_proto(request: domain.PlanRequest) -> api.PlanFleetRequest:
    """A domain ``PlanRequest`` as the proto request (inference workloads first, then training)."""
    data = request.model_dump(mode="json")
    workloads: list[dict[str, Any]] = []
    for w in data["inference"]:
        inf: dict[str, Any] = {
            "model": _model_json(w["model"]),
            "input_tokens": w["input_tokens"],
            "output_tokens": w["output_tokens"],
            "peak_to_average": w["peak_to_average"],
            "prefix_cache_hit_rate": w["prefix_cache_hit_rate"],
            "redundancy": w["redundancy"],
            "engine": _enum_json("ENGINE", w["engine"]),
            "serving_kind": "SERVING_KIND_INTERACTIVE" if w["interactive"] else "SERVING_KIND_BATCH",
            "sla": {k: v for k, v in w["sla"].items() if v is not None},
        }
        for key in ("precision", "kv_precision"):
            if w[key]:
                inf[key] = _enum_json("PRECISION", w[key])
        if w["daily_tokens"] is not None:
            inf["daily_tokens"] = str(w["daily_tokens"])
        if w["peak_request_rate_per_s"] is not None:
            inf["peak_request_rate_per_s"] = w["peak_request_rate_per_s"]
        if w["hourly_profile"] is not None:
            inf["hourly_profile"] = list(w["hourly_profile"])
        workloads.append({"name": w["name"], "inference": {k: v for k, v in inf.items() if v is not None}})
    for t in data["training"]:
        tr: dict[str, Any] = {
            "model": _model_json(t["model"]),
            "method": _enum_json("TRAINING_METHOD", t["method"]),
            "runs_per_month": t["runs_per_month"],
            "seq_len": str(t["seq_len"]),
        }
        if t["tokens_per_run"] is not None:
            tr["tokens_per_run"] = t["tokens_per_run"]
        if t["reference"] is not None:
            tr["reference_gpu_hours"] = {
                "gpu_id": t["reference"]["gpu"],
                "gpu_hours_per_month": t["reference"]["gpu_hours_per_month"],
            }
        if t["deadline_hours"] is not None:
            tr["deadline_hours"] = t["deadline_hours"]
        if t["max_gpus_per_run"] is not None:
            tr["max_gpus_per_run"] = t["max_gpus_per_run"]
        workloads.append({"name": t["name"], "training": tr})
    c = data["constraints"]
    constraints: dict[str, Any] = {
        "currency_code": c["currency"],
        "horizon_months": c["horizon_months"],
        "allowed_gpu_ids": c["allowed_gpus"],
        "allowed_modes": [_enum_json("ACQUISITION_MODE", m) for m in c["allowed_modes"]],
        "owned_gpus": [{"gpu_id": o["gpu"], "count": o["count"]} for o in c["owned"]],
        "count_bounds": [
            {
                "gpu_id": b["gpu"],
                **({"min_count": b["min_count"]}),
                **({"max_count": b["max_count"]} if b["max_count"] is not None else {}),
            }
            for b in c["count_bounds"]
        ],
        "include_vat": c["include_vat"],
        "include_host_costs": c["include_host_costs"],
    }
    for key in ("capex_budget", "monthly_opex_cap"):
        if c[key] is not None:
            constraints[key] = _money_json(c[key])
    for key in ("power_cap_kw", "rack_units_cap"):
        if c[key] is not None:
            constraints[key] = c[key]
    o = data["overrides"]
    overrides: dict[str, Any] = {
        "offers": [
            {
                k: v
                for k, v in {
                    "offer_id": x["offer_id"],
                    "kind": _enum_json("OFFER_KIND", x["kind"]),
                    "gpu_id": x["gpu"],
                    "server_id": x["server"],
                    "provider": x["provider"],
                    "price": _money_json(x["price"]),
                    "term_months": x["term_months"],
                }.items()
                if v is not None
            }
            for x in o["offers"]
        ]
    }
    if o["site"]:
        overrides["site_assumptions"] = o["site"]
    if o["fx_usd_krw"] is not None:
        overrides["fx_usd_krw"] = o["fx_usd_krw"]
    opt = data["options"]
    options = {
        "time_limit_s": opt["time_limit_s"],
        "relative_gap": opt["relative_gap"],
        "backend": {
            "auto": "SOLVER_BACKEND_UNSPECIFIED",
            "scip": "SOLVER_BACKEND_SCIP",
            "highs": "SOLVER_BACKEND_HIGHS",
            "cp_sat": "SOLVER_BACKEND_CP_SAT",
        }[opt["backend"]],
        "compute_baselines": opt["compute_baselines"],
        "compute_sensitivity": opt["compute_sensitivity"],
    }
    return json_format.ParseDict(
        {
            "workloads": workloads,
            "constraints": constraints,
            "pricebook_overrides": overrides,
            "solver_options": options,
        },
        api.PlanFleetRequest(),
    )


def fleet_to_proto(fleet: domain.Fleet) -> scenario_pb2.Fleet:
    return scenario_pb2.Fleet(
        items=[
            scenario_pb2.FleetItem(gpu_id=i.gpu, mode=MODE_TO_PROTO[i.mode], count=i.count, owned=i.owned)
            for i in fleet.items
        ]
    )
