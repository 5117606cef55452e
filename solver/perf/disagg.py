"""Disaggregated prefill and decode: a prefill pool, a decode pool and the KV-cache transfer between them.

A deployment is ``workers`` prefill engines of ``tp × attention_dp`` GPUs each, ``workers`` decode
engines likewise, and the link the KV cache crosses from one to the other. Each engine's iteration
is the aggregated model's (``replica.Replica.step`` with the aggregated calibration's factors);
this module adds only what disaggregation changes:

* attention data parallelism: ``attention_dp`` ranks of ``tp`` GPUs each hold their own sequences'
  KV (an MLA latent is replicated over the attention TP group only, not over the whole engine);
  the experts span every GPU of the engine (EP × MoE TP), read like TP as in the aggregated model;
* a prompt is prefilled alone on a prefill engine (no decodes beside it), queues for a prefill
  engine when prompts arrive faster than the pool prefills them, and its KV (``isl`` tokens at the
  KV precision) crosses the link before decode starts;
* the decode engines run only decodes: TPOT is one decode iteration at their batch.

Under a steady closed loop of N users (the AIConfigurator benchmark's load) the decode batch b per
engine solves N = (decode engines × b) + λ·(TTFT + admission wait), λ = decode engines × b /
((osl − 1)·TPOT(b)); the few fitted factors (``disagg_calibration.json``, written by
``tools.calibration.disagg_fit``) scale prefill and decode times per engine and weight precision
(each layer within ×2 of the physics), the fixed per-request cost, the prefill queue, the decode
iterations a new request waits to join a busy decode batch, and the transfer's share of the link.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from pricebook.schema import AttentionType, GpuSpec, ModelArch, ScaleUpLink
from solver.domain import Engine, Precision
from solver.perf.calibration import Calibration
from solver.perf.engines import default_kv_precision
from solver.perf.physics import GB
from solver.perf.replica import Deployment, Replica, WorkloadShape, build_replica, prefill_seen_context

DISAGG_CALIBRATION_PATH = Path(__file__).with_name("disagg_calibration.json")

PREFILL_BOTTLENECK_UTILISATION = 0.8
"""Above this share of its capacity the prefill pool is named the bottleneck (prompts queue)."""
DEFAULT_SCALE_OUT_GBPS = 400.0
"""Per-GPU NIC when the caller names none: the 1 × 400G-per-GPU scale-out norm of HGX/DGX H100 and
B200 nodes (research/pricebook_facts.md, scale-out bandwidth norms)."""


@dataclass(frozen=True, slots=True)
class DisaggFactors:
    """What disaggregation adds to the aggregated physics, fitted on the disaggregated runs."""

    prefill_scale: float = 1.0
    """× the aggregated model's time to prefill a prompt on an idle engine."""
    decode_scale: float = 1.0
    """× the aggregated model's decode iteration of one sequence."""
    decode_batch_scale: float = 1.0
    """× what each further sequence adds to the aggregated model's decode iteration."""
    request_overhead_s: float = 0.05
    """Fixed cost of a request outside the iterations (frontend, router, KV hand-off bookkeeping)."""
    queue_wait: float = 1.0
    """Mean wait of a prompt for a busy prefill engine, in prefill batches × ρ/(1 − ρ)."""
    transfer_efficiency: float = 0.5
    """Share of the link's per-GPU bandwidth the KV transfer reaches."""
    admission_steps: float = 1.0
    """Decode iterations a request waits to join a decode engine's batch after its KV arrives (the
    engine admits new sequences between iterations; busy engines take longer to schedule them)."""
    slot_wait: float = 1.0
    """Wait for a decode slot when the router sends a request to a full decode engine: × u^c ×
    (osl − 1)·TPOT / (c + 1) for an engine of c slots of which a share u is busy (each slot busy
    independently; the earliest of c running requests ends after 1/(c + 1) of a decode)."""


DISAGG_FACTOR_NAMES = tuple(f.name for f in fields(DisaggFactors))


@dataclass(frozen=True)
class DisaggCalibration:
    base: DisaggFactors
    engine: dict[str, dict[str, float]]
    """Multipliers on ``base`` per engine (``Engine`` value)."""
    precision: dict[str, dict[str, float]]
    """Multipliers per weight precision (``Precision`` value): FP4 and FP8 MoE kernels differ."""
    bands: dict[str, tuple[float, float]]
    """Central 90 % of measured/predicted out of fold, per metric (throughput, tpot, ttft)."""

    def factors(self, engine: Engine, precision: Precision) -> DisaggFactors:
        values = {name: getattr(self.base, name) for name in DISAGG_FACTOR_NAMES}
        for layer in (self.engine.get(engine.value, {}), self.precision.get(precision.value, {})):
            for name, multiplier in layer.items():
                values[name] *= multiplier
        return replace(self.base, **values)


def disagg_calibration_from_dict(data: dict[str, Any]) -> DisaggCalibration:
    names = {f.name for f in fields(DisaggFactors)}
    return DisaggCalibration(
        base=DisaggFactors(**{k: float(v) for k, v in data.get("base", {}).items() if k in names}),
        engine={e: {k: float(v) for k, v in m.items()} for e, m in data.get("engine", {}).items()},
        precision={e: {k: float(v) for k, v in m.items()} for e, m in data.get("precision", {}).items()},
        bands={k: (float(v[0]), float(v[1])) for k, v in data.get("bands", {}).items()},
    )


@lru_cache(maxsize=1)
def load_disagg_calibration() -> DisaggCalibration:
    if not DISAGG_CALIBRATION_PATH.exists():
        return DisaggCalibration(DisaggFactors(), {}, {}, {})
    data: dict[str, Any] = json.loads(DISAGG_CALIBRATION_PATH.read_text())
    return disagg_calibration_from_dict(data)


# --------------------------------------------------------------------------------------------
# The deployment
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pool:
    """One role's engines: ``workers`` × (``attention_dp`` ranks × ``tp`` GPUs), experts over ``ep``."""

    gpu: GpuSpec
    tp: int = 1
    """Attention tensor parallelism inside one attention-DP rank."""
    workers: int = 1
    ep: int = 1
    """Expert parallelism (the MoE layers run over ``gpus_per_worker / ep``-way MoE TP × ``ep``)."""
    attention_dp: int = 1
    max_num_seqs: int | None = None
    """Per attention-DP rank; None = the engine's default."""

    def __post_init__(self) -> None:
        for name in ("tp", "workers", "ep", "attention_dp"):
            if getattr(self, name) < 1:
                msg = f"{name} must be at least 1"
                raise ValueError(msg)
        if self.gpus_per_worker % self.ep:
            msg = f"ep {self.ep} does not divide the engine's {self.gpus_per_worker} GPUs"
            raise ValueError(msg)

    def __hash__(self) -> int:
        return hash((self.gpu.id, self.gpu.memory_gb, self.tp, self.workers, self.ep, self.attention_dp,
                     self.max_num_seqs))

    @property
    def gpus_per_worker(self) -> int:
        return self.tp * self.attention_dp

    @property
    def gpus(self) -> int:
        return self.gpus_per_worker * self.workers

    def describe(self) -> str:
        parts = [f"{self.workers} × {self.gpu.id} TP {self.tp}"]
        if self.attention_dp > 1:
            parts.append(f"attention DP {self.attention_dp}")
        if self.ep > 1:
            parts.append(f"EP {self.ep}")
        return ", ".join(parts)


@dataclass(frozen=True)
class DisaggDeployment:
    prefill: Pool
    decode: Pool
    precision: Precision = Precision.FP8
    kv_precision: Precision | None = None
    engine: Engine = Engine.TRTLLM
    engine_version: str = ""
    scale_out_gbps: float = DEFAULT_SCALE_OUT_GBPS
    """Per-GPU NIC the KV crosses when the two pools are not in one NVLink domain."""

    @property
    def effective_kv_precision(self) -> Precision:
        return self.kv_precision or default_kv_precision(self.precision, self.engine, self.engine_version)

    @property
    def gpus(self) -> int:
        return self.prefill.gpus + self.decode.gpus

    def engine_deployment(self, pool: Pool) -> Deployment:
        """The aggregated model's deployment of one engine of ``pool``."""
        return Deployment(
            pool.gpu,
            pool.gpus_per_worker,
            self.precision,
            self.effective_kv_precision,
            self.engine,
            engine_version=self.engine_version,
        )


@dataclass(frozen=True)
class DataParallelAttentionReplica(Replica):
    """An aggregated replica whose attention runs as ``attention_dp`` ranks of ``tp / attention_dp``
    GPUs: each rank keeps only its own sequences' KV, replicated over its attention TP group only."""

    attention_dp: int = 1

    @cached_property
    def kv_replication(self) -> float:
        attention_tp = max(self.tp // self.attention_dp, 1)
        if self.model.attention is AttentionType.MLA:
            return float(attention_tp)
        return attention_tp / min(attention_tp, self.model.kv_heads)

    def dp_step(self, decode_batch: float, decode_context: float, prefill_tokens: float = 0.0,
                prefill_seen_context: float = 0.0) -> float:
        """Seconds of one iteration: the aggregated step, with the per-sequence host cost paid by
        each rank for its own ``decode_batch / attention_dp`` sequences (the ranks run side by side)."""
        step_s, _ = self.step(decode_batch, decode_context, prefill_tokens, prefill_seen_context)
        shared = self.factors.per_sequence_overhead_s * decode_batch * (1.0 - 1.0 / self.attention_dp)
        return step_s - shared


def engine_replica(
    model: ModelArch, deployment: DisaggDeployment, pool: Pool, calibration: Calibration | None
) -> DataParallelAttentionReplica:
    base = build_replica(model, deployment.engine_deployment(pool), calibration)
    values = {f.name: getattr(base, f.name) for f in fields(Replica)}
    return DataParallelAttentionReplica(**values, attention_dp=pool.attention_dp)


# --------------------------------------------------------------------------------------------
# KV transfer
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Transfer:
    bytes_per_request: float
    link: str
    """``nvlink`` (both pools in one NVLink domain), ``network`` (InfiniBand/RoCE NICs) or ``pcie``."""
    gbytes_s: float
    """Bandwidth the transfer of one request uses (before the fitted efficiency), GB/s."""


def kv_transfer(model: ModelArch, deployment: DisaggDeployment, shape: WorkloadShape) -> Transfer:
    """The KV of one prompt (every layer, at the KV precision) and the link it crosses. Each of the
    prefill engine's GPUs sends its share in parallel: over NVLink when both pools fit one scale-up
    domain of the same GPU type (an NVL72 rack, or one 8-GPU HGX board), else over the NICs."""
    physics = engine_replica(model, deployment, deployment.prefill, None).model
    kv_bytes = physics.kv_bytes_per_token(deployment.effective_kv_precision) * shape.input_tokens
    pre, dec = deployment.prefill, deployment.decode
    senders = pre.gpus_per_worker
    same_domain = (
        pre.gpu.id == dec.gpu.id
        and pre.gpu.scale_up_link is ScaleUpLink.NVLINK
        and deployment.gpus <= pre.gpu.scale_up_domain_size
    )
    if same_domain:
        return Transfer(kv_bytes, "nvlink", senders * pre.gpu.scale_up_bandwidth_gbs / 2)
    if deployment.scale_out_gbps > 0:
        return Transfer(kv_bytes, "network", senders * deployment.scale_out_gbps / 8)
    return Transfer(kv_bytes, "pcie", senders * pre.gpu.pcie_bandwidth_gbs / 2)


# --------------------------------------------------------------------------------------------
# The steady closed loop
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DisaggTiming:
    ttft_s: float
    tpot_s: float
    req_s: float
    decode_batch: float
    """Sequences per decode engine."""
    prefill_s: float
    """Prefill of one prompt on an idle prefill engine."""
    prefill_wait_s: float
    """Mean wait for a prefill engine plus for a decode slot."""
    transfer_s: float
    prefill_utilisation: float
    bottleneck: str
    """``prefill`` (prompts queue), ``decode_capacity`` (decode slots full) or ``decode``."""
    transfer: Transfer


@dataclass(frozen=True)
class DisaggEstimate:
    timing: DisaggTiming
    output_tok_s: float
    output_tok_s_per_gpu: float
    gpus: int
    feasible: bool
    reason: str = ""
    bands: dict[str, tuple[float, float]] = field(default_factory=dict)


BATCH_GRID_POINTS = 160
"""Decode batches (geometric, from a thousandth of a sequence to the largest possible) at which the
decode iteration is evaluated; the closed loop is solved between them (linear interpolation: the
iteration is piecewise linear in the batch, so the grid costs well under 1 % of accuracy)."""


@dataclass(frozen=True)
class RawPhysics:
    """The factor-free numbers of one deployment under one load (the fit reuses them per point)."""

    users: float
    decode_workers: float
    output_tokens: float
    batch_grid: np.ndarray
    """Sequences per decode engine at which ``decode_step`` is evaluated (ascending)."""
    decode_step: np.ndarray
    """Aggregated decode iteration (s) at each batch of ``batch_grid``."""
    decode_single_s: float
    decode_slots: float
    """Sequences one decode engine runs at most (its cap, or what its KV cache holds)."""
    prefill_alone_s: float
    """An idle prefill engine's time for one prompt."""
    prefill_batch_s: float
    """A busy prefill engine's iteration (as many prompts as its budget and sequence cap allow)."""
    prefill_rate: float
    """Prompts per second the prefill pool finishes when busy (before ``prefill_scale``)."""
    transfer_s: float
    """KV transfer of one prompt at the link's full bandwidth."""
    transfer: Transfer


def raw_physics(model: ModelArch, deployment: DisaggDeployment, shape: WorkloadShape, users: int,
                calibration: Calibration | None = None) -> RawPhysics:
    prefill = engine_replica(model, deployment, deployment.prefill, calibration)
    decode = engine_replica(model, deployment, deployment.decode, calibration)
    pre, dec = deployment.prefill, deployment.decode
    alone_s, _ = prefill.prefill(shape, 0.0, 0.0)
    per_rank = max(prefill.limits.max_batched_tokens / shape.input_tokens, 1.0)
    if pre.max_num_seqs:
        per_rank = min(per_rank, float(pre.max_num_seqs))
    prompts = per_rank * pre.attention_dp
    batch_s = prefill.dp_step(0.0, 0.0, prompts * shape.input_tokens, prefill_seen_context(shape))
    # Every attention-DP rank runs its own scheduler with its own sequence cap.
    sequence_cap = (dec.max_num_seqs or decode.limits.max_num_seqs) * dec.attention_dp
    cap = min(decode.sequences_fitting(shape.input_tokens + shape.output_tokens), sequence_cap)
    top = max(min(users / dec.workers, float(cap)), 1e-3)
    grid = np.geomspace(1e-3, top, BATCH_GRID_POINTS)
    context = shape.input_tokens + shape.output_tokens / 2.0
    transfer = kv_transfer(model, deployment, shape)
    return RawPhysics(
        users=float(users),
        decode_workers=float(dec.workers),
        output_tokens=float(shape.output_tokens),
        batch_grid=grid,
        decode_step=np.array([decode.dp_step(float(b), context) for b in grid]),
        decode_single_s=decode.dp_step(1.0, context),
        decode_slots=float(max(cap, 1)),
        prefill_alone_s=alone_s,
        prefill_batch_s=batch_s,
        prefill_rate=pre.workers * prompts / batch_s,
        transfer_s=transfer.bytes_per_request / (transfer.gbytes_s * GB),
        transfer=transfer,
    )


FactorArrays = dict[str, np.ndarray]
"""Each ``DisaggFactors`` field as an array over the points solved together."""


@dataclass(frozen=True)
class SteadySolution:
    """Arrays over the points: the closed loop's operating point."""

    ttft_s: np.ndarray
    tpot_s: np.ndarray
    req_s: np.ndarray
    batch: np.ndarray
    first_s: np.ndarray
    """Time to first token of a request that found a decode slot (overhead, prefill wait, prefill,
    transfer)."""
    prefill_wait_s: np.ndarray
    rho: np.ndarray
    saturated: np.ndarray
    """Every decode slot is busy (the rest of the users wait for one)."""


def _stack(raws: Sequence[RawPhysics], name: str) -> np.ndarray:
    return np.array([getattr(r, name) for r in raws], dtype=float)


ROOT_BISECTIONS = 40


def _between(
    batch: np.ndarray, b_lo: np.ndarray, b_hi: np.ndarray, s_lo: np.ndarray, s_hi: np.ndarray
) -> np.ndarray:
    """The decode iteration at ``batch`` by linear interpolation between two grid points."""
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(b_hi > b_lo, (batch - b_lo) / (b_hi - b_lo), 0.0)
    between: np.ndarray = s_lo + np.clip(share, 0.0, 1.0) * (s_hi - s_lo)
    return between


def solve_steady(raws: Sequence[RawPhysics], f: FactorArrays) -> SteadySolution:
    """The steady closed loop of every point at once: on each point's batch grid, the balance
    λ·(time to first token) + decode engines × b − N (increasing in b) is solved for its root;
    when it stays negative up to the largest batch, the decode slots are full and the remaining
    users wait for one (Little's law gives their TTFT)."""
    grid = np.stack([r.batch_grid for r in raws])
    steps = np.stack([r.decode_step for r in raws])
    names = ("users", "decode_workers", "output_tokens", "decode_single_s", "prefill_alone_s",
             "prefill_batch_s", "prefill_rate", "decode_slots", "transfer_s")
    col = {n: _stack(raws, n)[:, None] for n in names}
    fc = {n: v[:, None] for n, v in f.items()}

    def at(batch: np.ndarray, step: np.ndarray) -> tuple[np.ndarray, ...]:
        single = col["decode_single_s"]
        tpot = single * fc["decode_scale"] + np.maximum(step - single, 0.0) * fc["decode_batch_scale"]
        decoding_s = np.maximum(col["output_tokens"] - 1.0, 1.0) * tpot
        rate = col["decode_workers"] * batch / decoding_s
        slots = col["decode_slots"]
        slot_wait = fc["slot_wait"] * np.clip(batch / slots, 0.0, 1.0) ** slots * decoding_s / (slots + 1.0)
        rho = rate * fc["prefill_scale"] / col["prefill_rate"]
        busy = np.minimum(rho, 1.0 - 1e-12)
        wait = fc["queue_wait"] * col["prefill_batch_s"] * fc["prefill_scale"] * busy / (1.0 - busy)
        wait = np.where(rho >= 1.0, np.inf, wait)
        first = (fc["request_overhead_s"] + wait + col["prefill_alone_s"] * fc["prefill_scale"]
                 + col["transfer_s"] / fc["transfer_efficiency"] + slot_wait
                 + fc["admission_steps"] * tpot)
        return tpot, rate, rho, wait, first

    _, rate, _, _, first = at(grid, steps)
    with np.errstate(invalid="ignore"):
        excess = np.where(np.isinf(first), np.inf, rate * first) + col["decode_workers"] * grid - col["users"]
    positive = excess > 0.0
    saturated = ~positive.any(axis=1)
    k = np.where(saturated, grid.shape[1] - 1, np.argmax(positive, axis=1))
    rows = np.arange(grid.shape[0])
    lo = np.maximum(k - 1, 0)
    b_lo, b_hi = grid[rows, lo], grid[rows, k]
    s_lo, s_hi = steps[rows, lo], steps[rows, k]
    low, high = b_lo.copy(), b_hi.copy()
    bracketed = (k > 0) & ~saturated
    for _ in range(ROOT_BISECTIONS):  # the balance is continuous inside a bracket: bisect it
        mid = (low + high) / 2.0
        step_m = _between(mid, b_lo, b_hi, s_lo, s_hi)
        _, rate_m, _, _, first_m = (a[:, 0] for a in at(mid[:, None], step_m[:, None]))
        with np.errstate(invalid="ignore"):
            over = (rate_m * first_m + col["decode_workers"][:, 0] * mid - col["users"][:, 0]) > 0.0
        high = np.where(over, mid, high)
        low = np.where(over, low, mid)
    batch = np.where(bracketed, low, np.where(saturated, b_hi, b_lo))
    step = _between(batch, b_lo, b_hi, s_lo, s_hi)
    tpot, rate, rho, wait, first = (a[:, 0] for a in at(batch[:, None], step[:, None]))
    users, workers = col["users"][:, 0], col["decode_workers"][:, 0]
    ttft = np.maximum((users - workers * batch) / rate, first)
    with np.errstate(invalid="ignore"):
        waited = np.where(np.isfinite(first), wait + ttft - first, np.inf)
    return SteadySolution(ttft, tpot, rate, batch, first, waited, rho, saturated)


def factor_arrays(factors: Sequence[DisaggFactors]) -> FactorArrays:
    names = [f.name for f in fields(DisaggFactors)]
    return {n: np.array([getattr(x, n) for x in factors], dtype=float) for n in names}


def disagg_infeasibility(model: ModelArch, deployment: DisaggDeployment, shape: WorkloadShape,
                         calibration: Calibration | None = None) -> str:
    """Empty when both pools can serve a request of this shape, else why not (in words)."""
    for role, pool in (("prefill", deployment.prefill), ("decode", deployment.decode)):
        replica = engine_replica(model, deployment, pool, calibration)
        m = replica.model
        where = f"a {role} engine of {pool.gpus_per_worker} × {pool.gpu.id}"
        if m.heads % pool.tp:
            return f"{role} TP {pool.tp} does not divide {m.model_id}'s {m.heads} attention heads"
        if m.is_moe and m.experts % pool.ep:
            return f"{role} EP {pool.ep} does not divide {m.model_id}'s {m.experts} experts"
        if replica.kv_capacity <= 0:
            weights_gb = m.weight_bytes(deployment.precision) / GB
            return (f"{m.model_id} at {deployment.precision.value} needs {weights_gb:.0f} GB of weights; "
                    f"{where} cannot hold them")
        if replica.sequences_fitting(shape.input_tokens + shape.output_tokens) < 1:
            return f"one {shape.input_tokens + shape.output_tokens}-token sequence does not fit {where}"
    return ""


def estimate_disagg(
    model: ModelArch,
    deployment: DisaggDeployment,
    shape: WorkloadShape,
    users: int,
    *,
    calibration: Calibration | None = None,
    disagg_calibration: DisaggCalibration | None = None,
) -> DisaggEstimate:
    """TTFT, TPOT and throughput of a disaggregated deployment under a steady closed loop of ``users``."""
    cal = disagg_calibration or load_disagg_calibration()
    reason = disagg_infeasibility(model, deployment, shape, calibration)
    if reason:
        nan = math.nan
        empty = DisaggTiming(nan, nan, 0.0, 0.0, nan, nan, nan, nan, "infeasible",
                             Transfer(0.0, "", 0.0))
        return DisaggEstimate(empty, 0.0, 0.0, deployment.gpus, False, reason, cal.bands)
    raw = raw_physics(model, deployment, shape, users, calibration)
    f = cal.factors(deployment.engine, deployment.precision)
    solved = solve_steady([raw], factor_arrays([f]))
    rate = float(solved.req_s[0])
    bottleneck = ("decode_capacity" if solved.saturated[0] and solved.ttft_s[0] > solved.first_s[0]
                  else "prefill" if solved.rho[0] > PREFILL_BOTTLENECK_UTILISATION else "decode")
    timing = DisaggTiming(
        ttft_s=float(solved.ttft_s[0]), tpot_s=float(solved.tpot_s[0]), req_s=rate,
        decode_batch=float(solved.batch[0]), prefill_s=raw.prefill_alone_s * f.prefill_scale,
        prefill_wait_s=float(solved.prefill_wait_s[0]), transfer_s=raw.transfer_s / f.transfer_efficiency,
        prefill_utilisation=float(solved.rho[0]), bottleneck=bottleneck, transfer=raw.transfer,
    )
    output = rate * shape.output_tokens
    return DisaggEstimate(timing, output, output / deployment.gpus, deployment.gpus, True, "", cal.bands)
