"""The disaggregated AIConfigurator runs (``calibration_data/aic/disagg/``, Apache-2.0, see its NOTICE)
as points of the disaggregated model: one steady closed loop per row, with its measured TTFT, TPOT
and throughput per GPU (N·osl / (TTFT + (osl − 1)·TPOT) over both pools' GPUs, the README's identity).

Reading of the columns (``../shared/calibration/README.md``): ``*_tp_size`` is the attention TP of
one attention-DP rank, so an engine has ``tp × attention_dp`` GPUs (= MoE TP × EP in every row);
``*_num_workers`` is the number of engines of the role. Rows that do not state the worker counts
(the older sweeps, ``assumed_workers``) are read as one prefill engine and as many decode engines as
the users' sequences need (KV cache and sequence cap: a sweep that raises the concurrency adds
decode engines rather than queueing most users; one decode engine everywhere fits worse); rows
whose stated layout cannot hold the model (e.g. DeepSeek-R1 on one GPU: the sweep left the layout
columns at 1), or whose TP does not divide the attention heads (TP 72: the rack, not one engine),
are skipped with the reason. TensorRT-LLM rows name the Dynamo runtime release (0.5-0.8), which ships
TensorRT-LLM 1.x (the PyTorch backend): they run as TensorRT-LLM 1.x.
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass, replace

from pricebook import catalog
from pricebook.errors import UnknownEntryError
from pricebook.schema import GpuSpec, ModelArch, Pricebook
from solver.domain import Engine, Precision
from solver.perf.disagg import (
    DisaggDeployment,
    Pool,
    disagg_infeasibility,
    engine_replica,
)
from solver.perf.disagg_cases import resolve_gpu, scale_out_gbps
from solver.perf.replica import WorkloadShape
from tools.calibration.points import DATA_DIR, ENGINES, FP8_KV_QUANT, QUANT_PRECISION

DISAGG_FILE = "aic/disagg/silicon_disagg_calibration_half.csv"
TRTLLM_UNDER_DYNAMO = "1.2"
"""TensorRT-LLM release inside the Dynamo 0.5-0.8 runtime images (1.x, PyTorch backend)."""
_CONCURRENCY = re.compile(r"silicon_concurrency=(\d+)")
_QUANTIZED_CHECKPOINT = re.compile(r"-(NVFP4|FP8|FP4)$")
"""NVIDIA's quantized checkpoints (``nvidia/Qwen3-32B-NVFP4``) are the base model at that precision."""


@dataclass(frozen=True)
class DisaggPoint:
    id: str
    group: str
    """The (GPU, model) pair: the unit held out together."""
    model: ModelArch
    deployment: DisaggDeployment
    shape: WorkloadShape
    users: int
    ttft_ms: float
    tpot_ms: float
    assumed_workers: bool

    @property
    def throughput_per_gpu(self) -> float:
        cycle_s = (self.ttft_ms + (self.shape.output_tokens - 1) * self.tpot_ms) / 1e3
        return self.users * self.shape.output_tokens / cycle_s / self.deployment.gpus


@dataclass(frozen=True)
class SkippedDisaggRow:
    id: str
    reason: str


def _int(text: str, default: int = 1) -> int:
    return int(float(text)) if text.strip() else default


def _pool(row: dict[str, str], role: str, gpu: GpuSpec) -> Pool:
    return Pool(
        gpu,
        tp=_int(row[f"{role}_tp_size"]),
        workers=_int(row[f"{role}_num_workers"]),
        ep=_int(row[f"{role}_moe_ep_size"]),
        attention_dp=_int(row[f"{role}_attention_dp_size"]),
        # The prefill batch is the context engines' configured cap (1 in every stated row); the
        # decode batch is the concurrency spread over the decode ranks (N / ranks in every stated
        # row), not a cap: the decode engines keep their default.
        max_num_seqs=(_int(row[f"{role}_batch_size"], 0) or None) if role == "prefill" else None,
    )


def _point(book: Pricebook, row: dict[str, str]) -> DisaggPoint:
    gpu = resolve_gpu(book, row["system"].replace("_", "-"))
    model = catalog.model(book, _QUANTIZED_CHECKPOINT.sub("", row["model_path"].removeprefix("nvidia/")))
    engine = ENGINES[row["backend"]]
    version = row["backend_version"]
    if engine is Engine.TRTLLM and version.startswith("0."):
        version = TRTLLM_UNDER_DYNAMO
    fp8_kv = row["gemm_quant_mode"] in FP8_KV_QUANT and not model.id.startswith("openai/gpt-oss")
    kv = Precision.FP8 if fp8_kv else Precision.BF16
    deployment = DisaggDeployment(
        prefill=_pool(row, "prefill", gpu),
        decode=_pool(row, "decode", gpu),
        precision=QUANT_PRECISION[row["gemm_quant_mode"]],
        kv_precision=kv,
        engine=engine,
        engine_version=version,
        scale_out_gbps=scale_out_gbps(book, gpu),
    )
    found = _CONCURRENCY.search(row["silicon_data_source"])
    if found is None:
        msg = "no silicon_concurrency"
        raise ValueError(msg)
    if not row["prefill_num_workers"].strip():
        deployment = _sized_for(model, deployment, WorkloadShape(int(row["isl"]), int(row["osl"])),
                                int(found.group(1)))
    return DisaggPoint(
        id=row["id"],
        group=f"{gpu.id}|{model.id}",
        model=model,
        deployment=deployment,
        shape=WorkloadShape(int(row["isl"]), int(row["osl"])),
        users=int(found.group(1)),
        ttft_ms=float(row["silicon_ttft_ms"]),
        tpot_ms=float(row["silicon_tpot_ms"]),
        assumed_workers=not row["prefill_num_workers"].strip(),
    )


def _sized_for(model: ModelArch, deployment: DisaggDeployment, shape: WorkloadShape,
               users: int) -> DisaggDeployment:
    """Unstated worker counts: as many decode engines as the users' sequences need (KV and sequence
    cap), one prefill engine."""
    if disagg_infeasibility(model, deployment, shape):
        return deployment
    decode = engine_replica(model, deployment, deployment.decode, None)
    cap = min(decode.sequences_fitting(shape.input_tokens + shape.output_tokens),
              decode.limits.max_num_seqs * deployment.decode.attention_dp)
    workers = max(1, math.ceil(users / max(cap, 1)))
    return replace(deployment, decode=replace(deployment.decode, workers=workers))


def load_disagg_points(book: Pricebook) -> tuple[list[DisaggPoint], list[SkippedDisaggRow]]:
    points: list[DisaggPoint] = []
    skipped: list[SkippedDisaggRow] = []
    with (DATA_DIR / DISAGG_FILE).open() as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        try:
            point = _point(book, row)
        except (UnknownEntryError, KeyError, ValueError) as exc:
            skipped.append(SkippedDisaggRow(row["id"], str(exc)))
            continue
        reason = disagg_infeasibility(point.model, point.deployment, point.shape)
        if reason or not (math.isfinite(point.ttft_ms) and math.isfinite(point.tpot_ms)):
            skipped.append(SkippedDisaggRow(row["id"], reason or "no measurement"))
            continue
        points.append(point)
    return points, skipped
