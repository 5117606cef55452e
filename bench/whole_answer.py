"""Whole-answer latency: what a user waits for, end to end through the real gRPC server and client.

Three requests (issue 31's targets on this 2-core machine):
- ``kr_rag_bid_3000``: the 3,000-user Korean public RAG bid (4 workloads, 7 GPU types, buy only,
  KRW with VAT; ``tests/regressions/round3/repro/12-report-sensitivity-differs.yaml``) — target ≤ 5 s;
- ``portfolio_4``: four workloads of the solver benchmark's generator over the whole catalogue, in
  KRW with VAT, bought or rented on demand, with the default solver options (plan, baselines,
  sensitivity, runner-ups) — target ≤ 10 s with nothing cut short;
- ``example_500m_krw``: ``examples/500m_krw_portfolio.yaml`` — target ≤ 1 s.

Each is planned ``--repeat`` times on a fresh server without answer reuse; writes
``bench/results/whole_answer.json`` (or ``--out``) with the wall times, the load average before
and after, whether the answer was complete (status, limit, warnings) and what each stage of the
call used (wall and CPU seconds, from the answer's solver statistics; CPU time is less noisy
than wall time on a shared machine).

    .venv/bin/python -m bench.whole_answer [--repeat 3] [--only kr_rag_bid_3000] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import statistics
import time
from collections.abc import Callable
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
from solver.domain import AcquisitionMode, PlanRequest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).parent / "results" / "whole_answer.json"


def portfolio_4() -> PlanRequest:
    """The 4-workload portfolio over the whole catalogue, in KRW with VAT, buy + on demand."""
    base = portfolio(4)
    constraints = base.constraints.model_copy(
        update={
            "currency": "KRW",
            "include_vat": True,
            "allowed_modes": (AcquisitionMode.BUY, AcquisitionMode.ON_DEMAND),
        }
    )
    return base.model_copy(update={"constraints": constraints})


def portfolio_4_request() -> api.PlanFleetRequest:
    return plan_request_to_proto(portfolio_4())


KR_RAG_BID = ROOT / "tests" / "regressions" / "round3" / "repro" / "12-report-sensitivity-differs.yaml"
TARGETS_S = {"kr_rag_bid_3000": 5.0, "portfolio_4": 10.0, "example_500m_krw": 1.0}


def _example(name: str) -> api.PlanFleetRequest:
    return load_scenario(ROOT / "examples" / f"{name}.yaml", api.PlanFleetRequest)


def _requests() -> dict[str, Callable[[], api.PlanFleetRequest]]:
    return {
        "kr_rag_bid_3000": lambda: load_scenario(KR_RAG_BID, api.PlanFleetRequest),
        "portfolio_4": portfolio_4_request,
        "example_500m_krw": lambda: _example("500m_krw_portfolio"),
    }


def _measure(client: FleetPlannerClient, request: api.PlanFleetRequest, repeat: int) -> dict[str, Any]:
    runs: list[dict[str, Any]] = []
    for _ in range(repeat):
        started, cpu = time.perf_counter(), time.process_time()
        response = client.plan_fleet(request)
        seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
        plan = response.plan
        stats = plan.solver_statistics
        runs.append(
            {
                "seconds": round(seconds, 3),
                "cpu_seconds": round(cpu_seconds, 3),
                "load_average": os.getloadavg(),
                "status": plan_pb2.PlanStatus.Name(plan.status),
                "limit_fired": plan_pb2.LimitFired.Name(stats.limit_fired),
                "gap": stats.relative_gap,
                "main_solve_seconds": round(stats.solve_seconds, 3),
                "baselines": len(plan.baselines),
                "sensitivity_rows": len(plan.sensitivity),
                "warnings": list(plan.warnings),
                "horizon_tco": plan.cost.horizon_tco.amount,
                "stages": {
                    st.stage: {
                        "wall_s": round(st.wall_seconds, 3),
                        "cpu_s": round(st.cpu_seconds, 3),
                        "allotted_s": round(st.allotted_seconds, 3),
                    }
                    for st in stats.stages
                },
            }
        )
    times = [float(r["seconds"]) for r in runs]
    return {"median_seconds": statistics.median(times), "max_seconds": max(times), "runs": runs}


def machine(load_before: tuple[float, float, float]) -> dict[str, Any]:
    """The machine a benchmark ran on, with the load average before and after it."""
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "load_average_before": load_before,
        "load_average": os.getloadavg(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", action="append", choices=sorted(TARGETS_S), help="scenarios to run")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    chosen = {k: v for k, v in _requests().items() if not args.only or k in args.only}
    load_before = os.getloadavg()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    server = start_in_thread(ServerSettings(address="127.0.0.1:0", plan_cache_entries=0, grace_period_s=1.0))
    try:
        with FleetPlannerClient(server.address, timeout_s=600) as client:
            results = {name: _measure(client, make(), args.repeat) for name, make in chosen.items()}
    finally:
        server.stop(grace_s=0.5)
    out = {
        "machine": machine(load_before),
        "targets_s": {name: TARGETS_S[name] for name in chosen},
        "results": results,
    }
    args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    for name, r in results.items():
        print(f"{name}: median {r['median_seconds']:.2f} s, max {r['max_seconds']:.2f} s")  # noqa: T201


if __name__ == "__main__":
    main()
