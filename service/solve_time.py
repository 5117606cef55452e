"""How long a solve request will take, from its size, before it is converted (admission control).

``solve_size`` reads a request's size off the decoded protobuf in microseconds: workloads, GPU
types it may use (its allowed list, else every catalogue GPU), acquisition modes, hour buckets (24
when an hourly profile meets a rental mode, else 1) and whether baselines and sensitivity run.
``SolveTimeModel`` turns a size into seconds with a log-linear fit,

    log t = b0 + b1·log(workloads × GPU types) + b2·log(buckets) + b3·log(modes)
            + b4·baselines + b5·sensitivity,

whose coefficients — and the measurements they were fitted on, with the machine's load average —
are in ``solve_time_model.json``, written by ``python -m bench.solve_time_fit`` (never typed by
hand). The gate (``service.limits.SolveGate``) scales the estimates by how long recent solves
really took against their estimates, so a busier or faster machine corrects them as it goes.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from api.fleetplan.v1 import common_pb2, scenario_pb2
from pricebook.schema import Pricebook

MODEL_FILE = Path(__file__).with_name("solve_time_model.json")
FEATURES = ("intercept", "log_pairs", "log_buckets", "log_modes", "baselines", "sensitivity")


@dataclass(frozen=True, slots=True)
class SolveSize:
    workloads: int
    gpu_types: int
    modes: int
    buckets: int
    baselines: bool
    sensitivity: bool

    def features(self) -> list[float]:
        """The model's inputs, in ``FEATURES`` order."""
        return [
            1.0,
            math.log(max(1, self.workloads) * max(1, self.gpu_types)),
            math.log(max(1, self.buckets)),
            math.log(max(1, self.modes)),
            float(self.baselines),
            float(self.sensitivity),
        ]

    def as_dict(self) -> dict[str, Any]:
        return {
            "workloads": self.workloads,
            "gpu_types": self.gpu_types,
            "modes": self.modes,
            "buckets": self.buckets,
            "baselines": self.baselines,
            "sensitivity": self.sensitivity,
        }


def _has_profile(workloads: Any) -> bool:
    return any(w.WhichOneof("kind") == "inference" and len(w.inference.hourly_profile) > 0 for w in workloads)


def solve_size(message: Any, book: Pricebook) -> SolveSize:
    """The size of a request with ``workloads`` and ``constraints`` (PlanFleet, EvaluateFleet,
    AnalyzeBreakEven, a sweep's base) — read off the protobuf, nothing converted."""
    constraints: scenario_pb2.Constraints = message.constraints
    # AnalyzeBreakEven has no solver options: its solves run as the defaults say.
    options: scenario_pb2.SolverOptions = getattr(message, "solver_options", scenario_pb2.SolverOptions())
    modes = len(set(constraints.allowed_modes)) or 1  # absent = buy only (solver.domain)
    buy_only = modes == 1 and (
        not constraints.allowed_modes or constraints.allowed_modes[0] == common_pb2.ACQUISITION_MODE_BUY
    )
    return SolveSize(
        workloads=len(message.workloads),
        gpu_types=len(set(constraints.allowed_gpu_ids)) or len(book.gpus),
        modes=modes,
        buckets=1 if buy_only or not _has_profile(message.workloads) else 24,
        baselines=options.compute_baselines if options.HasField("compute_baselines") else True,
        sensitivity=options.compute_sensitivity if options.HasField("compute_sensitivity") else True,
    )


@dataclass(frozen=True, slots=True)
class SolveTimeModel:
    coefficients: tuple[float, ...]
    """One per ``FEATURES`` name."""

    def estimate_s(self, size: SolveSize) -> float:
        return math.exp(sum(c * x for c, x in zip(self.coefficients, size.features(), strict=True)))

    @classmethod
    def from_document(cls, document: dict[str, Any]) -> SolveTimeModel:
        fitted = document["coefficients"]
        missing = [name for name in FEATURES if name not in fitted]
        if missing:
            msg = f"{MODEL_FILE.name}: coefficients {missing} missing; refit with bench.solve_time_fit"
            raise ValueError(msg)
        return cls(tuple(float(fitted[name]) for name in FEATURES))


@cache
def default_model() -> SolveTimeModel:
    """The fitted model shipped with the server (``solve_time_model.json``)."""
    return SolveTimeModel.from_document(json.loads(MODEL_FILE.read_text(encoding="utf-8")))
