"""``python -m bench.independent_checks``: the brute-force, metamorphic, fuzz and Mélange checks
run together; writes ``bench/results/independent_checks.json`` (see ``bench.independent_checks``).

Options: ``--instances N`` (brute force, default 30), ``--relations N`` (instances the metamorphic
relations run on, default 15), ``--mutations N`` (default 10,000), ``--seed S`` (the first
instance's seed; instance i uses S + i), ``--no-melange``, ``--out PATH``."""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import structlog

from bench.independent_checks.brute_force import BruteResult, check_instance
from bench.independent_checks.metamorphic import RelationRun, check_headroom, check_relations, check_reprice
from bench.independent_checks.scenarios import random_request
from clients import FleetPlannerClient
from service.server import ThreadedServer
from service.settings import ServerSettings
from tests.reliability.mutation import fuzz

RESULTS = Path(__file__).resolve().parents[1] / "results"
REPRICED_INSTANCES = 5
MELANGE_TARGET = 1.02


def _load() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def _server(store: str | None) -> ThreadedServer:
    return ThreadedServer(
        ServerSettings(
            address="127.0.0.1:0", store=store, plan_cache_entries=0, solve_slots=2, max_queued_solves=16
        )
    )


def run_plans(instances: int, relations: int, first_seed: int) -> dict[str, Any]:
    """Brute force on ``instances`` random requests, relations on the first ``relations`` of them."""
    brute: list[BruteResult] = []
    runs: dict[str, RelationRun] = {}
    started = time.perf_counter()
    store = str(Path(tempfile.mkdtemp()) / "plans.db")
    with _server(store) as server, FleetPlannerClient(server.address, timeout_s=180) as client:
        for i in range(instances):
            seed = first_seed + i
            request = random_request(random.Random(seed))
            result = check_instance(client, seed, request)
            brute.append(result)
            check_headroom(client, seed, request, result.planned, runs)
            if i < relations:
                check_relations(client, seed, request, runs)
            if i < REPRICED_INSTANCES:
                check_reprice(client, seed, request, runs)
            print(f"instance {seed}: {result.record()}", file=sys.stderr, flush=True)  # noqa: T201
    failures = [f for r in brute for f in r.failures]
    return {
        "brute_force": {
            "instances": len(brute),
            "seeds": [r.seed for r in brute],
            "with_plan": sum(r.planned.has_plan for r in brute),
            "fleets_evaluated": sum(r.fleets_evaluated for r in brute),
            "fleets_feasible": sum(r.fleets_feasible for r in brute),
            "fleets_refused": sum(r.fleets_refused for r in brute),
            "failures": failures,
            "instances_failing": sorted({f["seed"] for f in failures}),
            "per_instance": [r.record() for r in brute],
        },
        "metamorphic": {
            "relations": {
                name: {"checked": run.checked, "skipped": run.skipped, "failed": len(run.failures)}
                for name, run in sorted(runs.items())
            },
            "checked": sum(run.checked for run in runs.values()),
            "failures": [f for run in runs.values() for f in run.failures],
        },
        "seconds": round(time.perf_counter() - started, 1),
    }


def run_fuzz(mutations: int, fuzz_seed: int) -> dict[str, Any]:
    started = time.perf_counter()
    previous = structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    try:
        with _server(None) as server:
            outcomes = fuzz(server.address, fuzz_seed, mutations)
    finally:
        structlog.configure(**previous)
    failures = [o for o in outcomes if o.problem]
    return {
        "fuzz_seed": fuzz_seed,
        "mutations": len(outcomes),
        "codes": dict(Counter(o.code.name for o in outcomes)),
        "failures": [
            {"seed_request": o.seed, "mutations": list(o.mutations), "problem": o.problem[:500]}
            for o in failures
        ],
        "seconds": round(time.perf_counter() - started, 1),
    }


def run_melange() -> dict[str, Any]:
    """``python -m bench.melange`` re-run; its own JSON read back."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "bench.melange"], capture_output=True, text=True, timeout=900, check=False
    )
    report = json.loads((RESULTS / "melange.json").read_text()) if done.returncode == 0 else {}
    worst = report.get("worst_fleetplan_over_melange")
    return {
        "exit_code": done.returncode,
        "stderr_tail": done.stderr[-1000:] if done.returncode else "",
        "worst_fleetplan_over_melange": worst,
        "target": MELANGE_TARGET,
        "meets_target": worst is not None and worst <= MELANGE_TARGET,
        "ratios": [
            {"case": f"{c['buckets']} at {c['rate_req_s']} req/s", "ratio": c["fleetplan_over_melange"]}
            for c in report.get("cases", [])
        ],
        "seconds": round(time.perf_counter() - started, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.independent_checks")
    parser.add_argument("--instances", type=int, default=30)
    parser.add_argument("--relations", type=int, default=15)
    parser.add_argument("--mutations", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=28_000)
    parser.add_argument("--fuzz-seed", type=int, default=28)
    parser.add_argument("--no-melange", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS / "independent_checks.json")
    args = parser.parse_args(argv)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    report: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "load_average_before": _load(),
        "first_seed": args.seed,
    }
    started = time.perf_counter()
    report |= run_plans(args.instances, args.relations, args.seed)
    report["fuzz"] = run_fuzz(args.mutations, args.fuzz_seed) if args.mutations else None
    report["melange"] = None if args.no_melange else run_melange()
    report["load_average_after"] = _load()
    report["total_seconds"] = round(time.perf_counter() - started, 1)
    report["failures"] = {
        "brute_force": len(report["brute_force"]["failures"]),
        "metamorphic": len(report["metamorphic"]["failures"]),
        "fuzz": len(report["fuzz"]["failures"]) if report["fuzz"] else None,
        "melange_over_target": None if report["melange"] is None else not report["melange"]["meets_target"],
    }
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False, default=str) + "\n")
    print(json.dumps(report["failures"]), flush=True)  # noqa: T201
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
