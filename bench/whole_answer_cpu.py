"""CPU time of each stage of a whole answer when no limit fires: the work the answer takes, which a
loaded machine does not change (the wall time of ``bench.whole_answer`` is the time budget there).

For each request: the main solve (with runner-ups) under a 600 s limit, the baselines, then the
sensitivity searches from that same proven plan without a deadline; writes
``bench/results/whole_answer_cpu.json`` (or ``--out``) with the CPU and wall seconds of each stage,
the sensitivity solves and rows, and the load average.

    .venv/bin/python -m bench.whole_answer_cpu [--only kr_rag_bid_3000]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import time
from functools import partial
from pathlib import Path
from typing import Any

import structlog

from api.fleetplan.v1 import fleet_planner_pb2 as api
from bench.whole_answer import TARGETS_S, _requests, machine
from pricebook import load_default
from service.convert.scenario import scenario_request
from solver.optimizer.candidates import build_instance
from solver.planner.baselines import solve_baselines
from solver.planner.plan import ReSolver, solve_main
from solver.planner.sensitivity import sensitivity_rows

RESULTS = Path(__file__).parent / "results" / "whole_answer_cpu.json"
NO_LIMIT_S = 600.0


def _stage(started: tuple[float, float]) -> dict[str, float]:
    return {
        "cpu_s": round(time.process_time() - started[0], 3),
        "wall_s": round(time.perf_counter() - started[1], 3),
    }


def _now() -> tuple[float, float]:
    return time.process_time(), time.perf_counter()


def measure(request: api.PlanFleetRequest) -> dict[str, Any]:
    book = load_default()
    resolved = scenario_request(request, book)
    options = resolved.request.options.model_copy(update={"time_limit_s": NO_LIMIT_S})
    resolved = resolved.with_request(resolved.request.model_copy(update={"options": options}))
    instance = build_instance(resolved.request, book)
    started = _now()
    main = solve_main(resolved.request, book, instance, NO_LIMIT_S, None)
    stages = {"main_solve": _stage(started)}
    re_solve = ReSolver(resolved.request, book, None)
    started = _now()
    far = time.monotonic() + 10 * NO_LIMIT_S
    runs = solve_baselines(
        instance, resolved.allowed_gpus, re_solve, far, [], diagnose=partial(re_solve, explain=True)
    )
    stages["baselines"] = _stage(started)
    started = _now()
    rows = sensitivity_rows(instance, main, runs, re_solve, far, solve_below=re_solve.below)
    stages["sensitivity"] = _stage(started)
    return {
        "main_status": main.stats.status.value,
        "main_objective": main.stats.objective,
        "stages": stages,
        "sensitivity_solves": sum(s.solves for s in rows),
        "sensitivity_rows": [
            [s.subject, s.change_down_fraction, s.change_up_fraction, s.plan_below, s.plan_above]
            for s in rows
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", choices=sorted(TARGETS_S), help="requests to run")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    load_before = os.getloadavg()
    chosen = {k: v for k, v in _requests().items() if not args.only or k in args.only}
    results = {name: measure(make()) for name, make in chosen.items()}
    out = {
        "machine": machine(load_before),
        "results": results,
    }
    args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    for name, r in results.items():
        cpu = ", ".join(f"{stage} {s['cpu_s']:.1f}" for stage, s in r["stages"].items())
        print(f"{name}: CPU s {cpu}; {r['sensitivity_solves']} sensitivity solves")  # noqa: T201


if __name__ == "__main__":
    main()
