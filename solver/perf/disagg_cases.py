"""Disaggregated what-ifs: a batch-file case with ``prefill_*`` / ``decode_*`` fields.

The case names each role's GPU (catalogue id or alias, or an NVL72 rack GPU of ``rack_gpus.yaml``),
TP, engines (``workers``), expert parallelism and attention data parallelism; model, precision,
engine, lengths and a steady closed-loop ``concurrency`` as for an aggregated case. The result has
the aggregated case's keys (throughput, TTFT, TPOT, band) plus a ``disaggregated`` breakdown.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from pricebook import catalog
from pricebook.errors import UnknownEntryError
from pricebook.schema import GpuSpec, ModelArch, Pricebook
from solver.domain import Arrival, Engine, Precision
from solver.perf.disagg import (
    DEFAULT_SCALE_OUT_GBPS,
    DisaggDeployment,
    Pool,
    disagg_infeasibility,
    estimate_disagg,
)
from solver.perf.rack_gpus import rack_gpu, rack_scale_out_gbps
from solver.perf.replica import WorkloadShape

ROLES = ("prefill", "decode")
POOL_FIELDS = ("gpu", "tp", "workers", "ep", "attention_dp")
DISAGG_FIELDS = tuple(f"{role}_{name}" for role in ROLES for name in POOL_FIELDS)
"""Batch-file keys of a disaggregated case (any of them makes the case disaggregated)."""


class FieldError(ValueError):
    """A case field to fix (``cases.CaseError`` is raised from it by the caller)."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


@dataclass(frozen=True)
class DisaggCase:
    """What a disaggregated case asks: the roles' fields (``DISAGG_FIELDS``, None = not given) and
    the fields it shares with an aggregated case."""

    roles: dict[str, Any]
    gpu: str | None
    precision: Precision
    kv_precision: Precision | None
    engine: Engine
    engine_version: str
    input_len: int
    output_len: int
    concurrency: object
    arrival: Arrival
    request_rate: float | None
    prefix_hit_rate: float


def resolve_gpu(book: Pricebook, key: str) -> GpuSpec:
    """A catalogue GPU, else a rack GPU (``solver/perf/rack_gpus.yaml``)."""
    try:
        return catalog.gpu(book, key)
    except UnknownEntryError:
        spec = rack_gpu(key)
        if spec is None:
            raise
        return spec


def scale_out_gbps(book: Pricebook, gpu: GpuSpec) -> float:
    """The per-GPU NIC of the GPU's servers (or its rack), else the 400G norm."""
    rack = rack_scale_out_gbps(gpu.id)
    if rack is not None:
        return rack
    servers = catalog.servers_for(book, gpu.id) if gpu.servers else ()
    nics = [n.gbps * n.per_gpu for s in servers for n in s.nics]
    return max(nics) if nics else DEFAULT_SCALE_OUT_GBPS


def _pool(case: DisaggCase, role: str, book: Pricebook, model: ModelArch) -> Pool:
    given = case.roles.get(f"{role}_gpu")
    key = given or case.gpu
    if not key:
        raise FieldError(f"{role}_gpu", "is required in a disaggregated case (or gpu, for both roles)")
    try:
        gpu = resolve_gpu(book, key)
    except UnknownEntryError as exc:
        raise FieldError(f"{role}_gpu" if given else "gpu", str(exc)) from exc
    tp, ep, dp = (int(case.roles.get(f"{role}_{n}") or 1) for n in ("tp", "ep", "attention_dp"))
    if model.heads % tp:
        raise FieldError(f"{role}_tp", f"TP {tp} does not divide {model.id}'s {model.heads} attention heads")
    if (tp * dp) % ep:
        raise FieldError(f"{role}_ep", f"EP {ep} does not divide the engine's {tp * dp} GPUs (TP × DP)")
    if model.experts and model.experts % ep:
        raise FieldError(f"{role}_ep", f"EP {ep} does not divide {model.id}'s {model.experts} experts")
    if ep > 1 and not model.experts:
        raise FieldError(f"{role}_ep", f"{model.id} is dense: expert parallelism needs an MoE model")
    return Pool(gpu, tp=tp, workers=int(case.roles.get(f"{role}_workers") or 1), ep=ep, attention_dp=dp)


def _check_load(case: DisaggCase) -> int:
    if case.request_rate is not None or not isinstance(case.concurrency, int):
        raise FieldError("concurrency", "a disaggregated case takes an integer concurrency (a steady loop)")
    if case.arrival is not Arrival.STEADY:
        raise FieldError("arrival", "a disaggregated case runs a steady closed loop")
    if case.prefix_hit_rate:
        raise FieldError("prefix_hit_rate", "not modelled for disaggregated cases")
    return case.concurrency


def infer_disaggregated(case: DisaggCase, book: Pricebook, model: ModelArch) -> dict[str, Any]:
    """The result row of a disaggregated case; raises ``FieldError`` naming the field to fix."""
    users = _check_load(case)
    prefill, decode = _pool(case, "prefill", book, model), _pool(case, "decode", book, model)
    deployment = DisaggDeployment(
        prefill, decode, precision=case.precision, kv_precision=case.kv_precision, engine=case.engine,
        engine_version=case.engine_version,
        scale_out_gbps=min(scale_out_gbps(book, prefill.gpu), scale_out_gbps(book, decode.gpu)),
    )
    shape = WorkloadShape(case.input_len, case.output_len)
    estimate = estimate_disagg(model, deployment, shape, users)
    t = estimate.timing
    throughput_band = estimate.bands.get("throughput", (math.nan, math.nan))
    out: dict[str, Any] = {
        "fits": estimate.feasible,
        "reason": estimate.reason or disagg_infeasibility(model, deployment, shape),
        "num_gpus": deployment.gpus,
        "output_tok_s_total": estimate.output_tok_s,
        "output_tok_s_per_gpu": estimate.output_tok_s_per_gpu,
        "total_tok_s": t.req_s * (case.input_len + case.output_len),
        "req_s": t.req_s,
        "ttft_ms": _finite(t.ttft_s * 1e3),
        "tpot_ms": _finite(t.tpot_s * 1e3),
        "per_user_tok_s": 1.0 / t.tpot_s if estimate.feasible and t.tpot_s > 0 else 0.0,
        "bottleneck": t.bottleneck,
        "output_tok_s_low": estimate.output_tok_s * throughput_band[0],
        "output_tok_s_high": estimate.output_tok_s * throughput_band[1],
        "kv_precision": deployment.effective_kv_precision.value,
        "disaggregated": {
            "prefill": prefill.describe(), "prefill_gpus": prefill.gpus,
            "decode": decode.describe(), "decode_gpus": decode.gpus,
            "prefill_ms": _finite(t.prefill_s * 1e3), "prefill_wait_ms": _finite(t.prefill_wait_s * 1e3),
            "kv_transfer_ms": _finite(t.transfer_s * 1e3),
            "kv_bytes_per_request": t.transfer.bytes_per_request,
            "kv_link": t.transfer.link, "prefill_utilization": _finite(t.prefill_utilisation),
            "decode_batch_per_worker": t.decode_batch,
            **{f"{metric}_band": list(band) for metric, band in estimate.bands.items()},
        },
    }
    return out


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None
