"""Shared pools and length mixes (issue 20): solve time and the side-by-side with Mélange.

- ``example_500m_krw``: ``examples/500m_krw_portfolio.yaml`` end to end through the real server
  and client (target ≤ 1 s);
- ``single_model_8x8``: one model's traffic as an 8 × 8 length histogram over 4 GPU types
  (``bench.melange``), built and solved by the optimizer (target: proven optimal ≤ 1 s solve);
- ``melange``: fleetplan's plan vs Mélange's ILP (paper formulation, the single-stream capacity
  table of ``bench.melange``) on 4×4 and 8×8 histograms at 80–1,400 req/s, $/h, with
  EvaluateFleet's verdict on Mélange's fleet (``python -m bench.melange`` adds the mixed-stream
  timing of Mélange's groups and writes ``bench/results/melange.json``).

Writes ``bench/results/pooling.json`` with the load average.

    .venv/bin/python -m bench.pooling
"""

from __future__ import annotations

import json
import logging
import os
import platform
import time
from pathlib import Path
from typing import Any

import structlog

from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import plan_pb2
from bench.melange import fleet_of, melange_request, per_hour, solve_melange
from clients.client import FleetPlannerClient
from clients.scenario import load_scenario
from pricebook import load_default
from service.server import start_in_thread
from service.settings import ServerSettings
from solver.optimizer import evaluate_fleet, solve
from solver.optimizer.candidates import build_instance, perf_capacity_checker

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).parent / "results" / "pooling.json"
BOOK = load_default()


def _example_500m(repeat: int = 3) -> dict[str, Any]:
    request = load_scenario(ROOT / "examples" / "500m_krw_portfolio.yaml", api.PlanFleetRequest)
    server = start_in_thread(ServerSettings(address="127.0.0.1:0", plan_cache_entries=0, grace_period_s=1.0))
    runs = []
    try:
        with FleetPlannerClient(server.address, timeout_s=600) as client:
            for _ in range(repeat):
                started = time.perf_counter()
                plan = client.plan_fleet(request).plan
                runs.append(
                    {
                        "seconds": round(time.perf_counter() - started, 3),
                        "status": plan_pb2.PlanStatus.Name(plan.status),
                        "horizon_tco": plan.cost.horizon_tco.amount,
                    }
                )
    finally:
        server.stop(grace_s=0.5)
    return {
        "target_s": 1.0,
        "median_seconds": sorted(r["seconds"] for r in runs)[len(runs) // 2],
        "runs": runs,
    }


def _case(per_axis: int, rate: float, slices: int) -> dict[str, Any]:
    request = melange_request(per_axis, rate)
    started = time.perf_counter()
    instance = build_instance(request, BOOK)
    built = time.perf_counter() - started
    started = time.perf_counter()
    plan = solve(
        instance,
        time_limit_s=30,
        relative_gap=1e-6,
        explain=False,
        capacity_of=perf_capacity_checker(request, BOOK),
    )
    solved = time.perf_counter() - started
    melange = solve_melange(instance, slices)
    evaluation = evaluate_fleet(fleet_of(melange), request, BOOK, time_limit_s=30, compare_optimal=False)
    assert plan.cost is not None
    ours = per_hour(plan.cost.total, request.constraints.horizon_months)
    return {
        "buckets": f"{per_axis}x{per_axis}",
        "rate_req_s": rate,
        "fleetplan_usd_per_h": round(ours, 4),
        "fleetplan_status": plan.stats.status.value,
        "fleetplan_gpus": plan.gpu_counts(),
        "melange_usd_per_h": round(melange.cost_per_hour, 4),
        "melange_gpus": melange.gpus,
        "melange_slices_per_bucket": slices,
        "melange_over_fleetplan": round(melange.cost_per_hour / ours, 4),
        "evaluate_fleet_accepts_melange": evaluation.feasible,
        "build_seconds": round(built, 3),
        "solve_seconds": round(solved, 3),
        "mip_seconds": round(plan.stats.seconds, 3),
        "variables": plan.stats.variables,
    }


def main() -> None:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    cases = [(4, 80.0, 4), (4, 400.0, 4), (4, 1400.0, 4), (8, 80.0, 2), (8, 400.0, 2), (8, 1400.0, 2)]
    melange = [_case(*c) for c in cases]
    single = next(m for m in melange if m["buckets"] == "8x8" and m["rate_req_s"] == 80.0)
    out = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_average": os.getloadavg(),
        },
        "example_500m_krw": _example_500m(),
        "single_model_8x8": {"target_s": 1.0, **single},
        "melange": melange,
    }
    RESULTS.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(out, indent=1))  # noqa: T201


if __name__ == "__main__":
    main()
