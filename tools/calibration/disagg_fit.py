"""Fit the disaggregated model's factors: ``python -m tools.calibration.disagg_fit [--cv]``.

The only way ``solver/perf/disagg_calibration.json`` changes. Separate from the aggregated fit
(``tools.calibration.fit``): the aggregated factors are read as they are, never refitted here.

Parameters: the ``DisaggFactors`` of ``solver.perf.disagg`` (log multipliers on their defaults,
weak priors) and per-engine multipliers of the step scales, the request overhead and the prefill
queue (prior sd 0.5). Residuals: log(predicted / measured) of TTFT and TPOT per run (the
throughput follows from them by the loop's identity: evaluated, not fitted twice), soft-L1 loss,
each (GPU, model) pair weighted (30/n)^¼ so one sweep does not outvote the rest.

``--cv``: grouped out of fold by (GPU, model) pair: each fold a full refit from the same start,
priors and budget as the final fit; the out-of-fold predictions go to
``tools/calibration/disagg_cv_predictions.json`` and their central 90 % ratios become the band.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import least_squares

from pricebook.loader import load_default
from solver.perf.disagg import (
    DISAGG_CALIBRATION_PATH,
    DisaggFactors,
    RawPhysics,
    raw_physics,
    solve_steady,
)
from tools.calibration.cv import central_band, loadavg
from tools.calibration.disagg_points import DisaggPoint, load_disagg_points

DISAGG_CV_PATH = Path(__file__).with_name("disagg_cv_predictions.json")
ENGINE_FIELDS = ("prefill_scale", "decode_scale", "decode_batch_scale", "request_overhead_s", "queue_wait",
                 "slot_wait", "admission_steps")
"""Fields fitted per engine on top of the base."""
PRECISION_FIELDS = ("prefill_scale", "decode_scale", "decode_batch_scale")
"""Fields fitted per weight precision (FP4 and FP8 MoE GEMMs are other kernels)."""
PRECISION_SCOPE = "precision:"
BASE_PRIOR_SD = 2.0
ENGINE_PRIOR_SD = 0.5
BOUNDS = (-6.0, 6.0)
"""Log multipliers stay within a factor e^6 of the defaults."""
STEP_SCALE_BOUND = float(np.log(2.0))
"""The prefill and decode step scales stay physical: each layer (base, engine, precision) within ×2
of the aggregated physics (×8 at most in all)."""
STEP_SCALES = frozenset({"prefill_scale", "decode_scale", "decode_batch_scale"})
ROBUST_SCALE = 0.3
PAIR_WEIGHT_REFERENCE = 30.0
MAX_NFEV = 300
METRICS = ("throughput_per_gpu", "tpot_ms", "ttft_ms")


@dataclass(frozen=True)
class Prepared:
    """The points with their factor-free physics, computed once per fit session."""

    points: list[DisaggPoint]
    raws: list[RawPhysics]


def prepare(points: Sequence[DisaggPoint]) -> Prepared:
    return Prepared(list(points), [raw_physics(p.model, p.deployment, p.shape, p.users) for p in points])


def _param_names(points: Sequence[DisaggPoint]) -> list[tuple[str, str]]:
    engines = sorted({p.deployment.engine.value for p in points})
    precisions = sorted({p.deployment.precision.value for p in points})
    base = [("base", f.name) for f in fields(DisaggFactors)]
    return (base + [(e, n) for e in engines for n in ENGINE_FIELDS]
            + [(PRECISION_SCOPE + q, n) for q in precisions for n in PRECISION_FIELDS])


def values_of(x: np.ndarray, names: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """The calibration file's ``base`` and ``engine`` sections from log multipliers ``x``."""
    defaults = DisaggFactors()
    out: dict[str, Any] = {"base": {}, "engine": {}, "precision": {}}
    for (scope, name), value in zip(names, x, strict=True):
        if scope == "base":
            out["base"][name] = float(getattr(defaults, name) * np.exp(value))
        elif scope.startswith(PRECISION_SCOPE):
            out["precision"].setdefault(scope.removeprefix(PRECISION_SCOPE), {})[name] = float(np.exp(value))
        else:
            out["engine"].setdefault(scope, {})[name] = float(np.exp(value))
    return out


def predict(prepared: Prepared, values: dict[str, Any]) -> dict[str, np.ndarray]:
    base, engine, precision = values["base"], values["engine"], values.get("precision", {})
    arrays = {name: np.array([base[name] * engine.get(p.deployment.engine.value, {}).get(name, 1.0)
                              * precision.get(p.deployment.precision.value, {}).get(name, 1.0)
                              for p in prepared.points]) for name in base}
    solved = solve_steady(prepared.raws, arrays)
    out_tokens = np.array([p.shape.output_tokens for p in prepared.points], dtype=float)
    gpus = np.array([p.deployment.gpus for p in prepared.points], dtype=float)
    return {"ttft_ms": solved.ttft_s * 1e3, "tpot_ms": solved.tpot_s * 1e3,
            "throughput_per_gpu": solved.req_s * out_tokens / gpus}


def measured(points: Sequence[DisaggPoint]) -> dict[str, np.ndarray]:
    return {"ttft_ms": np.array([p.ttft_ms for p in points]),
            "tpot_ms": np.array([p.tpot_ms for p in points]),
            "throughput_per_gpu": np.array([p.throughput_per_gpu for p in points])}


def fit_values(prepared: Prepared) -> dict[str, Any]:
    """A full fit from the defaults (the same start, priors and budget for every fold)."""
    names = _param_names(prepared.points)
    sizes: dict[str, int] = {}
    for p in prepared.points:
        sizes[p.group] = sizes.get(p.group, 0) + 1
    weight = np.sqrt(np.array([(PAIR_WEIGHT_REFERENCE / sizes[p.group]) ** 0.25 for p in prepared.points]))
    target = measured(prepared.points)
    prior_sd = np.array([BASE_PRIOR_SD if scope == "base" else ENGINE_PRIOR_SD for scope, _ in names])

    def residuals(x: np.ndarray) -> np.ndarray:
        predicted = predict(prepared, values_of(x, names))
        parts = []
        for metric in ("ttft_ms", "tpot_ms"):
            with np.errstate(divide="ignore", invalid="ignore"):
                r = np.log(predicted[metric] / target[metric])
            parts.append(weight * np.clip(np.nan_to_num(r, nan=10.0, posinf=10.0), -10.0, 10.0))
        return np.concatenate([*parts, ROBUST_SCALE * x / prior_sd])

    start = np.zeros(len(names))
    bound = np.array([STEP_SCALE_BOUND if name in STEP_SCALES else BOUNDS[1] for _, name in names])
    result = least_squares(residuals, start, bounds=(-bound, bound), loss="soft_l1", f_scale=ROBUST_SCALE,
                           max_nfev=MAX_NFEV, x_scale=1.0)
    values = values_of(result.x, names)
    values["fit"] = {"cost": float(result.cost), "nfev": int(result.nfev), "points": len(prepared.points)}
    return values


# --------------------------------------------------------------------------------------------
# Out of fold
# --------------------------------------------------------------------------------------------


def cross_validate(prepared: Prepared) -> list[dict[str, Any]]:
    """Every point predicted by a fit that has not seen its (GPU, model) pair."""
    rows: list[dict[str, Any]] = []
    for group in sorted({p.group for p in prepared.points}):
        held = [i for i, p in enumerate(prepared.points) if p.group == group]
        rest = [i for i, p in enumerate(prepared.points) if p.group != group]
        values = fit_values(Prepared([prepared.points[i] for i in rest], [prepared.raws[i] for i in rest]))
        part = Prepared([prepared.points[i] for i in held], [prepared.raws[i] for i in held])
        predicted, target = predict(part, values), measured(part.points)
        for j, p in enumerate(part.points):
            rows.append({"id": p.id, "group": group, "engine": p.deployment.engine.value,
                         "assumed_workers": p.assumed_workers,
                         **{f"{m}_measured": float(target[m][j]) for m in METRICS},
                         **{f"{m}_predicted": round(float(predicted[m][j]), 6) for m in METRICS}})
    return rows


def bands_of(rows: Sequence[dict[str, Any]]) -> dict[str, list[float]]:
    bands = {}
    for metric, key in (("throughput", "throughput_per_gpu"), ("tpot", "tpot_ms"), ("ttft", "ttft_ms")):
        ratios = [r[f"{key}_measured"] / r[f"{key}_predicted"] for r in rows
                  if r[f"{key}_predicted"] > 0 and np.isfinite(r[f"{key}_predicted"])]
        bands[metric] = list(central_band(ratios))
    return bands


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cv", action="store_true", help="also run the grouped out-of-fold refits")
    args = parser.parse_args(argv)
    points, skipped = load_disagg_points(load_default())
    prepared = prepare(points)
    started, load_before = time.monotonic(), loadavg()
    values = fit_values(prepared)
    values["skipped_rows"] = [{"id": s.id, "reason": s.reason} for s in skipped]
    values["fit_date"] = dt.date.today().isoformat()
    if args.cv:
        rows = cross_validate(prepared)
        values["bands"] = bands_of(rows)
        DISAGG_CV_PATH.write_text(json.dumps({
            "fit_date": values["fit_date"], "folds": len({r["group"] for r in rows}),
            "seconds": round(time.monotonic() - started, 1),
            "loadavg": f"start {load_before}; end {loadavg()}; cpus {os.cpu_count()}",
            "predictions": rows}, indent=1) + "\n")
    elif DISAGG_CALIBRATION_PATH.exists():
        values["bands"] = json.loads(DISAGG_CALIBRATION_PATH.read_text()).get("bands", {})
    DISAGG_CALIBRATION_PATH.write_text(json.dumps(values, indent=1, sort_keys=True) + "\n")
    sys.stdout.write(json.dumps({k: v for k, v in values.items() if k != "skipped_rows"}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
