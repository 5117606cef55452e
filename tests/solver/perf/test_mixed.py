"""The mixed-stream model and the pool sizing rule built on it (``solver.perf.mixed``).

The rule's promise is checked against the mixed-stream simulation, not against the rule's own
arithmetic: replicas loaded to exactly 1.0 by Σ x_l / cap_l, over many mixes of chat, long-prompt
and short requests, meet every target of the pool's SLA when simulated as one mixed stream.
"""

from __future__ import annotations

import itertools
import random

import pytest

from pricebook import catalog, load_default
from solver.domain import ModelRef, Precision, Sla
from solver.perf import Deployment, WorkloadShape, capacity_at_sla, resolve_model
from solver.perf.inference import build_replica
from solver.perf.mixed import mixed_open_loop_timing, pool_capacities
from solver.perf.regimes import open_loop_fixed_point

BOOK = load_default()
CHAT = WorkloadShape(300, 200)
LONG_PROMPT = WorkloadShape(6000, 300)
EVEN = WorkloadShape(1000, 1000)
TINY = WorkloadShape(100, 20)
SIZES = (CHAT, LONG_PROMPT, EVEN, TINY)
DEPLOYMENTS = (
    ("meta-llama/Llama-3.1-8B", "h100-sxm", 1, Precision.FP8),
    ("meta-llama/Llama-3.1-70B", "h100-sxm", 4, Precision.FP8),
    ("meta-llama/Llama-3.1-8B", "l40s", 1, Precision.FP8),
    ("Qwen/Qwen3-14B", "rtx-pro-6000-server", 1, Precision.FP8),
)
SLAS = (
    Sla(ttft_p95_ms=2000, tpot_p95_ms=50),
    Sla(ttft_p95_ms=500, tpot_p95_ms=30),
    Sla(tpot_p95_ms=40),
    Sla(ttft_p95_ms=3000, min_per_user_tok_s=20),
)


def _setup(model_id: str, gpu: str, tp: int, precision: Precision):  # type: ignore[no-untyped-def]
    model = resolve_model(ModelRef(model_id=model_id), BOOK)
    dep = Deployment(gpu=catalog.gpu(BOOK, gpu), tp=tp, precision=precision)
    return model, dep, build_replica(model, dep, None)


def _mixes(count: int, rng: random.Random) -> list[list[float]]:
    """Corners, pairwise halves and random points of the simplex over ``count`` sizes."""
    corners = [[1.0 if i == j else 0.0 for i in range(count)] for j in range(count)]
    halves = [
        [0.5 if i in pair else 0.0 for i in range(count)] for pair in itertools.combinations(range(count), 2)
    ]
    points = []
    for _ in range(25):
        v = [rng.random() for _ in range(count)]
        points.append([x / sum(v) for x in v])
    return corners + halves + points


@pytest.mark.parametrize("shape", SIZES)
def test_one_stream_is_the_single_stream_model(shape: WorkloadShape) -> None:
    _, _, replica = _setup(*DEPLOYMENTS[0])
    for rate in (0.5, 2.0, 5.0):
        alone = open_loop_fixed_point(replica, shape, rate)  # the model mixed.py extends
        mixed = mixed_open_loop_timing(replica, [(shape, rate)])
        if alone is None:
            continue
        assert mixed is not None
        assert mixed.tpot_s == pytest.approx(alone.tpot_s, rel=2e-3)
        assert mixed.ttft_p95_s[0] == pytest.approx(alone.ttft_p95_s, rel=2e-3)
        assert mixed.concurrency == pytest.approx(alone.concurrency, rel=2e-3)


def test_a_short_prompt_waits_behind_long_prefills() -> None:
    """Why the plain linear rule is not enough: the short requests' p95 TTFT in a mix exceeds what
    they see alone at the same rate."""
    _, _, replica = _setup(*DEPLOYMENTS[0])
    alone = mixed_open_loop_timing(replica, [(TINY, 40.0)])
    mixed = mixed_open_loop_timing(replica, [(TINY, 40.0), (LONG_PROMPT, 3.0)])
    assert alone is not None and mixed is not None
    assert mixed.ttft_p95_s[0] > 1.5 * alone.ttft_p95_s[0]


@pytest.mark.slow
@pytest.mark.parametrize(("deployment", "sla"), list(itertools.product(DEPLOYMENTS, SLAS)))
def test_a_replica_loaded_to_one_by_the_rule_meets_every_target(
    deployment: tuple[str, str, int, Precision], sla: Sla
) -> None:
    model, dep, replica = _setup(*deployment)
    caps = pool_capacities(model, dep, SIZES, sla)
    served = [i for i, c in enumerate(caps) if c.feasible and c.max_request_rate_per_s > 0]
    alone = [capacity_at_sla(model, dep, s, sla) for s in SIZES]
    for i in served:  # the rule never promises more than a size gets alone
        assert caps[i].max_request_rate_per_s <= alone[i].max_request_rate_per_s * (1 + 1e-12)
    for mix in _mixes(len(served), random.Random(20)):
        streams = [(SIZES[i], f * caps[i].max_request_rate_per_s) for i, f in zip(served, mix, strict=True)]
        timing = mixed_open_loop_timing(replica, streams)
        assert timing is not None, mix
        for (shape, rate), ttft in zip(streams, timing.ttft_p95_s, strict=True):
            if rate > 0 and sla.ttft_p95_ms is not None:
                assert ttft * 1e3 <= sla.ttft_p95_ms * (1 + 1e-3), (shape, mix)
        if sla.tpot_p95_ms is not None:
            assert timing.tpot_s * 1e3 <= sla.tpot_p95_ms * (1 + 1e-3), mix
        if sla.min_per_user_tok_s is not None:
            assert 1.0 / timing.tpot_s >= sla.min_per_user_tok_s * (1 - 1e-3), mix


def test_identical_sizes_keep_their_single_stream_capacity() -> None:
    model, dep, _ = _setup(*DEPLOYMENTS[0])
    sla = SLAS[0]
    caps = pool_capacities(model, dep, (CHAT, CHAT), sla)
    alone = capacity_at_sla(model, dep, CHAT, sla)
    assert all(c.max_request_rate_per_s == alone.max_request_rate_per_s for c in caps)


def test_batch_pools_time_share_exactly() -> None:
    model, dep, _ = _setup(*DEPLOYMENTS[0])
    caps = pool_capacities(model, dep, SIZES, Sla())
    assert [c.max_request_rate_per_s for c in caps] == [
        capacity_at_sla(model, dep, s, Sla()).max_request_rate_per_s for s in SIZES
    ]
