"""EstimatePerformance: proto cases ↔ the batch-file case dicts of ``solver.perf.cases``."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import performance_pb2
from pricebook.schema import Pricebook
from service.convert.enums import (
    ARRIVAL_FROM_PROTO,
    ENGINE_FROM_PROTO,
    ESTIMATE_MODE_FROM_PROTO,
    METHOD_FROM_PROTO,
    PRECISION_FROM_PROTO,
)
from service.convert.fields import optional, put
from service.convert.measured import measured_points_from_proto
from service.convert.paths import join_path
from service.convert.scenario import model_ref
from service.convert.violations import Collector
from solver import domain
from solver.errors import FieldViolation, InvalidRequest
from solver.resolve import References

TRAINING_SEQ_LEN: int = domain.TrainingWorkload.model_fields["seq_len"].default
"""``PerformanceCase.seq_len`` when absent: the planner's default training sequence length."""
_CASE_PROTO_NAME = {
    "gpu": "gpu_id",
    "model_spec": "model.spec",
    "request_rate": "request_rate_per_s",
    "model": "model.model_id",
    "sla_ttft_p95_ms": "sla.ttft_p95_ms",
    "sla_tpot_p95_ms": "sla.tpot_p95_ms",
    "sla_min_per_user_tok_s": "sla.min_per_user_tok_s",
}
"""Batch-file key → proto field name (where they differ)."""


def _not_positive(value: float | str) -> str:
    return f"must be greater than 0 (got {value})"


def _model(case: performance_pb2.PerformanceCase, col: Collector, path: str, out: dict[str, Any]) -> None:
    ref = model_ref(case.model, col, join_path(path, "model")) if case.HasField("model") else {}
    if "model_id" in ref:
        out["model"] = ref["model_id"]
    elif "spec" in ref:
        out["model_spec"] = ref["spec"]
    else:
        col.add(join_path(path, "model"), "is required (model_id or spec)")


def _enum_value(
    col: Collector, table: Mapping[Any, Any], number: int, path: str, *, required: bool = False
) -> str | None:
    """An enum field as the batch file's string (None when not set)."""
    found = col.enum(table, number, path, required=required)
    return found.value if found else None


def _load(case: performance_pb2.PerformanceCase, col: Collector, path: str, out: dict[str, Any]) -> None:
    load = case.WhichOneof("load")
    if load == "concurrency":
        if case.concurrency <= 0:
            col.add(join_path(path, "concurrency"), _not_positive(case.concurrency))
        out["concurrency"] = case.concurrency
        put(out, "arrival", _enum_value(col, ARRIVAL_FROM_PROTO, case.arrival, join_path(path, "arrival")))
    elif load == "max_concurrency" and case.max_concurrency:
        out["concurrency"] = "max"
    elif load == "request_rate_per_s":
        rate = col.number(case.request_rate_per_s, join_path(path, "request_rate_per_s"))
        if rate <= 0:
            col.add(join_path(path, "request_rate_per_s"), _not_positive(rate))
        out["request_rate"] = rate


def _inference_fields(
    case: performance_pb2.PerformanceCase, col: Collector, path: str, out: dict[str, Any]
) -> None:
    for name in ("input_len", "output_len"):
        value = getattr(case, name)
        if value <= 0:
            col.add(join_path(path, name), _not_positive(value or "0 or not set"))
        out[name] = value
    _load(case, col, path, out)
    hit = col.number(case.prefix_hit_rate, join_path(path, "prefix_hit_rate"))
    if not 0.0 <= hit < 1.0:
        col.add(join_path(path, "prefix_hit_rate"), f"must be in [0, 1) (got {hit})")
    if hit:
        out["prefix_hit_rate"] = hit
    put(out, "max_num_seqs", optional(case, "max_num_seqs"))
    put(out, "max_batched_tokens", optional(case, "max_batched_tokens"))
    put(out, "num_scheduler_steps", optional(case, "num_scheduler_steps"))
    if case.HasField("sla"):
        for name in ("ttft_p95_ms", "tpot_p95_ms", "min_per_user_tok_s"):
            value = optional(case.sla, name)
            if value is not None:
                out[f"sla_{name}"] = col.number(value, join_path(path, "sla", name))


def _disaggregated_fields(
    case: performance_pb2.PerformanceCase, col: Collector, path: str, out: dict[str, Any]
) -> None:
    """The prefill/decode roles (``solver.perf.disagg_cases``); their GPUs are checked there (rack
    GPUs are not in the catalogue)."""
    for role in ("prefill", "decode"):
        if getattr(case, f"{role}_gpu"):
            out[f"{role}_gpu"] = getattr(case, f"{role}_gpu")
        for name in ("tp", "workers", "ep", "attention_dp"):
            value = optional(case, f"{role}_{name}")
            if value is not None and value < 1:
                col.add(join_path(path, f"{role}_{name}"), f"must be at least 1 (got {value})")
            put(out, f"{role}_{name}", value)


def _training_fields(
    case: performance_pb2.PerformanceCase, col: Collector, path: str, out: dict[str, Any]
) -> None:
    put(
        out,
        "method",
        _enum_value(col, METHOD_FROM_PROTO, case.method, join_path(path, "method"), required=True),
    )
    tokens = col.number(case.tokens, join_path(path, "tokens"))
    if tokens <= 0:
        col.add(join_path(path, "tokens"), _not_positive(tokens or "0 or not set"))
    out["tokens"] = tokens
    out["seq_len"] = optional(case, "seq_len") or TRAINING_SEQ_LEN


def _case_dict(case: performance_pb2.PerformanceCase, col: Collector, path: str) -> dict[str, Any]:
    mode = ESTIMATE_MODE_FROM_PROTO.get(case.mode)
    if mode is None:
        col.add(join_path(path, "mode"), f"unknown value {case.mode}")
        mode = "infer"
    out: dict[str, Any] = {"mode": mode}
    _disaggregated_fields(case, col, path, out)
    if case.gpu_id:
        out["gpu"] = case.gpu_id
    elif not (out.get("prefill_gpu") and out.get("decode_gpu")):
        col.add(join_path(path, "gpu_id"), "is required (a catalogue GPU id)")
    put(out, "num_gpus", optional(case, "num_gpus"))
    put(out, "tp", optional(case, "tp"))
    _model(case, col, path, out)
    put(
        out, "precision", _enum_value(col, PRECISION_FROM_PROTO, case.precision, join_path(path, "precision"))
    )
    put(
        out,
        "kv_precision",
        _enum_value(col, PRECISION_FROM_PROTO, case.kv_precision, join_path(path, "kv_precision")),
    )
    put(out, "engine", _enum_value(col, ENGINE_FROM_PROTO, case.engine, join_path(path, "engine")))
    if case.engine_version:
        out["engine_version"] = case.engine_version
    if case.id:
        out["id"] = case.id
    if mode == "infer":
        _inference_fields(case, col, path, out)
    else:
        _training_fields(case, col, path, out)
    return out


def performance_cases_from_proto(
    message: api.EstimatePerformanceRequest, book: Pricebook
) -> list[dict[str, Any] | FieldViolation]:
    """Each case as a batch-file dict, or (with allow_partial_failure) its first violation."""
    if not message.cases:
        raise InvalidRequest([FieldViolation("cases", "needs at least one case")])
    measurements = _measurements(message, book)
    all_violations: list[FieldViolation] = []
    out: list[dict[str, Any] | FieldViolation] = []
    for i, case in enumerate(message.cases):
        col = Collector()
        path = join_path("cases", i)
        data = _case_dict(case, col, path)
        refs = References(book)
        if case.gpu_id:
            data["gpu"] = refs.gpu(case.gpu_id, join_path(path, "gpu_id"))
        if "model" in data:
            refs.model(domain.ModelRef(model_id=data["model"]), join_path(path, "model"))
        violations = [*refs.violations, *col.violations]
        all_violations.extend(violations)
        out.append(violations[0] if violations else data | measurements)
    if all_violations and not message.allow_partial_failure:
        raise InvalidRequest(all_violations)
    return out


def _measurements(message: api.EstimatePerformanceRequest, book: Pricebook) -> dict[str, Any]:
    """The request's measured points, checked (``solver.resolve``), as every case's
    ``measurements`` (empty dict when none); raises ``InvalidRequest`` naming a bad point's field."""
    if not message.measurements:
        return {}
    points = measured_points_from_proto(message.measurements, book)
    return {"measurements": [p.model_dump(mode="json") for p in points]}


def _case_error_path(index: int, field_name: str) -> str:
    head, _, rest = field_name.partition(".")
    name = _CASE_PROTO_NAME.get(head, head) + (f".{rest}" if rest else "")
    return join_path("cases", index, *name.split(".")) if name else join_path("cases", index)


def _case_error(error: FieldViolation) -> performance_pb2.CaseError:
    return performance_pb2.CaseError(field=error.field, reason=error.reason)


def performance_results_to_proto(
    message: api.EstimatePerformanceRequest,
    cases: Sequence[dict[str, Any] | FieldViolation],
    results: Sequence[Mapping[str, Any]],
) -> api.EstimatePerformanceResponse:
    """Estimates (one row per valid case, in order) → proto. Without ``allow_partial_failure`` a case
    the performance model refuses (e.g. a TP that does not divide the heads) is INVALID_ARGUMENT."""
    response = api.EstimatePerformanceResponse()
    refused: list[FieldViolation] = []
    valid = iter(results)
    for i, (case_msg, case) in enumerate(zip(message.cases, cases, strict=True)):
        result = performance_pb2.PerformanceResult(case_index=i)
        result.case.CopyFrom(case_msg)
        if isinstance(case, FieldViolation):
            result.error.CopyFrom(_case_error(case))
        else:
            row = next(valid)
            error = row.get("error")
            if isinstance(error, Mapping):
                violation = FieldViolation(
                    _case_error_path(i, str(error.get("field", ""))), str(error.get("reason", ""))
                )
                refused.append(violation)
                result.error.CopyFrom(_case_error(violation))
            else:
                _fill_result(result, row)
        response.results.append(result)
    if refused and not message.allow_partial_failure:
        raise InvalidRequest(refused)
    return response


def _num(row: Mapping[str, Any], key: str) -> float:
    value = row.get(key)
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else 0.0


def _training_estimate(row: Mapping[str, Any]) -> performance_pb2.TrainingEstimate:
    return performance_pb2.TrainingEstimate(
        train_tok_s=_num(row, "train_tok_s"),
        train_tok_s_per_gpu=_num(row, "train_tok_s_per_gpu"),
        mfu=_num(row, "mfu"),
        hours=_num(row, "hours"),
        gpu_hours=_num(row, "gpu_hours"),
        fits=bool(row.get("fits")),
        min_gpus=int(_num(row, "min_gpus")),
        memory_per_gpu_gb=_num(row, "memory_per_gpu_gb"),
        reason=str(row.get("reason") or ""),
    )


def _inference_estimate(row: Mapping[str, Any]) -> performance_pb2.InferenceEstimate:
    return performance_pb2.InferenceEstimate(
        tp=int(_num(row, "tp")),
        tp_chosen=bool(row.get("tp_chosen_by_estimator")),
        replicas=int(_num(row, "replicas")),
        output_tok_s_total=_num(row, "output_tok_s_total"),
        total_tok_s=_num(row, "total_tok_s"),
        req_s=_num(row, "req_s"),
        ttft_ms=_num(row, "ttft_p95_ms" if "request_rate" in row else "ttft_ms"),
        tpot_ms=_num(row, "tpot_ms"),
        per_user_tok_s=_num(row, "per_user_tok_s"),
        max_concurrency=int(_num(row, "max_concurrency")),
        fits=bool(row.get("fits")),
        bottleneck=str(row.get("bottleneck") or ""),
        output_tok_s_low=_num(row, "output_tok_s_low"),
        output_tok_s_high=_num(row, "output_tok_s_high"),
        memory=performance_pb2.MemoryBreakdown(
            weights_gb=_num(row, "weights_gb_per_gpu"),
            kv_cache_gb=_num(row, "kv_gb_per_gpu"),
            reserve_gb=_num(row, "reserve_gb_per_gpu"),
            capacity_gb=_num(row, "usable_gb_per_gpu"),
        ),
        reason=str(row.get("reason") or ""),
        ttft_mean_ms=_num(row, "ttft_ms"),
        ttft_median_ms=_num(row, "ttft_median_ms"),
        capacity_at_sla=_capacity_at_sla(row),
        measured_by=[str(label) for label in row.get("measured_by") or ()],
        measured_note=str(row.get("measured_note") or ""),
        disaggregated=_disaggregated(row),
    )


def _disaggregated(row: Mapping[str, Any]) -> performance_pb2.DisaggregatedEstimate | None:
    roles = row.get("disaggregated")
    if not isinstance(roles, Mapping):
        return None
    return performance_pb2.DisaggregatedEstimate(
        prefill=str(roles.get("prefill") or ""),
        prefill_gpus=int(_num(roles, "prefill_gpus")),
        decode=str(roles.get("decode") or ""),
        decode_gpus=int(_num(roles, "decode_gpus")),
        output_tok_s_per_gpu=_num(row, "output_tok_s_per_gpu"),
        prefill_ms=_num(roles, "prefill_ms"),
        prefill_wait_ms=_num(roles, "prefill_wait_ms"),
        kv_transfer_ms=_num(roles, "kv_transfer_ms"),
        kv_bytes_per_request=_num(roles, "kv_bytes_per_request"),
        kv_link=str(roles.get("kv_link") or ""),
        prefill_utilization=_num(roles, "prefill_utilization"),
        decode_batch_per_worker=_num(roles, "decode_batch_per_worker"),
        tpot_band=[float(x) for x in roles.get("tpot_band") or ()],
        ttft_band=[float(x) for x in roles.get("ttft_band") or ()],
    )


def _capacity_at_sla(row: Mapping[str, Any]) -> performance_pb2.CapacityAtSla | None:
    if "sla_feasible" not in row:
        return None
    return performance_pb2.CapacityAtSla(
        feasible=bool(row["sla_feasible"]),
        reason=str(row.get("sla_reason") or ""),
        req_s_per_replica=_num(row, "sla_req_s_per_replica"),
        output_tok_s_per_replica=_num(row, "sla_output_tok_s_per_replica"),
        total_tok_s_per_replica=_num(row, "sla_total_tok_s_per_replica"),
        ttft_p95_ms=_num(row, "sla_ttft_p95_ms_at_capacity"),
        tpot_ms=_num(row, "sla_tpot_ms_at_capacity"),
        bottleneck=str(row.get("sla_bottleneck") or ""),
        binding=str(row.get("sla_binding") or ""),
    )


def _fill_result(result: performance_pb2.PerformanceResult, row: Mapping[str, Any]) -> None:
    """One row of ``solver.perf.cases.estimate_case`` into the proto result."""
    result.architecture_assumed = bool(row.get("assumed_architecture"))
    if row.get("mode", "infer") == "train":
        result.training.CopyFrom(_training_estimate(row))
        if row.get("hours") is None:
            result.warnings.append("the run never finishes on this configuration (unbounded hours)")
        return
    result.inference.CopyFrom(_inference_estimate(row))
    if row.get("ttft_ms") is None or row.get("tpot_ms") is None:
        result.warnings.append("latency is unbounded at this load (the replica cannot keep up)")
