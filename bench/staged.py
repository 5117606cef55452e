"""Multi-year plans (issue 32): a 3-year request against the same request as one period.

The whole-answer portfolio (``bench.whole_answer``: four workloads of the solver benchmark's
generator over the whole catalogue, KRW with VAT, bought or rented on demand), planned once as
one fleet for 36 months and once in three years with its demand ×1, ×2, ×3 (the pricebook's default
price paths), both through ``solver.planner.plan`` without baselines and sensitivity (a staged plan
computes neither), ``--repeat`` times each. Target: the staged answer within 3× the single-period
time. Writes ``bench/results/staged.json`` with the wall times, statuses, gaps and load average.

    .venv/bin/python -m bench.staged [--repeat 3] [--time-limit 60]
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

from bench.whole_answer import portfolio_4
from pricebook.loader import load_default
from solver.domain import PlanRequest, SolverOptions
from solver.planner import plan
from solver.resolve import resolve

RESULTS = Path(__file__).parent / "results" / "staged.json"
GROWTH = (1.0, 2.0, 3.0)


def requests(time_limit_s: float) -> dict[str, PlanRequest]:
    options = SolverOptions(time_limit_s=time_limit_s, compute_baselines=False, compute_sensitivity=False)
    single = portfolio_4().model_copy(update={"options": options})
    grown = tuple(w.model_copy(update={"demand_by_year": GROWTH}) for w in single.inference)
    return {"single_period": single, "three_years": single.model_copy(update={"inference": grown})}


def _measure(request: PlanRequest, repeat: int, time_limit_s: float) -> dict[str, Any]:
    book = load_default()
    runs: list[dict[str, Any]] = []
    times: list[float] = []
    for _ in range(repeat):
        started = time.perf_counter()
        result = plan(resolve(request, book), time_limit_s=time_limit_s)
        seconds = time.perf_counter() - started
        times.append(seconds)
        stats = result.solution.stats
        total = result.schedule.horizon_tco if result.schedule is not None else result.horizon_tco
        runs.append(
            {
                "seconds": round(seconds, 3),
                "status": result.status.value,
                "gap": stats.gap,
                "variables": stats.variables,
                "constraints": stats.constraints,
                "horizon_tco": None if total is None else str(total.amount),
                "loadavg": os.getloadavg(),
            }
        )
    return {"median_s": statistics.median(times), "runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--time-limit", type=float, default=60.0)
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    out: dict[str, Any] = {
        "machine": platform.node(),
        "cpus": os.cpu_count(),
        "loadavg_start": os.getloadavg(),
        "time_limit_s": args.time_limit,
    }
    for name, request in requests(args.time_limit).items():
        out[name] = _measure(request, args.repeat, args.time_limit)
    out["ratio"] = out["three_years"]["median_s"] / out["single_period"]["median_s"]
    out["loadavg_end"] = os.getloadavg()
    RESULTS.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: out[k] for k in ("ratio", "loadavg_start", "loadavg_end")}))  # noqa: T201


if __name__ == "__main__":
    main()
