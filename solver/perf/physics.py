"""The physics of one transformer on one GPU type: bytes, FLOPs and links, with no calibration.

Everything here is arithmetic on the architecture (``pricebook.schema.ModelArch``) and the GPU
datasheet (``pricebook.schema.GpuSpec``). The pricebook types are pydantic models that are not
hashable, so they are first reduced to the frozen, hashable ``ModelPhysics`` / ``GpuPhysics``
below; the estimators cache on those.

Units: bytes and FLOPs as floats, seconds, bytes/s. ``GB`` means 1e9 bytes; device memory
capacity is in GiB (HBM/GDDR capacities are binary: an "80 GB" H100 holds 80 GiB).
"""

from __future__ import annotations

from dataclasses import dataclass

from pricebook.schema import Architecture, AttentionType, GpuSpec, ModelArch, ScaleUpLink, Vendor
from solver.domain import Precision

GIB = 2**30
GB = 1e9

BYTES_PER_ELEMENT: dict[Precision, float] = {
    Precision.BF16: 2.0,
    Precision.FP16: 2.0,
    Precision.FP8: 1.0,
    Precision.INT8: 1.0,
    # 4-bit formats carry a scale per group of 16-32 values (NVFP4: one FP8 scale per 16,
    # GPTQ/AWQ int4: one FP16 scale per 128 + zero); 0.5625 B = 4.5 bits covers both.
    Precision.INT4: 0.5625,
    Precision.FP4: 0.5625,
}

# Fixed latency of one small (decode-sized, 8-64 KB) all-reduce per link class, in seconds: the
# PRIOR of the fit (``tools.calibration.fit`` fits a link's value where measured TP data on that link
# exists; the fitted value lives in calibration.json, ``EfficiencyFactors.allreduce_latency_s``).
# Small messages are latency-bound: NCCL's LL protocol needs one launch, a handshake per ring hop
# and a flag poll per rank, and inside a serving step every all-reduce is also a barrier that
# absorbs the rank-to-rank skew of the preceding kernels. nccl-tests on an NVSwitch node report
# ~10-20 us for such sizes in isolation; in-engine per-call costs of ~20-40 us are typical, so the
# NVLink/NVSwitch prior is centred at 25 us (an NVLink bridge pair uses the same NCCL path). RCCL
# over Infinity Fabric is a little slower per call (~30 us). PCIe P2P: each hop crosses a PCIe
# switch or the root complex (~1-2 us per transaction vs ~0.5 us on NVLink) and NCCL falls back
# to the slower SIMPLE/LL128 paths, ~2x NVLink: 50 us. Through host memory (no P2P, GeForce)
# NCCL's SHM transport copies device->host->device and syncs on the host per hop: ~100 us.
ALLREDUCE_LATENCY_PRIOR_S: dict[ScaleUpLink, float] = {
    ScaleUpLink.NVLINK: 25e-6,
    ScaleUpLink.NVLINK_BRIDGE: 25e-6,
    ScaleUpLink.INFINITY_FABRIC: 30e-6,
    ScaleUpLink.PCIE_P2P: 50e-6,
    ScaleUpLink.PCIE_HOST: 100e-6,
}


FOUR_BIT = frozenset({Precision.FP4, Precision.INT4})


def bytes_per_element(precision: Precision) -> float:
    return BYTES_PER_ELEMENT[precision]


NVIDIA_MIG_COMPUTE_SLICES = 7
NVIDIA_MIG_MEMORY_SLICES = 8
"""NVIDIA's 7-instance MIG GPUs (A100, H100, H200, B200, GB200) split into 7 compute slices but
8 memory slices (NVIDIA MIG user guide, "Supported MIG Profiles": 1g.10gb … 7g.80gb on H100)."""
NVIDIA_MIG_HALF = (3, 4)
"""Compute and memory slices of the half-GPU instance two of which fit one GPU (3g.40gb on H100;
4g.40gb has 4 compute slices but cannot be paired)."""


@dataclass(frozen=True, slots=True)
class MigShare:
    """Shares of one GPU that one MIG instance gets."""

    compute: float
    """Of the tensor FLOP/s."""
    memory: float
    """Of the memory capacity and bandwidth (memory slices carry their own controllers)."""


def mig_share(gpu: GpuSpec, slices: int) -> MigShare:
    """What a 1/``slices`` MIG instance of ``gpu`` gets.

    On NVIDIA's 7-instance layout the smallest instance (``slices`` = 7) is 1g: 1/7 of the compute
    and 1/8 of the memory; the half (``slices`` = 2) is 3g: 3/7 of the compute, 4/8 of the memory.
    Other layouts (RTX PRO 6000: 4 × 24 GB; AMD CPX/DPX partitions) split evenly.
    """
    if gpu.vendor is Vendor.NVIDIA and gpu.mig_max_instances == NVIDIA_MIG_COMPUTE_SLICES:
        if slices == NVIDIA_MIG_COMPUTE_SLICES:
            return MigShare(compute=1 / NVIDIA_MIG_COMPUTE_SLICES, memory=1 / NVIDIA_MIG_MEMORY_SLICES)
        if slices == 2:
            compute, memory = NVIDIA_MIG_HALF
            return MigShare(
                compute=compute / NVIDIA_MIG_COMPUTE_SLICES, memory=memory / NVIDIA_MIG_MEMORY_SLICES
            )
    return MigShare(compute=1 / slices, memory=1 / slices)


@dataclass(frozen=True, slots=True)
class GpuPhysics:
    """The datasheet numbers the performance model needs, hashable."""

    gpu_id: str
    architecture: Architecture
    memory_bytes: float
    bandwidth_bytes_s: float
    bf16_flops: float
    fp8_flops: float
    fp4_flops: float
    int8_ops: float
    link: ScaleUpLink
    link_bandwidth_bytes_s: float
    """One direction, per GPU (the datasheet gives bidirectional)."""
    domain_size: int
    pcie_bandwidth_bytes_s: float
    """One direction, per GPU."""
    p2p_over_pcie: bool
    tdp_w: float

    @classmethod
    def of(cls, gpu: GpuSpec) -> GpuPhysics:
        return cls(
            gpu_id=gpu.id,
            architecture=gpu.architecture,
            memory_bytes=gpu.memory_gb * GIB,
            bandwidth_bytes_s=gpu.memory_bandwidth_gbs * GB,
            bf16_flops=gpu.bf16_tflops * 1e12,
            fp8_flops=gpu.fp8_tflops * 1e12,
            fp4_flops=gpu.fp4_tflops * 1e12,
            int8_ops=gpu.int8_tops * 1e12,
            link=gpu.scale_up_link,
            link_bandwidth_bytes_s=gpu.scale_up_bandwidth_gbs * GB / 2,
            domain_size=gpu.scale_up_domain_size,
            pcie_bandwidth_bytes_s=gpu.pcie_bandwidth_gbs * GB / 2,
            p2p_over_pcie=gpu.p2p_over_pcie,
            tdp_w=gpu.tdp_w,
        )

    @classmethod
    def mig_instance(cls, gpu: GpuSpec, slices: int) -> GpuPhysics:
        """One MIG instance of ``gpu`` when it is split into ``slices`` equal instances."""
        share = mig_share(gpu, slices)
        whole = cls.of(gpu)
        return cls(
            gpu_id=f"{gpu.id}/mig{slices}",
            architecture=whole.architecture,
            memory_bytes=whole.memory_bytes * share.memory,
            bandwidth_bytes_s=whole.bandwidth_bytes_s * share.memory,
            bf16_flops=whole.bf16_flops * share.compute,
            fp8_flops=whole.fp8_flops * share.compute,
            fp4_flops=whole.fp4_flops * share.compute,
            int8_ops=whole.int8_ops * share.compute,
            link=whole.link,
            link_bandwidth_bytes_s=0.0,
            domain_size=1,
            pcie_bandwidth_bytes_s=whole.pcie_bandwidth_bytes_s / slices,
            p2p_over_pcie=False,
            tdp_w=whole.tdp_w / slices,
        )

    @classmethod
    def card_part(cls, gpu: GpuSpec, share: float) -> GpuPhysics:
        """``share`` of one card's time and memory, for a model co-located with another on the card
        (time-sliced: each step of either runs on the whole card, so over time each gets ``share``
        of its compute, memory bandwidth and links; memory is split by the same share)."""
        whole = cls.of(gpu)
        return cls(
            gpu_id=f"{gpu.id}/share{share:.4g}",
            architecture=whole.architecture,
            memory_bytes=whole.memory_bytes * share,
            bandwidth_bytes_s=whole.bandwidth_bytes_s * share,
            bf16_flops=whole.bf16_flops * share,
            fp8_flops=whole.fp8_flops * share,
            fp4_flops=whole.fp4_flops * share,
            int8_ops=whole.int8_ops * share,
            link=whole.link,
            link_bandwidth_bytes_s=whole.link_bandwidth_bytes_s * share,
            domain_size=whole.domain_size,
            pcie_bandwidth_bytes_s=whole.pcie_bandwidth_bytes_s * share,
            p2p_over_pcie=whole.p2p_over_pcie,
            tdp_w=whole.tdp_w * share,
        )

    def peak_flops(self, precision: Precision) -> float:
        """Dense tensor FLOP/s for GEMMs whose weights are stored at ``precision``.

        FP8/FP4 run at their own rate only where the GPU has those tensor cores (no FP8 before
        Hopper/Ada, no FP4 before Blackwell/CDNA4); elsewhere weights are dequantised and the
        math runs at BF16. INT8/INT4 weight-only formats also compute in BF16 (W8A16/W4A16) —
        except INT8 where the GPU quotes INT8 tensor TOPS and no FP8 (Ampere W8A8).
        """
        if precision is Precision.FP4 and self.fp4_flops > 0:
            return self.fp4_flops
        if precision in (Precision.FP8, Precision.INT8) and self.fp8_flops > 0:
            return self.fp8_flops
        return self.bf16_flops

    def tp_link(self, tp: int) -> tuple[ScaleUpLink, float]:
        """The link a TP group of ``tp`` GPUs actually uses and its one-way bandwidth per GPU.

        A scale-up link only helps when the whole group sits inside one domain (an NVLink
        bridge pairs 2 cards); otherwise the all-reduce crosses PCIe, with P2P or via the host.
        """
        if self.link not in (ScaleUpLink.PCIE_P2P, ScaleUpLink.PCIE_HOST) and tp <= self.domain_size:
            return self.link, self.link_bandwidth_bytes_s
        if self.p2p_over_pcie:
            return ScaleUpLink.PCIE_P2P, self.pcie_bandwidth_bytes_s
        # Through host memory every byte crosses PCIe twice (device→host, host→device).
        return ScaleUpLink.PCIE_HOST, self.pcie_bandwidth_bytes_s / 2


@dataclass(frozen=True, slots=True)
class ModelPhysics:
    """Architecture numbers reduced to what bytes and FLOPs depend on, hashable."""

    model_id: str
    params: float
    active_params: float
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    experts: int
    experts_per_token: int
    expert_params_per_layer_expert: float
    """Parameters of one routed expert in one layer (0 for dense models)."""
    attention: AttentionType
    kv_elements_full_per_token: float
    """KV elements per token summed over layers that keep the whole context."""
    kv_elements_window_per_token: float
    """KV elements per token summed over sliding-window layers (capped at ``window`` tokens)."""
    window: int
    attention_layers_full: int
    attention_layers_window: int
    max_context: int
    assumed: bool
    four_bit_experts_only: bool = False
    """At FP4/INT4 only the routed experts are 4-bit; the rest of the weights stay BF16."""
    sparse_topk: int = 0
    """Keys each query attends to under sparse attention (0 = all of them)."""
    index_elements_per_token: float = 0.0
    """Indexer key elements cached per token over all layers (FP8), read over the whole context."""

    @classmethod
    def of(cls, model: ModelArch) -> ModelPhysics:
        full_kv, window_kv = _kv_elements_per_token(model)
        full_layers = model.full_attention_layers
        window_layers = (
            max(0, model.layers - full_layers - _linear_layers(model)) if model.sliding_window else 0
        )
        return cls(
            model_id=model.id,
            params=model.params_b * 1e9,
            active_params=model.active_params_b * 1e9,
            layers=model.layers,
            hidden=model.hidden,
            heads=model.heads,
            kv_heads=model.kv_heads,
            head_dim=model.head_dim,
            vocab=model.vocab,
            experts=model.experts,
            experts_per_token=model.experts_per_token,
            expert_params_per_layer_expert=routed_expert_params(model),
            attention=model.attention,
            kv_elements_full_per_token=full_kv,
            kv_elements_window_per_token=window_kv,
            window=model.sliding_window,
            attention_layers_full=full_layers,
            attention_layers_window=window_layers,
            max_context=model.max_context,
            assumed=model.assumed,
            four_bit_experts_only=model.four_bit_experts_only,
            sparse_topk=model.sparse_attention_topk,
            index_elements_per_token=float(model.sparse_attention_index_dim * full_layers),
        )

    @property
    def is_moe(self) -> bool:
        return self.experts > 0 and self.experts_per_token > 0

    def kv_bytes_per_token(self, kv_precision: Precision) -> float:
        """KV bytes one token adds while the context is shorter than the sliding window."""
        return (self.kv_elements_full_per_token + self.kv_elements_window_per_token) * bytes_per_element(
            kv_precision
        )

    def weight_bytes(self, precision: Precision) -> float:
        """Bytes of all weights held in memory (every expert of an MoE). Checkpoints whose 4-bit
        form quantizes only the experts keep everything else at BF16."""
        if self.four_bit_experts_only and precision in FOUR_BIT and self.is_moe:
            experts = self.expert_params_per_layer_expert * self.experts * self.layers
            rest = max(self.params - experts, 0.0)
            return experts * bytes_per_element(precision) + rest * bytes_per_element(Precision.BF16)
        return self.params * bytes_per_element(precision)

    def attended_context(self, context: float) -> float:
        """Keys one query of a full-attention layer reads: all of them, or the sparse top-k."""
        return min(context, float(self.sparse_topk)) if self.sparse_topk else context

    def weight_bytes_read_per_step(self, precision: Precision, tokens_in_step: float) -> float:
        """Weight bytes a forward step over ``tokens_in_step`` tokens must stream from memory.

        Dense models read everything once per step. MoE models read the non-expert weights
        plus only the experts the step's tokens touch: E·(1−(1−k/E)^B) distinct experts per
        layer for B tokens each choosing k of E (uniform routing).
        """
        total = self.weight_bytes(precision)
        if not self.is_moe:
            return total
        per_expert = self.expert_params_per_layer_expert * bytes_per_element(precision)
        all_experts = per_expert * self.experts * self.layers
        touched = expected_distinct_experts(self.experts, self.experts_per_token, tokens_in_step)
        return total - all_experts + per_expert * touched * self.layers

    def linear_flops_per_token(self) -> float:
        """2 FLOPs per active parameter (one multiply-add) for one token's forward pass."""
        return 2.0 * self.active_params

    def attention_flops(self, tokens: float, seen_context: float) -> float:
        """FLOPs of QKᵀ and AV for ``tokens`` query tokens that each attend to ``seen_context``.

        2 GEMMs × 2 FLOPs per MAC × heads × head_dim per (query, key) pair and layer; window
        layers see at most ``window`` keys. For a causal prompt of P new tokens after C cached
        ones, the average token sees C + P/2.
        """
        per_pair = 4.0 * self.heads * self.head_dim
        seen_window = min(seen_context, float(self.window)) if self.window else seen_context
        seen_full = self.attended_context(seen_context)
        return (
            per_pair
            * tokens
            * (self.attention_layers_full * seen_full + self.attention_layers_window * seen_window)
        )

    def allreduce_bytes_per_token(self, activation_bytes: float = 2.0) -> float:
        """Bytes of one hidden-state vector (what each TP all-reduce sums, per token)."""
        return self.hidden * activation_bytes


def _linear_layers(model: ModelArch) -> int:
    return int(getattr(model, "linear_attention_layers", 0) or 0)


def _kv_elements_per_token(model: ModelArch) -> tuple[float, float]:
    """(full-context layers, sliding-window layers) KV elements per token.

    GQA/MHA: K and V, ``kv_heads × head_dim`` each, per layer. MLA caches one compressed latent
    of ``kv_lora_rank`` plus the decoupled RoPE key per layer — no factor 2, no heads. Linear-
    attention layers keep a fixed state and add nothing per token. Where the research table
    published per-token bytes (cross-layer KV sharing, per-layer head dims), those win.
    """
    published_full = getattr(model, "kv_bytes_per_token_bf16_full_layers", None)
    published_window = getattr(model, "kv_bytes_per_token_bf16_window_layers", None)
    if published_full is not None:
        return float(published_full) / 2.0, float(published_window or 0) / 2.0
    if model.attention is AttentionType.MLA and model.kv_lora_rank > 0:
        per_layer = float(model.kv_lora_rank + model.qk_rope_head_dim)
    else:
        per_layer = 2.0 * model.kv_heads * model.head_dim
    full_layers = model.full_attention_layers
    window_layers = max(0, model.layers - full_layers - _linear_layers(model)) if model.sliding_window else 0
    return per_layer * full_layers, per_layer * window_layers


def routed_expert_params(model: ModelArch) -> float:
    """Parameters of one routed expert in one layer: gate, up and down projections."""
    if model.experts == 0:
        return 0.0
    if model.moe_intermediate > 0:
        return 3.0 * model.hidden * model.moe_intermediate
    # No per-expert width published: attribute the total-minus-active gap to the unused experts.
    unused = model.experts - model.experts_per_token
    if unused <= 0:
        return 0.0
    return (model.params_b - model.active_params_b) * 1e9 / (unused * model.layers)


def expected_distinct_experts(experts: int, chosen_per_token: int, tokens: float) -> float:
    """Expected distinct experts of E touched by B tokens that each pick k: E·(1−(1−k/E)^B)."""
    if experts <= 0:
        return 0.0
    tokens = max(tokens, 1.0)
    untouched: float = (1.0 - chosen_per_token / experts) ** tokens
    return experts * (1.0 - untouched)


def allreduce_seconds(message_bytes: float, tp: int, link_bytes_s: float, latency_s: float) -> float:
    """Ring all-reduce of ``message_bytes`` over ``tp`` ranks: 2(t−1)/t × message / link + latency."""
    if tp <= 1:
        return 0.0
    return 2.0 * (tp - 1) / tp * message_bytes / link_bytes_s + latency_s


_MODEL_CACHE: dict[tuple[object, ...], ModelPhysics] = {}
_MODEL_CACHE_LIMIT = 4096

# Every architecture field the physics reads (inline specs share ids, so the id is not enough).
_PHYSICS_FIELDS = (
    "id",
    "params_b",
    "active_params_b",
    "layers",
    "hidden",
    "intermediate",
    "moe_intermediate",
    "heads",
    "kv_heads",
    "head_dim",
    "vocab",
    "max_context",
    "experts",
    "experts_per_token",
    "attention",
    "kv_lora_rank",
    "qk_rope_head_dim",
    "sliding_window",
    "full_attention_layers",
    "assumed",
    "linear_attention_layers",
    "kv_bytes_per_token_bf16_full_layers",
    "kv_bytes_per_token_bf16_window_layers",
    "four_bit_experts_only",
    "sparse_attention_topk",
    "sparse_attention_index_dim",
)


def model_physics(model: ModelArch) -> ModelPhysics:
    """``ModelPhysics.of(model)``, cached by every field the physics reads."""
    key = tuple(getattr(model, name, None) for name in _PHYSICS_FIELDS)
    physics = _MODEL_CACHE.get(key)
    if physics is None:
        physics = ModelPhysics.of(model)
        if len(_MODEL_CACHE) >= _MODEL_CACHE_LIMIT:
            _MODEL_CACHE.clear()
        _MODEL_CACHE[key] = physics
    return physics
