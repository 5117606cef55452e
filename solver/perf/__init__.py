"""Performance model: calibrated analytic estimates of LLM inference and training (DESIGN §3).

Public API (see docs/ARCHITECTURE.md):

* ``resolve_model(ref, book)`` — catalogue id/alias, inline spec, or size-only spec (assumed);
* ``Deployment``, ``WorkloadShape``, loads ``ClosedLoop`` / ``OpenLoop`` / ``OfflineMax``;
* ``estimate_inference(model, deployment, shape, load) -> InferenceEstimate``;
* ``capacity_at_sla(model, deployment, shape, sla) -> Capacity`` (cached; what the optimizer uses;
  ``cached=False`` for the plan evaluator, which must not read the builder's answers);
* ``estimate_training(model, gpu, num_gpus, method, seq_len, tokens) -> TrainingEstimate``;
* ``solver.perf.cases.estimate_cases(lines, book)`` — batch what-ifs (JSONL in, dicts out).
"""

from solver.perf.capacity import Capacity, capacity_at_sla
from solver.perf.engines import default_kv_precision
from solver.perf.inference import (
    Bottleneck,
    ClosedLoop,
    Deployment,
    InferenceEstimate,
    Load,
    MemoryBreakdown,
    OfflineMax,
    OpenLoop,
    WorkloadShape,
    decode_upper_bound_tok_s,
    estimate_inference,
)
from solver.perf.models import resolve_model
from solver.perf.training import TrainingEstimate, estimate_training, min_gpus_to_fit

__all__ = [
    "Bottleneck",
    "Capacity",
    "ClosedLoop",
    "Deployment",
    "InferenceEstimate",
    "Load",
    "MemoryBreakdown",
    "OfflineMax",
    "OpenLoop",
    "TrainingEstimate",
    "WorkloadShape",
    "capacity_at_sla",
    "decode_upper_bound_tok_s",
    "default_kv_precision",
    "estimate_inference",
    "estimate_training",
    "min_gpus_to_fit",
    "resolve_model",
]
