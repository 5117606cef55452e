"""Calibrated efficiency factors: how far real engines stay below the datasheet.

The numbers live in ``solver/perf/calibration.json``, written only by ``python -m tools.calibration.fit``
from the measurements in ``solver/perf/calibration_data/``. This module reads that file and
combines its layers: global factors × per-engine multipliers × per-GPU-architecture multipliers
(the latter fitted with a pull towards 1, so a family with little data stays near the global fit).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from pricebook.schema import GpuSpec, ScaleUpLink
from solver.domain import Engine, Precision
from solver.perf.physics import ALLREDUCE_LATENCY_PRIOR_S

CALIBRATION_PATH = Path(__file__).with_name("calibration.json")


@dataclass(frozen=True, slots=True)
class EfficiencyFactors:
    """Fractions of datasheet peaks reached in practice, plus fixed per-step costs."""

    bandwidth_efficiency: float = 0.80
    """Share of memory bandwidth reached streaming weights in decode."""
    attention_efficiency: float = 0.60
    """Share of memory bandwidth reached reading the paged KV cache in decode attention."""
    compute_efficiency: float = 0.55
    """Share of dense tensor peak reached by prefill GEMMs (MFU of prefill)."""
    communication_efficiency: float = 0.70
    """Share of link bandwidth reached by the TP all-reduce."""
    step_overhead_s: float = 3e-3
    """Fixed time per engine iteration: scheduling, kernel launches, sampling."""
    per_sequence_overhead_s: float = 20e-6
    """Extra time per running sequence per iteration (CPU-side bookkeeping, sampling)."""
    request_overhead_s: float = 0.02
    """Fixed time every request spends outside engine iterations before its first token reaches
    the client: HTTP and tokenisation, scheduling into the batch, detokenising and streaming the
    first chunk. Part of every TTFT (and so of every closed-loop cycle)."""
    admission_wait_gaps: float = 0.1
    """How long a request of a steady closed loop waits to be admitted, in mean gaps between
    request completions (1/λ): schedulers that admit waiting requests only when a running one
    finishes and frees its blocks (TensorRT-LLM's capacity scheduler) make a new request wait for
    the next completion; an engine that admits on every iteration waits almost nothing."""
    prefill_budget_share: float = 1.0
    """Share of the iteration token budget the scheduler actually fills with prefill chunks
    (schedulers split long prompts more finely than the budget allows to protect decode latency)."""
    allreduce_latency_nvlink_s: float = ALLREDUCE_LATENCY_PRIOR_S[ScaleUpLink.NVLINK]
    """Fixed cost of one small TP all-reduce over NVLink/NVSwitch (also an NVLink bridge pair)."""
    allreduce_latency_infinity_fabric_s: float = ALLREDUCE_LATENCY_PRIOR_S[ScaleUpLink.INFINITY_FABRIC]
    allreduce_latency_pcie_p2p_s: float = ALLREDUCE_LATENCY_PRIOR_S[ScaleUpLink.PCIE_P2P]
    allreduce_latency_pcie_host_s: float = ALLREDUCE_LATENCY_PRIOR_S[ScaleUpLink.PCIE_HOST]

    def allreduce_latency_s(self, link: ScaleUpLink) -> float:
        """Fixed seconds of one small all-reduce over ``link``.

        The PCIe paths run the same NCCL software as the scale-up links plus slower hops, so they
        are never cheaper: P2P costs at least the scale-up value, host-bounced at least P2P (this
        holds even when a fitted scale-up value exceeds a PCIe prior that no data has moved).
        """
        scale_up = max(self.allreduce_latency_nvlink_s, self.allreduce_latency_infinity_fabric_s)
        if link in (ScaleUpLink.NVLINK, ScaleUpLink.NVLINK_BRIDGE):
            return self.allreduce_latency_nvlink_s
        if link is ScaleUpLink.INFINITY_FABRIC:
            return self.allreduce_latency_infinity_fabric_s
        p2p = max(self.allreduce_latency_pcie_p2p_s, scale_up)
        if link is ScaleUpLink.PCIE_P2P:
            return p2p
        return max(self.allreduce_latency_pcie_host_s, p2p)

    def scaled(self, multipliers: dict[str, float]) -> EfficiencyFactors:
        """Multiply named fields (efficiencies are capped at 1: nothing beats the datasheet)."""
        changes: dict[str, float] = {}
        for name, factor in multipliers.items():
            value = getattr(self, name) * factor
            if name.endswith(("_efficiency", "_share")):
                value = min(value, 1.0)
            changes[name] = value
        return replace(self, **changes)


@dataclass(frozen=True, slots=True)
class TrainingFactors:
    mfu_nvlink: float = 0.45
    """Model FLOPs utilization of full-precision training inside one NVLink domain."""
    lora_mfu_fraction: float = 0.8
    """LoRA reaches a smaller share of peak: adapters are small, skinny GEMMs."""
    qlora_dequant_overhead: float = 1.35
    """QLoRA time multiplier for dequantising 4-bit base weights on every forward/backward."""


@dataclass(frozen=True, slots=True, eq=False)
class Calibration:
    """The fitted model parameters (identity-hashed so factor lookups can be cached)."""

    base: EfficiencyFactors
    engine: dict[str, dict[str, float]]
    generation: dict[str, dict[str, float]]
    """Multipliers per engine generation (``engines.EngineGeneration``: vLLM V0 vs V1, TRT-LLM's
    TensorRT vs PyTorch backend): step costs, all-reduce latency, kernels differ by release."""
    architecture: dict[str, dict[str, float]]
    precision: dict[str, dict[str, float]]
    """Multipliers per weight precision (e.g. FP8 GEMMs reach a smaller share of their peak)."""
    training: TrainingFactors
    training_architecture: dict[str, float]
    """MFU multiplier per GPU architecture (hopper = 1)."""
    training_low_precision_mfu_factor: float
    """MFU at FP8 relative to BF16, each against its own peak."""
    band_low: float
    """Multiplicative lower band on throughput (a low quantile of measured/predicted)."""
    band_high: float
    latency_band_low: float
    latency_band_high: float
    measured: dict[str, frozenset[str]]
    """Weight precisions measured (fit targets) per GPU family (``gpu_family``); empty = not recorded."""
    tpot_band: tuple[float, float]
    """(low, high) of TPOT alone (the latency band covers TPOT, TTFT and durations together)."""
    ttft_band: tuple[float, float]
    fit_date: str
    source: str

    def factors(
        self,
        gpu: GpuSpec,
        engine: Engine,
        generation: str,
        precision: Precision,
        kv_precision: Precision = Precision.BF16,
    ) -> EfficiencyFactors:
        """Base × engine × generation × weight precision × KV-cache precision (``precision`` key
        ``kv-<dtype>``: attention kernels over an FP8 cache dequantise in registers) × GPU family."""
        keys = (gpu_family(gpu), engine.value, generation, precision.value, f"kv-{kv_precision.value}")
        return _combined(self, keys)

    def assumed(self, gpu: GpuSpec, precision: Precision) -> str:
        """Why the factors for ``gpu`` at ``precision`` rest on no measurement of their own (empty
        when the fit had measurements of that GPU family at that precision — 16-bit formats
        count as one — or when the calibration does not record what it measured)."""
        if not self.measured:
            return ""
        family = gpu_family(gpu)
        if family not in self.measured:
            borrowed = _family_source(self, family)
            source = f"the multipliers of {borrowed}" if borrowed else "the base factors"
            return f"no measurements of {family} GPUs in the calibration: {source} are used"
        if _precision_class(precision.value) not in {_precision_class(p) for p in self.measured[family]}:
            return f"no {precision.value} measurements of {family} GPUs in the calibration"
        return ""


def gpu_family(gpu: GpuSpec) -> str:
    """The key of a GPU's fitted multipliers: its architecture and memory technology. A GDDR part
    of an architecture (RTX PRO 6000, SM120) runs other kernels and memory than its HBM datacentre
    sibling (B200, SM100), and HBM generations reach different shares of their datasheet bandwidth
    (H200's HBM3e vs H100's HBM3), so none of them share multipliers (H100's HBM3 is the base)."""
    memory = gpu.memory_type.lower().replace(" ", "")
    memory = "gddr" if memory.startswith("gddr") else memory
    return f"{gpu.architecture.value}-{memory}"


@lru_cache(maxsize=1024)
def _combined(
    cal: Calibration, keys: tuple[str, str, str, str, str]
) -> EfficiencyFactors:
    architecture, engine, generation, precision, kv_precision = keys
    factors = cal.base.scaled(cal.engine.get(engine, {}))
    factors = factors.scaled(cal.generation.get(generation, {}))
    factors = factors.scaled(cal.precision.get(precision, {}))
    factors = factors.scaled(cal.precision.get(kv_precision, {}))
    return factors.scaled(_family_multipliers(cal, architecture))


def _precision_class(precision: str) -> str:
    return "16-bit" if precision in {"bf16", "fp16"} else precision


def _family_source(cal: Calibration, family: str) -> str:
    """The fitted family whose multipliers stand in for ``family`` (empty: the base's own)."""
    if family in cal.architecture:
        return family
    arch, _, memory = family.partition("-")
    gddr = memory == "gddr"
    siblings = sorted(
        k for k in cal.architecture if k.partition("-")[0] == arch and (k.partition("-")[2] == "gddr") == gddr
    )
    return siblings[0] if siblings else ""


def _family_multipliers(cal: Calibration, family: str) -> dict[str, float]:
    """The family's own multipliers; a family without data (MI325X's HBM3e, H100 PCIe's HBM2e)
    takes those of its architecture's nearest fitted sibling of the same memory class (GDDR vs
    HBM; the reference family is stored with no multipliers, so H100 PCIe stays at the base)."""
    source = _family_source(cal, family)
    return cal.architecture[source] if source else {}


def calibration_from_dict(data: dict[str, Any]) -> Calibration:
    base = EfficiencyFactors(**{k: float(v) for k, v in data["base"].items()})
    training_data = dict(data.get("training", {}))
    training_architecture = {k: float(v) for k, v in training_data.pop("architecture", {}).items()}
    low_precision = float(training_data.pop("low_precision_mfu_factor", 0.6))
    training = TrainingFactors(**{k: float(v) for k, v in training_data.items()})
    band = data.get("band", {})
    return Calibration(
        base=base,
        engine={k: dict(v) for k, v in data.get("engine", {}).items()},
        generation={k: dict(v) for k, v in data.get("generation", {}).items()},
        architecture={k: dict(v) for k, v in data.get("architecture", {}).items()},
        precision={k: dict(v) for k, v in data.get("precision", {}).items()},
        training=training,
        training_architecture=training_architecture,
        training_low_precision_mfu_factor=low_precision,
        band_low=float(band.get("throughput_low", 0.75)),
        band_high=float(band.get("throughput_high", 1.25)),
        latency_band_low=float(band.get("latency_low", 0.7)),
        latency_band_high=float(band.get("latency_high", 1.3)),
        measured={k: frozenset(v) for k, v in data.get("measured", {}).items()},
        tpot_band=_metric_band(band, "tpot"),
        ttft_band=_metric_band(band, "ttft"),
        fit_date=str(data.get("fit_date", "")),
        source=str(data.get("source", "")),
    )


def _metric_band(band: dict[str, Any], metric: str) -> tuple[float, float]:
    low, high = float(band.get("latency_low", 0.7)), float(band.get("latency_high", 1.3))
    return float(band.get(f"{metric}_low", low)), float(band.get(f"{metric}_high", high))


@lru_cache(maxsize=1)
def load_calibration() -> Calibration:
    """The checked-in calibration; defaults (uncalibrated) when the file is absent."""
    if not CALIBRATION_PATH.exists():
        return calibration_from_dict({"base": {}, "source": "uncalibrated defaults"})
    return calibration_from_dict(json.loads(CALIBRATION_PATH.read_text()))
