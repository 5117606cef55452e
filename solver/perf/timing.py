"""What a load regime yields on one replica: mean/median/p95 TTFT, TPOT, rate, concurrency."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from solver.perf.replica import Bottleneck

P95_TAIL = 0.05


@dataclass(frozen=True, slots=True)
class Timing:
    ttft_s: float
    ttft_p95_s: float
    tpot_s: float
    req_s: float
    concurrency: float
    decode_step_s: float
    bottleneck: Bottleneck
    ttft_median_s: float = math.nan
    """Only where it differs from the mean (open loop); NaN = the mean."""


def with_request_overhead(timing: Timing, overhead_s: float) -> Timing:
    """Every first token also carries the request's fixed cost outside the engine's iterations
    (the steady closed loop adds it inside, where it also lengthens each user's cycle)."""
    median = timing.ttft_median_s + overhead_s if not math.isnan(timing.ttft_median_s) else math.nan
    return replace(
        timing,
        ttft_s=timing.ttft_s + overhead_s,
        ttft_p95_s=timing.ttft_p95_s + overhead_s,
        ttft_median_s=median,
    )
