"""explain.rejection_reasons: the most telling reason of each GPU type first, dominated ones left out."""

from __future__ import annotations

from solver.domain import Precision
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
