"""Metamorphic relations between plans of related requests, each answered by PlanFleet through
gRPC. Only relations that hold by construction are checked:

- more demand is never cheaper (a fleet serving more serves less);
- an extra GPU type, an extra acquisition mode, an extra offer (under the ``cheapest`` offer
  policy, where every offer is eligible) or a looser cap never makes the optimum dearer (the
  larger feasible set keeps the old optimum);
- pinning any eligible offer never makes it cheaper (a smaller feasible set);
- workload order and names do not change the cost;
- one workload split into two identical halves is never cheaper than the whole (the halves' plan
  serves the whole, routed across their replicas);
- a static deployment is never cheaper than the hourly one (static is hourly with every hour's
  replicas on held GPUs equal);
- a batch workload with a 24-hour deadline is never dearer than served as it arrives;
- headroom: the plan's fleet evaluates feasible at demand × (1 + demand_growth_served) and not
  two points beyond it (unless reported as ``at_least``);
- reprice of a saved plan at unchanged prices shows the plan's TCO, still feasible.

Costs are compared within the two solves' relative gaps (each plan is within its gap of its
optimum) plus a cent per plan for rounding."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from bench.independent_checks.scenarios import (
    GPUS,
    ON_DEMAND,
    Evaluated,
    Planned,
    described,
    eligible_offers,
    evaluate_fleet,
    fleet_text,
    lean,
    plan_fleet,
)
from clients import FleetPlanError, FleetPlannerClient
from pricebook.overrides import OfferOverride, PricebookOverrides
from pricebook.schema import Money, OfferKind
from service.convert.encode import plan_request_to_proto
from solver.domain import (
    DeploymentPolicy,
    Fleet,
    InferenceWorkload,
    OfferPolicy,
    PlanRequest,
)

CENT = Decimal("0.01")
BEYOND = 0.02
"""Headroom: demand this far past the reported growth must not be served (the search's own
tolerance is half a point)."""
PINS_PER_INSTANCE = 3


@dataclass
class RelationRun:
    """The counts and failures of one relation over the instances."""

    checked: int = 0
    skipped: int = 0
    failures: list[dict[str, Any]] = field(default_factory=list)


Direction = str
"""'>=': the variant costs at least the base; '<=': at most; '==': the same (all within gaps)."""


def _gap(planned: Planned) -> Decimal:
    stats = planned.response.plan.solver_statistics
    return Decimal(str(max(stats.relative_gap, stats.requested_relative_gap)))


def holds(base: Planned, variant: Planned, direction: Direction) -> bool | None:
    """Whether ``variant`` relates to ``base`` as ``direction`` says; None = nothing to compare."""
    if not base.has_plan:
        return None
    if not variant.has_plan:
        # No plan for a larger demand or a smaller feasible set is consistent with '>='.
        return direction == ">=" and not variant.error.startswith(("INTERNAL", "UNKNOWN"))
    tolerance = (_gap(base) + _gap(variant)) * max(base.tco, variant.tco) + 2 * CENT
    if direction == ">=":
        return variant.tco >= base.tco - tolerance
    if direction == "<=":
        return variant.tco <= base.tco + tolerance
    return abs(variant.tco - base.tco) <= tolerance


def _with_constraints(request: PlanRequest, **changes: object) -> PlanRequest:
    return request.model_copy(update={"constraints": request.constraints.model_copy(update=changes)})


def _with_inference(request: PlanRequest, workloads: tuple[InferenceWorkload, ...]) -> PlanRequest:
    return request.model_copy(update={"inference": workloads})


def scaled(request: PlanRequest, factor: float, only: str | None = None) -> PlanRequest:
    """Every (or ``only`` the named) inference workload's demand × ``factor``."""

    def grow(w: InferenceWorkload) -> InferenceWorkload:
        if only is not None and w.name != only:
            return w
        if w.peak_request_rate_per_s is not None:
            return w.model_copy(update={"peak_request_rate_per_s": w.peak_request_rate_per_s * factor})
        assert w.daily_tokens is not None
        return w.model_copy(update={"daily_tokens": max(1, int(w.daily_tokens * factor))})

    return _with_inference(request, tuple(grow(w) for w in request.inference))


Variant = tuple[str, Direction, PlanRequest, str]
"""Relation name, direction, the variant request, and what was changed (for the failure record)."""


def variants(request: PlanRequest, base: Planned) -> Iterator[Variant]:
    """Each relation's variant(s) of ``request`` (whose plan is ``base``)."""
    limits = request.constraints
    yield "more demand never cheaper", ">=", scaled(request, 1.3), "demand × 1.3"
    extra = next((g for g in GPUS if g not in limits.allowed_gpus), None)
    if extra is not None:
        more = (*limits.allowed_gpus, extra)
        yield (
            "an extra GPU type never dearer",
            "<=",
            _with_constraints(request, allowed_gpus=more),
            f"+{extra}",
        )
    if ON_DEMAND not in limits.allowed_modes:
        modes = (*limits.allowed_modes, ON_DEMAND)
        yield (
            "an extra mode never dearer",
            "<=",
            _with_constraints(request, allowed_modes=modes),
            "+on_demand",
        )
    if limits.count_bounds:
        looser = tuple(
            b.model_copy(
                update={
                    "min_count": max(0, b.min_count - 1),
                    "max_count": None if b.max_count is None else b.max_count + 2,
                }
            )
            for b in limits.count_bounds
        )
        yield (
            "a looser count cap never dearer",
            "<=",
            _with_constraints(request, count_bounds=looser),
            "min_count − 1, max_count + 2",
        )
    renamed = tuple(
        w.model_copy(update={"name": f"renamed-{w.name[::-1]}"}) for w in reversed(request.inference)
    )
    yield (
        "workload order and names do not change the cost",
        "==",
        _with_inference(request, renamed),
        "reversed, renamed",
    )
    yield from _split(request)
    static = _with_constraints(request, deployment_policy=DeploymentPolicy.STATIC)
    hourly = _with_constraints(request, deployment_policy=DeploymentPolicy.HOURLY)
    yield "static ≥ hourly (static side)", ">=", static, "deployment_policy static vs the request as given"
    yield "static ≥ hourly (hourly side)", "<=", hourly, "deployment_policy hourly vs the request as given"
    yield from _batch_window(request)


def _split(request: PlanRequest) -> Iterator[Variant]:
    first = request.inference[0]
    if first.peak_request_rate_per_s is None or len(request.inference) >= 3:
        return
    half = first.peak_request_rate_per_s / 2
    halves = tuple(
        first.model_copy(update={"name": f"{first.name}-{part}", "peak_request_rate_per_s": half})
        for part in "ab"
    )
    split = _with_inference(request, (*halves, *request.inference[1:]))
    yield "two identical halves never cheaper than the whole", ">=", split, f"{first.name} split in halves"


def _batch_window(request: PlanRequest) -> Iterator[Variant]:
    for i, w in enumerate(request.inference):
        if not w.interactive and w.redundancy == 0 and w.batch_deadline_hours is None:
            deferred = w.model_copy(update={"batch_deadline_hours": 24})
            workloads = (*request.inference[:i], deferred, *request.inference[i + 1 :])
            yield (
                "a 24-hour batch window never dearer",
                "<=",
                _with_inference(request, workloads),
                f"{w.name} deadline 24 h",
            )


def offer_variants(request: PlanRequest) -> Iterator[tuple[PlanRequest, Variant]]:
    """Under the ``cheapest`` policy without pins (the base), pinning an offer never makes the plan
    cheaper, and an extra (cheaper-than-any) offer never makes it dearer."""
    base = _with_constraints(request, offer_policy=OfferPolicy.CHEAPEST, pinned_offers=())
    lines = [(g, m) for g in base.constraints.allowed_gpus for m in base.constraints.allowed_modes]
    offers = sorted({o for g, m in lines for o in eligible_offers(g, m)})
    for offer in offers[:: max(1, len(offers) // PINS_PER_INSTANCE)][:PINS_PER_INSTANCE]:
        pinned = _with_constraints(base, pinned_offers=(offer,))
        yield base, ("pinning an eligible offer never cheaper", ">=", pinned, f"pinned {offer}")
    gpu = base.constraints.allowed_gpus[0]
    quote = OfferOverride(
        offer_id="checks.extra-quote",
        kind=OfferKind.ON_DEMAND,
        gpu=gpu,
        price=Money(amount=Decimal("0.50"), currency="USD"),
    )
    if ON_DEMAND in base.constraints.allowed_modes:
        extra = base.model_copy(update={"overrides": PricebookOverrides(offers=(quote,))})
        yield base, ("an extra offer never dearer", "<=", extra, f"+on-demand quote {gpu} 0.50 USD/GPU-h")


def cap_variants(request: PlanRequest, base: Planned) -> Iterator[tuple[PlanRequest, Variant]]:
    """A capex cap under the plan's capex, then a looser one: the looser is never dearer."""
    capex = Decimal(base.response.plan.cost.capex.amount)
    if capex <= 0:
        return
    tight = _with_constraints(
        request, capex_budget=Money(amount=(capex * Decimal("0.85")).quantize(CENT), currency="USD")
    )
    loose = _with_constraints(
        request, capex_budget=Money(amount=(capex * Decimal("1.2")).quantize(CENT), currency="USD")
    )
    yield (
        tight,
        (
            "a looser capex cap never dearer",
            "<=",
            loose,
            f"capex cap {capex * Decimal('0.85'):.2f} → × 1.2 of the plan's capex",
        ),
    )
    yield request, ("a capex cap never cheaper", ">=", tight, f"capex cap 0.85 × the plan's capex {capex}")


def check_relations(
    client: FleetPlannerClient, seed: int, request: PlanRequest, runs: dict[str, RelationRun]
) -> None:
    """Every relation on ``request`` (lean: no baselines or sensitivity)."""
    request = lean(request)
    cache: dict[str, Planned] = {}

    def planned(r: PlanRequest) -> Planned:
        key = r.model_dump_json()
        if key not in cache:
            cache[key] = plan_fleet(client, r)
        return cache[key]

    base = planned(request)
    pairs: list[tuple[PlanRequest, Variant]] = [(request, v) for v in variants(request, base)]
    pairs += list(offer_variants(request))
    if base.has_plan:
        pairs += list(cap_variants(request, base))
    for base_request, (name, direction, variant, change) in pairs:
        run = runs.setdefault(name, RelationRun())
        left, right = planned(base_request), planned(variant)
        verdict = holds(left, right, direction)
        if verdict is None:
            run.skipped += 1
            continue
        run.checked += 1
        if not verdict:
            run.failures.append(
                {
                    "relation": name,
                    "seed": seed,
                    "change": change,
                    "base": left.summary(),
                    "variant": right.summary(),
                    "base_request": described(base_request),
                    "variant_request": described(variant),
                }
            )


def check_headroom(
    client: FleetPlannerClient, seed: int, request: PlanRequest, base: Planned, runs: dict[str, RelationRun]
) -> None:
    """``base`` is the full plan (with sensitivity): its headroom, overall and per workload, holds at
    demand × (1 + g) on the plan's fleet and fails ``BEYOND`` past it."""
    plan = base.response.plan
    if not base.has_plan or not plan.HasField("headroom"):
        return
    fleet = base.fleet()
    head = plan.headroom
    probes: list[tuple[str | None, float, bool]] = [(None, head.demand_growth_served, head.at_least)]
    probes += [(w.workload_name, w.demand_growth_served, w.at_least) for w in head.workloads]
    for only, growth, at_least in probes:
        run = runs.setdefault("headroom holds at 1 + g", RelationRun())
        at = (
            evaluate_fleet(client, request, fleet)
            if growth == 0
            else evaluate_fleet(client, scaled(request, (1 + growth) * (1 - 1e-9), only), fleet)
        )
        run.checked += 1
        if not at.feasible:
            run.failures.append(_headroom_failure(seed, request, (only, growth, "holds"), at, fleet))
        if at_least:
            continue
        run = runs.setdefault("headroom fails two points beyond", RelationRun())
        past = evaluate_fleet(client, scaled(request, 1 + growth + BEYOND, only), fleet)
        run.checked += 1
        if past.feasible:
            run.failures.append(_headroom_failure(seed, request, (only, growth, "fails beyond"), past, fleet))


def _headroom_failure(
    seed: int,
    request: PlanRequest,
    probe: tuple[str | None, float, str],
    got: Evaluated,
    fleet: Fleet,
) -> dict[str, Any]:
    only, growth, expected = probe
    return {
        "relation": f"headroom {expected}",
        "seed": seed,
        "workload": only or "all",
        "demand_growth_served": growth,
        "evaluation": {
            "feasible": got.feasible,
            "tco": str(got.tco),
            "error": got.error,
            "messages": list(got.messages)[:3],
        },
        "fleet": fleet_text(fleet),
        "request": described(request),
    }


def check_reprice(
    client: FleetPlannerClient, seed: int, request: PlanRequest, runs: dict[str, RelationRun]
) -> None:
    """A saved plan re-priced at unchanged prices: the plan's TCO, still feasible."""
    run = runs.setdefault("reprice at unchanged prices = the plan", RelationRun())
    message = plan_request_to_proto(lean(request))
    message.save = True
    try:
        saved = client.plan_fleet(message)
        if not saved.plan_id or not saved.plan.fleet:
            run.skipped += 1
            return
        repriced = client.reprice_plan(saved.plan_id)
    except FleetPlanError as error:
        run.checked += 1
        run.failures.append(
            {"relation": "reprice", "seed": seed, "error": str(error), "request": described(request)}
        )
        return
    run.checked += 1
    if (
        not repriced.still_feasible
        or repriced.current_horizon_tco.amount != saved.plan.cost.horizon_tco.amount
    ):
        run.failures.append(
            {
                "relation": "reprice at unchanged prices = the plan",
                "seed": seed,
                "plan_tco": saved.plan.cost.horizon_tco.amount,
                "repriced_tco": repriced.current_horizon_tco.amount,
                "still_feasible": repriced.still_feasible,
                "reasons": list(repriced.reasons)[:5],
                "request": described(request),
            }
        )
