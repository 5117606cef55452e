"""The disaggregated model: KV transfer bytes and links, attention DP, the closed loop against a
brute-force solve, and the directions physics fixes (more decode engines, more users)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from pricebook import catalog
from pricebook.loader import load_default
from pricebook.schema import ModelArch, Pricebook
from solver.domain import Engine, Precision
from solver.perf.disagg import (
    DisaggDeployment,
    Pool,
    engine_replica,
    estimate_disagg,
    kv_transfer,
    load_disagg_calibration,
    raw_physics,
)
from solver.perf.rack_gpus import rack_gpu, rack_scale_out_gbps
from solver.perf.replica import WorkloadShape

LOCAL_CONFIGS = Path(__file__).resolve().parents[3] / "solver/perf/calibration_data/aic/model_configs"


@pytest.fixture(scope="module")
def book() -> Pricebook:
    return load_default()


@pytest.fixture(scope="module")
def v3(book: Pricebook) -> ModelArch:
    return catalog.model(book, "deepseek-ai/DeepSeek-V3")


def _gb200() -> Pool:
    spec = rack_gpu("gb200")
    assert spec is not None
    return Pool(spec, tp=4)


def _deployment(prefill: Pool, decode: Pool, **kw: object) -> DisaggDeployment:
    return DisaggDeployment(prefill, decode, precision=Precision.FP8, kv_precision=Precision.FP8,
                            engine=Engine.TRTLLM, engine_version="1.2", **kw)  # type: ignore[arg-type]


def test_kv_bytes_per_request_follow_the_mla_layout_of_the_hf_config(v3: ModelArch) -> None:
    config = json.loads((LOCAL_CONFIGS / "deepseek-ai--DeepSeek-V3_config.json").read_text())
    # MLA caches the latent plus the decoupled RoPE key per layer; FP8: 1 byte each
    per_token = config["num_hidden_layers"] * (config["kv_lora_rank"] + config["qk_rope_head_dim"])
    pool = _gb200()
    transfer = kv_transfer(v3, _deployment(pool, pool), WorkloadShape(8192, 1024))
    assert transfer.bytes_per_request == pytest.approx(8192 * per_token)


def test_pools_in_one_nvl72_rack_move_kv_over_nvlink_and_hgx_boards_over_the_nic(
    v3: ModelArch, book: Pricebook
) -> None:
    rack = _gb200()
    shape = WorkloadShape(1024, 1024)
    inside = kv_transfer(v3, _deployment(rack, Pool(rack.gpu, tp=8, workers=4)), shape)
    assert inside.link == "nvlink"
    assert inside.gbytes_s == pytest.approx(4 * 1800 / 2)  # 4 sending GPUs × NVLink5 one way
    h100 = catalog.gpu(book, "h100-sxm")
    across = kv_transfer(v3, _deployment(Pool(h100, tp=8), Pool(h100, tp=8), scale_out_gbps=400.0), shape)
    assert across.link == "network"  # 16 GPUs do not fit one 8-GPU NVLink board
    assert across.gbytes_s == pytest.approx(8 * 400 / 8)
    assert rack_scale_out_gbps("gb300") == 800.0


def test_attention_dp_keeps_one_copy_of_the_mla_latent_per_rank(v3: ModelArch) -> None:
    gpu = _gb200().gpu
    tp8 = _deployment(Pool(gpu, tp=8), Pool(gpu, tp=8))
    dp8 = _deployment(Pool(gpu, tp=1, attention_dp=8, ep=8), Pool(gpu, tp=1, attention_dp=8, ep=8))
    assert engine_replica(v3, tp8, tp8.decode, None).kv_replication == 8.0
    assert engine_replica(v3, dp8, dp8.decode, None).kv_replication == 1.0
    full = 2048
    assert engine_replica(v3, dp8, dp8.decode, None).sequences_fitting(full) > 7 * engine_replica(
        v3, tp8, tp8.decode, None).sequences_fitting(full)


def test_the_closed_loop_matches_a_brute_force_solve(v3: ModelArch) -> None:
    """Bisection on the balance with the decode iteration evaluated directly (no grid)."""
    gpu = _gb200().gpu
    deployment = _deployment(Pool(gpu, tp=4, workers=2), Pool(gpu, tp=8, workers=2))
    shape, users = WorkloadShape(4096, 512), 96
    f = load_disagg_calibration().factors(Engine.TRTLLM, Precision.FP8)
    raw = raw_physics(v3, deployment, shape, users)
    decode = engine_replica(v3, deployment, deployment.decode, None)
    context = shape.input_tokens + shape.output_tokens / 2

    def tpot(b: float) -> float:
        single = decode.dp_step(1.0, context)
        return single * f.decode_scale + max(decode.dp_step(b, context) - single, 0.0) * f.decode_batch_scale

    def first(rate: float, b: float) -> float:
        rho = rate * f.prefill_scale / raw.prefill_rate
        wait = f.queue_wait * raw.prefill_batch_s * f.prefill_scale * rho / (1 - rho) if rho < 1 else math.inf
        slots = raw.decode_slots
        busy = float(min(b / slots, 1.0) ** slots)
        slot = f.slot_wait * busy * (shape.output_tokens - 1) * tpot(b) / (slots + 1)
        return (f.request_overhead_s + wait + raw.prefill_alone_s * f.prefill_scale
                + raw.transfer_s / f.transfer_efficiency + slot + f.admission_steps * tpot(b))

    low, high = 1e-6, users / 2
    for _ in range(100):
        b = (low + high) / 2
        rate = 2 * b / ((shape.output_tokens - 1) * tpot(b))
        if rate * first(rate, b) + 2 * b > users:
            high = b
        else:
            low = b
    estimate = estimate_disagg(v3, deployment, shape, users)
    assert estimate.timing.decode_batch == pytest.approx(low, rel=0.01)
    assert estimate.timing.tpot_s == pytest.approx(tpot(low), rel=0.01)
    # Little's law over the whole loop
    cycle = estimate.timing.ttft_s + (shape.output_tokens - 1) * estimate.timing.tpot_s
    assert estimate.timing.req_s * cycle == pytest.approx(users, rel=0.01)
    assert estimate.output_tok_s_per_gpu == pytest.approx(estimate.timing.req_s * 512 / (2 * 4 + 2 * 8))


def test_more_decode_engines_lower_tpot_and_more_users_raise_it(v3: ModelArch) -> None:
    gpu = _gb200().gpu
    shape = WorkloadShape(1024, 1024)
    one = estimate_disagg(v3, _deployment(Pool(gpu, tp=4), Pool(gpu, tp=8)), shape, 256)
    two = estimate_disagg(v3, _deployment(Pool(gpu, tp=4), Pool(gpu, tp=8, workers=2)), shape, 256)
    assert two.timing.tpot_s < one.timing.tpot_s
    more = estimate_disagg(v3, _deployment(Pool(gpu, tp=4), Pool(gpu, tp=8)), shape, 1024)
    assert more.timing.tpot_s > one.timing.tpot_s
    assert one.timing.ttft_s > one.timing.prefill_s + one.timing.transfer_s


def test_a_pool_that_cannot_hold_the_weights_is_infeasible_in_words(v3: ModelArch) -> None:
    gpu = _gb200().gpu
    deployment = _deployment(Pool(gpu, tp=1), Pool(gpu, tp=8))
    estimate = estimate_disagg(v3, deployment, WorkloadShape(1024, 1024), 8)
    assert not estimate.feasible
    assert "prefill engine" in estimate.reason and "GB of weights" in estimate.reason


def test_pool_layout_is_validated() -> None:
    gpu = _gb200().gpu
    with pytest.raises(ValueError, match="ep 3"):
        Pool(gpu, tp=4, ep=3)
    with pytest.raises(ValueError, match="workers"):
        Pool(gpu, tp=4, workers=0)
