"""Cancel-to-idle benchmark: how long a solve keeps working after its call is cancelled.

A real server (in this process, two solve slots) gets a PlanFleet of the 100-workload benchmark
portfolio (``bench.solver_scaling.portfolio(100)``, every catalogue GPU); the client cancels it
after ``--at`` seconds — covering candidate building on a cold and a warm cache, model building,
the MIP and the LP-guided search, and (with an 8 s time limit) the runner-ups, baselines and
sensitivity after it — and the time from the cancel until the solve slot is free again (the
worker thread has returned) is recorded. Target (issue 19): ≤ 0.5 s at any point.

Writes ``bench/results/cancel.json`` with each run, the maximum, and the machine's load average.

    .venv/bin/python -m bench.cancel
    .venv/bin/python -m bench.cancel --size 50 --at 0.5 2 4
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import structlog

from api.fleetplan.v1 import fleet_planner_pb2_grpc as rpc
from bench.load import machine_info
from bench.solver_scaling import portfolio
from service.convert.encode import plan_request_to_proto
from service.server import ThreadedServer, start_in_thread
from service.settings import ServerSettings

RESULTS = Path(__file__).parent / "results" / "cancel.json"
TARGET_S = 0.5
DEFAULT_AT = (0.3, 1.0, 2.0, 3.0, 5.0, 8.0)
"""Cancel moments (seconds after the call): the first is in a cold process's candidate building."""
EXTRAS_TIME_LIMIT_S = 8.0
"""Time limit of the second series: the main solve stops at 70 % of it and the extras run after."""


def _wait_idle(server: ThreadedServer, timeout_s: float) -> float:
    gate = server.built.servicer.gate
    started = time.perf_counter()
    while gate.running and time.perf_counter() - started < timeout_s:
        time.sleep(0.002)
    return time.perf_counter() - started


def cancel_once(
    server: ThreadedServer, channel: grpc.Channel, size: int, time_limit_s: float, at_s: float
) -> dict[str, Any]:
    """One call cancelled ``at_s`` after it was sent: cancel-to-idle seconds (None: it finished first)."""
    base = portfolio(size)
    options = base.options.model_copy(update={"time_limit_s": time_limit_s})
    request = plan_request_to_proto(base.model_copy(update={"options": options}))
    future = rpc.FleetPlannerStub(channel).PlanFleet.future(request, timeout=time_limit_s + 60)
    time.sleep(at_s)
    if future.done():
        return {
            "at_s": at_s,
            "time_limit_s": time_limit_s,
            "cancel_to_idle_s": None,
            "note": "finished first",
        }
    future.cancel()
    idle_s = _wait_idle(server, 30.0)
    return {"at_s": at_s, "time_limit_s": time_limit_s, "cancel_to_idle_s": round(idle_s, 3)}


def run(size: int, at: tuple[float, ...]) -> dict[str, Any]:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    settings = ServerSettings(address="127.0.0.1:0", solve_slots=2, plan_cache_entries=0)
    server = start_in_thread(settings)
    runs: list[dict[str, Any]] = []
    try:
        with grpc.insecure_channel(server.address) as channel:
            for time_limit_s in (60.0, EXTRAS_TIME_LIMIT_S):
                for at_s in at if time_limit_s > EXTRAS_TIME_LIMIT_S else (6.0, 6.5, 7.0, 7.5):
                    runs.append(cancel_once(server, channel, size, time_limit_s, at_s))
                    print(runs[-1], flush=True)  # noqa: T201 - a benchmark's progress
    finally:
        server.stop(grace_s=0.5)
    measured = [r["cancel_to_idle_s"] for r in runs if r["cancel_to_idle_s"] is not None]
    return {
        "benchmark": "cancel",
        "workloads": size,
        "runs": runs,
        "max_cancel_to_idle_s": max(measured) if measured else None,
        "target_s": TARGET_S,
        "target_met": bool(measured) and max(measured) <= TARGET_S,
        "machine": machine_info(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--at", type=float, nargs="+", default=list(DEFAULT_AT))
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    load_before = [round(x, 2) for x in os.getloadavg()]
    document = run(args.size, tuple(args.at))
    document["load_average_before_1_5_15"] = load_before
    document["command"] = "python -m bench.cancel " + " ".join(argv if argv is not None else sys.argv[1:])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    print(f"max cancel-to-idle {document['max_cancel_to_idle_s']} s; wrote {args.out}")  # noqa: T201
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
