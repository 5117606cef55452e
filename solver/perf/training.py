"""Training and fine-tuning: memory per GPU, the fewest GPUs that fit, tokens/s and GPU-hours.

* Memory (per GPU): full training with mixed-precision AdamW keeps 16 bytes per parameter
  (bf16 weights 2 + bf16 grads 2 + fp32 master 4 + Adam m and v 8), sharded over the data-
  parallel GPUs by ZeRO-3/FSDP; LoRA keeps the frozen base in bf16 (QLoRA: 4-bit) and 16 bytes
  per adapter parameter. Activations: with checkpointing one hidden vector per layer per token
  plus one layer's working set; without, every layer's working set (~34·hidden bytes per token).
* Throughput: model FLOPs per token (6·N full: forward 2N + backward 4N; LoRA 4N: the backward
  still propagates activation gradients but computes no base-weight gradients) plus attention,
  over peak × MFU, scaled by how well the interconnect hides ZeRO-3 traffic.
* MFU is fitted (``tools.calibration.fit``) to published training runs; LoRA/QLoRA factors are priors
  (no measured LoRA data in the calibration set) and the answer says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pricebook.schema import Architecture, GpuSpec, ModelArch, ScaleUpLink
from solver.domain import Precision, TrainingMethod
from solver.perf.calibration import Calibration, load_calibration
from solver.perf.physics import GB, GpuPhysics, ModelPhysics

FULL_BYTES_PER_PARAM = 16.0
BASE_BYTES_LORA = 2.0
BASE_BYTES_QLORA = 0.5625
LORA_RANK = 16
TRAINING_MEMORY_UTILIZATION = 0.92
"""Share of device memory PyTorch can use before fragmentation bites."""
TRAINING_RESERVE_BYTES = 3.0 * GB
"""CUDA context, NCCL buffers, allocator slack."""
ACTIVATION_BYTES_PER_TOKEN_PER_HIDDEN = 34.0
"""Korthikanti et al. 2022: one layer's activations ≈ 34·s·b·h bytes (bf16, flash attention)."""
MICRO_BATCH_TOKENS_TARGET = 16_384
"""Tokens per GPU per optimizer micro-step the throughput model assumes (activations permitting)."""
INTER_NODE_GBPS_PER_GPU: dict[ScaleUpLink, float] = {
    # One 400 Gb/s InfiniBand/RoCE NIC per GPU in HGX/OAM clusters; PCIe servers usually have
    # 2 × 100 GbE for 8 GPUs.
    ScaleUpLink.NVLINK: 400.0,
    ScaleUpLink.INFINITY_FABRIC: 400.0,
    ScaleUpLink.NVLINK_BRIDGE: 50.0,
    ScaleUpLink.PCIE_P2P: 25.0,
    ScaleUpLink.PCIE_HOST: 25.0,
}
COMM_OVERLAP = 0.7
"""Share of ZeRO-3 traffic hidden behind compute (prefetching all-gathers)."""


@dataclass(frozen=True, slots=True)
class TrainingEstimate:
    fits: bool
    reason: str
    method: TrainingMethod
    num_gpus: int
    min_gpus: int
    """Fewest GPUs of this type whose memory holds the run (0 = none up to 4096)."""
    memory_per_gpu_gb: float
    usable_per_gpu_gb: float
    tokens_per_s: float
    tokens_per_s_per_gpu: float
    mfu: float
    """Model FLOPs utilization achieved (after scaling losses), of the dense peak at the precision."""
    scaling_efficiency: float
    hours: float
    gpu_hours: float
    link: str
    """How the data-parallel group talks: nvlink, pcie_p2p, pcie_host, or +network across servers."""
    calibrated: bool
    """False for LoRA/QLoRA, whose factors are priors without measured data."""


def _adapter_params(m: ModelPhysics, hidden_intermediate: float) -> float:
    # r × (in + out) per adapted matrix: q, o (h→h), k, v (h→kv), gate, up, down (h↔intermediate)
    kv_dim = m.kv_heads * m.head_dim
    per_layer = 2 * (2 * m.hidden) + 2 * (m.hidden + kv_dim) + 3 * (m.hidden + hidden_intermediate)
    return LORA_RANK * m.layers * per_layer


def training_memory(
    model: ModelArch,
    method: TrainingMethod,
    num_gpus: int,
    seq_len: int,
    *,
    activation_checkpointing: bool = True,
) -> tuple[float, float]:
    """(sharded bytes over all GPUs, per-GPU unsharded bytes) for one micro-batch of one sequence."""
    m = ModelPhysics.of(model)
    activations_one_layer = ACTIVATION_BYTES_PER_TOKEN_PER_HIDDEN * m.hidden * seq_len
    checkpoints = m.layers * m.hidden * 2.0 * seq_len
    activations = activations_one_layer + (
        checkpoints if activation_checkpointing else activations_one_layer * (m.layers - 1)
    )
    if method is TrainingMethod.FULL:
        return FULL_BYTES_PER_PARAM * m.params, activations + TRAINING_RESERVE_BYTES
    base = BASE_BYTES_LORA if method is TrainingMethod.LORA else BASE_BYTES_QLORA
    adapters = FULL_BYTES_PER_PARAM * _adapter_params(m, model.intermediate)
    # The frozen base is sharded like everything else under FSDP; adapters are tiny.
    return base * m.params + adapters, activations + TRAINING_RESERVE_BYTES


def min_gpus_to_fit(model: ModelArch, gpu: GpuSpec, method: TrainingMethod, seq_len: int) -> int:
    usable = gpu.memory_gb * 2**30 * TRAINING_MEMORY_UTILIZATION
    sharded, unsharded = training_memory(model, method, 1, seq_len)
    room = usable - unsharded
    if room <= 0:
        return 0
    return max(1, math.ceil(sharded / room))


def estimate_training(  # noqa: PLR0917 - positional order is the documented contract
    model: ModelArch,
    gpu: GpuSpec,
    num_gpus: int,
    method: TrainingMethod,
    seq_len: int,
    tokens: float,
    *,
    precision: Precision = Precision.BF16,
    gpus_per_server: int | None = None,
    activation_checkpointing: bool = True,
    calibration: Calibration | None = None,
) -> TrainingEstimate:
    """Time and GPU-hours to train on ``tokens`` tokens with ``num_gpus`` GPUs of ``gpu``."""
    cal = calibration or load_calibration()
    phys_gpu = GpuPhysics.of(gpu)
    m = ModelPhysics.of(model)
    per_server = gpus_per_server or max(gpu.scale_up_domain_size, 1)
    usable = phys_gpu.memory_bytes * TRAINING_MEMORY_UTILIZATION
    sharded, unsharded = training_memory(
        model, method, num_gpus, seq_len, activation_checkpointing=activation_checkpointing
    )
    # LoRA keeps the frozen base replicated (plain data parallel) when it fits one GPU; otherwise
    # it is sharded like full training (FSDP) and must be all-gathered every micro-step.
    replicated = method is not TrainingMethod.FULL and sharded + unsharded <= usable
    per_gpu = sharded + unsharded if replicated else sharded / num_gpus + unsharded
    needed = min_gpus_to_fit(model, gpu, method, seq_len)
    fits = per_gpu <= usable
    reason = (
        ""
        if fits
        else _does_not_fit(
            model, gpu, method, num_gpus=num_gpus, per_gpu=per_gpu, usable=usable, needed=needed
        )
    )
    mfu = _mfu(cal, gpu.architecture, precision)
    if method is not TrainingMethod.FULL:
        mfu *= cal.training.lora_mfu_fraction
    compute_s_per_token = _flops_per_token(m, method, seq_len) / (phys_gpu.peak_flops(precision) * mfu)
    link_name, link_bw = _dp_link(phys_gpu, num_gpus, per_server)
    comm_s_per_token = 0.0
    if num_gpus > 1:
        traffic = _dp_traffic_bytes(m, model, method, replicated=replicated)
        micro_step = _tokens_per_micro_step(unsharded, usable - per_gpu, seq_len)
        comm_s_per_token = traffic * (num_gpus - 1) / num_gpus / link_bw / micro_step
    exposed = max(0.0, comm_s_per_token - COMM_OVERLAP * compute_s_per_token) if comm_s_per_token else 0.0
    if method is TrainingMethod.QLORA:
        # Dequantisation slows the compute but not the overlap window the traffic hides behind.
        compute_s_per_token *= cal.training.qlora_dequant_overhead
    s_per_token = compute_s_per_token + exposed
    scaling = compute_s_per_token / s_per_token
    per_gpu_tok_s = 1.0 / s_per_token
    total = per_gpu_tok_s * num_gpus
    hours = tokens / total / 3600.0 if fits else math.inf
    return TrainingEstimate(
        fits=fits,
        reason=reason,
        method=method,
        num_gpus=num_gpus,
        min_gpus=needed,
        memory_per_gpu_gb=per_gpu / GB,
        usable_per_gpu_gb=usable / GB,
        tokens_per_s=total if fits else 0.0,
        tokens_per_s_per_gpu=per_gpu_tok_s if fits else 0.0,
        mfu=mfu * scaling,
        scaling_efficiency=scaling,
        hours=hours,
        gpu_hours=hours * num_gpus,
        link=link_name,
        calibrated=method is TrainingMethod.FULL,
    )


def _does_not_fit(
    model: ModelArch,
    gpu: GpuSpec,
    method: TrainingMethod,
    *,
    num_gpus: int,
    per_gpu: float,
    usable: float,
    needed: int,
) -> str:
    return (
        f"{method.value} training of {model.id} needs {per_gpu / GB:.0f} GB per GPU "
        f"on {num_gpus} × {gpu.id} ({usable / GB:.0f} GB usable); "
        + (f"at least {needed} GPUs are needed" if needed else "one sequence's activations do not fit")
    )


def _tokens_per_micro_step(unsharded: float, spare: float, seq_len: int) -> float:
    """Sequences per micro-step: as many as the memory left after the states holds, up to the
    target; ZeRO-3 traffic is paid once per micro-step, so small micro-batches expose it."""
    activations_per_sequence = unsharded - TRAINING_RESERVE_BYTES
    sequences = 1 + max(0, int(spare // activations_per_sequence)) if activations_per_sequence > 0 else 1
    return max(float(seq_len), min(MICRO_BATCH_TOKENS_TARGET, sequences * seq_len))


def _flops_per_token(m: ModelPhysics, method: TrainingMethod, seq_len: int) -> float:
    """Linear layers + attention (QKᵀ and AV: 2 GEMMs × 2 FLOPs per MAC over the sequence, counted
    without the causal half as MFU conventions do: 6N + 12·L·h·s in total); adapters-only training
    skips the base's weight gradients (4N instead of 6N)."""
    attention_forward = 4.0 * m.layers * m.heads * m.head_dim * seq_len
    passes = 3.0 if method is TrainingMethod.FULL else 2.0
    return passes * (m.linear_flops_per_token() + attention_forward)


def _dp_traffic_bytes(
    m: ModelPhysics, model: ModelArch, method: TrainingMethod, *, replicated: bool
) -> float:
    """Data-parallel traffic per micro-step per GPU (bf16): ZeRO-3/FSDP all-gathers the sharded
    weights for forward and backward and reduce-scatters gradients (3 × 2 B × N for full
    training; 2 × the base for sharded LoRA); replicated LoRA all-reduces only adapter grads."""
    adapter_bytes = 2.0 * _adapter_params(m, model.intermediate)
    if method is TrainingMethod.FULL:
        return 3 * 2.0 * m.params
    if replicated:
        return 2.0 * adapter_bytes
    base_bytes = (BASE_BYTES_LORA if method is TrainingMethod.LORA else BASE_BYTES_QLORA) * m.params
    return 2.0 * base_bytes + 2.0 * adapter_bytes


def _mfu(cal: Calibration, architecture: Architecture, precision: Precision) -> float:
    mfu = cal.training.mfu_nvlink * cal.training_architecture.get(architecture.value, 1.0)
    if precision in (Precision.FP8, Precision.FP4):
        mfu *= cal.training_low_precision_mfu_factor
    return min(mfu, 0.95)


def _dp_link(gpu: GpuPhysics, num_gpus: int, per_server: int) -> tuple[str, float]:
    """Name and one-way bytes/s per GPU of the slowest hop in the data-parallel group."""
    if num_gpus > per_server:
        gbps = INTER_NODE_GBPS_PER_GPU[gpu.link]
        return f"{gpu.link.value}+network", gbps * 1e9 / 8.0
    link, bw = gpu.tp_link(num_gpus)
    return link.value, bw
