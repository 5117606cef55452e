"""Whole-answer latency: what a user waits for, end to end through the real gRPC server and client.

Two requests (issue 14's targets on this 2-core machine):
- ``portfolio_4``: four workloads of the solver benchmark's generator over the whole catalogue, in
  KRW with VAT, bought or rented on demand, with the default solver options (plan, baselines,
  sensitivity, runner-ups) — target ≤ 10 s with nothing cut short;
- ``example_500m_krw``: ``examples/500m_krw_portfolio.yaml`` — target ≤ 1 s.

Each is planned ``--repeat`` times on a fresh server without answer reuse; writes
``bench/results/whole_answer.json`` with the wall times, the load average, whether the answer
was complete (``provenance``-level: status, limit, warnings) and what the time went to.

    .venv/bin/python -m bench.whole_answer [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any

import structlog

from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import plan_pb2
from bench.solver_scaling import portfolio
from clients.client import FleetPlannerClient
from clients.scenario import load_scenario
from service.convert.encode import plan_request_to_proto
from service.server import start_in_thread
from service.settings import ServerSettings
from solver.domain import AcquisitionMode

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).parent / "results" / "whole_answer.json"


def portfolio_4_request() -> api.PlanFleetRequest:
    base = portfolio(4)
    constraints = base.constraints.model_copy(
        update={
            "currency": "KRW",
            "include_vat": True,
            "allowed_modes": (AcquisitionMode.BUY, AcquisitionMode.ON_DEMAND),
        }
    )
    return plan_request_to_proto(base.model_copy(update={"constraints": constraints}))


def _example(name: str) -> api.PlanFleetRequest:
    return load_scenario(ROOT / "examples" / f"{name}.yaml", api.PlanFleetRequest)


def _measure(client: FleetPlannerClient, request: api.PlanFleetRequest, repeat: int) -> dict[str, Any]:
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        response = client.plan_fleet(request)
        seconds = time.perf_counter() - started
        plan = response.plan
        stats = plan.solver_statistics
        runs.append(
            {
                "seconds": round(seconds, 3),
                "status": plan_pb2.PlanStatus.Name(plan.status),
                "limit_fired": plan_pb2.LimitFired.Name(stats.limit_fired),
                "gap": stats.relative_gap,
                "main_solve_seconds": round(stats.solve_seconds, 3),
                "baselines": len(plan.baselines),
                "sensitivity_rows": len(plan.sensitivity),
                "warnings": list(plan.warnings),
                "horizon_tco": plan.cost.horizon_tco.amount,
            }
        )
    times = [r["seconds"] for r in runs]
    return {"median_seconds": statistics.median(times), "max_seconds": max(times), "runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    server = start_in_thread(ServerSettings(address="127.0.0.1:0", plan_cache_entries=0, grace_period_s=1.0))
    try:
        with FleetPlannerClient(server.address, timeout_s=600) as client:
            results = {
                "portfolio_4": _measure(client, portfolio_4_request(), args.repeat),
                "example_500m_krw": _measure(client, _example("500m_krw_portfolio"), args.repeat),
            }
    finally:
        server.stop(grace_s=0.5)
    out = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_average": os.getloadavg(),
        },
        "targets_s": {"portfolio_4": 10.0, "example_500m_krw": 1.0},
        "results": results,
    }
    RESULTS.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    for name, r in results.items():
        print(f"{name}: median {r['median_seconds']:.2f} s, max {r['max_seconds']:.2f} s")  # noqa: T201


if __name__ == "__main__":
    main()
