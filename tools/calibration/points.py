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
from solver.perf.calibration import CALIBRATION_PATH, Calibration, EfficiencyFactors
from solver.perf.engines import engine_limits
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
    "aic/silicon_calibration_half.csv",
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
    derived: bool = False
    """The metric follows from other points of the same run (AIConfigurator's throughput from its
    TTFT and TPOT): evaluated, not fitted twice."""
    engine_version: str = ""
    """The engine release the source ran (empty: not stated — the newest documented defaults)."""
    assumed: str = ""
    """Non-empty: an input the source did not publish was estimated (why, in words). Such a point
    is evaluated, never fitted."""

    @property
    def fit_target(self) -> bool:
        if self.kind is not RowKind.MEASURED or self.metric not in FIT_METRICS or self.derived:
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


def _version_in(text: str) -> str:
    """The first version number in a cell (``"vLLM 0.11.2"``, ``"0.9.0.1 (rocm6.4.1 …)"``)."""
    match = re.search(r"\d+\.\d+(?:\.\d+)?", text)
    return match.group(0) if match else ""


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
    aic, aic_skipped = aic_points(book)
    skipped = [
        *seed_skipped,
        *public_skipped,
        *aic_skipped,
        SkippedRow("s002-*", "seed 002: input/output lengths and TP/DP layout not published"),
    ]
    return seed_points + public_points + aic, skipped


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
                engine_version=_version_in(r["engine"]),
                tp=int(r["tp"]),
                num_gpus=int(r["num_gpus"]),
                # The article sets no --kv-cache-dtype: the engine's documented default applies
                # (vLLM's "auto" keeps BF16 KV even for FP8 checkpoints, ``engines.default_kv_precision``).
                kv_precision=None,
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
        engine_version=_version_in(r["engine_version"]),
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
        engine_version=_version_in(row["engine_version"]),
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


def deployment_of(point: CalibrationPoint) -> Deployment:
    return Deployment(
        point.gpu,
        point.tp,
        point.precision,
        point.kv_precision,
        point.engine,
        max_num_seqs=point.max_num_seqs,
        num_scheduler_steps=point.num_scheduler_steps,
        engine_version=point.engine_version,
    )


def inference_factors(point: CalibrationPoint, cal: Calibration) -> EfficiencyFactors:
    """The efficiency factors an inference point's prediction reads from ``cal`` (its only
    dependence on the calibration apart from the band), as ``inference.build_replica`` picks them."""
    deployment = deployment_of(point)
    generation = engine_limits(point.engine, version=point.engine_version).generation
    return cal.factors(
        point.gpu, point.engine, generation, point.precision, deployment.effective_kv_precision
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
    shape = WorkloadShape(point.input_len, point.output_len)
    inference = estimate_inference(point.model, deployment_of(point), shape, point.load, calibration=cal)
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
    low, high = {"tpot_ms": cal.tpot_band, "ttft_ms": cal.ttft_band}.get(
        metric, (cal.latency_band_low, cal.latency_band_high)
    )
    return value, value * low, value * high


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


# --------------------------------------------------------------------------------------------
# AIConfigurator's measured serving runs (``calibration_data/aic/``, Apache-2.0, see its NOTICE)
# --------------------------------------------------------------------------------------------
# Each row is one steady closed loop (``aiperf --concurrency N``, 20·N requests, fixed lengths,
# streaming) of one engine on one GPU type; it gives three points: mean TTFT, mean TPOT and the
# loop's output throughput N·osl / (TTFT + (osl − 1)·TPOT) (the README's identity). Quantization
# follows the README: fp8 / fp8_block / nvfp4 rows ran an FP8 KV cache, bf16, int4 and gpt-oss's
# MXFP4 a BF16 one. Points carry their (GPU, model) pair so accuracy can be measured pair-out.

AIC_FILE = "aic/silicon_calibration_half.csv"
AIC_SOURCE = "aiconfigurator_silicon"

QUANT_PRECISION = {
    "fp8": Precision.FP8,
    "fp8_block": Precision.FP8,
    "nvfp4": Precision.FP4,
    "int4_wo": Precision.INT4,
    "": Precision.BF16,
}
"""``gemm_quant_mode`` → weight precision (int4_wo: W4A16 weight-only)."""
FP8_KV_QUANT = frozenset({"fp8", "fp8_block", "nvfp4"})
"""Modes whose runs used an FP8 KV cache (README); MXFP4 checkpoints (gpt-oss) are the exception."""
ENGINES = {"vllm": Engine.VLLM, "sglang": Engine.SGLANG, "trtllm": Engine.TRTLLM}
_CONCURRENCY = re.compile(r"silicon_concurrency=(\d+)")
_IMAGE_TAG = re.compile(r"image=[^;]*:v?(\d+\.\d+[^;\s]*)")


def _gpu_id(book: Pricebook, system: str) -> str:
    """``h100_sxm`` → the catalogue id (``h100-sxm``; ``b200_sxm`` is the alias ``b200-sxm``)."""
    return catalog.gpu(book, system.replace("_", "-")).id


def _version(row: dict[str, str]) -> str:
    """The engine release: the column, else the container image's tag, else empty (newest)."""
    if row["backend_version"]:
        return row["backend_version"]
    match = _IMAGE_TAG.search(row["silicon_data_source"])
    return match.group(1) if match else ""


def _kv_precision(row: dict[str, str], model_id: str) -> Precision:
    if row["gemm_quant_mode"] in FP8_KV_QUANT and not model_id.startswith("openai/gpt-oss"):
        return Precision.FP8
    return Precision.BF16


def aic_points(book: Pricebook) -> tuple[list[CalibrationPoint], list[SkippedRow]]:
    """Three points per measured run (TTFT, TPOT, output tok/s), or the row and why it was skipped."""
    points: list[CalibrationPoint] = []
    skipped: list[SkippedRow] = []
    with (DATA_DIR / AIC_FILE).open() as handle:
        rows = list(csv.DictReader(handle))
    for r in rows:
        try:
            gpu = catalog.gpu(book, _gpu_id(book, r["system"]))
            model = catalog.model(book, r["model_path"])
        except UnknownEntryError as exc:
            skipped.append(SkippedRow(r["id"], str(exc)))
            continue
        if r["gemm_quant_mode"] not in QUANT_PRECISION:
            skipped.append(SkippedRow(r["id"], f"quantization {r['gemm_quant_mode']!r} not modelled"))
            continue
        found = _CONCURRENCY.search(r["silicon_data_source"])
        users = int(found.group(1)) if found else int(r["batch_size"]) * int(r["attention_dp_size"] or 1)
        ttft, tpot = float(r["silicon_ttft_ms"]), float(r["silicon_tpot_ms"])
        isl, osl = int(r["isl"]), int(r["osl"])
        throughput = users * osl / ((ttft + (osl - 1) * tpot) / 1e3)
        tp = int(r["tp_size"])
        for metric, value in (("ttft_ms", ttft), ("tpot_ms", tpot), ("output_tok_s_total", throughput)):
            points.append(
                CalibrationPoint(
                    id=f"{r['id']}:{metric}",
                    source=AIC_SOURCE,
                    kind=RowKind.MEASURED,
                    metric=metric,
                    value=value,
                    gpu=gpu,
                    model=model,
                    precision=QUANT_PRECISION[r["gemm_quant_mode"]],
                    engine=ENGINES[r["backend"]],
                    engine_version=_version(r),
                    tp=tp,
                    num_gpus=tp,
                    kv_precision=_kv_precision(r, model.id),
                    input_len=isl,
                    output_len=osl,
                    load=ClosedLoop(users, Arrival.STEADY),
                    note=f"steady closed loop of {users} users (aiperf --concurrency)",
                    derived=metric == "output_tok_s_total",
                )
            )
    return points, skipped


def pair_of(point: CalibrationPoint) -> str:
    """The (GPU, model) pair a point belongs to: the unit held out together."""
    return f"{point.gpu.id}|{point.model.id}"
