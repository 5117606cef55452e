"""Scenario messages → domain requests: workloads, constraints, pricebook overrides, solver options
and fleets, shared by every RPC that carries a scenario.

Proto → plain dicts in the shape of ``solver.domain`` → pydantic validation, with every violation
reported at once under its proto path; then ``solver.resolve.resolve`` checks and resolves the
pricebook references and applies the overrides (once), its domain paths mapped to proto paths.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from google.protobuf import json_format, struct_pb2
from google.protobuf.message import Message

from api.fleetplan.v1 import common_pb2, scenario_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from pricebook.schema import Pricebook
from service.convert.enums import (
    BACKEND_FROM_PROTO,
    COST_OBJECTIVE_FROM_PROTO,
    DEPLOYMENT_POLICY_FROM_PROTO,
    ENGINE_FROM_PROTO,
    ISOLATION_FROM_PROTO,
    METHOD_FROM_PROTO,
    MODE_FROM_PROTO,
    OFFER_KIND_FROM_PROTO,
    OFFER_POLICY_FROM_PROTO,
    PRECISION_FROM_PROTO,
    QUANTILE_FROM_PROTO,
    SITE_MODEL_FROM_PROTO,
)
from service.convert.fields import optional, put
from service.convert.measured import measured_points
from service.convert.money import money_to_dict
from service.convert.paths import PathMap, domain_violations_to_proto, join_path, renamed
from service.convert.violations import Collector, raise_if, validate
from solver import domain
from solver.errors import InvalidRequest
from solver.resolve import References, ResolvedRequest, resolve

_SPEC_FIELDS = (
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
)
"""Optional ``ModelSpec`` fields copied as given (``params_b`` is required and checked finite)."""
_SLA_FIELDS = ("ttft_p95_ms", "tpot_p95_ms", "min_per_user_tok_s")


def model_ref(ref: common_pb2.ModelRef, col: Collector, path: str) -> dict[str, Any]:
    which = ref.WhichOneof("source")
    if which == "model_id":
        return {"model_id": ref.model_id}
    if which == "spec":
        spec = ref.spec
        out: dict[str, Any] = {"params_b": col.number(spec.params_b, join_path(path, "spec", "params_b"))}
        for name in _SPEC_FIELDS:
            put(out, name, optional(spec, name))
        return {"spec": out}
    return {}


def _inference_demand(
    msg: scenario_pb2.InferenceWorkload, col: Collector, path: str, out: dict[str, Any]
) -> None:
    demand = msg.WhichOneof("demand")
    if demand == "daily_tokens":
        out["daily_tokens"] = msg.daily_tokens
    elif demand == "peak_request_rate_per_s":
        out["peak_request_rate_per_s"] = col.number(
            msg.peak_request_rate_per_s, join_path(path, "peak_request_rate_per_s")
        )
    put(out, "peak_to_average", optional(msg, "peak_to_average"))
    if msg.hourly_profile:
        out["hourly_profile"] = tuple(
            col.number(v, join_path(path, "hourly_profile", i)) for i, v in enumerate(msg.hourly_profile)
        )


def _sla(msg: scenario_pb2.Sla, col: Collector, path: str) -> dict[str, Any]:
    sla: dict[str, Any] = {}
    for name in _SLA_FIELDS:
        value = optional(msg, name)
        put(sla, name, None if value is None else col.number(value, join_path(path, name)))
    return sla


def _serving_kind(
    msg: scenario_pb2.InferenceWorkload, col: Collector, path: str, out: dict[str, Any]
) -> None:
    kind = msg.serving_kind
    if kind == scenario_pb2.SERVING_KIND_BATCH:
        out["interactive"] = False
    elif kind not in (scenario_pb2.SERVING_KIND_UNSPECIFIED, scenario_pb2.SERVING_KIND_INTERACTIVE):
        col.add(join_path(path, "serving_kind"), f"unknown value {kind}")


def _inference(msg: scenario_pb2.InferenceWorkload, col: Collector, path: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "input_tokens": msg.input_tokens,
        "output_tokens": msg.output_tokens,
        "prefix_cache_hit_rate": col.number(
            msg.prefix_cache_hit_rate, join_path(path, "prefix_cache_hit_rate")
        ),
        "redundancy": msg.redundancy,
    }
    if msg.HasField("model"):
        out["model"] = model_ref(msg.model, col, join_path(path, "model"))
    put(out, "precision", col.enum(PRECISION_FROM_PROTO, msg.precision, join_path(path, "precision")))
    put(
        out, "kv_precision", col.enum(PRECISION_FROM_PROTO, msg.kv_precision, join_path(path, "kv_precision"))
    )
    put(out, "engine", col.enum(ENGINE_FROM_PROTO, msg.engine, join_path(path, "engine")))
    if msg.allowed_precisions:
        found = [
            col.enum(PRECISION_FROM_PROTO, p, join_path(path, "allowed_precisions", i), required=True)
            for i, p in enumerate(msg.allowed_precisions)
        ]
        out["allowed_precisions"] = tuple(p for p in found if p is not None)
    _inference_demand(msg, col, path, out)
    if msg.HasField("sla"):
        out["sla"] = _sla(msg.sla, col, join_path(path, "sla"))
    _serving_kind(msg, col, path, out)
    _sharing_and_restrictions(msg, col, path, out)
    return out


def _sharing_and_restrictions(
    msg: scenario_pb2.InferenceWorkload, col: Collector, path: str, out: dict[str, Any]
) -> None:
    """Pooling, the length mix, deployment restrictions and headroom (issue 20 fields)."""
    put(out, "isolation", col.enum(ISOLATION_FROM_PROTO, msg.isolation, join_path(path, "isolation")))
    if msg.length_mix:
        out["length_mix"] = tuple(
            {
                "input_tokens": b.input_tokens,
                "output_tokens": b.output_tokens,
                "share": col.number(b.share, join_path(path, "length_mix", i, "share")),
            }
            for i, b in enumerate(msg.length_mix)
        )
    if msg.allowed_tp:
        out["allowed_tp"] = tuple(msg.allowed_tp)
    put(out, "max_tp", optional(msg, "max_tp"))
    put(out, "allow_mig", optional(msg, "allow_mig"))
    put(out, "allow_disaggregation", optional(msg, "allow_disaggregation"))
    target = optional(msg, "target_utilization")
    put(
        out,
        "target_utilization",
        None if target is None else col.number(target, join_path(path, "target_utilization")),
    )
    put(out, "batch_deadline_hours", optional(msg, "batch_deadline_hours"))
    if msg.demand_by_year:
        out["demand_by_year"] = tuple(
            col.number(v, join_path(path, "demand_by_year", i)) for i, v in enumerate(msg.demand_by_year)
        )
    if msg.daily_tokens_by_year:
        out["daily_tokens_by_year"] = tuple(msg.daily_tokens_by_year)
    if msg.peak_request_rate_by_year:
        out["peak_request_rate_by_year"] = tuple(
            col.number(v, join_path(path, "peak_request_rate_by_year", i))
            for i, v in enumerate(msg.peak_request_rate_by_year)
        )


def _training(msg: scenario_pb2.TrainingWorkload, col: Collector, path: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if msg.HasField("model"):
        out["model"] = model_ref(msg.model, col, join_path(path, "model"))
    method = col.enum(METHOD_FROM_PROTO, msg.method, join_path(path, "method"), required=True)
    put(out, "method", method)
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
    for name in ("runs_per_month", "seq_len", "deadline_hours", "max_gpus_per_run"):
        put(out, name, optional(msg, name))
    return out


def _count_bound(msg: scenario_pb2.CountBound) -> dict[str, Any]:
    bound: dict[str, Any] = {"gpu": msg.gpu_id}
    put(bound, "min_count", optional(msg, "min_count"))
    put(bound, "max_count", optional(msg, "max_count"))
    return bound


def _constraints(msg: scenario_pb2.Constraints, col: Collector, path: str) -> dict[str, Any]:
    out: dict[str, Any] = {"include_vat": msg.include_vat}
    if msg.currency_code:
        out["currency"] = msg.currency_code.strip().upper()
    put(out, "horizon_months", optional(msg, "horizon_months"))
    for name in ("capex_budget", "monthly_opex_cap"):
        if msg.HasField(name):
            out[name] = money_to_dict(getattr(msg, name))
    put(out, "power_cap_kw", optional(msg, "power_cap_kw"))
    put(out, "rack_units_cap", optional(msg, "rack_units_cap"))
    if msg.allowed_gpu_ids:
        out["allowed_gpus"] = tuple(msg.allowed_gpu_ids)
    if msg.allowed_modes:
        modes = [
            col.enum(MODE_FROM_PROTO, m, join_path(path, "allowed_modes", i), required=True)
            for i, m in enumerate(msg.allowed_modes)
        ]
        out["allowed_modes"] = tuple(m for m in modes if m is not None)
    out["owned"] = tuple({"gpu": o.gpu_id, "count": o.count} for o in msg.owned_gpus)
    out["count_bounds"] = tuple(_count_bound(b) for b in msg.count_bounds)
    put(out, "include_host_costs", optional(msg, "include_host_costs"))
    quantile = msg.capacity_quantile
    put(
        out,
        "capacity_quantile",
        col.enum(QUANTILE_FROM_PROTO, quantile, join_path(path, "capacity_quantile")),
    )
    out["capex_budget_includes_vat"] = msg.capex_budget_includes_vat
    policy = col.enum(OFFER_POLICY_FROM_PROTO, msg.offer_policy, join_path(path, "offer_policy"))
    put(out, "offer_policy", policy)
    deployment = col.enum(
        DEPLOYMENT_POLICY_FROM_PROTO, msg.deployment_policy, join_path(path, "deployment_policy")
    )
    put(out, "deployment_policy", deployment)
    put(out, "site_model", col.enum(SITE_MODEL_FROM_PROTO, msg.site_model, join_path(path, "site_model")))
    put(out, "residual_value_credit", optional(msg, "residual_value_credit"))
    put(out, "discount_rate_annual", optional(msg, "discount_rate_annual"))
    out["include_leases"] = msg.include_leases
    put(out, "objective", col.enum(COST_OBJECTIVE_FROM_PROTO, msg.objective, join_path(path, "objective")))
    out["include_providers"] = tuple(msg.include_providers)
    out["exclude_providers"] = tuple(msg.exclude_providers)
    out["pinned_offers"] = tuple(msg.pinned_offer_ids)
    out["include_regions"] = tuple(msg.include_regions)
    out["exclude_regions"] = tuple(msg.exclude_regions)
    out["allow_consumer_gpus"] = msg.allow_consumer_gpus
    put(out, "allow_colocation", optional(msg, "allow_colocation"))
    _whole_system(msg, out)
    _periods(msg, col, path, out)
    return out


def _periods(msg: scenario_pb2.Constraints, col: Collector, path: str, out: dict[str, Any]) -> None:
    """Multi-year plan fields (issue 32)."""
    put(out, "period_months", optional(msg, "period_months"))
    paths = []
    for i, p in enumerate(msg.price_by_year):
        at = join_path(path, "price_by_year", i)
        entry: dict[str, Any] = {
            "multipliers": tuple(
                col.number(v, join_path(at, "multipliers", j)) for j, v in enumerate(p.multipliers)
            )
        }
        put(entry, "gpu", p.gpu_id or None)
        put(entry, "offer", p.offer_id or None)
        paths.append(entry)
    if paths:
        out["price_by_year"] = tuple(paths)
    if msg.available_from_year:
        out["available_from_year"] = tuple(
            {"gpu": a.gpu_id, "from_year": a.from_year} for a in msg.available_from_year
        )


def _whole_system(msg: scenario_pb2.Constraints, out: dict[str, Any]) -> None:
    """Networking, installation, software and storage (issue 15)."""
    put(out, "include_network_costs", optional(msg, "include_network_costs"))
    put(out, "installation_fraction", optional(msg, "installation_fraction"))
    if msg.HasField("installation_per_server"):
        out["installation_per_server"] = money_to_dict(msg.installation_per_server)
    out["software_licences"] = tuple(
        {
            "name": lic.name,
            "price_per_gpu_year": money_to_dict(lic.price_per_gpu_year)
            if lic.HasField("price_per_gpu_year")
            else None,
            "nvidia_ai_enterprise": lic.nvidia_ai_enterprise,
        }
        for lic in msg.software_licences
    )
    if msg.HasField("storage"):
        st = msg.storage
        out["storage"] = {
            "capacity_tb": st.capacity_tb,
            "price_per_tb": money_to_dict(st.price_per_tb) if st.HasField("price_per_tb") else None,
            "monthly": st.monthly,
        }


def _offer(msg: scenario_pb2.OfferOverride, col: Collector, path: str) -> dict[str, Any]:
    offer: dict[str, Any] = {"offer_id": msg.offer_id, "term_months": msg.term_months}
    put(offer, "kind", col.enum(OFFER_KIND_FROM_PROTO, msg.kind, join_path(path, "kind")))
    put(offer, "gpu", msg.gpu_id or None)
    put(offer, "server", msg.server_id or None)
    put(offer, "provider", msg.provider or None)
    if msg.HasField("price"):
        offer["price"] = money_to_dict(msg.price)
    return offer


def _overrides(msg: scenario_pb2.PricebookOverrides, col: Collector, path: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "offers": tuple(_offer(o, col, join_path(path, "offers", i)) for i, o in enumerate(msg.offers))
    }
    if msg.HasField("site_assumptions"):
        site_path = join_path(path, "site_assumptions")
        if _finite_struct(msg.site_assumptions, col, site_path):
            out["site"] = json_format.MessageToDict(msg.site_assumptions)
    put(out, "fx_usd_krw", optional(msg, "fx_usd_krw"))
    out["api_prices"] = tuple(_api_price(p) for p in msg.api_prices)
    return out


def _finite_struct(msg: struct_pb2.Struct, col: Collector, path: str) -> bool:
    """Whether every number in ``msg`` (nested structs and lists too) is finite; each NaN or
    infinity is a violation at its path (JSON, and so the overrides' validation, has no such
    numbers)."""
    finite = True

    def visit(value: struct_pb2.Value, at: str) -> None:
        nonlocal finite
        kind = value.WhichOneof("kind")
        if kind == "number_value" and not math.isfinite(value.number_value):
            col.add(at, "must be a finite number")
            finite = False
        elif kind == "struct_value":
            for key, item in value.struct_value.fields.items():
                visit(item, join_path(at, key))
        elif kind == "list_value":
            for i, item in enumerate(value.list_value.values):
                visit(item, join_path(at, i))

    for key, item in msg.fields.items():
        visit(item, join_path(path, key))
    return finite


def _api_price(msg: scenario_pb2.ApiPriceOverride) -> dict[str, Any]:
    price: dict[str, Any] = {"model_id": msg.model_id}
    put(price, "provider", msg.provider or None)
    for name in ("input_per_mtok", "output_per_mtok"):
        if msg.HasField(name):
            price[name] = money_to_dict(getattr(msg, name))
    return price


def _options(msg: scenario_pb2.SolverOptions, col: Collector, path: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in ("time_limit_s", "relative_gap", "compute_baselines", "compute_sensitivity", "max_gap"):
        put(out, name, optional(msg, name))
    backend = BACKEND_FROM_PROTO.get(msg.backend)
    if backend is None:
        col.add(join_path(path, "backend"), f"unknown value {msg.backend}")
    else:
        out["backend"] = backend
    return out


_SCENARIO_PARTS: tuple[tuple[str, str, Callable[[Any, Collector, str], dict[str, Any]]], ...] = (
    ("constraints", "constraints", _constraints),
    ("pricebook_overrides", "overrides", _overrides),
    ("solver_options", "options", _options),
)
"""Optional scenario sub-messages: proto field, ``PlanRequest`` field, converter."""


def _workloads(
    workloads: Sequence[scenario_pb2.Workload], col: Collector, prefix: str
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
            inference.append({**item, "name": workload.name})
            inference_at.append(index)
        elif kind == "training":
            item = _training(workload.training, col, join_path(path, "training"))
            training.append({**item, "name": workload.name})
            training_at.append(index)
        else:
            col.add(path, "set exactly one of inference and training")
    data = {"inference": tuple(inference), "training": tuple(training)}
    return data, PathMap(tuple(inference_at), tuple(training_at), prefix)


ScenarioMessage = api.PlanFleetRequest | api.EvaluateFleetRequest | api.AnalyzeBreakEvenRequest
"""Requests that carry a scenario: workloads, constraints, pricebook overrides (and solver options,
except AnalyzeBreakEvenRequest)."""


def _set_part(message: Message, name: str) -> Any:
    """The sub-message ``name`` of ``message`` when the message type has it and it is set."""
    has_field = name in message.DESCRIPTOR.fields_by_name and message.HasField(name)
    return getattr(message, name) if has_field else None


def _scenario(message: ScenarioMessage, col: Collector, prefix: str) -> tuple[dict[str, Any], PathMap]:
    """The ``PlanRequest`` dict of the scenario in ``message``."""
    data, paths = _workloads(message.workloads, col, prefix)
    for proto_name, domain_name, convert in _SCENARIO_PARTS:
        part = _set_part(message, proto_name)
        if part is not None:
            data[domain_name] = convert(part, col, join_path(prefix, proto_name))
    if not isinstance(message, api.AnalyzeBreakEvenRequest) and message.measurements:
        data["measurements"] = measured_points(message.measurements, col, prefix)
    return data, paths


def scenario_request(message: ScenarioMessage, book: Pricebook, prefix: str = "") -> ResolvedRequest:
    """The resolved request of the scenario fields of ``message`` (``solver.resolve``: aliases →
    ids, references checked, overrides applied); raises ``InvalidRequest`` with proto field paths
    (under ``prefix``)."""
    col = Collector()
    data, paths = _scenario(message, col, prefix)
    violations = list(col.violations)
    request = validate(domain.PlanRequest, data, paths.to_proto, violations)
    raise_if(violations)
    assert request is not None  # no violations ⇒ validated
    try:
        return resolve(request, book)
    except InvalidRequest as exc:
        raise domain_violations_to_proto(exc, paths) from exc


def plan_request_from_proto(
    message: api.PlanFleetRequest, book: Pricebook, prefix: str = ""
) -> domain.PlanRequest:
    """The validated, resolved ``PlanRequest`` alone (for callers that only need the domain
    request); raises ``InvalidRequest`` with proto field paths."""
    return scenario_request(message, book, prefix).request


def fleet_from_proto(message: scenario_pb2.Fleet, book: Pricebook, path: str = "fleet") -> domain.Fleet:
    col = Collector()
    items = []
    # Checked here, not by ``solver.resolve.resolve_fleet``: an unknown GPU is reported together with
    # the items' other problems, before a ``Fleet`` exists.
    refs = References(book)
    for i, item in enumerate(message.items):
        gpu_path = join_path(path, "items", i, "gpu_id")
        gpu = refs.gpu(item.gpu_id, gpu_path) if item.gpu_id.strip() else ""
        if not gpu:  # a blank GPU reached the pricing as "not a catalogue id" (INTERNAL)
            col.add(gpu_path, "is required: a catalogue GPU id or alias (see `fleetplan catalog`)")
        entry: dict[str, Any] = {"gpu": gpu, "count": item.count, "owned": item.owned}
        if item.server_id:
            entry["server"] = item.server_id
            if gpu and not refs.violations:
                refs.server(item.server_id, gpu, join_path(path, "items", i, "server_id"))
        if item.offer_id:
            entry["offer"] = item.offer_id
        put(entry, "from_year", optional(item, "from_year"))
        put(entry, "until_year", optional(item, "until_year"))
        mode = col.enum(MODE_FROM_PROTO, item.mode, join_path(path, "items", i, "mode"), required=True)
        put(entry, "mode", mode)
        items.append(entry)
    violations = [*col.violations, *refs.violations]
    fleet = validate(
        domain.Fleet, {"items": tuple(items)}, lambda loc: join_path(path, *renamed(loc)), violations
    )
    raise_if(violations)
    assert fleet is not None
    return fleet
