"""LP-guided restricted MIP: a primal heuristic that runs beside the full fleet MIP.

Why it exists (``bench/solver_scaling.py`` portfolios, this 2-core machine): on 100 workloads the
full model's SCIP run was still 2.5 % from its bound after 300 s, with a plan costing 23.82 M USD.
Its LP relaxation uses only 266 of the 2 662 candidate deployments; the same MIP with every other
replica variable fixed to 0 is a tenth of the size, and SCIP finds a 23.59 M plan in it in 4 s
(23.39 M proven optimal *for the restricted model* in 18 s). On 200 workloads: 91.8 M in 16 s
against 102.2 M from the full model in 20 s.

How it stays exact where it matters:

- The restricted model is the full model with extra bounds (``r_cb = 0`` for replicas the LP left
  at 0), so every plan it finds is a plan of the full model: its cost is a valid upper bound.
- Lower bounds only ever come from the full model: the LP relaxation solved here, and SCIP's
  bound on the full MIP, which runs at the same time on the other core (``driver.solve_mip``).
  A plan is reported optimal only when it is within the requested gap of that bound.

Both solvers are loaded from one exported ``MPModelProto``, so variable ``i`` is the same variable
in the full model, the LP and the restricted MIP (values map by index, no second Python build).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import structlog
from ortools.linear_solver import linear_solver_pb2, pywraplp

log = structlog.get_logger(__name__)

LP_SHARE_OF_TIME = 0.4
"""At most this share of the time limit goes to the LP relaxation (GLOP; ~1.4 s at 100 workloads,
~2.5 s at 200); the rest to the restricted MIP."""
USED_IN_LP = 1e-6
"""A replica variable above this LP value is "used by the LP"."""
KEPT_VARS_BUDGET = 1600
"""Largest restricted model (replica variables) solved first. Measured at 18 s on the benchmark
portfolios: 50 workloads 7.01 M with 2 extra candidates per workload (1 494 variables) against
7.08 M with 1 and 7.23 M with none; 100 workloads 23.40 M with none (1 596) against 23.68 M with
1 (2 196). Wider models are better plans in principle but SCIP gets less far in them in time."""
MAX_EXTRA = 4
"""At most this many unused candidates per workload are added (rounds after the first), cheapest
alone first (``SearchCandidate.cost_alone``). Measured against the LP's reduced cost as the order
(the earlier rule) on eight benchmark portfolios (20, 50 and 100 workloads with seeds 7 and 8, 50
with seed 9, 200 with seed 7; the search alone, 18 s): plans 0.03–1.07 % cheaper on five (50
workloads seed 7: 6.970 M instead of 7.046 M; 200 workloads: 91.65 M instead of 91.86 M), the same
on one, 0.01 % and 0.2 % dearer on two. The best 120 s plan of the 50-workload portfolio used 39
candidates the LP left at 0: 24 of them were their workload's cheapest alone, 15 had the smallest
reduced cost. Reduced costs of unused candidates are mostly ~1e-5 of a cost unit: the LP hardly
tells them apart, while the whole-replica cost does."""
FIRST_ROUND_SHARE = 0.35
"""When even the LP-used candidates exceed the budget, a first round keeps only the replica
variables the LP uses and gets at most this share of the time left. Measured on the 200-workload
portfolio: 92.6 M after 7.7 s, then the candidate round from that hint 91.8 M at 16 s, where the
candidate round alone had 92.2 M."""
PRIMAL_HEURISTICS = (
    "heuristics/rins/freq = 5\n"
    "heuristics/rens/freq = 5\n"
    "heuristics/crossover/freq = 5\n"
    "heuristics/alns/freq = 5\n"
    "heuristics/gins/freq = 10\n"
    "heuristics/dins/freq = 10\n"
    "heuristics/localbranching/freq = 10\n"
    "heuristics/mutation/freq = 10\n"
)
"""SCIP's large-neighbourhood heuristics run more often in the restricted rounds, whose only job
is plans (the bound comes from the full model). Measured on nine benchmark portfolios (20 and 50
workloads with seeds 7, 8, 9; 100 with seeds 7, 8; 200 with seed 7; the search alone, 20 s): the
plan 0.04–1.6 % cheaper on seven, the same on one, 0.26 % dearer on one (100 workloads, seed 7)."""
MIN_ROUND_SECONDS = 0.3
READ_BACK_S = 0.3
"""Seconds a round keeps back for SCIP's overshoot of its limit and reading the plan back."""


@dataclass(frozen=True, slots=True)
class SearchCandidate:
    """One candidate deployment as the search sees it."""

    workload: str
    replica_indices: tuple[int, ...]
    """Its replica variables' indices in the model (one per bucket)."""
    cost_alone: float
    """Cost of serving the workload on this candidate alone with whole replicas
    (``solver.optimizer.model.cost_alone``): the order in which unused candidates are added."""


@dataclass(frozen=True, slots=True)
class RestrictedResult:
    """A plan of the full model found in the restricted one (values by variable index)."""

    objective: float
    """In the model's cost units (the full model's objective at this point)."""
    values: tuple[float, ...]
    lp_bound: float | None
    """LP relaxation of the *full* model: a valid lower bound (None if the LP did not finish)."""
    proven_in_restriction: bool
    """Optimal for the restricted model (not a statement about the full model)."""
    kept_replica_vars: int
    seconds: float


class LpGuidedSearch:
    """Solve the full model's LP, then MIPs restricted to what the LP uses, in rounds of growing
    size (``_rounds``), each warm-started from the best plan so far.

    ``interrupt()`` may be called from any thread (cancellation, or the full MIP finishing first);
    the search then stops at its next check or inside the running solver.
    """

    def __init__(
        self,
        model: linear_solver_pb2.MPModelProto,
        candidates: Sequence[SearchCandidate],
        *,
        relative_gap: float,
        solver_parameters: str,
    ) -> None:
        self._model = model
        self._candidates = tuple(candidates)
        self._relative_gap = relative_gap
        self._solver_parameters = solver_parameters
        self._lock = threading.Lock()
        self._running: Any = None
        self._stopped = False
        self.lp_bound: float | None = None

    def interrupt(self) -> None:
        with self._lock:
            self._stopped = True
            if self._running is not None:
                self._running.InterruptSolve()

    def _start(self, solver: Any) -> bool:
        with self._lock:
            if self._stopped:
                return False
            self._running = solver
            return True

    def _finish(self) -> None:
        with self._lock:
            self._running = None

    def run(self, time_limit_s: float) -> RestrictedResult | None:
        """The best restricted plan, or None (stopped, out of time, or none found)."""
        started = time.perf_counter()
        deadline = started + time_limit_s
        lp = pywraplp.Solver.CreateSolver("GLOP")
        if lp is None or lp.LoadModelFromProto(self._model):  # pragma: no cover - OR-Tools build issue
            return None
        lp.SuppressOutput()
        lp.SetTimeLimit(max(1, int(time_limit_s * LP_SHARE_OF_TIME * 1000)))
        if not self._start(lp):
            return None
        try:
            lp_code = lp.Solve()
        finally:
            self._finish()
        if lp_code != pywraplp.Solver.OPTIMAL:
            return None
        self.lp_bound = float(lp.Objective().Value())
        lp_vars = lp.variables()
        rounds = self._rounds([lp_vars[i].solution_value() for i in range(len(lp_vars))])
        best: RestrictedResult | None = None
        for keep, share in rounds:
            if self._stopped:
                break
            round_deadline = time.perf_counter() + (deadline - time.perf_counter()) * share
            if round_deadline - time.perf_counter() < MIN_ROUND_SECONDS:
                break
            found = self._solve_restricted(keep, best, round_deadline, started)
            if found is not None and (best is None or found.objective <= best.objective):
                best = found
        if best is not None:
            log.debug(
                "lp_guided_plan",
                objective=best.objective,
                lp_bound=self.lp_bound,
                kept_replica_vars=best.kept_replica_vars,
                replica_vars=sum(len(c.replica_indices) for c in self._candidates),
                proven_in_restriction=best.proven_in_restriction,
                seconds=round(best.seconds, 3),
            )
        return best

    def _rounds(self, lp_value: Sequence[float]) -> list[tuple[set[int], float]]:
        """Restricted models to solve in turn (replica variable indices kept, share of the time
        left), each containing the one before so a round's plan is a hint for the next.

        - Every bucket of each candidate the LP uses, plus the K unused candidates of each
          workload that are cheapest alone (``SearchCandidate.cost_alone``), for the largest
          K ≤ ``MAX_EXTRA`` keeping the model within ``KEPT_VARS_BUDGET`` replica variables;
        - before it, when even K = 0 exceeds the budget, only the replica variables the LP uses;
        - after it, K + 1, K + 2, … while time is left (reached when a round is proven early).
        """
        used_vars = {i for c in self._candidates for i in c.replica_indices if lp_value[i] > USED_IN_LP}
        by_workload: dict[str, list[SearchCandidate]] = {}
        for c in self._candidates:
            by_workload.setdefault(c.workload, []).append(c)
        used_per_workload: dict[str, list[tuple[int, ...]]] = {}
        unused_per_workload: dict[str, list[tuple[int, ...]]] = {}
        for workload, cands in by_workload.items():
            used_per_workload[workload] = [
                c.replica_indices for c in cands if used_vars.intersection(c.replica_indices)
            ]
            unused = [c for c in cands if not used_vars.intersection(c.replica_indices)]
            unused.sort(key=lambda c: (c.cost_alone, c.replica_indices))
            unused_per_workload[workload] = [c.replica_indices for c in unused]

        def widened(extra: int) -> set[int]:
            keep: set[int] = set()
            for workload, used in used_per_workload.items():
                for ix in (*used, *unused_per_workload[workload][:extra]):
                    keep.update(ix)
            return keep

        levels = [widened(k) for k in range(MAX_EXTRA + 1)]
        start = max((k for k in range(MAX_EXTRA + 1) if len(levels[k]) <= KEPT_VARS_BUDGET), default=0)
        rounds: list[tuple[set[int], float]] = []
        if len(levels[0]) > KEPT_VARS_BUDGET:
            rounds.append((used_vars, FIRST_ROUND_SHARE))
        previous: set[int] = set()
        for keep in levels[start:]:
            if keep != previous:  # workloads with few candidates stop widening
                rounds.append((keep, 1.0))
                previous = keep
        return rounds

    def _solve_restricted(
        self, keep: set[int], hint: RestrictedResult | None, deadline: float, started: float
    ) -> RestrictedResult | None:
        # Loading the model and bounding its variables takes ~1 s at 100 workloads and cannot be
        # interrupted: look at the stop flag on the way (a cancel must stop the call within 0.5 s).
        if self._stopped:
            return None
        sub = pywraplp.Solver.CreateSolver("SCIP")
        if sub is None or sub.LoadModelFromProto(self._model):  # pragma: no cover
            return None
        sub.SuppressOutput()
        sub_vars = sub.variables()
        for c in self._candidates:
            if self._stopped:
                return None
            for i in c.replica_indices:
                if i not in keep:
                    sub_vars[i].SetUb(0.0)
        if hint is not None:
            sub.SetHint(sub_vars, list(hint.values))
        # Loading the model and the hint took time; SCIP and reading the plan back take ~0.3 s more.
        time_left = deadline - time.perf_counter() - READ_BACK_S
        if time_left < MIN_ROUND_SECONDS:
            return None
        sub.SetTimeLimit(max(1, int(time_left * 1000)))
        sub.SetSolverSpecificParametersAsString(self._solver_parameters + PRIMAL_HEURISTICS)
        params = pywraplp.MPSolverParameters()
        params.SetDoubleParam(pywraplp.MPSolverParameters.RELATIVE_MIP_GAP, self._relative_gap)
        if not self._start(sub):
            return None
        try:
            code = sub.Solve(params)
        finally:
            self._finish()
        if code not in (pywraplp.Solver.OPTIMAL, pywraplp.Solver.FEASIBLE):
            return None
        return RestrictedResult(
            objective=float(sub.Objective().Value()),
            values=tuple(float(v.solution_value()) for v in sub_vars),
            lp_bound=self.lp_bound,
            proven_in_restriction=code == pywraplp.Solver.OPTIMAL,
            kept_replica_vars=len(keep),
            seconds=time.perf_counter() - started,
        )
