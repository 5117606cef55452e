"""Load benchmark: the real server on loopback, driven by client processes (spawn, never fork).

``fleetplan serve`` runs in its own process; ``--processes`` client processes (multiprocessing with
the *spawn* start method) share ``--clients`` concurrent closed-loop callers (asyncio + grpc.aio).
Each caller repeatedly picks an RPC from the mix — PlanFleet on the 500M KRW example
(``examples/500m_krw_portfolio.yaml``), PlanFleet on a small one-workload plan, EstimatePerformance
and ListCatalog — and records its latency and status. A RESOURCE_EXHAUSTED answer is the server's
deliberate back-pressure: the caller waits the ``RetryInfo`` delay and carries on; every other
non-OK status is an error.

Writes ``bench/results/load.json``: per-RPC count, throughput, p50/p95/p99 latency of OK calls,
status counts, and the target check (zero errors other than RESOURCE_EXHAUSTED; p99 of the 500M
KRW PlanFleet ≤ 1 s).

With ``--unique-plans`` (issue 19) the mix is catalogue, estimates and the 500M KRW plan only, and
every plan is a new question with varied demand (each workload's daily tokens × 1 ± 20 %), so no
answer is reused: every plan is a real solve. The document then also gives the plans answered
per minute, the catalogue/estimate p99 against 50 ms and the plan p99 against 5 s, and the load
average before and after (on a shared machine the figures are indicative).

A caller that wants its plan within 5 s says so with its deadline (``--plan-deadline-s 5``): the
server then refuses at once, with RetryInfo, a plan it expects not to finish by then (admission by
estimated solve time), so the plan p99 stays within the deadline and no call fails.

    .venv/bin/python -m bench.load                          # 32 clients × 60 s (the target run)
    .venv/bin/python -m bench.load --unique-plans --plan-deadline-s 5 \
        --out bench/results/load_unique_plans.json
    .venv/bin/python -m bench.load --clients 8 --seconds 5  # a quick check
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import multiprocessing
import os
import platform
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import json_format
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import fleet_planner_pb2_grpc as rpc
from clients.scenario import load_scenario

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "load.json"
PORTFOLIO = REPO / "examples" / "500m_krw_portfolio.yaml"

DEFAULT_MIX = {"plan_500m_krw": 0.15, "plan_small": 0.15, "estimate": 0.35, "catalog": 0.35}
"""Share of calls per request kind."""
UNIQUE_MIX = {"plan_500m_krw": 0.3, "estimate": 0.35, "catalog": 0.35}
"""With unique plans (issue 19): catalogue, estimates and plans of the 500M KRW example only."""
TIMEOUT_S = {"plan_500m_krw": 60.0, "plan_small": 60.0, "estimate": 20.0, "catalog": 20.0}
P99_TARGET_S = 1.0
"""Plan p99 target with identical requests (answers reused)."""
UNIQUE_PLAN_P99_TARGET_S = 5.0
CHEAP_P99_TARGET_S = 0.05
"""Issue 19 targets with unique plans: plan p99 ≤ 5 s, catalogue and estimate p99 ≤ 50 ms."""
MAX_RETRY_WAIT_S = 5.0

SMALL_PLAN = {
    "workloads": [
        {
            "name": "chat-14b",
            "inference": {
                "model": {"model_id": "Qwen/Qwen3-14B"},
                "input_tokens": 2000,
                "output_tokens": 500,
                "daily_tokens": 2_000_000_000,
                "sla": {"ttft_p95_ms": 2000, "tpot_p95_ms": 50},
            },
        }
    ],
    "constraints": {"allowed_gpu_ids": ["h100-sxm", "rtx-pro-6000-ws", "l40s"]},
}
ESTIMATE_CASES = [
    {
        "mode": "ESTIMATE_MODE_INFER",
        "gpu_id": "h100-sxm",
        "model": {"model_id": "Qwen/Qwen3-14B"},
        "precision": "PRECISION_FP8",
        "input_len": 7000,
        "output_len": 1024,
        "concurrency": 50,
    },
    {
        "mode": "ESTIMATE_MODE_INFER",
        "gpu_id": "rtx-pro-6000-ws",
        "model": {"model_id": "Qwen/Qwen3-14B"},
        "precision": "PRECISION_FP8",
        "input_len": 7000,
        "output_len": 1024,
        "concurrency": 50,
    },
]


@dataclass
class Sample:
    kind: str
    seconds: float
    code: str


@dataclass
class WorkerResult:
    samples: list[Sample] = field(default_factory=list)


def _requests(plan_options: dict[str, Any] | None = None) -> dict[str, Any]:
    """The protobuf request of each kind (built in the worker: messages are not sent between processes).
    ``plan_options`` (SolverOptions fields, e.g. ``{"compute_sensitivity": False}``) override both plans'."""
    # Unknown-field-free JSON → proto (the same shapes the CLI's scenario files use).
    small = json_format.ParseDict(SMALL_PLAN, api.PlanFleetRequest())
    estimate = json_format.ParseDict({"cases": ESTIMATE_CASES}, api.EstimatePerformanceRequest())
    portfolio = load_scenario(PORTFOLIO, api.PlanFleetRequest)
    if plan_options:
        for plan in (small, portfolio):
            json_format.ParseDict(plan_options, plan.solver_options)
    return {
        "plan_500m_krw": portfolio,
        "plan_small": small,
        "estimate": estimate,
        "catalog": api.ListCatalogRequest(),
    }


def _retry_delay_s(error: Any) -> float:

    status = rpc_status.from_call(error)
    for detail in status.details if status is not None else ():
        if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            info = error_details_pb2.RetryInfo()
            detail.Unpack(info)
            return float(info.retry_delay.seconds + info.retry_delay.nanos / 1e9)
    return 1.0


DEMAND_SPREAD = 0.2
"""Unique plans: every inference workload's daily tokens × a factor in 1 ± this (varied demand)."""


def _unique(request: Any, rng: random.Random) -> Any:
    """A copy with varied demand — every inference workload's daily tokens scaled by its own factor
    in 1 ± ``DEMAND_SPREAD`` — a new question whose plan may differ, so the server's reuse of
    identical complete answers (service.plan_cache) never applies."""
    fresh = type(request)()
    fresh.CopyFrom(request)
    for workload in fresh.workloads:
        if workload.HasField("inference") and workload.inference.HasField("daily_tokens"):
            factor = rng.uniform(1 - DEMAND_SPREAD, 1 + DEMAND_SPREAD)
            workload.inference.daily_tokens = max(1, round(workload.inference.daily_tokens * factor))
    return fresh


async def _caller(
    *,
    stub: Any,
    requests: dict[str, Any],
    mix: dict[str, float],
    until: float,
    seed: int,
    samples: list[Sample],
    unique_plans: bool = False,
    timeouts_s: dict[str, float] | None = None,
) -> None:

    methods = {
        "plan_500m_krw": stub.PlanFleet,
        "plan_small": stub.PlanFleet,
        "estimate": stub.EstimatePerformance,
        "catalog": stub.ListCatalog,
    }
    rng = random.Random(seed)
    kinds, weights = list(mix), list(mix.values())
    while time.monotonic() < until:
        kind = rng.choices(kinds, weights)[0]
        request = requests[kind]
        if unique_plans and kind.startswith("plan"):
            request = _unique(request, rng)
        started = time.perf_counter()
        try:
            await methods[kind](request, timeout=(timeouts_s or TIMEOUT_S)[kind])
            samples.append(Sample(kind, time.perf_counter() - started, "OK"))
        except grpc.aio.AioRpcError as error:
            samples.append(Sample(kind, time.perf_counter() - started, error.code().name))
            if error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                wait = min(MAX_RETRY_WAIT_S, _retry_delay_s(error))
                await asyncio.sleep(min(wait, max(0.0, until - time.monotonic())))


async def _worker_main(
    *,
    address: str,
    callers: int,
    seconds: float,
    mix: dict[str, float],
    seed: int,
    plan_options: dict[str, Any],
    unique_plans: bool = False,
    timeouts_s: dict[str, float] | None = None,
) -> WorkerResult:
    requests = _requests(plan_options)
    result = WorkerResult()
    async with grpc.aio.insecure_channel(address) as channel:
        await asyncio.wait_for(channel.channel_ready(), 30)
        stub = rpc.FleetPlannerStub(channel)
        until = time.monotonic() + seconds
        await asyncio.gather(
            *(
                _caller(
                    stub=stub,
                    requests=requests,
                    mix=mix,
                    until=until,
                    seed=seed * 1000 + i,
                    samples=result.samples,
                    unique_plans=unique_plans,
                    timeouts_s=timeouts_s,
                )
                for i in range(callers)
            )
        )
    return result


def worker(
    *,
    address: str,
    callers: int,
    seconds: float,
    mix: dict[str, float],
    seed: int,
    start_at: float,
    plan_options: dict[str, Any],
    unique_plans: bool = False,
    timeouts_s: dict[str, float] | None = None,
) -> list[tuple[str, float, str]]:
    """One client process (spawned): ``callers`` concurrent callers for ``seconds``."""
    # Every process starts together (imports take a while on a busy box).
    time.sleep(max(0.0, start_at - time.time()))
    result = asyncio.run(
        _worker_main(
            address=address,
            callers=callers,
            seconds=seconds,
            mix=mix,
            seed=seed,
            plan_options=plan_options,
            unique_plans=unique_plans,
            timeouts_s=timeouts_s,
        )
    )
    return [(s.kind, s.seconds, s.code) for s in result.samples]


def machine_info() -> dict[str, Any]:
    """Where a benchmark ran: cores, Python, platform, and the load average now (1, 5, 15 min)."""
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "load_average_1_5_15": [round(x, 2) for x in os.getloadavg()],
    }


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0…100) of already sorted values."""
    if not sorted_values:
        return math.nan
    rank = max(1, math.ceil(q / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def summarize(samples: list[tuple[str, float, str]], seconds: float) -> dict[str, Any]:
    by_kind: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for kind, latency, code in samples:
        by_kind[kind].append((latency, code))
    table: dict[str, Any] = {}
    for kind in sorted(by_kind):
        rows = by_kind[kind]
        ok = sorted(latency for latency, code in rows if code == "OK")
        codes = Counter(code for _, code in rows)
        table[kind] = {
            "calls": len(rows),
            "ok": len(ok),
            "ok_per_s": round(len(ok) / seconds, 2),
            "p50_ms": round(percentile(ok, 50) * 1000, 1) if ok else None,
            "p95_ms": round(percentile(ok, 95) * 1000, 1) if ok else None,
            "p99_ms": round(percentile(ok, 99) * 1000, 1) if ok else None,
            "max_ms": round(ok[-1] * 1000, 1) if ok else None,
            "status_counts": dict(sorted(codes.items())),
        }
    return table


def _drain(stream: Any) -> None:
    for _ in stream:
        pass


def _start_server(extra_args: list[str]) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, "-m", "clients.cli", "serve", "--address", "127.0.0.1:0", *extra_args]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "FLEETPLAN_LOG_JSON": "true"}
    process = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    assert process.stderr is not None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line and process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}")
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        # The server opens once its solve workers are up (service.server.build_server).
        if record.get("event") == "server.started":
            port = record["port"]
            # Keep draining the log so the server never blocks on a full pipe.
            threading.Thread(target=_drain, args=(process.stderr,), daemon=True).start()
            return process, f"127.0.0.1:{port}"
    process.kill()
    raise RuntimeError("server did not start within 120 s")


def _warm_up(address: str, plan_options: dict[str, Any]) -> None:
    """One call of each kind before timing (model caches, connection)."""
    requests = _requests(plan_options)
    with grpc.insecure_channel(address) as channel:
        stub = rpc.FleetPlannerStub(channel)
        stub.ListCatalog(requests["catalog"], timeout=60)
        stub.EstimatePerformance(requests["estimate"], timeout=60)
        stub.PlanFleet(requests["plan_small"], timeout=120)
        stub.PlanFleet(requests["plan_500m_krw"], timeout=120)


def run_load(
    *,
    clients: int,
    seconds: float,
    processes: int,
    mix: dict[str, float] | None = None,
    address: str | None = None,
    server_args: list[str] | None = None,
    seed: int = 1,
    warm_up: bool = True,
    plan_options: dict[str, Any] | None = None,
    unique_plans: bool = False,
    plan_deadline_s: float | None = None,
) -> dict[str, Any]:
    """Drive a server (``address``, or a fresh ``fleetplan serve``) and return the result document.
    ``plan_deadline_s`` is the deadline of every PlanFleet call (the latency its caller asks for;
    default ``TIMEOUT_S``'s)."""
    timeouts_s = dict(TIMEOUT_S)
    if plan_deadline_s is not None:
        timeouts_s.update(plan_500m_krw=plan_deadline_s, plan_small=plan_deadline_s)
    load_before = [round(x, 2) for x in os.getloadavg()]
    mix = dict(mix or (UNIQUE_MIX if unique_plans else DEFAULT_MIX))
    plan_options = dict(plan_options or {})
    processes = max(1, min(processes, clients))
    server = None
    if address is None:
        server, address = _start_server(server_args or [])
    try:
        if warm_up:
            _warm_up(address, plan_options)
        shares = [clients // processes + (1 if i < clients % processes else 0) for i in range(processes)]
        context = multiprocessing.get_context("spawn")  # no fork once gRPC objects exist
        start_at = time.time() + 2.0 + 0.5 * processes
        with context.Pool(processes) as pool:
            jobs = [
                pool.apply_async(
                    worker,
                    kwds={
                        "address": address,
                        "callers": share,
                        "seconds": seconds,
                        "mix": mix,
                        "seed": seed + i,
                        "start_at": start_at,
                        "plan_options": plan_options,
                        "unique_plans": unique_plans,
                        "timeouts_s": timeouts_s,
                    },
                )
                for i, share in enumerate(shares)
            ]
            samples = [s for job in jobs for s in job.get(timeout=seconds + 300)]
    finally:
        if server is not None:
            server.send_signal(signal.SIGTERM)
            server.wait(60)
    table = summarize(samples, seconds)
    errors = {
        kind: {c: n for c, n in row["status_counts"].items() if c not in ("OK", "RESOURCE_EXHAUSTED")}
        for kind, row in table.items()
    }
    errors = {k: v for k, v in errors.items() if v}
    p99 = table.get("plan_500m_krw", {}).get("p99_ms")
    target_s = UNIQUE_PLAN_P99_TARGET_S if unique_plans else P99_TARGET_S
    cheap_rows = [
        table[k]["p99_ms"] for k in ("catalog", "estimate") if table.get(k, {}).get("p99_ms") is not None
    ]
    cheap_p99 = max(cheap_rows) if cheap_rows else None
    plans_ok = sum(row["ok"] for kind, row in table.items() if kind.startswith("plan"))
    return {
        "benchmark": "load",
        "config": {
            "clients": clients,
            "seconds": seconds,
            "client_processes": processes,
            "mix": mix,
            "timeouts_s": timeouts_s,
            "plan_solver_options": plan_options,
            "unique_plans": unique_plans,
            "server_args": server_args or [],
        },
        # The machine may be shared: figures under a high load average are indicative.
        "machine": {**machine_info(), "load_average_before_1_5_15": load_before},
        "rpcs": table,
        "errors_other_than_resource_exhausted": errors,
        "target": {
            "zero_errors_other_than_resource_exhausted": not errors,
            "plan_500m_krw_p99_ms": p99,
            "plan_500m_krw_p99_target_ms": target_s * 1000,
            "plan_500m_krw_p99_met": p99 is not None and p99 <= target_s * 1000,
            "cheap_p99_ms": cheap_p99,
            "cheap_p99_target_ms": CHEAP_P99_TARGET_S * 1000,
            "cheap_p99_met": cheap_p99 is not None and cheap_p99 <= CHEAP_P99_TARGET_S * 1000,
            "plans_answered_per_minute": round(plans_ok * 60 / seconds, 1),
        },
    }


def render(document: dict[str, Any]) -> str:
    lines = [f"{'rpc':<15} {'calls':>6} {'ok/s':>7} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8}  statuses"]
    for kind, row in document["rpcs"].items():

        def ms(value: float | None) -> str:
            return "-" if value is None else f"{value:.0f}"

        statuses = ", ".join(f"{c}={n}" for c, n in row["status_counts"].items())
        lines.append(
            f"{kind:<15} {row['calls']:>6} {row['ok_per_s']:>7.2f} {ms(row['p50_ms']):>8} "
            f"{ms(row['p95_ms']):>8} {ms(row['p99_ms']):>8}  {statuses}"
        )
    target = document["target"]
    lines.append(
        f"errors other than RESOURCE_EXHAUSTED: {document['errors_other_than_resource_exhausted'] or 'none'}"
    )
    lines.append(
        f"500M KRW PlanFleet p99 {target['plan_500m_krw_p99_ms']} ms "
        f"(target ≤ {target['plan_500m_krw_p99_target_ms']:.0f} ms: "
        f"{'met' if target['plan_500m_krw_p99_met'] else 'MISSED'}); catalogue/estimate p99 "
        f"{target['cheap_p99_ms']} ms (target ≤ {target['cheap_p99_target_ms']:.0f} ms); "
        f"{target['plans_answered_per_minute']} plans answered per minute"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--processes", type=int, default=4, help="client processes (spawned)")
    parser.add_argument("--target", help="an already running server host:port (default: start one)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--server-arg", action="append", default=[], help="extra `fleetplan serve` argument")
    parser.add_argument("--no-warm-up", action="store_true", help="skip one untimed call of each kind first")
    parser.add_argument(
        "--plan-options",
        type=json.loads,
        default={},
        help="JSON SolverOptions overriding both plans' (e.g. '{\"compute_sensitivity\": false}')",
    )
    parser.add_argument(
        "--unique-plans",
        action="store_true",
        help="make every PlanFleet request a new question (so none is answered from the plan cache)",
    )
    parser.add_argument(
        "--plan-deadline-s",
        type=float,
        help="deadline of every PlanFleet call (default 60 s); the server refuses, with RetryInfo, a plan "
        "it expects not to finish within it",
    )
    args = parser.parse_args(argv)
    document = run_load(
        clients=args.clients,
        seconds=args.seconds,
        processes=args.processes,
        address=args.target,
        server_args=args.server_arg,
        warm_up=not args.no_warm_up,
        plan_options=args.plan_options,
        unique_plans=args.unique_plans,
        plan_deadline_s=args.plan_deadline_s,
    )
    document["command"] = "python -m bench.load " + " ".join(argv if argv is not None else sys.argv[1:])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    print(render(document))  # noqa: T201 - a benchmark script's report
    print(f"wrote {args.out}")  # noqa: T201
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
