"""The mixed-stream model and the pool sharing rule built on it (``solver.perf.mixed``).

The rule (``mix_miss``) is checked against the timing read off here, over many mixes of chat,
long-prompt and short requests around the linear rule's boundary; for one size it agrees with
the single-stream capacity.
"""

from __future__ import annotations

import itertools
import random

import pytest

from pricebook import catalog, load_default
from solver.domain import ModelRef, Precision, Sla
from solver.perf import Deployment, WorkloadShape, capacity_at_sla, resolve_model
from solver.perf.inference import Replica, build_replica
from solver.perf.mixed import mix_miss, mix_scale, mixed_open_loop_timing
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


def _misses(replica: Replica, streams: list[tuple[WorkloadShape, float]], sla: Sla) -> bool:
    """Whether the mixed-stream timing misses a target of ``sla``, read off the timing here."""
    timing = mixed_open_loop_timing(replica, streams)
    if timing is None:
        return True
    ttft = sla.ttft_p95_ms is not None and max(timing.ttft_p95_s) * 1e3 > sla.ttft_p95_ms
    tpot = sla.tpot_p95_ms is not None and timing.tpot_s * 1e3 > sla.tpot_p95_ms
    speed = sla.min_per_user_tok_s is not None and 1.0 / timing.tpot_s < sla.min_per_user_tok_s
    return ttft or tpot or speed


@pytest.mark.parametrize(("deployment", "sla"), list(itertools.product(DEPLOYMENTS, SLAS)))
def test_one_size_at_its_single_stream_capacity_meets_the_rule(
    deployment: tuple[str, str, int, Precision], sla: Sla
) -> None:
    """The sharing rule is never stricter than the linear rule for a pool of one size: a replica at
    its ``capacity_at_sla`` meets it."""
    model, dep, replica = _setup(*deployment)
    for shape in SIZES:
        cap = capacity_at_sla(model, dep, shape, sla)
        if cap.feasible:
            assert mix_miss(replica, [(shape, cap.max_request_rate_per_s)], sla) == "", shape


@pytest.mark.parametrize(("deployment", "sla"), list(itertools.product(DEPLOYMENTS, SLAS)))
def test_the_rule_rejects_exactly_the_mixes_the_timing_misses(
    deployment: tuple[str, str, int, Precision], sla: Sla
) -> None:
    """Mixes around the linear rule's boundary (Σ x/cap from 0.5 to 1.5): ``mix_miss`` rejects a
    mix if and only if its timing misses a target, and ``mix_scale`` is where it starts to."""
    model, dep, replica = _setup(*deployment)
    caps = [capacity_at_sla(model, dep, s, sla) for s in SIZES]
    served = [i for i, c in enumerate(caps) if c.feasible]
    rng = random.Random(28)
    for mix in _mixes(len(served), rng):
        load = rng.uniform(0.5, 1.5)
        streams = [
            (SIZES[i], load * f * caps[i].max_request_rate_per_s) for i, f in zip(served, mix, strict=True)
        ]
        streams = [(shape, rate) for shape, rate in streams if rate > 0]
        assert bool(mix_miss(replica, streams, sla)) == _misses(replica, streams, sla), (mix, load)
        scale = mix_scale(replica, streams, sla)
        assert not _misses(replica, [(s, r * scale) for s, r in streams], sla)
        if scale < 1.0:
            assert _misses(replica, [(s, r * scale * 1.01) for s, r in streams], sla)
