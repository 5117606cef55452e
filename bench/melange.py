"""Mélange (Griggs et al., arXiv 2404.14527) reproduced on fleetplan's own capacity tables.

The paper's formulation: a request-size histogram (buckets i of input × output length with rate
λ_i), each bucket cut into S equal slices; binary x_sg assigns slice s to GPU type g; integer N_g
GPUs of type g; per GPU type Σ_s x_sg · (slice rate ÷ T_g,i) ≤ N_g, where T_g,i is the request
rate one GPU of type g sustains for bucket i at the SLA; minimise Σ_g cost_g · N_g. Solved with
the project's solver (OR-Tools / SCIP).

``melange_instance`` builds the same traffic as a fleetplan request: one inference workload with
that ``length_mix`` and peak rate, on-demand GPUs of four types, TP 1, no MIG, one precision, no
headroom, so fleetplan's candidates and Mélange's table come from the same performance model.
The table is each size's single-stream capacity at the SLA on one GPU (``capacity_at_sla``, what
``fleetplan estimate … capacity_at_sla`` prints): Mélange's own assumption, and the linear rule
fleetplan's pools start from before their mixes are checked by the mixed-stream timing.

``python -m bench.melange`` runs the side by side on the 4×4 and 8×8 histograms at 80, 400 and
1,400 req/s (fleetplan's plan ÷ Mélange's cost, EvaluateFleet's verdict on Mélange's fleet, and
the mixed-stream timing of each of Mélange's GPU-type groups) and writes
``bench/results/melange.json`` with the load average.
"""

from __future__ import annotations

import json
import logging
import math
import os
import platform
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog
from ortools.linear_solver import pywraplp

from pricebook import catalog, load_default
from pricebook.schema import Pricebook
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
from solver.optimizer import evaluate_fleet, optimize
from solver.optimizer.candidates import build_instance
from solver.optimizer.instance import FleetInstance
from solver.perf import Deployment, WorkloadShape, resolve_model
from solver.perf.inference import build_replica
from solver.perf.mixed import mix_miss, mix_scale
from solver.units import DAYS_PER_MONTH

GPUS = ("l4", "l40s", "a100-sxm-80gb", "h100-sxm")
MODEL = "meta-llama/Llama-3.1-8B"
SLA = Sla(ttft_p95_ms=2000, tpot_p95_ms=60)
PRECISION = Precision.BF16
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
    workload = InferenceWorkload(  # type: ignore[call-arg]  # lengths default to the mix's mean
        name="chat",
        model=ModelRef(model_id=MODEL),
        precision=PRECISION,
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
    rates: dict[str, dict[int, float]]
    """Request rate of each size (index of the length mix) assigned to each GPU type."""


def hourly_price(instance: FleetInstance) -> dict[str, float]:
    """The cheapest on-demand price per GPU-hour of each GPU type."""
    prices: dict[str, float] = {}
    for o in instance.options:
        if o.mode is AcquisitionMode.ON_DEMAND:
            prices[o.gpu] = min(prices.get(o.gpu, math.inf), o.busy_hourly_per_gpu)
    return prices


def capacity_table(instance: FleetInstance) -> dict[tuple[str, int], float]:
    """T_g,i: req/s one GPU of type g sustains for size i alone at the SLA (fleetplan's
    single-size candidates on one whole GPU)."""
    return {
        (c.gpu, c.load): c.capacity_req_s
        for c in instance.candidates
        if not c.pool and c.tp == 1 and not c.mig_slice
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
    assigned: list[tuple[str, int, float, object]] = []
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
                assigned.append((g, i, slice_rate, x))
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
    used: dict[str, float] = {g: sum(term.solution_value() for term in load[g]) for g in counts}  # type: ignore[attr-defined]
    rates: dict[str, dict[int, float]] = {g: {} for g in counts}
    for g, i, slice_rate, x in assigned:
        if g in rates and x.solution_value() > 0.5:  # type: ignore[attr-defined]
            rates[g][i] = rates[g].get(i, 0.0) + slice_rate
    return MelangeFleet(counts, cost, code == pywraplp.Solver.OPTIMAL, used, rates)


def fleet_of(melange: MelangeFleet) -> Fleet:
    return Fleet(
        items=tuple(
            FleetItem(gpu=g, mode=AcquisitionMode.ON_DEMAND, count=k) for g, k in sorted(melange.gpus.items())
        )
    )


def per_hour(tco: float, months: int) -> float:
    """A horizon TCO of GPUs rented around the clock, per hour."""
    return tco / (months * DAYS_PER_MONTH * 24)


CASES = ((4, 80.0, 4), (4, 400.0, 4), (4, 1400.0, 4), (8, 80.0, 2), (8, 400.0, 2), (8, 1400.0, 2))
"""(sizes per axis, req/s, Mélange's slices per size): the issue-28 instances."""
TARGET_RATIO = 1.02
RESULTS = Path(__file__).parent / "results" / "melange.json"


def group_timing(request: PlanRequest, melange: MelangeFleet, book: Pricebook) -> list[dict[str, Any]]:
    """Each GPU type of Mélange's fleet with its assigned sizes spread evenly over its GPUs, by
    the mixed-stream timing (``solver.perf.mixed.mix_miss``): "" = meets the SLA."""
    (workload,) = request.inference
    model = resolve_model(workload.model, book)
    out = []
    for g, count in sorted(melange.gpus.items()):
        replica = build_replica(model, Deployment(gpu=catalog.gpu(book, g), tp=1, precision=PRECISION), None)
        mix = workload.length_mix
        streams = [
            (WorkloadShape(mix[i].input_tokens, mix[i].output_tokens), rate / count)
            for i, rate in sorted(melange.rates[g].items())
        ]
        out.append(
            {
                "gpu": g,
                "count": count,
                "linear_load": round(melange.load[g], 4),
                "mixed_timing_miss": mix_miss(replica, streams, workload.sla),
                "meets_at_share": round(mix_scale(replica, streams, workload.sla), 4),
            }
        )
    return out


def side_by_side(per_axis: int, rate: float, slices: int, book: Pricebook) -> dict[str, Any]:
    """fleetplan's verified plan against Mélange's ILP on one instance."""
    request = melange_request(per_axis, rate)
    melange = solve_melange(build_instance(request, book), slices)
    started = time.perf_counter()
    plan = optimize(request, book, time_limit_s=request.options.time_limit_s)
    seconds = time.perf_counter() - started
    assert plan.cost is not None
    ours = per_hour(plan.cost.total, request.constraints.horizon_months)
    evaluation = evaluate_fleet(fleet_of(melange), request, book, time_limit_s=30, compare_optimal=False)
    groups = group_timing(request, melange, book)
    return {
        "buckets": f"{per_axis}x{per_axis}",
        "rate_req_s": rate,
        "melange_usd_per_h": round(melange.cost_per_hour, 4),
        "melange_gpus": melange.gpus,
        "melange_optimal": melange.optimal,
        "melange_slices_per_size": slices,
        "fleetplan_usd_per_h": round(ours, 4),
        "fleetplan_gpus": plan.gpu_counts(),
        "fleetplan_status": plan.stats.status.value,
        "fleetplan_seconds": round(seconds, 2),
        "fleetplan_over_melange": round(ours / melange.cost_per_hour, 4),
        "melange_groups_meeting_sla_by_mixed_timing": sum(1 for g in groups if not g["mixed_timing_miss"]),
        "melange_groups": groups,
        "evaluate_fleet_accepts_melange": evaluation.feasible,
        "evaluate_fleet_messages": list(evaluation.messages),
    }


def main() -> None:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    book = load_default()
    load_before = os.getloadavg()
    cases = [side_by_side(*case, book) for case in CASES]
    worst = max(c["fleetplan_over_melange"] for c in cases)
    out = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "target_fleetplan_over_melange": TARGET_RATIO,
        "worst_fleetplan_over_melange": worst,
        "meets_target": worst <= TARGET_RATIO,
        "cases": cases,
    }
    RESULTS.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(out, indent=1))  # noqa: T201


if __name__ == "__main__":
    main()
