"""Random small plan requests and the calls the checks make on them: PlanFleet and EvaluateFleet
through the real gRPC client against an in-process server (the service's conversions, limits and
answer assembly included), and the planner's own evaluator in process for the many fleets a brute
force prices (the same ``solver.planner.evaluate`` the service calls)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from typing import Any

from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import plan_pb2
from clients import FleetPlanError, FleetPlannerClient
from pricebook.loader import load_default
from pricebook.schema import Money, OfferKind, Pricebook
from service.convert.encode import plan_request_to_proto
from service.convert.enums import MODE_FROM_PROTO
from solver.domain import (
    AcquisitionMode,
    Constraints,
    CountBound,
    Fleet,
    FleetItem,
    InferenceWorkload,
    ModelRef,
    OfferPolicy,
    PlanRequest,
    Sla,
    SolverOptions,
)
from solver.errors import InvalidRequest
from solver.planner.evaluate import evaluate
from solver.pricing.costs import eligible_offers as policy_offers
from solver.resolve import ResolvedRequest, resolve

GPUS = (
    "l4",
    "l40s",
    "a100-sxm-80gb",
    "a100-pcie-80gb",
    "h100-sxm",
    "h100-pcie",
    "h100-nvl",
    "h200-sxm",
    "b200",
    "rtx-pro-6000-server",
)
MODELS = ("Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B", "Qwen/Qwen3-14B")
BUY, RESERVED, ON_DEMAND = AcquisitionMode.BUY, AcquisitionMode.RESERVED, AcquisitionMode.ON_DEMAND
MODE_MIXES = ((BUY,), (ON_DEMAND,), (BUY, ON_DEMAND), (RESERVED, ON_DEMAND), (BUY, RESERVED, ON_DEMAND))
OFFER_KINDS = {
    BUY: (OfferKind.PURCHASE_GPU, OfferKind.PURCHASE_SERVER),
    RESERVED: (OfferKind.RESERVED,),
    ON_DEMAND: (OfferKind.ON_DEMAND,),
}
DAY_PROFILE = tuple(0.35 + 0.65 * (1 if 9 <= h < 18 else 0) for h in range(24))
"""Office hours at the peak, a third of it overnight."""
PLAN_TIME_LIMIT_S = 20.0
PLANNED = (plan_pb2.PLAN_STATUS_OPTIMAL, plan_pb2.PLAN_STATUS_FEASIBLE)


@cache
def book() -> Pricebook:
    return load_default()


def eligible_offers(gpu: str, mode: AcquisitionMode) -> list[str]:
    """The pricebook's offers of ``gpu`` acquired by ``mode`` (before the label policy)."""
    return [o.id for o in book().offers if o.gpu == gpu and o.kind in OFFER_KINDS[mode]]


def planner_offers(constraints: Constraints) -> frozenset[str]:
    """The offers the planner may choose from under ``constraints`` (pins, label policy, filters)."""
    chosen: set[str] = set()
    for gpu in constraints.allowed_gpus:
        for mode in constraints.allowed_modes:
            offers = [o for o in book().offers if o.gpu == gpu and o.kind in OFFER_KINDS[mode]]
            chosen |= {o.id for o in policy_offers(offers, constraints)}
    return frozenset(chosen)


def _workload(rng: random.Random, index: int) -> InferenceWorkload:
    batch = rng.random() < 0.25
    return InferenceWorkload(
        name=f"wl-{index}",
        model=ModelRef(model_id=rng.choice(MODELS)),
        input_tokens=rng.choice((256, 512, 2000)),
        output_tokens=rng.choice((128, 256, 400)),
        peak_request_rate_per_s=round(rng.uniform(0.2, 3.0), 3),
        hourly_profile=DAY_PROFILE if rng.random() < 0.3 else None,
        sla=Sla()
        if batch
        else Sla(ttft_p95_ms=rng.choice((1500, 3000)), tpot_p95_ms=rng.choice((40, 60, 90))),
        interactive=not batch,
        redundancy=1 if not batch and rng.random() < 0.1 else 0,
    )


def _usd(amount: int) -> Money:
    return Money(amount=Decimal(amount), currency="USD")


def random_request(rng: random.Random) -> PlanRequest:
    """1–3 inference workloads on 2–4 GPU types, a buy / rent mix, sometimes offers pinned (a
    rental's 8-GPU instance offer, its 1-GPU one, or both), a GPU count minimum or maximum, a
    capex or monthly opex cap, host costs, the ``cheapest`` offer policy."""
    gpus = tuple(rng.sample(GPUS, rng.randint(2, 4)))
    modes = rng.choice(MODE_MIXES)
    pins: list[str] = []
    for gpu in gpus:
        for mode in (RESERVED, ON_DEMAND):
            offers = eligible_offers(gpu, mode)
            if mode in modes and len(offers) >= 2 and rng.random() < 0.4:
                pins += rng.sample(offers, rng.randint(1, 2))
    bounds: tuple[CountBound, ...] = ()
    if rng.random() < 0.3:
        minimum = rng.random() < 0.5
        count = rng.choice((1, 2, 4))
        bound = CountBound(
            gpu=rng.choice(gpus), min_count=count if minimum else 0, max_count=None if minimum else count
        )
        bounds = (bound,)
    constraints = Constraints(
        currency="USD",
        horizon_months=rng.choice((12, 24, 36)),
        allowed_gpus=gpus,
        allowed_modes=modes,
        pinned_offers=tuple(pins),
        count_bounds=bounds,
        include_host_costs=rng.random() < 0.5,
        offer_policy=OfferPolicy.CHEAPEST if rng.random() < 0.2 else OfferPolicy.MOST_RELIABLE,
        capex_budget=_usd(rng.choice((20_000, 60_000, 150_000))) if rng.random() < 0.15 else None,
        monthly_opex_cap=_usd(rng.choice((1_000, 3_000, 8_000))) if rng.random() < 0.15 else None,
    )
    workloads = tuple(_workload(rng, i) for i in range(rng.randint(1, 3)))
    options = SolverOptions(time_limit_s=PLAN_TIME_LIMIT_S)
    return PlanRequest(inference=workloads, constraints=constraints, options=options)


def lean(request: PlanRequest) -> PlanRequest:
    """``request`` without baselines and sensitivity (the metamorphic variants only need the TCO)."""
    options = request.options.model_copy(update={"compute_baselines": False, "compute_sensitivity": False})
    return request.model_copy(update={"options": options})


def described(request: PlanRequest) -> dict[str, Any]:
    """The request as JSON (what a failure record carries to reproduce it)."""
    return request.model_dump(mode="json", exclude_defaults=True)


@dataclass(frozen=True)
class Planned:
    """What PlanFleet answered (through gRPC)."""

    response: api.PlanFleetResponse
    error: str = ""

    @property
    def has_plan(self) -> bool:
        return not self.error and self.response.plan.status in PLANNED and len(self.response.plan.fleet) > 0

    @property
    def tco(self) -> Decimal:
        return Decimal(self.response.plan.cost.horizon_tco.amount)

    @property
    def status(self) -> str:
        return self.error or plan_pb2.PlanStatus.Name(self.response.plan.status)

    def fleet(self, *, with_offers: bool = True) -> Fleet:
        """The plan's fleet as EvaluateFleet input (each line on its offer, as a re-pricing sends it)."""
        return Fleet(
            items=tuple(
                FleetItem(
                    gpu=line.gpu_id,
                    mode=MODE_FROM_PROTO[line.mode],
                    count=line.gpu_count,
                    owned=line.owned,
                    server=line.server_id or None,
                    offer=(line.offer_id or None) if with_offers else None,
                )
                for line in self.response.plan.fleet
            )
        )

    def summary(self) -> dict[str, Any]:
        if not self.has_plan:
            return {"status": self.status}
        plan = self.response.plan
        return {
            "status": self.status,
            "tco": str(self.tco),
            "fleet": [f"{ln.gpu_id} ×{ln.gpu_count} {ln.offer_id}" for ln in plan.fleet],
            "relative_gap": plan.solver_statistics.relative_gap,
        }


def plan_fleet(client: FleetPlannerClient, request: PlanRequest) -> Planned:
    try:
        return Planned(client.plan_fleet(plan_request_to_proto(request)))
    except FleetPlanError as error:
        return Planned(api.PlanFleetResponse(), f"{error.code.name}: {error.message}")


@dataclass(frozen=True)
class Evaluated:
    feasible: bool
    tco: Decimal | None
    messages: tuple[str, ...]
    error: str = ""


def evaluate_fleet(client: FleetPlannerClient, request: PlanRequest, fleet: Fleet) -> Evaluated:
    """EvaluateFleet through gRPC (no comparison with the optimum)."""
    try:
        answer = client.evaluate_fleet(request, fleet, compare_with_optimal=False)
    except FleetPlanError as error:
        return Evaluated(False, None, (), f"{error.code.name}: {error.message}")
    tco = Decimal(answer.fleet_horizon_tco.amount) if answer.HasField("fleet_horizon_tco") else None
    return Evaluated(answer.feasible, tco, tuple(answer.plan.warnings))


def evaluate_in_process(resolved: ResolvedRequest, fleet: Fleet) -> Evaluated:
    """The planner's EvaluateFleet in process (what the service runs after converting)."""
    try:
        result = evaluate(fleet, resolved, time_limit_s=10, compare_with_optimal=False)
    except InvalidRequest as refused:  # e.g. 1 GPU of an offer that rents whole 8-GPU instances
        return Evaluated(False, None, (), f"INVALID_ARGUMENT: {refused}")
    tco = result.fleet_horizon_tco.amount if result.fleet_horizon_tco is not None else None
    return Evaluated(result.feasible, tco, result.messages)


def resolved(request: PlanRequest) -> ResolvedRequest:
    return resolve(request, book())


def fleet_text(fleet: Fleet) -> str:
    return " + ".join(
        f"{i.gpu} {i.mode.value} ×{i.count}" + (f" ({i.offer})" if i.offer else "") for i in fleet.items
    )
