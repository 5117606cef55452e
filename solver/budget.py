"""How one planning call divides its time limit among its stages (``TimeBudget``), and what each
stage used (``StageTime``, in the answer's solver statistics).

One policy object instead of shares spread over modules: the planner (``solver.planner.plan``),
the headroom search (``solver.planner.headroom``) and the what-if searches
(``solver.analysis.whatif``) read their shares from ``DEFAULT_BUDGET``. Shares inside one solve
(the warm start without pools, the runner-up reserve, the clustered-hours bound) belong to that
solve's own time limit and stay with the optimizer (``solver.optimizer``).

The shares chain: the main solve gets ``main_solve`` of the call's time limit (at most the
request's own ``time_limit_s``); baselines, headroom and sensitivity all end by ``extras_end`` of
it; baselines get ``baselines`` of what is left after the main solve (all of it without
sensitivity), headroom ``headroom`` of what is left after them, sensitivity the rest; a plan sized
at another capacity quantile re-solves at p50 in ``p50_resolve`` of what is left at the end.
"""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TimeBudget:
    """Shares of a planning call's time limit (fractions) and the shortest solves worth starting."""

    main_solve: float = 0.7
    """Share of the call's time limit the main solve may use (the rest: baselines, sensitivity)."""
    baselines: float = 0.4
    """Share of the time left after the main solve that baselines may use (sensitivity: the rest)."""
    headroom: float = 0.4
    """Share of the time left after the baselines that the headroom searches may use."""
    headroom_hints: float = 0.15
    """Share of the headroom time the evaluator's maximise-α solve (first probes) may use."""
    headroom_overall: float = 0.35
    """Share of what is left after those that the search over every workload together may use."""
    extras_end: float = 0.95
    """Baselines, headroom and sensitivity end by this share of the call's time limit (the rest
    is for assembling the answer)."""
    p50_resolve: float = 0.5
    """Share of the time left at the end that the p50 re-solve (a plan sized at another capacity
    quantile) may use."""
    min_solve_s: float = 0.05
    """No solve is started with less time than this."""
    min_probe_s: float = 0.2
    """No baseline or sensitivity probe is started with less time than this."""

    def main_solve_limit(self, remaining_s: float, request_limit_s: float, *, with_extras: bool) -> float:
        """Seconds the main solve may use, ``remaining_s`` being what is left of the call."""
        return min(request_limit_s, self.main_solve_share_of(remaining_s, with_extras=with_extras))

    def main_solve_share_of(self, remaining_s: float, *, with_extras: bool) -> float:
        """The main solve's share of ``remaining_s`` (all of it without extras)."""
        return max(self.min_solve_s, remaining_s) * (self.main_solve if with_extras else 1.0)

    def extras_deadline(self, started: float, time_limit_s: float) -> float:
        """When baselines, headroom and sensitivity must end (``time.monotonic()`` instant)."""
        return started + time_limit_s * self.extras_end

    def baselines_deadline(self, deadline: float, *, with_sensitivity: bool) -> float:
        """When the baselines must end, starting now, the extras ending at ``deadline``."""
        return _share_until(deadline, self.baselines if with_sensitivity else 1.0)

    def headroom_deadline(self, deadline: float) -> float:
        return _share_until(deadline, self.headroom)

    def p50_limit(self, time_left_s: float) -> float:
        return time_left_s * self.p50_resolve


def _share_until(deadline: float, share: float) -> float:
    now = time.monotonic()
    return now + max(0.0, deadline - now) * share


DEFAULT_BUDGET = TimeBudget()


@dataclass(frozen=True, slots=True)
class StageTime:
    """What one stage of a planning call used: wall-clock seconds, CPU seconds of the whole
    process while it ran (every thread's, so solves side by side count twice), and the seconds
    the budget gave it (0 when it has no share of its own)."""

    stage: str
    wall_s: float
    cpu_s: float
    budget_s: float = 0.0


class StageClock:
    """Times the stages of one call, in the order they ran."""

    def __init__(self) -> None:
        self.stages: list[StageTime] = []

    def timed(self, stage: str, budget_s: float = 0.0) -> _Timing:
        return _Timing(self, stage, budget_s)


class _Timing:
    def __init__(self, clock: StageClock, stage: str, budget_s: float) -> None:
        self._clock = clock
        self._stage = stage
        self._budget_s = budget_s
        self._wall = 0.0
        self._cpu = 0.0

    def __enter__(self) -> None:
        self._wall = time.perf_counter()
        self._cpu = time.process_time()

    def __exit__(self, *exc: object) -> None:
        self._clock.stages.append(
            StageTime(
                self._stage,
                wall_s=time.perf_counter() - self._wall,
                cpu_s=time.process_time() - self._cpu,
                budget_s=max(0.0, self._budget_s),
            )
        )
