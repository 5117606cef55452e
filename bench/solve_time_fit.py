"""Fit the admission model of solve time (``service.solve_time``) from measured solves.

Each measurement is one whole PlanFleet answer (``service.domain_calls.plan``: main solve,
baselines, sensitivity — what a solve slot is held for), timed in this process, of a request cut
from the solver-scaling portfolio (``bench.solver_scaling.portfolio``) to a grid of sizes:
workloads × allowed GPU types × modes (buy only / all three) × hourly profiles kept or dropped ×
extras (baselines and sensitivity) on or off. The size is read off the protobuf by the service's own
``solve_size``. A least-squares fit of log seconds on ``SolveSize.features()`` is written, with
every measurement and the load average, to ``service/solve_time_model.json``.

    .venv/bin/python -m bench.solve_time_fit                 # measure the grid, then fit
    .venv/bin/python -m bench.solve_time_fit --fit-only      # refit the measurements in the file
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import os
import time
from typing import Any

import numpy as np
import structlog

from api.fleetplan.v1 import common_pb2
from bench.load import machine_info
from bench.solver_scaling import portfolio
from pricebook.loader import load_default
from pricebook.schema import Pricebook
from service import domain_calls
from service.convert.encode import plan_request_to_proto
from service.convert.scenario import scenario_request
from service.solve_time import FEATURES, MODEL_FILE, SolveSize, solve_size
from solver.optimizer.cancel import CancelToken

WORKLOADS = (1, 8)
GPU_TYPES = (3, 0)
"""0 = no allowed list: every catalogue GPU."""
TIME_LIMIT_S = 10.0
KINDS = ((False, False), (True, False), (True, True))
"""(rent, hourly profiles): buy only (static), every mode without profiles, every mode with them."""
EXTRAS = ((False, False), (True, False), (True, True))
"""(baselines, sensitivity)."""
ALL_MODES = (
    common_pb2.ACQUISITION_MODE_BUY,
    common_pb2.ACQUISITION_MODE_RESERVED,
    common_pb2.ACQUISITION_MODE_ON_DEMAND,
)


def _request(
    workloads: int, gpu_types: int, kind: tuple[bool, bool], extras: tuple[bool, bool], book: Pricebook
) -> Any:
    rent, profiles = kind
    request = plan_request_to_proto(portfolio(workloads))
    del request.constraints.allowed_gpu_ids[:]
    if gpu_types:
        request.constraints.allowed_gpu_ids.extend(g.id for g in book.gpus[:gpu_types])
    del request.constraints.allowed_modes[:]
    request.constraints.allowed_modes.extend(ALL_MODES if rent else ALL_MODES[:1])
    if not profiles:
        for workload in request.workloads:
            workload.inference.ClearField("hourly_profile")
    request.solver_options.time_limit_s = TIME_LIMIT_S
    request.solver_options.compute_baselines, request.solver_options.compute_sensitivity = extras
    return request


def measure(book: Pricebook) -> list[dict[str, Any]]:
    rows = []
    for workloads, gpu_types, kind, extras in itertools.product(WORKLOADS, GPU_TYPES, KINDS, EXTRAS):
        request = _request(workloads, gpu_types, kind, extras, book)
        resolved = scenario_request(request, book)
        started = time.perf_counter()
        result = domain_calls.plan(resolved, TIME_LIMIT_S, CancelToken())
        seconds = time.perf_counter() - started
        size = solve_size(request, book)
        rows.append(
            {
                **size.as_dict(),
                "seconds": round(seconds, 4),
                "status": str(result.solution.stats.status),
                "load_average_1m": os.getloadavg()[0],
            }
        )
        print(json.dumps(rows[-1]), flush=True)  # noqa: T201 - benchmark output
    return rows


def fit(rows: list[dict[str, Any]]) -> dict[str, float]:
    sizes = [SolveSize(**{k: r[k] for k in SolveSize.__slots__}) for r in rows]
    x = np.array([s.features() for s in sizes])
    y = np.log(np.array([max(1e-3, r["seconds"]) for r in rows]))
    coefficients, *_ = np.linalg.lstsq(x, y, rcond=None)
    predicted = x @ coefficients
    return {
        **{name: round(float(c), 6) for name, c in zip(FEATURES, coefficients, strict=True)},
        "_rms_log_error": round(float(np.sqrt(np.mean((predicted - y) ** 2))), 4),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--fit-only", action="store_true", help="refit the measurements already in the file")
    args = parser.parse_args(argv)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    if args.fit_only:
        document = json.loads(MODEL_FILE.read_text(encoding="utf-8"))
        rows, machine = document["measurements"], document["machine"]
    else:
        load_before = os.getloadavg()
        rows = measure(load_default())
        machine = {**machine_info(), "load_average_before_1_5_15": [round(v, 2) for v in load_before]}
    fitted = fit(rows)
    rms = fitted.pop("_rms_log_error")
    document = {
        "what": "log seconds of a whole PlanFleet answer ~ SolveSize.features(); bench/solve_time_fit.py",
        "time_limit_s": TIME_LIMIT_S,
        "coefficients": fitted,
        "rms_log_error": rms,
        "machine": machine,
        "measurements": rows,
    }
    MODEL_FILE.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({"coefficients": fitted, "rms_log_error": rms}, indent=2))  # noqa: T201 - benchmark output
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
