"""Speed of batch what-ifs: ``python -m bench.estimate_speed``.

Builds 1,000 distinct cases (a seeded mix of catalogue GPUs, models, precisions, lengths, loads,
TP chosen or automatic, and some training cases), estimates them with a cold cache, and writes
``bench/results/estimate_speed.json``. Target (issue #4): under 2 s on the team machine.
"""

from __future__ import annotations

import json
import platform
import random
import sys
import time
from pathlib import Path

from pricebook.loader import load_default
from solver.perf.cases import estimate_cases

RESULTS = Path(__file__).with_name("results") / "estimate_speed.json"
CASES = 1000
TARGET_S = 2.0


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


def main() -> None:
    book = load_default()
    models = [m.id for m in book.models if m.kind == "decoder"]
    gpus = [g.id for g in book.gpus]
    lines = build_cases(models, gpus, CASES)
    start = time.perf_counter()
    results = list(estimate_cases(lines, book))
    seconds = time.perf_counter() - start
    errors = sum(1 for r in results if "error" in r)
    fits = sum(1 for r in results if r.get("fits"))
    report = {
        "cases": CASES, "seconds": round(seconds, 3), "per_case_ms": round(seconds / CASES * 1e3, 3),
        "target_s": TARGET_S, "meets_target": seconds < TARGET_S, "error_lines": errors,
        "fitting_cases": fits,
        "python": platform.python_version(), "machine": platform.machine(),
        "command": "python -m bench.estimate_speed",
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    sys.stdout.write(json.dumps(report) + "\n")


if __name__ == "__main__":
    main()
