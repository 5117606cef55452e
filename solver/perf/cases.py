"""Batch what-ifs: one JSON object per line in, one result object per line out.

The public contract of ``fleetplan estimate --cases FILE.jsonl`` and the EstimatePerformance RPC
(issue #4, "Interfaces"). A bad line yields ``{"error": {"field": ..., "reason": ...}, "line": n}``
and every other line is still estimated.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pricebook import catalog
from pricebook.errors import UnknownEntryError
from pricebook.schema import GpuSpec, ModelArch, Pricebook
from solver.domain import (
    MAX_MEASUREMENTS,
    Arrival,
    Engine,
    MeasuredPoint,
    ModelRef,
    ModelSpec,
    Precision,
    Sla,
    TrainingMethod,
)
from solver.perf.batch import estimate_inference_cached
from solver.perf.capacity import SEARCH_RELATIVE_TOLERANCE, Capacity
from solver.perf.disagg_cases import DISAGG_FIELDS, DisaggCase, FieldError, infer_disaggregated
from solver.perf.inference import (
    ClosedLoop,
    Deployment,
    InferenceEstimate,
    Load,
    OfflineMax,
    OpenLoop,
    WorkloadShape,
    build_replica,
    open_loop_timing,
)
from solver.perf.measured import (
    NO_CORRECTIONS,
    MeasuredCorrections,
    corrected_capacity,
    corrected_estimate,
    fitted,
    modelled_targets,
)
from solver.perf.models import resolve_model
from solver.perf.training import estimate_training

TP_CANDIDATES = (1, 2, 4, 8, 16, 32, 64, 72)
MAX_CASE_ID_CHARS = 256
"""Longest case ``id`` (it is only echoed)."""
MAX_ENGINE_VERSION_CHARS = 64


PoolDegree = Annotated[int, Field(ge=1, le=1024)]
PoolWorkers = Annotated[int, Field(ge=1, le=100_000)]


class EstimateCase(BaseModel):
    """One what-if. Inference cases need lengths and a load; training cases a method and tokens."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: Literal["infer", "train"] = "infer"
    gpu: str | None = Field(default=None, min_length=1, description="catalogue GPU id or alias")
    """Required, except in a disaggregated case that names both roles' GPUs."""
    num_gpus: Annotated[int, Field(ge=1, le=100_000)] = 1
    """Total GPUs; inference runs num_gpus / tp identical replicas and reports their sum."""
    tp: Annotated[int, Field(ge=1, le=72)] | None = None
    """Tensor-parallel degree; absent = the estimator picks the best and says which."""
    model: str | None = None
    model_spec: ModelSpec | None = None
    precision: Precision = Precision.BF16
    kv_precision: Precision | None = None
    engine: Engine = Engine.VLLM
    input_len: Annotated[int, Field(ge=1, le=2_000_000)] | None = None
    output_len: Annotated[int, Field(ge=1, le=1_000_000)] | None = None
    concurrency: Annotated[int, Field(ge=1, le=1_000_000)] | Literal["max"] | None = None
    """Closed-loop users, or "max" for offline maximum throughput."""
    arrival: Arrival = Arrival.STEADY
    """With ``concurrency`` N: "steady" = N users each sending the next request when the last
    finishes (long runs, the usual benchmark); "burst" = N requests arriving together (seed 000)."""
    engine_version: Annotated[str, Field(max_length=MAX_ENGINE_VERSION_CHARS)] = ""
    """The engine's release, e.g. "0.11.2"; empty = the newest documented defaults."""
    id: Annotated[str, Field(max_length=MAX_CASE_ID_CHARS)] = ""
    """The caller's name for this case, echoed in its result (batch files: match rows to cases)."""
    request_rate: Annotated[float, Field(gt=0, le=1e9)] | None = None
    """Open-loop Poisson arrivals, req/s, for all replicas together."""
    prefix_hit_rate: Annotated[float, Field(ge=0.0, lt=1.0)] = 0.0
    max_num_seqs: Annotated[int, Field(ge=1, le=100_000)] | None = None
    """Override of the engine's cap on concurrent sequences."""
    max_batched_tokens: Annotated[int, Field(ge=16, le=1_000_000)] | None = None
    """Override of the engine's per-iteration token budget."""
    num_scheduler_steps: Annotated[int, Field(ge=1, le=1024)] | None = None
    """Decode iterations per scheduler pass (vLLM 0.6 ``--num-scheduler-steps``)."""
    sla_ttft_p95_ms: Annotated[float, Field(gt=0)] | None = None
    """With any ``sla_*`` field: also report one replica's capacity at that SLA (what the planner
    sizes with); the load may then be left out (the estimate is then at offline maximum)."""
    sla_tpot_p95_ms: Annotated[float, Field(gt=0)] | None = None
    sla_min_per_user_tok_s: Annotated[float, Field(gt=0)] | None = None
    method: TrainingMethod | None = None
    tokens: Annotated[float, Field(gt=0, le=1e15)] | None = None
    seq_len: Annotated[int, Field(ge=1, le=1_000_000)] | None = None
    prefill_gpu: str | None = Field(default=None, min_length=1)
    """Disaggregated serving (``solver.perf.disagg_cases``): the prefill role's GPU (default: gpu)."""
    prefill_tp: PoolDegree | None = None
    prefill_workers: PoolWorkers | None = None
    prefill_ep: PoolDegree | None = None
    prefill_attention_dp: PoolDegree | None = None
    decode_gpu: str | None = Field(default=None, min_length=1)
    decode_tp: PoolDegree | None = None
    decode_workers: PoolWorkers | None = None
    decode_ep: PoolDegree | None = None
    decode_attention_dp: PoolDegree | None = None
    measurements: Annotated[tuple[MeasuredPoint, ...], Field(max_length=MAX_MEASUREMENTS)] = ()
    """The user's benchmark runs (``solver.perf.measured``): they correct the case on a deployment
    they measured. Not echoed in the result."""

    def check(self) -> None:
        """Cross-field rules; raises ``CaseError`` naming the field to fix."""
        if (self.model is None) == (self.model_spec is None):
            raise CaseError("model", "give exactly one of model and model_spec")
        if self.gpu is None and not self.disaggregated:
            raise CaseError("gpu", "is required (a catalogue GPU id)")
        if self.disaggregated and self.mode == "train":
            raise CaseError(next(n for n in DISAGG_FIELDS if getattr(self, n) is not None),
                            "prefill/decode roles are for inference cases")
        if self.mode == "infer":
            for name in ("input_len", "output_len"):
                if getattr(self, name) is None:
                    raise CaseError(name, "inference cases need input_len and output_len")
            if (self.concurrency is not None and self.request_rate is not None) or (
                self.concurrency is None and self.request_rate is None and self.sla is None
            ):
                raise CaseError(
                    "concurrency", 'give exactly one of concurrency (an integer or "max") and request_rate'
                )
        else:
            for name in ("method", "tokens", "seq_len"):
                if getattr(self, name) is None:
                    raise CaseError(name, "training cases need method, tokens and seq_len")
        if self.tp is not None and self.num_gpus % self.tp:
            raise CaseError("tp", f"num_gpus {self.num_gpus} is not a multiple of tp {self.tp}")

    @property
    def disaggregated(self) -> bool:
        """Any ``prefill_*`` / ``decode_*`` field makes the case a disaggregated deployment."""
        return any(getattr(self, name) is not None for name in DISAGG_FIELDS)

    @property
    def sla(self) -> Sla | None:
        """The case's SLA (None when no ``sla_*`` field is given)."""
        sla = Sla(
            ttft_p95_ms=self.sla_ttft_p95_ms,
            tpot_p95_ms=self.sla_tpot_p95_ms,
            min_per_user_tok_s=self.sla_min_per_user_tok_s,
        )
        return None if sla.is_batch else sla


class CaseError(ValueError):
    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


def _finite(value: float) -> float | None:
    """JSON has no infinity: an unbounded latency is reported as null."""
    return value if math.isfinite(value) else None


def _max_tp(book: Pricebook, gpu: GpuSpec) -> int:
    """TP stays inside one server: the largest server of this GPU in the book."""
    sizes = [s.gpus_per_server for s in book.servers if s.gpu == gpu.id]
    return max(sizes) if sizes else max(gpu.scale_up_domain_size, 1)


def _load(case: EstimateCase, replicas: int) -> Load:
    if case.request_rate is None and case.concurrency is None:  # an SLA case without a load
        return OfflineMax()
    if case.request_rate is not None:
        return OpenLoop(case.request_rate / replicas)
    if case.concurrency == "max":
        return OfflineMax()
    assert isinstance(case.concurrency, int)
    users = max(1, math.ceil(case.concurrency / replicas))
    return ClosedLoop(users, case.arrival)


def _infer(case: EstimateCase, book: Pricebook, gpu: GpuSpec, model: ModelArch) -> dict[str, Any]:
    assert case.input_len is not None and case.output_len is not None
    measured = fitted(case.measurements, book) if case.measurements else NO_CORRECTIONS
    shape = WorkloadShape(case.input_len, case.output_len, case.prefix_hit_rate)
    limit = _max_tp(book, gpu)
    if case.tp is not None:
        if case.tp > limit:
            raise CaseError(
                "tp",
                f"TP {case.tp} exceeds the largest {gpu.id} server ({limit} GPUs); "
                "tensor parallelism stays inside one server",
            )
        if model.heads % case.tp:
            raise CaseError("tp", f"TP {case.tp} does not divide {model.id}'s {model.heads} attention heads")
        candidates = [case.tp]
    else:
        candidates = [
            t
            for t in TP_CANDIDATES
            if t <= min(limit, case.num_gpus) and case.num_gpus % t == 0 and model.heads % t == 0
        ]
        if not candidates:
            raise CaseError(
                "num_gpus", f"no TP degree divides num_gpus {case.num_gpus} within one {gpu.id} server"
            )
    best: tuple[float, int, InferenceEstimate] | None = None
    deployments: dict[int, Deployment] = {}
    for tp in candidates:
        replicas = case.num_gpus // tp
        deployment = Deployment(
            gpu,
            tp,
            case.precision,
            case.kv_precision,
            case.engine,
            max_num_seqs=case.max_num_seqs,
            max_batched_tokens=case.max_batched_tokens,
            engine_version=case.engine_version,
            num_scheduler_steps=case.num_scheduler_steps,
        )
        deployments[tp] = deployment
        correction = measured.of(model, deployment)
        load = _load(case, replicas)
        est = (
            estimate_inference_cached(model, deployment, shape, load)
            if correction is None
            else corrected_estimate(model, deployment, shape, load, correction)
        )
        score = est.output_tok_s * replicas if est.fits else -1.0
        if best is None or score > best[0]:
            best = (score, tp, est)
    assert best is not None
    _, tp, est = best
    replicas = case.num_gpus // tp
    at_sla = {} if case.sla is None else _capacity_fields(model, deployments[tp], shape, case.sla, measured)
    correction = measured.of(model, deployments[tp])
    return at_sla | {
        "measured_by": list(correction.labels) if correction else [],
        "measured_note": correction.describe() if correction else "",
        "tp": tp,
        "tp_chosen_by_estimator": case.tp is None,
        "replicas": replicas,
        "fits": est.fits,
        "reason": est.reason,
        "output_tok_s_total": est.output_tok_s * replicas,
        "total_tok_s": est.total_tok_s * replicas,
        "req_s": est.req_s * replicas,
        "ttft_ms": _finite(est.ttft_ms),
        "ttft_p95_ms": _finite(est.ttft_p95_ms),
        "tpot_ms": _finite(est.tpot_ms),
        "per_user_tok_s": est.per_user_tok_s,
        "max_concurrency": est.max_concurrency * replicas,
        "concurrency_per_replica": est.concurrency,
        "bottleneck": est.bottleneck.value,
        "output_tok_s_low": est.output_tok_s_low * replicas,
        "output_tok_s_high": est.output_tok_s_high * replicas,
        "weights_gb_per_gpu": est.memory.weights_gb,
        "kv_gb_per_gpu": est.memory.kv_gb,
        "reserve_gb_per_gpu": est.memory.reserve_gb,
        "usable_gb_per_gpu": est.memory.usable_gb,
        "kv_bytes_per_token": est.memory.kv_bytes_per_token,
        "assumed_architecture": est.assumed_architecture,
        "assumed_calibration": est.assumed_calibration,
        "kv_precision": (
            case.kv_precision
            or Deployment(
                gpu, 1, case.precision, engine=case.engine, engine_version=case.engine_version
            ).effective_kv_precision
        ).value,
        "ttft_median_ms": _finite(est.ttft_median_ms),
    }


def _binding_target(
    model: ModelArch, deployment: Deployment, shape: WorkloadShape, cap: Capacity, sla: Sla
) -> str:
    """Which target stops the rate: the one a rate just above capacity misses ("throughput" when
    the replica saturates there, or no target is missed: the batch limit binds)."""
    above = cap.max_request_rate_per_s * (1 + 2 * SEARCH_RELATIVE_TOLERANCE)
    timing = open_loop_timing(build_replica(model, deployment, None), shape, above)
    if timing is None:
        return "throughput"
    if sla.ttft_p95_ms is not None and timing.ttft_p95_s * 1e3 > sla.ttft_p95_ms:
        return "ttft_p95_ms"
    if sla.tpot_p95_ms is not None and timing.tpot_s * 1e3 > sla.tpot_p95_ms:
        return "tpot_p95_ms"
    if sla.min_per_user_tok_s is not None and 1.0 / timing.tpot_s < sla.min_per_user_tok_s:
        return "min_per_user_tok_s"
    return "throughput"


def _capacity_fields(
    model: ModelArch, deployment: Deployment, shape: WorkloadShape, sla: Sla, measured: MeasuredCorrections
) -> dict[str, Any]:
    """One replica's largest sustainable load at ``sla`` (``capacity_at_sla``, what the planner
    sizes with, corrected where measured) and what stops it there."""
    cap = corrected_capacity(model, deployment, shape, sla, measured)
    correction = measured.of(model, deployment)
    # The binding target is found on the modelled replica: its rate and targets on the model's clock.
    modelled_cap, modelled_sla = cap, sla
    if correction is not None:
        modelled_sla = modelled_targets(sla, correction)
        modelled_cap = replace(
            cap, max_request_rate_per_s=cap.max_request_rate_per_s / correction.throughput_factor
        )
    return {
        "sla_feasible": cap.feasible,
        "sla_reason": cap.reason,
        "sla_req_s_per_replica": cap.max_request_rate_per_s,
        "sla_output_tok_s_per_replica": cap.max_output_tok_s,
        "sla_total_tok_s_per_replica": cap.max_total_tok_s,
        "sla_ttft_p95_ms_at_capacity": _finite(cap.ttft_p95_ms),
        "sla_tpot_ms_at_capacity": _finite(cap.tpot_ms),
        "sla_bottleneck": cap.bottleneck.value,
        "sla_binding": (
            _binding_target(model, deployment, shape, modelled_cap, modelled_sla)
            if cap.feasible
            else "infeasible"
        ),
    }


def _train(case: EstimateCase, gpu: GpuSpec, model: ModelArch) -> dict[str, Any]:
    assert case.method is not None and case.tokens is not None and case.seq_len is not None
    est = estimate_training(
        model, gpu, case.num_gpus, case.method, case.seq_len, case.tokens, precision=case.precision
    )
    return {
        "fits": est.fits,
        "reason": est.reason,
        "train_tok_s": est.tokens_per_s,
        "train_tok_s_per_gpu": est.tokens_per_s_per_gpu,
        "mfu": est.mfu,
        "hours": _finite(est.hours),
        "gpu_hours": _finite(est.gpu_hours),
        "min_gpus": est.min_gpus,
        "memory_per_gpu_gb": est.memory_per_gpu_gb,
        "usable_per_gpu_gb": est.usable_per_gpu_gb,
        "scaling_efficiency": est.scaling_efficiency,
        "link": est.link,
        "calibrated": est.calibrated,
        "assumed_architecture": model.assumed,
    }


def estimate_case(case: EstimateCase, book: Pricebook) -> dict[str, Any]:
    """The case's fields plus its estimate; raises ``CaseError`` naming the bad field."""
    case.check()
    try:
        model = resolve_model(ModelRef(model_id=case.model, spec=case.model_spec), book)
    except UnknownEntryError as exc:
        raise CaseError("model", str(exc)) from exc
    result = case.model_dump(mode="json", exclude_none=True, exclude={"measurements"})
    result["model_id"] = model.id
    if case.disaggregated:
        if case.sla is not None or case.measurements:
            field = "measurements" if case.measurements else "sla_ttft_p95_ms"
            raise CaseError(field, "not available for disaggregated cases yet")
        try:
            return result | infer_disaggregated(_disagg_case(case), book, model)
        except FieldError as exc:
            raise CaseError(exc.field, exc.reason) from exc
    assert case.gpu is not None
    try:
        gpu = catalog.gpu(book, case.gpu)
    except UnknownEntryError as exc:
        raise CaseError("gpu", str(exc)) from exc
    result.update(_train(case, gpu, model) if case.mode == "train" else _infer(case, book, gpu, model))
    return result


def _disagg_case(case: EstimateCase) -> DisaggCase:
    assert case.input_len is not None and case.output_len is not None
    return DisaggCase(
        roles={name: getattr(case, name) for name in DISAGG_FIELDS}, gpu=case.gpu, precision=case.precision,
        kv_precision=case.kv_precision, engine=case.engine, engine_version=case.engine_version,
        input_len=case.input_len, output_len=case.output_len, concurrency=case.concurrency,
        arrival=case.arrival, request_rate=case.request_rate, prefix_hit_rate=case.prefix_hit_rate,
    )


def _error(line: int, field: str, reason: str) -> dict[str, Any]:
    return {"error": {"field": field, "reason": reason}, "line": line}


def estimate_cases(lines: Iterable[str], book: Pricebook) -> Iterator[dict[str, Any]]:
    """Estimate every JSONL line; blank lines are skipped, line numbers count from 1."""
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            yield _error(number, "", f"not valid JSON: {exc.msg} at column {exc.colno}")
            continue
        if not isinstance(raw, dict):
            yield _error(number, "", "each line must be a JSON object")
            continue
        try:
            case = EstimateCase.model_validate(raw)
            yield estimate_case(case, book)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = [str(p) for p in first["loc"]]
            # union members add type names to the path ("concurrency.int"): keep the field
            field = ".".join(loc[:2] if loc and loc[0] == "model_spec" else loc[:1])
            yield _error(number, field, first["msg"])
        except CaseError as exc:
            yield _error(number, exc.field, exc.reason)
        except ValueError as exc:
            yield _error(number, "", str(exc))
