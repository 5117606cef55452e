"""explain.rejection_reasons: the most telling reason of each GPU type first, dominated ones left out;
deployments named as TP groups or MIG slices."""

from __future__ import annotations

from bench.solver_scaling import seed_500m_krw_request
from pricebook.loader import load_default
from solver.domain import Constraints, PlanRequest, Precision
from solver.optimizer.candidates import build_instance
from solver.optimizer.explain import rejection_reasons
from solver.optimizer.instance import CandidateRejection


def _r(gpu: str, tp: int, reason: str, dominated_by: str = "") -> CandidateRejection:
    return CandidateRejection("w", gpu, tp, Precision.BF16, reason, dominated_by)


def test_each_gpu_leads_with_its_sla_miss_and_domain_limits_come_last() -> None:
    reasons = rejection_reasons(
        [
            _r("a-gpu", 8, "TP 8 exceeds the largest NVLink/P2P domain on offer (4 GPUs)"),
            _r("a-gpu", 1, "needs 200 GB of weights; holds 75 GB"),
            _r("b-gpu", 4, "21.0 tok/s per user is below the 30 tok/s target"),
            _r("a-gpu", 2, "TPOT 45 ms exceeds the 40 ms target"),
            _r("b-gpu", 2, "works", dominated_by="b-gpu TP4"),
        ]
    )
    assert reasons == (
        "b-gpu TP4 bf16: 21.0 tok/s per user is below the 30 tok/s target",
        "a-gpu TP2 bf16: TPOT 45 ms exceeds the 40 ms target",
        "a-gpu TP1 bf16: needs 200 GB of weights; holds 75 GB",
        "a-gpu TP8 bf16: TP 8 exceeds the largest NVLink/P2P domain on offer (4 GPUs)",
    )


def test_the_list_is_capped() -> None:
    many = [_r(f"gpu-{i:02d}", 1, "needs 1 GB more") for i in range(30)]
    assert len(rejection_reasons(many, limit=5)) == 5


def test_a_mig_slice_is_named_as_a_slice_not_as_tp1() -> None:
    # Qwen3-Embedding-8B at bf16 has 16 GB of weights: more than an H200's 1/7 slice (141 GB / 8
    # memory slices) holds, so the slice is turned away — and must be called one.
    seed_embeddings = next(w for w in seed_500m_krw_request().inference if w.name == "embeddings")
    embeddings = seed_embeddings.model_copy(update={"precision": Precision.BF16})
    request = PlanRequest(inference=(embeddings,), constraints=Constraints(allowed_gpus=("H200",)))
    instance = build_instance(request, load_default())
    slices = [r for r in instance.rejections_of("embeddings") if r.mig_slice == 7]
    assert slices, "the 1/7 slice should be turned away for its memory"
    assert all(r.label == "h200-sxm MIG 1/7 bf16" for r in slices)
    assert any(line.startswith("h200-sxm MIG 1/7 bf16: ") for line in rejection_reasons(slices))
    whole = [r for r in instance.rejections_of("embeddings") if not r.mig_slice]
    assert all(r.label.startswith(f"h200-sxm TP{r.tp} ") for r in whole)
