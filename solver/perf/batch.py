"""Batch what-ifs without repeated set-up (issue 16: 100,000 cases in ≤ 30 s): caching only.

``estimate_inference`` builds a ``Replica`` (model physics, GPU physics, engine limits, calibrated
factors, and the memory sums its cached properties hold) for every call. Across a batch of cases
most (model, deployment) pairs repeat with other loads and lengths, so ``estimate_inference_cached``
builds each replica once and reuses it; everything after that is ``estimate_inference``'s own code
path (``inference._estimate``), so the numbers are the same (``tests/solver/perf/test_batch.py``
checks that over a sample of cases). No formula here.
"""

from __future__ import annotations

from pricebook.schema import ModelArch
from solver.perf import inference
from solver.perf.calibration import Calibration, load_calibration
from solver.perf.inference import Deployment, InferenceEstimate, Load, Replica, WorkloadShape, build_replica
from solver.perf.physics import ModelPhysics, model_physics

REPLICA_CACHE_LIMIT = 8192
"""Replicas kept (a few kB each); the cache is emptied when full."""

_replicas: dict[tuple[int, Deployment, Calibration], tuple[ModelPhysics, Replica]] = {}


def cached_replica(
    model: ModelArch, deployment: Deployment, calibration: Calibration | None = None
) -> Replica:
    """``build_replica(model, deployment, calibration)``, built once per model physics, deployment
    and calibration (the physics object is kept with the replica, so its id cannot be reused)."""
    cal = calibration or load_calibration()
    physics = model_physics(model)
    key = (id(physics), deployment, cal)
    hit = _replicas.get(key)
    if hit is not None and hit[0] is physics:
        return hit[1]
    replica = build_replica(model, deployment, cal)
    if len(_replicas) >= REPLICA_CACHE_LIMIT:
        _replicas.clear()
    _replicas[key] = (physics, replica)
    return replica


def estimate_inference_cached(
    model: ModelArch, deployment: Deployment, shape: WorkloadShape, load: Load
) -> InferenceEstimate:
    """``inference.estimate_inference(model, deployment, shape, load)`` on a cached replica."""
    return inference._estimate(cached_replica(model, deployment), shape, load, deployment.describe())
