"""Overload benchmark: a burst of big solves against a real ``fleetplan serve``, while cheap calls
are timed.

``--solves`` PlanFleet calls of the 500M KRW example (each a new question: ``bench.load._unique``)
are sent at once, each with a ``--deadline-s`` deadline, to a server with its default solve slots
(one per core) and queue (64). The server must shed what cannot finish in time *fast*:
RESOURCE_EXHAUSTED with RetryInfo at once (target ≤ 100 ms) or as soon as a queued solve's
expected wait no longer fits. Meanwhile one caller times ListCatalog, health checks and a
single-case EstimatePerformance back to back (target p99 ≤ 50 ms while every solve slot is busy).

Writes ``bench/results/overload.json`` (statuses, refusal latencies, answered latencies, cheap-call
percentiles, the load average: the machine may be shared, so the figures are indicative).

    .venv/bin/python -m bench.overload                     # 80 solves, 20 s deadlines
    .venv/bin/python -m bench.overload --solves 20 --deadline-s 5 --probe-s 5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import json_format
from grpc_health.v1 import health_pb2, health_pb2_grpc

from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import fleet_planner_pb2_grpc as rpc
from bench.load import (
    ESTIMATE_CASES,
    PORTFOLIO,
    _retry_delay_s,
    _start_server,
    _unique,
    _warm_up,
    machine_info,
    percentile,
)
from clients.scenario import load_scenario

RESULTS = Path(__file__).parent / "results" / "overload.json"
REFUSAL_TARGET_MS = 100.0
LATE_SOLVES = 30
"""Big solves sent one at a time while the server is overloaded (refusal latency)."""
CHEAP_P99_TARGET_MS = 50.0


def _ms(values: list[float]) -> dict[str, float | int | None]:
    ordered = sorted(values)
    if not ordered:
        return {"count": 0, "p50_ms": None, "p99_ms": None, "max_ms": None}
    return {
        "count": len(ordered),
        "p50_ms": round(percentile(ordered, 50) * 1000, 1),
        "p99_ms": round(percentile(ordered, 99) * 1000, 1),
        "max_ms": round(ordered[-1] * 1000, 1),
    }


QUEUED_MARK = "in the queue"
"""The server's refusal of a solve it had queued (its wait stopped fitting) says so."""


async def _solve(stub: Any, request: Any, deadline_s: float) -> tuple[str, float, float | None, bool]:
    """(status, seconds, RetryInfo delay, refused after queueing)."""
    started = time.perf_counter()
    try:
        await stub.PlanFleet(request, timeout=deadline_s)
        return "OK", time.perf_counter() - started, None, False
    except grpc.aio.AioRpcError as error:
        retry = _retry_delay_s(error) if error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED else None
        queued = QUEUED_MARK in (error.details() or "")
        return error.code().name, time.perf_counter() - started, retry, queued


async def _probe(
    channel: grpc.aio.Channel, until: float, late_solves: list[Any], deadline_s: float
) -> dict[str, list[float]]:
    """Cheap calls back to back until ``until``: latency of each OK call by kind; and one more big
    solve per round, alone on the wire (``late_solve_refused``: the latency of each refusal of a
    solve arriving at the busy server, free of the burst's own client-side queueing)."""
    stub = rpc.FleetPlannerStub(channel)
    health = health_pb2_grpc.HealthStub(channel)
    estimate = json_format.ParseDict({"cases": ESTIMATE_CASES[:1]}, api.EstimatePerformanceRequest())
    calls: dict[str, Callable[[], Awaitable[Any]]] = {
        "catalog": lambda: stub.ListCatalog(api.ListCatalogRequest(), timeout=10),
        "health": lambda: health.Check(health_pb2.HealthCheckRequest(), timeout=10),
        "estimate_single": lambda: stub.EstimatePerformance(estimate, timeout=10),
    }
    out: dict[str, list[float]] = defaultdict(list)
    failures: Counter[str] = Counter()
    late_tasks: list[asyncio.Future[tuple[str, float, float | None, bool]]] = []
    while time.monotonic() < until:
        for kind, call in calls.items():
            started = time.perf_counter()
            try:
                await call()
                out[kind].append(time.perf_counter() - started)
            except grpc.aio.AioRpcError as error:
                failures[f"{kind}:{error.code().name}"] += 1
        if late_solves:  # not awaited here: an admitted one would hold up the probe
            late_tasks.append(asyncio.ensure_future(_solve(stub, late_solves.pop(), deadline_s)))
        await asyncio.sleep(0.02)
    for code, seconds, _, _ in await asyncio.gather(*late_tasks):
        kind = "late_solve_refused" if code == "RESOURCE_EXHAUSTED" else f"_late_solve_{code}"
        out[kind].append(seconds)
    out["_failures"] = [float(n) for n in failures.values()]
    return out


async def _burst(address: str, solves: int, deadline_s: float, probe_s: float, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    portfolio = load_scenario(PORTFOLIO, api.PlanFleetRequest)
    requests = [_unique(portfolio, rng) for _ in range(solves)]
    late = [_unique(portfolio, rng) for _ in range(LATE_SOLVES)]
    async with (
        grpc.aio.insecure_channel(address) as solve_channel,
        grpc.aio.insecure_channel(address) as cheap,
    ):
        stub = rpc.FleetPlannerStub(solve_channel)
        await asyncio.wait_for(solve_channel.channel_ready(), 30)
        await asyncio.wait_for(cheap.channel_ready(), 30)
        tasks = [asyncio.ensure_future(_solve(stub, r, deadline_s)) for r in requests]
        await asyncio.sleep(0.5)  # the burst is in: slots busy, the queue filled
        probe = await _probe(cheap, time.monotonic() + probe_s, late, deadline_s)
        results = await asyncio.gather(*tasks)
    return {"results": results, "probe": probe}


def run_overload(
    *, solves: int, deadline_s: float, probe_s: float, server_args: list[str], seed: int = 7
) -> dict[str, Any]:
    load_before = [round(x, 2) for x in os.getloadavg()]
    server, address = _start_server(["--plan-cache-entries", "0", *server_args])
    try:
        _warm_up(address, {})
        outcome = asyncio.run(_burst(address, solves, deadline_s, probe_s, seed))
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(60)
    results = outcome["results"]
    probe = outcome["probe"]
    codes = Counter(code for code, _, _, _ in results)
    refused = [s for code, s, _, _ in results if code == "RESOURCE_EXHAUSTED"]
    refused_from_queue = [s for code, s, _, q in results if code == "RESOURCE_EXHAUSTED" and q]
    refusals = _ms(refused)
    late_refused = _ms(probe.pop("late_solve_refused", []))
    late_other = {
        kind[len("_late_solve_") :]: len(v) for kind, v in probe.items() if kind.startswith("_late_solve_")
    }
    cheap = {kind: _ms(values) for kind, values in probe.items() if not kind.startswith("_")}
    cheap_p99 = max((row["p99_ms"] or 0.0) for row in cheap.values()) if cheap else None
    return {
        "benchmark": "overload",
        "config": {
            "solves": solves,
            "deadline_s": deadline_s,
            "probe_s": probe_s,
            "server_args": server_args,
        },
        "status_counts": dict(sorted(codes.items())),
        "answered_ms": _ms([s for code, s, _, _ in results if code == "OK"]),
        "refusal_ms": refusals,
        # Admission refuses on arrival; a queued solve is refused later, when its wait stops fitting
        # (the running solves took longer than estimated).
        "refused_on_arrival_ms": _ms(
            [s for code, s, _, q in results if code == "RESOURCE_EXHAUSTED" and not q]
        ),
        "refused_from_queue_ms": _ms(refused_from_queue),
        "refused_within_target": sum(1 for s in refused if s * 1000 <= REFUSAL_TARGET_MS),
        "late_solve_refusal_ms": late_refused,
        "late_solve_other_outcomes": late_other,
        "retry_info_on_every_refusal": all(
            r is not None for code, _, r, _ in results if code == "RESOURCE_EXHAUSTED"
        ),
        "cheap_calls_ms": cheap,
        "cheap_call_failures": int(sum(probe.get("_failures", []))),
        "targets": {
            "refusal_p99_ms": refusals["p99_ms"],
            "late_solve_refusal_p99_ms": late_refused["p99_ms"],
            "refusal_target_ms": REFUSAL_TARGET_MS,
            "cheap_p99_ms": cheap_p99,
            "cheap_p99_target_ms": CHEAP_P99_TARGET_MS,
            "errors_other_than_ok_resource_exhausted": {
                c: n for c, n in codes.items() if c not in ("OK", "RESOURCE_EXHAUSTED")
            },
        },
        "load_average_before_1_5_15": load_before,
        "machine": machine_info(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--solves", type=int, default=80)
    parser.add_argument("--deadline-s", type=float, default=20.0)
    parser.add_argument("--probe-s", type=float, default=15.0)
    parser.add_argument("--server-arg", action="append", default=[], help="extra `fleetplan serve` argument")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    document = run_overload(
        solves=args.solves, deadline_s=args.deadline_s, probe_s=args.probe_s, server_args=args.server_arg
    )
    document["command"] = "python -m bench.overload " + " ".join(argv if argv is not None else sys.argv[1:])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    shown = (
        "status_counts",
        "refusal_ms",
        "refused_on_arrival_ms",
        "refused_from_queue_ms",
        "cheap_calls_ms",
    )
    print(json.dumps({k: document[k] for k in shown}, indent=1))  # noqa: T201
    print(f"wrote {args.out}")  # noqa: T201
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
