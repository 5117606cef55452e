"""Calibration points: the measurement rows of ``solver/perf/calibration_data/`` as inputs of the
performance model, what the model predicts for each, and how far off it is.

Targets are ``measured`` rows (the public benchmark tables are vendor measurements); ``reported``
rows are kept for checks only, ``claim`` rows never used. No dev-only dependency here: the fit
(``tools.calibration.fit``) needs scipy, reading and predicting points does not.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pricebook import catalog
from pricebook.errors import UnknownEntryError
from pricebook.schema import GpuSpec, ModelArch, Pricebook
from solver.domain import Arrival, Engine, ModelSpec, Precision, TrainingMethod
from solver.perf.calibration import CALIBRATION_PATH, Calibration
from solver.perf.inference import (
    ClosedLoop,
    Deployment,
    Load,
    OfflineMax,
    OpenLoop,
    WorkloadShape,
    estimate_inference,
)
from solver.perf.models import model_from_spec
from solver.perf.training import estimate_training

DATA_DIR = CALIBRATION_PATH.with_name("calibration_data")
"""The measurements (copies of ``../shared/calibration``), next to the calibration they explain."""
DATA_FILES = (
    "seed_measurements.csv",
    "public_calibration.csv",
    "seed002_a100_h100_b200.csv",
    "assumed_lengths.csv",
)
ASSUMED_LENGTHS = "assumed_lengths.csv"
"""Our estimates of lengths a source did not publish (with the reasoning): such rows are evaluation
points only, never fit targets."""

THROUGHPUT_METRICS = frozenset({"output_tok_s_total", "total_tok_s", "req_s", "train_tok_s_per_gpu"})
LATENCY_METRICS = frozenset({"tpot_ms", "ttft_ms", "duration_s"})
FIT_METRICS = frozenset({"output_tok_s_total", "tpot_ms", "ttft_ms", "train_tok_s_per_gpu"})
"""total_tok_s, req_s and duration are the same measurement as output tok/s, reported not refitted."""
ASSUMPTION_INSENSITIVE_METRICS = frozenset({"tpot_ms"})
"""Metrics still fitted when the prompt length is our estimate. A decode step reads all weights
whatever the contexts, so TPOT moves only through the prefill chunks interleaved into decode steps:
its elasticity to the assumed prompt length is ~0.1 (a 20% error in the mean moves it < 3%;
``test_fit`` checks it). TTFT stays evaluation-only: SGLang's is the prefill of that very prompt
(elasticity 0.4-0.7), and a median over ShareGPT's long-tailed prompts (4-1024 tokens) is not the
TTFT of the mean prompt, so fitting it would tune the hardware factors to our length guess."""


class RowKind(StrEnum):
    """What a data row is: only ``measured`` rows are fit targets."""

    MEASURED = "measured"
    REPORTED = "reported"
    CLAIM = "claim"


class PointMode(StrEnum):
    INFER = "infer"
    TRAIN = "train"


class MetricClass(StrEnum):
    """Throughput and latency points have a band each."""

    THROUGHPUT = "throughput"
    LATENCY = "latency"


class Statistic(StrEnum):
    """Which statistic of a latency the source published."""

    MEAN = "mean"
    MEDIAN = "median"


TRAINING_METRICS = frozenset({"train_tok_s_per_gpu", "mfu"})

ENGINE_NAMES = {"vllm": Engine.VLLM, "tensorrt-llm": Engine.TRTLLM, "sglang": Engine.SGLANG}


@dataclass(frozen=True)
class CalibrationPoint:
    id: str
    source: str
    kind: RowKind
    metric: str
    value: float
    gpu: GpuSpec
    model: ModelArch
    precision: Precision
    mode: PointMode = PointMode.INFER
    engine: Engine = Engine.VLLM
    tp: int = 1
    num_gpus: int = 1
    kv_precision: Precision | None = None
    input_len: int = 0
    output_len: int = 0
    load: Load = field(default_factory=OfflineMax)
    max_num_seqs: int | None = None
    seq_len: int = 0
    note: str = ""
    statistic: Statistic = Statistic.MEAN
    num_scheduler_steps: int | None = None
    assumed: str = ""
    """Non-empty: an input the source did not publish was estimated (why, in words). Such a point
    is evaluated, never fitted."""

    @property
    def fit_target(self) -> bool:
        if self.kind is not RowKind.MEASURED or self.metric not in FIT_METRICS:
            return False
        return not self.assumed or self.metric in ASSUMPTION_INSENSITIVE_METRICS

    @property
    def metric_class(self) -> MetricClass:
        return MetricClass.THROUGHPUT if self.metric in THROUGHPUT_METRICS else MetricClass.LATENCY


@dataclass(frozen=True)
class SkippedRow:
    id: str
    reason: str


def _precision(text: str) -> Precision:
    lowered = text.lower()
    for p in Precision:
        if lowered.startswith(p.value):
            return p
    msg = f"unknown precision {text!r}"
    raise ValueError(msg)


def _engine(text: str) -> Engine:
    lowered = text.lower()
    for prefix, engine in ENGINE_NAMES.items():
        if lowered.startswith(prefix):
            return engine
    msg = f"unknown engine {text!r}"
    raise ValueError(msg)


def _model(book: Pricebook, name: str, params_b: str, active_b: str) -> ModelArch:
    try:
        return catalog.model(book, name)
    except UnknownEntryError:
        active = float(active_b) if active_b else None
        return model_from_spec(ModelSpec(params_b=float(params_b), active_params_b=active))


def load_points(book: Pricebook) -> tuple[list[CalibrationPoint], list[SkippedRow]]:
    """The fit's points from the data files, and the rows left out with the reason."""
    seed_points, seed_skipped = _seed_points(book)
    public_points, public_skipped = _public_points(book)
    skipped = [
        *seed_skipped,
        *public_skipped,
        SkippedRow("s002-*", "seed 002: input/output lengths and TP/DP layout not published"),
    ]
    return seed_points + public_points, skipped


def _rows(name: str) -> list[dict[str, str]]:
    with (DATA_DIR / name).open() as handle:
        return list(csv.DictReader(handle))


def _seed_points(book: Pricebook) -> tuple[list[CalibrationPoint], list[SkippedRow]]:
    """Seed 000's measured rows: all requests arrive at once (closed loop, one burst)."""
    points: list[CalibrationPoint] = []
    skipped: list[SkippedRow] = []
    for r in _rows("seed_measurements.csv"):
        if r["kind"] != RowKind.MEASURED:
            skipped.append(SkippedRow(r["id"], f"{r['kind']} row: checked separately, never a fit target"))
            continue
        if r["metric"] not in THROUGHPUT_METRICS | LATENCY_METRICS:
            continue
        points.append(
            CalibrationPoint(
                id=r["id"],
                source=f"seed{r['seed']}",
                kind=RowKind.MEASURED,
                metric=r["metric"],
                value=float(r["value"]),
                gpu=catalog.gpu(book, r["gpu"]),
                model=catalog.model(book, r["model"]),
                precision=_precision(r["precision"]),
                engine=_engine(r["engine"]),
                tp=int(r["tp"]),
                num_gpus=int(r["num_gpus"]),
                # vLLM's default kv_cache_dtype "auto" keeps the KV cache in the activation dtype
                # (bf16) even for FP8 checkpoints; the article sets no --kv-cache-dtype.
                kv_precision=Precision.BF16,
                input_len=int(r["input_len"]),
                output_len=int(r["output_len"]),
                load=ClosedLoop(int(r["concurrency"]), Arrival.BURST),
                note="all requests arrive at once",
            )
        )
    return points, skipped


def _public_points(book: Pricebook) -> tuple[list[CalibrationPoint], list[SkippedRow]]:
    """The public tables' rows (TRT-LLM, AMD vLLM, llm-foundry) that the model can reproduce."""
    assumed = {r["id"]: r for r in _rows(ASSUMED_LENGTHS)}
    points: list[CalibrationPoint] = []
    skipped: list[SkippedRow] = []
    for r in _rows("public_calibration.csv"):
        try:
            gpu = catalog.gpu(book, r["gpu"])
        except UnknownEntryError:
            skipped.append(SkippedRow(r["id"], f"GPU {r['gpu']} is not in the catalogue"))
            continue
        common: dict[str, Any] = {
            "id": r["id"],
            "source": r["source"],
            "kind": RowKind.MEASURED,
            "metric": r["metric"],
            "value": float(r["value"]),
            "gpu": gpu,
            "model": _model(book, r["model"], r["params_b"], r["active_params_b"]),
            "precision": _precision(r["precision"]),
        }
        point = _public_point(r, common, assumed.get(r["id"]))
        if isinstance(point, SkippedRow):
            skipped.append(point)
        else:
            points.append(point)
    return points, skipped


def _public_point(
    r: dict[str, str], common: dict[str, Any], assumption: dict[str, str] | None
) -> CalibrationPoint | SkippedRow:
    if r["metric"] in TRAINING_METRICS:
        return CalibrationPoint(
            **common, mode=PointMode.TRAIN, num_gpus=int(r["num_gpus"]), seq_len=int(r["input_len"])
        )
    load_text = r["concurrency_or_batch"]
    rate = re.match(r"rps=([\d.]+)", load_text)
    if not r["input_len"] and assumption is not None and rate:
        return _open_loop_point(r, common, assumption, float(rate.group(1)))
    if not r["input_len"]:
        return SkippedRow(r["id"], "input length not published (ShareGPT mix)")
    if not load_text.startswith("offline_max"):
        return SkippedRow(r["id"], f"load {load_text!r} not modelled")
    seqs = re.search(r"max_num_seqs=(\d+)", load_text)
    precision = common["precision"]
    return CalibrationPoint(
        **common,
        engine=_engine(r["engine"]),
        tp=int(r["tp"]),
        num_gpus=int(r["num_gpus"]),
        kv_precision=precision if precision is Precision.FP8 else None,
        input_len=int(r["input_len"]),
        output_len=int(r["output_len"]),
        load=OfflineMax(),
        max_num_seqs=int(seqs.group(1)) if seqs else None,
    )


def _open_loop_point(
    row: dict[str, str], common: dict[str, Any], assumption: dict[str, str], rate: float
) -> CalibrationPoint:
    """An online-serving row (Poisson arrivals at ``rate``) whose input length we estimated."""
    engine = _engine(row["engine"])
    # vLLM 0.6 ran with multi-step scheduling; the flag is named in the row's notes.
    steps = re.search(r"--num-scheduler-steps (\d+)", row["notes"])
    return CalibrationPoint(
        **common,
        engine=engine,
        tp=int(row["tp"]),
        num_gpus=int(row["num_gpus"]),
        input_len=int(assumption["input_len"]),
        output_len=int(row["output_len"]),
        load=OpenLoop(rate),
        statistic=Statistic.MEDIAN if "MEDIANS" in row["notes"] else Statistic.MEAN,
        num_scheduler_steps=int(steps.group(1)) if steps and engine is Engine.VLLM else None,
        assumed=assumption["estimate_basis"],
        note=f"open loop {rate:g} req/s; input length estimated ({assumption['input_len']} tokens)",
    )


def predict(point: CalibrationPoint, cal: Calibration) -> tuple[float, float, float]:
    """(predicted, band low, band high) for the point's metric."""
    if point.mode is PointMode.TRAIN:
        est = estimate_training(
            point.model,
            point.gpu,
            point.num_gpus,
            TrainingMethod.FULL,
            point.seq_len,
            1e9,
            precision=point.precision,
            calibration=cal,
        )
        value = est.tokens_per_s_per_gpu if point.metric == "train_tok_s_per_gpu" else est.mfu * 100.0
        return value, value * cal.band_low, value * cal.band_high
    deployment = Deployment(
        point.gpu,
        point.tp,
        point.precision,
        point.kv_precision,
        point.engine,
        max_num_seqs=point.max_num_seqs,
        num_scheduler_steps=point.num_scheduler_steps,
    )
    shape = WorkloadShape(point.input_len, point.output_len)
    inference = estimate_inference(point.model, deployment, shape, point.load, calibration=cal)
    replicas = point.num_gpus // point.tp
    metric = point.metric
    if metric == "output_tok_s_total":
        value = inference.output_tok_s * replicas
    elif metric == "total_tok_s":
        value = inference.total_tok_s * replicas
    elif metric == "req_s":
        value = inference.req_s * replicas
    elif metric == "tpot_ms":
        value = inference.tpot_ms
    elif metric == "ttft_ms":
        value = inference.ttft_median_ms if point.statistic is Statistic.MEDIAN else inference.ttft_ms
    elif metric == "duration_s":
        value = (point.load.concurrency if isinstance(point.load, ClosedLoop) else 1) / inference.req_s
    else:
        msg = f"no prediction for metric {metric}"
        raise ValueError(msg)
    if point.metric_class is MetricClass.THROUGHPUT:
        return value, value * cal.band_low, value * cal.band_high
    return value, value * cal.latency_band_low, value * cal.latency_band_high


# --------------------------------------------------------------------------------------------
# Evaluation (used by bench/calibration_report.py and the tests)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PointResult:
    point: CalibrationPoint
    predicted: float
    low: float
    high: float

    @property
    def error(self) -> float:
        """Signed relative error (predicted − measured) / measured."""
        return self.predicted / self.point.value - 1.0

    @property
    def inside_band(self) -> bool:
        return self.low <= self.point.value <= self.high


def evaluate(points: Sequence[CalibrationPoint], cal: Calibration) -> list[PointResult]:
    out = []
    for pt in points:
        predicted, low, high = predict(pt, cal)
        out.append(PointResult(pt, predicted, low, high))
    return out
