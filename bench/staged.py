"""Multi-year plans (issue 32): a 3-year request against the same request as one period.

The whole-answer portfolio (``bench.whole_answer``: four workloads of the solver benchmark's
generator over the whole catalogue, KRW with VAT, bought or rented on demand), planned once as
one fleet for 36 months and once in three years with its demand ×1, ×2, ×3 (the pricebook's default
price paths), both through ``solver.planner.plan`` without baselines and sensitivity, at the
default relative gap (1e-4).

The target ("a 3-year request answers completely within 3× the single-period time") is measured as
it reads: the single-period request first, with ``--time-limit`` (enough for its whole answer: the
plan proven and its runner-ups); then the 3-year request with 3× the single-period request's wall
time as its time limit. It meets the target when its plan is proven within the gap in that time.
Each run records wall and CPU seconds (this process, all threads: the 2-core box is shared), the
main solve's seconds, status, gap, size and the load average. Writes ``bench/results/staged.json``.

    .venv/bin/python -m bench.staged [--repeat 1] [--time-limit 600]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import resource
import statistics
import time
from pathlib import Path
from typing import Any

import structlog

from bench.whole_answer import portfolio_4
from pricebook.loader import load_default
from solver.domain import PlanRequest, SolverOptions
from solver.planner import plan
from solver.resolve import resolve

RESULTS = Path(__file__).parent / "results" / "staged.json"
GROWTH = (1.0, 2.0, 3.0)
TARGET_RATIO = 3.0
MAX_TIME_LIMIT_S = 3600.0


def requests(time_limit_s: float) -> dict[str, PlanRequest]:
    options = SolverOptions(time_limit_s=time_limit_s, compute_baselines=False, compute_sensitivity=False)
    single = portfolio_4().model_copy(update={"options": options})
    grown = tuple(w.model_copy(update={"demand_by_year": GROWTH}) for w in single.inference)
    return {"single_period": single, "three_years": single.model_copy(update={"inference": grown})}


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _measure(request: PlanRequest, repeat: int, time_limit_s: float) -> dict[str, Any]:
    book = load_default()
    runs: list[dict[str, Any]] = []
    for _ in range(repeat):
        started, cpu = time.perf_counter(), _cpu_s()
        load = os.getloadavg()
        result = plan(resolve(request, book), time_limit_s=time_limit_s)
        seconds = time.perf_counter() - started
        stats = result.solution.stats
        total = result.schedule.horizon_tco if result.schedule is not None else result.horizon_tco
        runs.append(
            {
                "seconds": round(seconds, 3),
                "cpu_seconds": round(_cpu_s() - cpu, 3),
                "main_solve_seconds": round(stats.seconds, 3),
                "status": result.status.value,
                "gap": stats.gap,
                "variables": stats.variables,
                "constraints": stats.constraints,
                "horizon_tco": None if total is None else str(total.amount),
                "loadavg_before": load,
                "loadavg_after": os.getloadavg(),
            }
        )
    return {
        "time_limit_s": time_limit_s,
        "median_s": statistics.median(r["seconds"] for r in runs),
        "median_cpu_s": statistics.median(r["cpu_seconds"] for r in runs),
        "runs": runs,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--time-limit", type=float, default=600.0, help="the single-period request's")
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    out: dict[str, Any] = {
        "machine": platform.node(),
        "cpus": os.cpu_count(),
        "loadavg_start": os.getloadavg(),
    }
    single = out["single_period"] = _measure(
        requests(args.time_limit)["single_period"], args.repeat, args.time_limit
    )
    limit = min(MAX_TIME_LIMIT_S, TARGET_RATIO * single["median_s"])
    staged = out["three_years"] = _measure(requests(limit)["three_years"], args.repeat, limit)
    out["ratio"] = staged["median_s"] / single["median_s"]
    out["cpu_ratio"] = staged["median_cpu_s"] / single["median_cpu_s"]
    out["target_met"] = all(r["status"] == "optimal" for r in staged["runs"]) and out["ratio"] <= TARGET_RATIO
    out["loadavg_end"] = os.getloadavg()
    RESULTS.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    shown = ("ratio", "cpu_ratio", "target_met", "loadavg_start", "loadavg_end")
    print(json.dumps({k: out[k] for k in shown}))  # noqa: T201


if __name__ == "__main__":
    main()
