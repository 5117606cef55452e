"""Accuracy of the disaggregated model: ``python -m bench.disagg_report``.

Writes ``bench/results/disagg_report.json``.

Reads the grouped out-of-fold predictions (``python -m tools.calibration.disagg_fit --cv`` writes
them: every run predicted by a full refit that has not seen its (GPU, model) pair) and states the
median absolute percentage error of throughput per GPU, TPOT and TTFT against the issue's targets,
overall, on the runs whose worker counts were published, per pair and per engine; plus the in-sample
errors of the shipped calibration, for contrast.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pricebook.loader import load_default
from solver.perf.disagg import DISAGG_FACTOR_NAMES, load_disagg_calibration
from tools.calibration.cv import loadavg
from tools.calibration.disagg_fit import DISAGG_CV_PATH, METRICS, measured, predict, prepare
from tools.calibration.disagg_points import load_disagg_points

RESULT = Path(__file__).with_name("results") / "disagg_report.json"
TARGETS = {"throughput_per_gpu": 0.20, "tpot_ms": 0.15, "ttft_ms": 0.30}
"""Median APE targets of issue 33."""


def _ape(row: dict[str, Any], metric: str) -> float:
    predicted = float(row[f"{metric}_predicted"])
    return abs(predicted / float(row[f"{metric}_measured"]) - 1.0) if np.isfinite(predicted) else 1.0


def table(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"n": len(rows)}
    for metric in METRICS:
        errors = [_ape(r, metric) for r in rows]
        out[metric] = {"median_ape": round(statistics.median(errors), 4),
                       "p90_ape": round(float(np.quantile(errors, 0.9)), 4)} if errors else {}
    return out


def grouped(rows: Sequence[dict[str, Any]], key: Callable[[dict[str, Any]], str]) -> dict[str, Any]:
    return {k: table([r for r in rows if key(r) == k]) for k in sorted({key(r) for r in rows})}


def in_sample() -> dict[str, Any]:
    points, skipped = load_disagg_points(load_default())
    cal = load_disagg_calibration()
    values = {"base": {n: getattr(cal.base, n) for n in DISAGG_FACTOR_NAMES}, "engine": cal.engine,
              "precision": cal.precision}
    prepared = prepare(points)
    predicted, target = predict(prepared, values), measured(points)
    rows = [{"assumed_workers": p.assumed_workers,
             **{f"{m}_measured": float(target[m][i]) for m in METRICS},
             **{f"{m}_predicted": float(predicted[m][i]) for m in METRICS}} for i, p in enumerate(points)]
    return {"all": table(rows), "stated_workers": table([r for r in rows if not r["assumed_workers"]]),
            "skipped_rows": len(skipped)}


def report() -> dict[str, Any]:
    stored = json.loads(DISAGG_CV_PATH.read_text())
    rows: list[dict[str, Any]] = stored["predictions"]
    stated = [r for r in rows if not r["assumed_workers"]]
    overall = table(rows)
    return {
        "command": "python -m tools.calibration.disagg_fit --cv && python -m bench.disagg_report",
        "cross_validation": {k: stored[k] for k in ("folds", "seconds", "loadavg", "fit_date")},
        "targets_median_ape": TARGETS,
        "out_of_fold": {
            "all": overall,
            "stated_workers": table(stated),
            "assumed_workers": table([r for r in rows if r["assumed_workers"]]),
            "by_pair": grouped(rows, lambda r: str(r["group"])),
            "by_engine": grouped(rows, lambda r: str(r["engine"])),
        },
        "meets_targets": {m: overall[m]["median_ape"] <= t for m, t in TARGETS.items()},
        "in_sample": in_sample(),
        "report_loadavg": loadavg(),
    }


def main() -> int:
    result = report()
    RESULT.write_text(json.dumps(result, indent=1) + "\n")
    sys.stdout.write(json.dumps(result["out_of_fold"]["all"], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
