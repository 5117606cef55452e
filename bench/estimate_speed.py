"""Speed of batch what-ifs: ``python -m bench.estimate_speed``.

Builds 1,000 distinct cases (a seeded mix of catalogue GPUs, models, precisions, lengths, loads,
TP chosen or automatic, and some training cases), estimates them with a cold cache, and writes
``bench/results/estimate_speed.json``. Target (issue #4): under 2 s on the team machine.
Also times ``capacity_at_sla`` (cold) over the grid the optimizer walks: 25 models × every GPU ×
TP 1/2/4/8 × bf16/fp8 at one interactive SLA, and ``fleetplan estimate --cases`` with its in-process
server (issue 31): 1,000 cases (≤ 1 s; called in this process, as a script calling ``cli.main``
would, and as a command in a fresh interpreter, imports included) and 100,000 cases (≤ 20 s; the
CLI sends them in requests of the server's per-request cap, estimated by worker processes).
``--skip-large`` leaves out the 100,000 cases.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pricebook.loader import load_default
from solver.domain import Precision, Sla
from solver.perf import Deployment, WorkloadShape, capacity_at_sla
from solver.perf.cases import estimate_cases

RESULTS = Path(__file__).with_name("results") / "estimate_speed.json"
CASES = 1000
TARGET_S = 2.0
BATCH_CASES = 100_000
BATCH_TARGET_S = 20.0
SMALL_BATCH_CASES = 1000
SMALL_BATCH_TARGET_S = 1.0


def build_cases(book_models: list[str], book_gpus: list[str], n: int, seed: int = 4) -> list[str]:
    rng = random.Random(seed)
    lines = []
    for _ in range(n):
        case: dict[str, object] = {"gpu": rng.choice(book_gpus), "model": rng.choice(book_models)}
        if rng.random() < 0.1:
            case.update(mode="train", method=rng.choice(["full", "lora", "qlora"]),
                        tokens=rng.choice([1e8, 1e9]), seq_len=rng.choice([2048, 4096]),
                        num_gpus=rng.choice([1, 2, 4, 8]))
        else:
            case.update(
                precision=rng.choice(["bf16", "fp8", "int4"]),
                num_gpus=rng.choice([1, 2, 4, 8]),
                input_len=rng.choice([128, 512, 1000, 2000, 4000, 7000]),
                output_len=rng.choice([64, 128, 256, 500, 1024, 2048]),
            )
            load = rng.random()
            if load < 0.4:
                case["concurrency"] = rng.choice([1, 8, 16, 50, 128])
            elif load < 0.7:
                case["concurrency"] = "max"
            else:
                case["request_rate"] = rng.choice([0.2, 1.0, 5.0])
        lines.append(json.dumps(case))
    return lines


def cli_batch(models: list[str], gpus: list[str], cases: int, target_s: float) -> dict[str, object]:
    """``fleetplan estimate --cases`` on a file of ``cases`` lines (in-process server; the cases are new
    to this process), called here; a short batch also as a command in a fresh interpreter (cold)."""
    from clients import cli  # noqa: PLC0415 (only this part of the bench needs the client)
    from clients.cli import serve  # noqa: PLC0415, F401 (imported before the clock starts, as before)

    lines = [json.dumps({**json.loads(line), "id": f"case-{i}"})
             for i, line in enumerate(build_cases(models, gpus, cases, seed=16))]
    report: dict[str, object] = {"cases": cases, "load_average_1min_before": round(os.getloadavg()[0], 2)}
    with tempfile.TemporaryDirectory() as folder:
        path, output = Path(folder) / "cases.jsonl", Path(folder) / "out.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        argv = ["estimate", "--cases", str(path), "--output", str(output), "--store", "none"]
        start = time.perf_counter()
        code = cli.main(argv, out=io.StringIO())
        seconds = time.perf_counter() - start
        rows = output.read_text(encoding="utf-8").splitlines()
        if cases < BATCH_CASES:
            report["fresh_interpreter"] = _command_seconds(argv)
    echoed = sum(1 for i, row in enumerate(rows) if json.loads(row).get("id") == f"case-{i}")
    report.update({"exit_code": code, "rows": len(rows), "ids_echoed_in_order": echoed,
                   "seconds": round(seconds, 2), "target_s": target_s, "meets_target": seconds <= target_s,
                   "load_average_1min_after": round(os.getloadavg()[0], 2),
                   "command": f"fleetplan estimate --cases <{cases:,} lines> --output <file>"})
    return report


def _command_seconds(argv: list[str], repeat: int = 3) -> dict[str, object]:
    """Wall seconds of ``python -m clients.cli ARGV`` (imports and the in-process server included)."""
    repo = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(repo), os.environ.get("PYTHONPATH", "")])}
    walls = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "clients.cli", *argv], cwd=repo, env=env, check=True,
                       capture_output=True)
        walls.append(round(time.perf_counter() - start, 2))
    return {"seconds": walls, "min_s": min(walls)}


def main() -> None:
    parser = argparse.ArgumentParser(description="estimate speed (issue 4, 16, 31)")
    parser.add_argument("--skip-large", action="store_true", help="leave out the 100,000-case batch")
    args = parser.parse_args()
    load_before = round(os.getloadavg()[0], 2)
    book = load_default()
    models = [m.id for m in book.models if m.kind == "decoder"]
    gpus = [g.id for g in book.gpus]
    lines = build_cases(models, gpus, CASES)
    start = time.perf_counter()
    results = list(estimate_cases(lines, book))
    seconds = time.perf_counter() - start
    errors = sum(1 for r in results if "error" in r)
    grid = [(m, g, tp, p) for m in [m for m in book.models if m.kind == "decoder"][:25] for g in book.gpus
            for tp in (1, 2, 4, 8) for p in (Precision.BF16, Precision.FP8)]
    shape, sla = WorkloadShape(2000, 400), Sla(ttft_p95_ms=2000, tpot_p95_ms=60)
    start = time.perf_counter()
    feasible = sum(capacity_at_sla(m, Deployment(g, tp, p), shape, sla).feasible for m, g, tp, p in grid)
    capacity_s = time.perf_counter() - start
    fits = sum(1 for r in results if r.get("fits"))
    report = {
        "cases": CASES, "seconds": round(seconds, 3), "per_case_ms": round(seconds / CASES * 1e3, 3),
        "target_s": TARGET_S, "meets_target": seconds < TARGET_S, "error_lines": errors,
        "fitting_cases": fits,
        "capacity_calls": len(grid), "capacity_seconds": round(capacity_s, 3),
        "capacity_per_call_ms": round(capacity_s / len(grid) * 1e3, 3), "capacity_feasible": feasible,
        "cli_1000": cli_batch(models, gpus, SMALL_BATCH_CASES, SMALL_BATCH_TARGET_S),
        "cli_batch": None if args.skip_large else cli_batch(models, gpus, BATCH_CASES, BATCH_TARGET_S),
        "load_average_1min_before": load_before,
        "load_average_1min": round(os.getloadavg()[0], 2),
        "python": platform.python_version(), "machine": platform.machine(),
        "command": "python -m bench.estimate_speed" + (" --skip-large" if args.skip_large else ""),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    sys.stdout.write(json.dumps(report) + "\n")


if __name__ == "__main__":
    main()
