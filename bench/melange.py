"""Mélange (Griggs et al., arXiv 2404.14527) reproduced on fleetplan's own capacity tables.

The paper's formulation: a request-size histogram (buckets i of input × output length with rate
λ_i), each bucket cut into S equal slices; binary x_sg assigns slice s to GPU type g; integer N_g
GPUs of type g; per GPU type Σ_s x_sg · (slice rate ÷ T_g,i) ≤ N_g, where T_g,i is the request
rate one GPU of type g sustains for bucket i at the SLA; minimise Σ_g cost_g · N_g. Solved with
the project's solver (OR-Tools / SCIP).

``melange_instance`` builds the same traffic as a fleetplan request: one inference workload with
that ``length_mix`` and peak rate, on-demand GPUs of four types, TP 1, no MIG, one precision, no
headroom, so fleetplan's candidates and Mélange's table come from the same performance model.
The table is fleetplan's *pooled* capacity of each size on each GPU (``solver.perf.mixed``): the
rate at which sizes may share a replica by a linear rule and still meet the SLA.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ortools.linear_solver import pywraplp

from solver.domain import (
    AcquisitionMode,
    Constraints,
    Fleet,
    FleetItem,
    InferenceWorkload,
    LengthBucket,
    ModelRef,
    PlanRequest,
    Precision,
    Sla,
    SolverOptions,
)
from solver.optimizer.instance import FleetInstance
from solver.units import DAYS_PER_MONTH

GPUS = ("l4", "l40s", "a100-sxm-80gb", "h100-sxm")
MODEL = "meta-llama/Llama-3.1-8B"
SLA = Sla(ttft_p95_ms=2000, tpot_p95_ms=60)
CHAT_SHARE = 0.8
"""80/20 chat / long-prompt traffic."""


def length_mix(per_axis: int) -> tuple[LengthBucket, ...]:
    """An ``per_axis`` × ``per_axis`` histogram: chat (short prompts, 80 %) and long prompts
    (20 %), input lengths 128…8192 and output lengths 32…1024 on geometric grids."""
    inputs = [round(128 * (8192 / 128) ** (i / (per_axis - 1))) for i in range(per_axis)]
    outputs = [round(32 * (1024 / 32) ** (j / (per_axis - 1))) for j in range(per_axis)]
    buckets = []
    for i, inp in enumerate(inputs):
        # Chat prompts fall off with length; long prompts are the upper half of the input axis.
        chat = CHAT_SHARE * (0.5**i) / sum(0.5**k for k in range(per_axis))
        upper = i >= per_axis // 2
        long_prompt = (1 - CHAT_SHARE) / (per_axis - per_axis // 2) if upper else 0.0
        for j, out in enumerate(outputs):
            weight = (0.6 ** abs(j - per_axis // 3)) / sum(
                0.6 ** abs(k - per_axis // 3) for k in range(per_axis)
            )
            share = (chat + long_prompt) * weight
            buckets.append(LengthBucket(input_tokens=inp, output_tokens=out, share=share))
    return tuple(buckets)


def melange_request(per_axis: int, rate_req_s: float, time_limit_s: float = 30.0) -> PlanRequest:
    workload = InferenceWorkload(
        name="chat",
        model=ModelRef(model_id=MODEL),
        precision=Precision.BF16,
        length_mix=length_mix(per_axis),
        peak_request_rate_per_s=rate_req_s,
        sla=SLA,
        allowed_tp=(1,),
        allow_mig=False,
        target_utilization=1.0,
    )
    return PlanRequest(
        inference=(workload,),
        constraints=Constraints(
            currency="USD", allowed_gpus=GPUS, allowed_modes=(AcquisitionMode.ON_DEMAND,), horizon_months=1
        ),
        options=SolverOptions(
            time_limit_s=time_limit_s, relative_gap=1e-6, compute_baselines=False, compute_sensitivity=False
        ),
    )


@dataclass(frozen=True, slots=True)
class MelangeFleet:
    gpus: dict[str, int]
    cost_per_hour: float
    optimal: bool
    load: dict[str, float]
    """Σ slice load ÷ capacity per GPU type (≤ its count)."""


def hourly_price(instance: FleetInstance) -> dict[str, float]:
    """The cheapest on-demand price per GPU-hour of each GPU type."""
    prices: dict[str, float] = {}
    for o in instance.options:
        if o.mode is AcquisitionMode.ON_DEMAND:
            prices[o.gpu] = min(prices.get(o.gpu, math.inf), o.busy_hourly_per_gpu)
    return prices


def capacity_table(instance: FleetInstance) -> dict[tuple[str, int], float]:
    """T_g,i: req/s one GPU of type g sustains for size i when sizes share it (fleetplan's pooled
    candidates on one whole GPU)."""
    return {
        (c.gpu, c.load): c.capacity_req_s
        for c in instance.candidates
        if c.pool and c.tp == 1 and not c.mig_slice
    }


def solve_melange(instance: FleetInstance, slices: int, time_limit_s: float = 30.0) -> MelangeFleet:
    """The paper's ILP on ``instance``'s demand, prices and pooled capacity table."""
    (demand,) = instance.inference
    rate = demand.peak_req_s
    table = capacity_table(instance)
    prices = hourly_price(instance)
    gpus = sorted({g for g, _ in table} & set(prices))
    solver = pywraplp.Solver.CreateSolver("SCIP")
    assert solver is not None
    n = {g: solver.IntVar(0, solver.infinity(), f"N[{g}]") for g in gpus}
    load: dict[str, list[object]] = {g: [] for g in gpus}
    for i, share in enumerate(demand.loads):
        slice_rate = rate * share / slices
        for s in range(slices):
            choices = []
            for g in gpus:
                cap = table.get((g, i), 0.0)
                if cap <= 0:
                    continue
                x = solver.BoolVar(f"x[{i},{s},{g}]")
                choices.append(x)
                load[g].append(slice_rate / cap * x)
            solver.Add(sum(choices) == 1)
    for g in gpus:
        solver.Add(sum(load[g]) <= n[g])  # type: ignore[arg-type]
    solver.Minimize(sum(prices[g] * n[g] for g in gpus))
    solver.SetTimeLimit(int(time_limit_s * 1000))
    params = pywraplp.MPSolverParameters()
    params.SetDoubleParam(pywraplp.MPSolverParameters.RELATIVE_MIP_GAP, 1e-6)
    code = solver.Solve(params)
    assert code in (pywraplp.Solver.OPTIMAL, pywraplp.Solver.FEASIBLE)
    counts = {g: round(n[g].solution_value()) for g in gpus if round(n[g].solution_value()) > 0}
    cost = sum(prices[g] * k for g, k in counts.items())
    used = {g: sum(term.solution_value() for term in load[g]) for g in counts}  # type: ignore[attr-defined]
    return MelangeFleet(counts, cost, code == pywraplp.Solver.OPTIMAL, used)


def fleet_of(melange: MelangeFleet) -> Fleet:
    return Fleet(
        items=tuple(
            FleetItem(gpu=g, mode=AcquisitionMode.ON_DEMAND, count=k) for g, k in sorted(melange.gpus.items())
        )
    )


def per_hour(tco: float, months: int) -> float:
    """A horizon TCO of GPUs rented around the clock, per hour."""
    return tco / (months * DAYS_PER_MONTH * 24)
