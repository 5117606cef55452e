"""Grouped cross-validation of the calibration: ``python -m tools.calibration.fit --cv``.

Every point is predicted by a fit that has not seen its group: AIConfigurator runs are grouped by
(GPU, model) pair, every other source is one group. Each fold is a FULL refit from the same
starting point and with the same budget as the final fit (``fit.fit_values`` on the rest, never
warm-started from the all-data fit), so nothing the held-out group taught the final fit leaks
into its prediction. The band is the central interval of these out-of-fold ratios, per metric.

The out-of-fold predictions go to ``cv_predictions.json`` (beside this file); ``summarize``
turns them into the per-metric table (and per source, GPU family, engine and precision) that
``bench.calibration_report`` writes and ``tests/tools/calibration/test_oof_baseline.py`` guards
against ``oof_baseline.json``: a change to the model's structure or fit is kept only if the
out-of-fold error does not get worse.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import json
import math
import os
import statistics
import textwrap
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import structlog

from pricebook.loader import load_default
from solver.perf.calibration import calibration_from_dict, gpu_family, load_calibration
from tools.calibration.points import (
    AIC_SOURCE,
    CalibrationPoint,
    PointResult,
    RowKind,
    evaluate,
    load_points,
    pair_of,
)

log = structlog.get_logger(__name__)

CV_PATH = Path(__file__).with_name("cv_predictions.json")
BASELINE_PATH = Path(__file__).with_name("oof_baseline.json")
BAND_COVERAGE = 0.90
"""Central share of the out-of-fold ratios the band spans (5th to 95th percentile)."""

METRICS: dict[str, frozenset[str]] = {
    "throughput": frozenset({"output_tok_s_total", "total_tok_s", "req_s"}),
    "tpot": frozenset({"tpot_ms"}),
    "ttft": frozenset({"ttft_ms"}),
    "other_latency": frozenset({"duration_s"}),
    "training": frozenset({"train_tok_s_per_gpu"}),
}
"""Metric groups of the out-of-fold table (each with its own band)."""


def metric_group(point: CalibrationPoint) -> str | None:
    return next((g for g, names in METRICS.items() if point.metric in names), None)


def group_of(point: CalibrationPoint) -> str:
    """The cross-validation group of ``point``: its (GPU, model) pair for AIConfigurator runs
    (a GPU and model combination the fit has not seen), else its source (a publisher, an engine
    release and a benchmark setup the fit has not seen)."""
    return f"pair:{pair_of(point)}" if point.source == AIC_SOURCE else f"source:{point.source}"


@dataclass(frozen=True)
class CvFold:
    group: str
    held: list[CalibrationPoint]
    rest: list[CalibrationPoint]


def cv_folds(points: Sequence[CalibrationPoint]) -> list[CvFold]:
    """One fold per group (leave-one-group-out); a group whose kind of point (inference or
    training) has no fit target left outside it cannot be predicted and is left out (listed in the
    summary as ``unpredictable_groups``)."""
    out = []
    for group in sorted({group_of(p) for p in points}):
        held = [p for p in points if group_of(p) == group]
        rest = [p for p in points if group_of(p) != group]
        modes = {p.mode for p in held}
        predictable = [p for p in held if any(q.fit_target and q.mode is p.mode for q in rest)]
        if predictable:
            out.append(CvFold(group, predictable, rest))
        elif modes:
            log.info("calibration.cv.unpredictable", group=group)
    return out


FitFunction = Callable[[Sequence[CalibrationPoint]], dict[str, Any]]
"""``fit.fit_values`` (passed in: ``fit`` imports this module for its ``--cv``)."""


def _run_fold(fit: FitFunction, fold: CvFold) -> list[tuple[str, float]]:
    data = fit(fold.rest)  # cold: the final fit's own start, priors and budget
    results = evaluate(fold.held, calibration_from_dict(data))
    log.info("calibration.cv.fold", group=fold.group, points=len(fold.held))
    return [(r.point.id, r.predicted) for r in results]


def cross_validate(
    points: Sequence[CalibrationPoint], fit: FitFunction, *, workers: int = 1
) -> list[PointResult]:
    """Every predictable point's out-of-fold prediction (refits in ``workers`` processes)."""
    folds = cv_folds(points)
    run = functools.partial(_run_fold, fit)
    if workers > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            predictions = list(pool.map(run, folds))
    else:
        predictions = [run(f) for f in folds]
    by_id = {p.id: p for p in points}
    return [PointResult(by_id[i], v, v, v) for fold in predictions for i, v in fold]


# --------------------------------------------------------------------------------------------
# Stored predictions
# --------------------------------------------------------------------------------------------


FIT_DEFINITION: tuple[str, ...] = (
    "INFERENCE_PARAMS", "GENERATION_PARAMS", "GENERATION_BOUNDS", "TRAINING_PARAMS", "TRAINING_PRIORS",
    "FULL_FIT", "DATA_LOG_SD", "ROBUST_SCALE", "SOURCE_WEIGHT_REFERENCE", "AIC_SAMPLE_PER_CONFIGURATION",
    "ALLREDUCE_LATENCY_PRIOR_SD", "FITTED_FAMILIES",
)
"""Names in ``tools.calibration.fit`` whose values decide what a refit finds (their reprs are
hashed); the functions that run the fit are hashed by their syntax trees."""
FINGERPRINT_DIGITS = 4
"""Significant digits of each prediction in the fingerprint: a change below ~0.05 % (a root
finder's tolerance) cannot move the out-of-fold table, reported to 0.1 %; anything larger can."""
FIT_FUNCTIONS = ("_fit", "fit_values", "fit_sample", "source_weights", "_generation_params",
                 "_share_params", "_allreduce_latency_params", "_assemble", "_merged")


def model_fingerprint(points: Sequence[CalibrationPoint] | None = None) -> str:
    """What the out-of-fold predictions depend on: the points (ids, values, which are fit targets),
    the fit's definition (its parameters, priors, budget and the functions that run it) and the
    model's prediction of every point under the checked-in calibration — so a refactor that
    predicts the same keeps a stored cross-validation current, and any change to what the model
    predicts or how it is fitted makes it stale."""
    from tools.calibration import fit  # noqa: PLC0415 - fit imports this module for --cv

    if points is None:
        points, _ = load_points(load_default())
    digest = hashlib.sha256()
    for p in points:
        digest.update(f"{p.id}|{p.metric}|{p.value!r}|{p.fit_target}|{p.assumed};".encode())
    for name in FIT_DEFINITION:
        digest.update(f"{name}={getattr(fit, name)!r};".encode())
    for name in FIT_FUNCTIONS:
        digest.update(ast.dump(ast.parse(textwrap.dedent(inspect.getsource(getattr(fit, name))))).encode())
    for r in evaluate(points, load_calibration()):
        digest.update(f"{r.point.id}={r.predicted:.{FINGERPRINT_DIGITS}g};".encode())
    return digest.hexdigest()


def write_predictions(
    points: Sequence[CalibrationPoint],
    results: Sequence[PointResult],
    *,
    fit_date: str,
    seconds: float,
    loadavg: str,
) -> None:
    rows = [{"id": r.point.id, "group": group_of(r.point), "metric": r.point.metric,
             "measured": r.point.value, "predicted": round(r.predicted, 6)} for r in results]
    payload = {"fit_date": fit_date, "model_fingerprint": model_fingerprint(points),
               "folds": len({row["group"] for row in rows}), "seconds": round(seconds, 1),
               "loadavg": loadavg, "predictions": rows}
    CV_PATH.write_text(json.dumps(payload, indent=1) + "\n")


def read_predictions(points: Sequence[CalibrationPoint]) -> tuple[dict[str, Any], list[PointResult]]:
    """(header of the stored cross-validation, its out-of-fold results on ``points``)."""
    stored = json.loads(CV_PATH.read_text())
    by_id = {p.id: p for p in points}
    results = [PointResult(by_id[r["id"]], float(r["predicted"]), float(r["predicted"]),
                           float(r["predicted"])) for r in stored["predictions"] if r["id"] in by_id]
    header = {k: v for k, v in stored.items() if k != "predictions"}
    return header, results


# --------------------------------------------------------------------------------------------
# The out-of-fold table
# --------------------------------------------------------------------------------------------


def central_band(ratios: Sequence[float], coverage: float = BAND_COVERAGE) -> tuple[float, float]:
    """The central ``coverage`` of measured/predicted ratios, rounded outwards to data points
    (so at least ``coverage`` of them lie inside) and never narrower than ×0.95–×1.05."""
    tail = round((1.0 - coverage) / 2.0, 9)  # 0.05, not 0.04999…: the stated percentile
    lo = float(np.quantile(ratios, tail, method="lower"))
    hi = float(np.quantile(ratios, 1.0 - tail, method="higher"))
    return math.floor(min(lo, 0.95) * 1e4) / 1e4, math.ceil(max(hi, 1.05) * 1e4) / 1e4


def _measured(results: Sequence[PointResult]) -> list[PointResult]:
    return [r for r in results if r.point.kind is RowKind.MEASURED and metric_group(r.point)]


def _stats(results: Sequence[PointResult], band: tuple[float, float] | None = None) -> dict[str, Any]:
    errors = [abs(r.error) for r in results]
    ratios = [r.point.value / r.predicted for r in results]
    out: dict[str, Any] = {
        "n": len(errors),
        "median_ape": round(statistics.median(errors), 4),
        "p90_ape": round(float(np.quantile(errors, 0.9)), 4),
        "median_ratio": round(statistics.median(ratios), 4),
    }
    if band is not None:
        out["band_coverage"] = round(sum(band[0] <= x <= band[1] for x in ratios) / len(ratios), 4)
    return out


def summarize(
    results: Sequence[PointResult], bands: dict[str, tuple[float, float]] | None = None
) -> dict[str, Any]:
    """Median/p90 absolute percentage error and median measured/predicted per metric group, the
    band (central 90 % of the out-of-fold ratios) and its coverage — overall, and per source, GPU
    family, engine and precision. ``bands`` (e.g. the shipped calibration's) are checked instead
    of the bands derived here."""
    measured = _measured(results)
    by_metric: dict[str, list[PointResult]] = {}
    for r in measured:
        by_metric.setdefault(str(metric_group(r.point)), []).append(r)
    own = {g: central_band([r.point.value / r.predicted for r in rs]) for g, rs in by_metric.items()}
    use = {**own, **(bands or {})}
    out: dict[str, Any] = {"metrics": {}, "bands": {g: list(b) for g, b in own.items()}}
    for group in METRICS:
        if group in by_metric:
            out["metrics"][group] = _stats(by_metric[group], use[group])
    keys: dict[str, Callable[[CalibrationPoint], str]] = {
        "source": lambda p: p.source,
        "gpu_family": lambda p: gpu_family(p.gpu),
        "engine": lambda p: p.engine.value,
        "precision": lambda p: p.precision.value,
    }
    for name, key in keys.items():
        table: dict[str, dict[str, Any]] = {}
        for value in sorted({key(r.point) for r in measured}):
            part = [r for r in measured if key(r.point) == value]
            table[value] = {g: _stats([r for r in part if metric_group(r.point) == g], use[g])
                            for g in METRICS if any(metric_group(r.point) == g for r in part)}
        out[f"by_{name}"] = table
    coverage = [use[str(metric_group(r.point))] for r in measured]
    inside = [b[0] <= r.point.value / r.predicted <= b[1] for r, b in zip(measured, coverage, strict=True)]
    out["band_coverage"] = round(sum(inside) / len(inside), 4) if inside else math.nan
    return out


def loadavg() -> str:
    path = Path("/proc/loadavg")
    return path.read_text().strip() if path.exists() else ""


def run_cv(fit: FitFunction, *, workers: int, fit_date: str) -> dict[str, Any]:
    """Cross-validate on the repo's data, store the predictions and return the summary."""
    points, _ = load_points(load_default())
    started, load_before = time.monotonic(), loadavg()
    results = cross_validate(points, fit, workers=workers)
    write_predictions(points, results, fit_date=fit_date, seconds=time.monotonic() - started,
                      loadavg=f"start {load_before}; end {loadavg()}; cpus {os.cpu_count()}")
    return summarize(results)
