"""Domain requests → proto requests, for the Python client (which accepts pydantic domain objects).

The inverse of ``service.convert.scenario``: ``scenario.plan_request_from_proto(plan_request_to_proto(r))``
gives ``r`` back (for a request whose GPU ids are catalogue ids).
"""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from api.fleetplan.v1 import common_pb2, scenario_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from pricebook.overrides import OfferOverride, PricebookOverrides
from service.convert.enums import (
    BACKEND_TO_PROTO,
    COST_OBJECTIVE_TO_PROTO,
    DEPLOYMENT_POLICY_TO_PROTO,
    ENGINE_TO_PROTO,
    ISOLATION_TO_PROTO,
    METHOD_TO_PROTO,
    MODE_TO_PROTO,
    OFFER_KIND_TO_PROTO,
    OFFER_POLICY_TO_PROTO,
    PRECISION_TO_PROTO,
    QUANTILE_TO_PROTO,
    SITE_MODEL_TO_PROTO,
)
from service.convert.fields import put
from service.convert.money import money_to_proto
from solver import domain


def _model_ref(ref: domain.ModelRef) -> common_pb2.ModelRef:
    if ref.model_id is not None:
        return common_pb2.ModelRef(model_id=ref.model_id)
    assert ref.spec is not None  # a ModelRef has exactly one of them
    return common_pb2.ModelRef(spec=common_pb2.ModelSpec(**ref.spec.model_dump(exclude_none=True)))


def _inference(w: domain.InferenceWorkload) -> scenario_pb2.Workload:
    fields: dict[str, Any] = {
        "model": _model_ref(w.model),
        "input_tokens": w.input_tokens,
        "output_tokens": w.output_tokens,
        "peak_to_average": w.peak_to_average,
        "prefix_cache_hit_rate": w.prefix_cache_hit_rate,
        "redundancy": w.redundancy,
        "engine": ENGINE_TO_PROTO[w.engine],
        "serving_kind": scenario_pb2.SERVING_KIND_INTERACTIVE
        if w.interactive
        else scenario_pb2.SERVING_KIND_BATCH,
        "sla": scenario_pb2.Sla(**w.sla.model_dump(exclude_none=True)),
    }
    for key in ("precision", "kv_precision"):
        precision = getattr(w, key)
        put(fields, key, PRECISION_TO_PROTO[precision] if precision else None)
    if w.allowed_precisions:
        fields["allowed_precisions"] = [PRECISION_TO_PROTO[p] for p in w.allowed_precisions]
    put(fields, "daily_tokens", w.daily_tokens)
    put(fields, "peak_request_rate_per_s", w.peak_request_rate_per_s)
    put(fields, "hourly_profile", None if w.hourly_profile is None else list(w.hourly_profile))
    fields["isolation"] = ISOLATION_TO_PROTO[w.isolation]
    if w.length_mix:
        fields["length_mix"] = [
            scenario_pb2.LengthBucket(
                input_tokens=b.input_tokens, output_tokens=b.output_tokens, share=b.share
            )
            for b in w.length_mix
        ]
    if w.allowed_tp:
        fields["allowed_tp"] = list(w.allowed_tp)
    put(fields, "max_tp", w.max_tp)
    put(fields, "allow_mig", None if w.allow_mig else False)
    put(fields, "allow_disaggregation", w.allow_disaggregation)
    put(fields, "target_utilization", w.target_utilization)
    put(fields, "batch_deadline_hours", w.batch_deadline_hours)
    for key in ("demand_by_year", "daily_tokens_by_year", "peak_request_rate_by_year"):
        if getattr(w, key):
            fields[key] = list(getattr(w, key))
    return scenario_pb2.Workload(name=w.name, inference=scenario_pb2.InferenceWorkload(**fields))


def _training(t: domain.TrainingWorkload) -> scenario_pb2.Workload:
    fields: dict[str, Any] = {
        "model": _model_ref(t.model),
        "method": METHOD_TO_PROTO[t.method],
        "runs_per_month": t.runs_per_month,
        "seq_len": t.seq_len,
    }
    put(fields, "tokens_per_run", t.tokens_per_run)
    if t.reference is not None:
        fields["reference_gpu_hours"] = scenario_pb2.ReferenceGpuHours(
            gpu_id=t.reference.gpu, gpu_hours_per_month=t.reference.gpu_hours_per_month
        )
    put(fields, "deadline_hours", t.deadline_hours)
    put(fields, "max_gpus_per_run", t.max_gpus_per_run)
    return scenario_pb2.Workload(name=t.name, training=scenario_pb2.TrainingWorkload(**fields))


def _count_bound(b: domain.CountBound) -> scenario_pb2.CountBound:
    bound = scenario_pb2.CountBound(gpu_id=b.gpu, min_count=b.min_count)
    if b.max_count is not None:
        bound.max_count = b.max_count
    return bound


def _constraints(c: domain.Constraints) -> scenario_pb2.Constraints:
    fields: dict[str, Any] = {
        "currency_code": c.currency,
        "horizon_months": c.horizon_months,
        "allowed_gpu_ids": c.allowed_gpus,
        "allowed_modes": [MODE_TO_PROTO[m] for m in c.allowed_modes],
        "owned_gpus": [scenario_pb2.OwnedGpus(gpu_id=o.gpu, count=o.count) for o in c.owned],
        "count_bounds": [_count_bound(b) for b in c.count_bounds],
        "include_vat": c.include_vat,
        "include_host_costs": c.include_host_costs,
        "capacity_quantile": QUANTILE_TO_PROTO[c.capacity_quantile],
        "capex_budget_includes_vat": c.capex_budget_includes_vat,
        "offer_policy": OFFER_POLICY_TO_PROTO[c.offer_policy],
        "include_providers": c.include_providers,
        "exclude_providers": c.exclude_providers,
        "pinned_offer_ids": c.pinned_offers,
        "include_regions": c.include_regions,
        "exclude_regions": c.exclude_regions,
        "allow_consumer_gpus": c.allow_consumer_gpus,
        "include_leases": c.include_leases,
    }
    put(fields, "capex_budget", money_to_proto(c.capex_budget))
    put(fields, "monthly_opex_cap", money_to_proto(c.monthly_opex_cap))
    put(fields, "power_cap_kw", c.power_cap_kw)
    put(fields, "rack_units_cap", c.rack_units_cap)
    if c.deployment_policy is not None:
        fields["deployment_policy"] = DEPLOYMENT_POLICY_TO_PROTO[c.deployment_policy]
    if c.site_model is not None:
        fields["site_model"] = SITE_MODEL_TO_PROTO[c.site_model]
    put(fields, "residual_value_credit", c.residual_value_credit)
    put(fields, "allow_colocation", None if c.allow_colocation else False)
    put(fields, "discount_rate_annual", c.discount_rate_annual)
    if c.objective is not None:
        fields["objective"] = COST_OBJECTIVE_TO_PROTO[c.objective]
    return scenario_pb2.Constraints(**fields)


def _offer(x: OfferOverride) -> scenario_pb2.OfferOverride:
    fields: dict[str, Any] = {
        "offer_id": x.offer_id,
        "provider": x.provider,
        "price": money_to_proto(x.price),
        "term_months": x.term_months,
    }
    put(fields, "kind", None if x.kind is None else OFFER_KIND_TO_PROTO[x.kind])
    put(fields, "gpu_id", x.gpu)
    put(fields, "server_id", x.server)
    return scenario_pb2.OfferOverride(**fields)


def _overrides(o: PricebookOverrides) -> scenario_pb2.PricebookOverrides:
    out = scenario_pb2.PricebookOverrides(offers=[_offer(x) for x in o.offers])
    if o.site:
        json_format.ParseDict(o.site, out.site_assumptions)
    if o.fx_usd_krw is not None:
        out.fx_usd_krw = o.fx_usd_krw
    for p in o.api_prices:
        out.api_prices.append(
            scenario_pb2.ApiPriceOverride(
                model_id=p.model_id,
                provider=p.provider,
                input_per_mtok=money_to_proto(p.input_per_mtok),
                output_per_mtok=money_to_proto(p.output_per_mtok),
            )
        )
    return out


def _options(opt: domain.SolverOptions) -> scenario_pb2.SolverOptions:
    return scenario_pb2.SolverOptions(
        time_limit_s=opt.time_limit_s,
        relative_gap=opt.relative_gap,
        backend=BACKEND_TO_PROTO[opt.backend],
        compute_baselines=opt.compute_baselines,
        compute_sensitivity=opt.compute_sensitivity,
        max_gap=opt.max_gap,
    )


def plan_request_to_proto(request: domain.PlanRequest) -> api.PlanFleetRequest:
    """A domain ``PlanRequest`` as the proto request (inference workloads first, then training)."""
    return api.PlanFleetRequest(
        workloads=[*(_inference(w) for w in request.inference), *(_training(t) for t in request.training)],
        constraints=_constraints(request.constraints),
        pricebook_overrides=_overrides(request.overrides),
        solver_options=_options(request.options),
    )


def fleet_to_proto(fleet: domain.Fleet) -> scenario_pb2.Fleet:
    return scenario_pb2.Fleet(items=[fleet_item_to_proto(i) for i in fleet.items])


def fleet_item_to_proto(item: domain.FleetItem) -> scenario_pb2.FleetItem:
    return scenario_pb2.FleetItem(
        gpu_id=item.gpu,
        mode=MODE_TO_PROTO[item.mode],
        count=item.count,
        owned=item.owned,
        server_id=item.server or "",
        offer_id=item.offer or "",
    )
