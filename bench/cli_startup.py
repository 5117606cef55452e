"""How fast the ``fleetplan`` command answers (issue 31): ``python -m bench.cli_startup``.

Each command runs in a fresh interpreter, as a user runs it:
- ``fleetplan --help`` and ``fleetplan plan --help``;
- ``fleetplan catalog --target HOST:PORT`` against a running ``fleetplan serve``;
- ``fleetplan plan examples/500m_krw_portfolio.yaml --target HOST:PORT``, the demand nudged on every
  run (each workload's daily tokens × (1 + run/10^4)) so the server never reuses an answer; before
  each, a differently nudged copy is asked through the Python client in this process: the server's
  own answer time, of which the CLI's is the sum plus what the CLI adds.

Per command: wall seconds and CPU seconds (user + system of the command's process, which a shared
machine disturbs less), minimum and median over ``--repeat`` runs. Targets: ≤ 0.3 s for the help
and ``--target`` catalogue, ≤ 1 s for the 500M example. Writes ``bench/results/cli_startup.json``
with the load average before and after (the machine may be shared: measure when it is quiet).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from api.fleetplan.v1 import fleet_planner_pb2 as api
from bench.load import PORTFOLIO, REPO, _start_server, machine_info
from clients.client import FleetPlannerClient
from clients.scenario import load_scenario

RESULTS = Path(__file__).parent / "results" / "cli_startup.json"
HELP_TARGET_S = 0.3
CATALOG_TARGET_S = 0.3
PLAN_TARGET_S = 1.0


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}


def run_cli(argv: list[str]) -> tuple[float, float]:
    """(wall s, CPU s) of ``fleetplan ARGV`` in a fresh interpreter; a failure stops the bench."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "clients.cli", *argv], cwd=REPO, env=_env(), capture_output=True, check=False
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"fleetplan {' '.join(argv)} exited {done.returncode}: {done.stderr[-2000:]!r}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def summary(walls: list[float], cpus: list[float], target_s: float) -> dict[str, Any]:
    return {
        "runs": len(walls),
        "wall_s_min": round(min(walls), 3),
        "wall_s_median": round(statistics.median(walls), 3),
        "cpu_s_min": round(min(cpus), 3),
        "cpu_s_median": round(statistics.median(cpus), 3),
        "target_s": target_s,
        "meets_target_median": statistics.median(walls) <= target_s,
    }


def timed(argv: list[str], repeat: int, target_s: float) -> dict[str, Any]:
    runs = [run_cli(argv) for _ in range(repeat)]
    walls, cpus = [w for w, _ in runs], [c for _, c in runs]
    return {"command": "fleetplan " + " ".join(argv), **summary(walls, cpus, target_s)}


def nudged(data: dict[str, Any], factor: float) -> dict[str, Any]:
    """The scenario with every inference workload's daily tokens × ``factor`` (a new question)."""
    copy: dict[str, Any] = json.loads(json.dumps(data))
    for workload in copy["workloads"]:
        inference = workload.get("inference")
        if inference and "daily_tokens" in inference:
            inference["daily_tokens"] = round(float(inference["daily_tokens"]) * factor)
    return copy


def plan_round_trips(address: str, repeat: int, folder: Path) -> dict[str, Any]:
    data = yaml.safe_load(PORTFOLIO.read_text(encoding="utf-8"))
    server_s, walls, cpus = [], [], []
    with FleetPlannerClient(address, timeout_s=120) as client:
        for run in range(1, repeat + 1):
            direct, through_cli = folder / f"direct-{run}.yaml", folder / f"cli-{run}.yaml"
            direct.write_text(yaml.safe_dump(nudged(data, 1 + (2 * run) / 1e4)), encoding="utf-8")
            through_cli.write_text(yaml.safe_dump(nudged(data, 1 + (2 * run + 1) / 1e4)), encoding="utf-8")
            start = time.perf_counter()
            client.plan_fleet(load_scenario(direct, api.PlanFleetRequest))
            server_s.append(time.perf_counter() - start)
            wall, cpu = run_cli(["plan", str(through_cli), "--target", address])
            walls.append(wall)
            cpus.append(cpu)
    return {
        "command": "fleetplan plan <500m_krw_portfolio.yaml, demand nudged> --target HOST:PORT",
        **summary(walls, cpus, PLAN_TARGET_S),
        "server_answer_s_min": round(min(server_s), 3),
        "server_answer_s_median": round(statistics.median(server_s), 3),
        "cli_adds_s_median": round(statistics.median(walls) - statistics.median(server_s), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    before = machine_info()
    report: dict[str, Any] = {"machine_before": before}
    report["help"] = timed(["--help"], args.repeat, HELP_TARGET_S)
    report["plan_help"] = timed(["plan", "--help"], args.repeat, HELP_TARGET_S)
    server, address = _start_server(["--store", "none"])
    try:
        run_cli(["catalog", "--target", address])  # the server's first answer, not timed
        report["catalog_target"] = timed(["catalog", "--target", address], args.repeat, CATALOG_TARGET_S)
        with tempfile.TemporaryDirectory() as folder:
            report["plan_500m_target"] = plan_round_trips(address, args.repeat, Path(folder))
    finally:
        server.terminate()
        server.wait(timeout=60)
    report["machine_after"] = machine_info()
    report["command"] = f"python -m bench.cli_startup --repeat {args.repeat}"
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    sys.stdout.write(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
