"""The multi-period fleet MIP: what to buy, reserve or rent in each period of the horizon.

Data
----
- Periods ``p = 0 … P−1`` of ``m_p`` months (``solver.periods``: years by default, the last one
  shorter), starting at month ``t_p = Σ_{q<p} m_q``; ``H = Σ_p m_p``.
- ``I_p``: the single-period instance of period p (``solver.optimizer.model``'s data): the
  workloads' demand × their ``demand_by_year[p]`` (a workload without demand in p is left out of
  I_p), rentals priced at period p (rent × ``μ_op``), the GPU types not yet available left out.
- ``μ_oq``: price multiplier of option o in period q (``price_by_year``; 1 = today's price).
- ``ρ_oq``: market value left at the horizon's end of hardware bought through o at the start of
  period q (the GPU class's residual curve at age ``H − t_q``; 0 without residual credit).
- Cost weights (``PeriodWeights``): ``κ_p`` of a payment at the start of period p, ``ω_p`` of one
  month's payment in period p, ``ω_H`` of the residual at the horizon. Nominal: all 1; discount
  factors plug in here.
- ``O_b``: bought options (``mode = buy``, not owned), leases among them (``O_l ⊆ O_b``: no
  capex); every other held option (reserved, owned) and every on-demand option is chosen period by
  period.
- Leases: ``L_oqy``, one server of lease o taken at the start of period q pays this in plan year
  y + 1 (``StagedInstance.lease_years``: the single-period rule from month ``t_q``, by plan year);
  ``P_o`` its instalment a month, ``T_o`` its term, ``V_o`` its cash price; ``λ_y`` the weight of a
  payment at the end of plan year y + 1 (nominal: 1).

Variables
---------
Per period p, the variables of ``ModelBuilder`` on I_p (``n^p_o``, ``s^p_o``, ``d^p_ob``, ``u^p_ob``,
replicas, …): the fleet in service in p. For o ∈ O_b the tranche bought at the start of p is
``Δn^p_o = n^p_o − n^{p−1}_o`` GPUs and ``Δs^p_o = s^p_o − s^{p−1}_o`` servers (``n^{−1} = 0``).

Constraints
-----------
S1. Each period serves its own demand with its own fleet: constraints 1–4, 9–11, 13, 14 of
    ``solver.optimizer.model`` on I_p (``ModelBuilder.build_serving``: one place builds "serve this
    demand with this fleet"; its GPU bounds are raised to the earlier periods' so a kept fleet fits).
S2. Bought hardware stays: ∀o ∈ O_b, p ≥ 1: n^p_o ≥ n^{p−1}_o, s^p_o ≥ s^{p−1}_o; the fabric
    NET^p_o = c_o (s^p_o − e^p_o) only grows: NET^p_o ≥ NET^{p−1}_o (not e^p ≤ e^{p−1}: e = 0 while
    no server is bought, and one server bought later is still a single node).
S3. Capex budget (total over the horizon, nominal): Σ_{o∈O_b} Σ_q [μ_oq (cg_o Δn^q + cs_o Δs^q)
    + ig_o Δn^q + is_o Δs^q] + Σ_o NET^{P−1}_o + X ≤ BUD.
S4. Monthly opex cap, ∀p: X_m + Σ_{o∈O_b} Σ_{q≤p} (F^q_{o,gpu} Δn^q + F^q_{o,srv} Δs^q)
    + Σ_{o∉O_b held} (fg_o n^p + fs_o s^p) + BUSY^p
    + Σ_{o∈O_l} Σ_{q≤p, t_p < t_q + T_o} P_o Δs^q_o ≤ OPX, where a tranche's support follows its
    price, F^q_{o,gpu} = fg_o + (μ_oq − 1) sup_o (``support_monthly_per_gpu``), likewise per server
    with the host's support, and BUSY^p is I_p's busy cost a month (on-demand rent at p's prices,
    busy power, training).
S5. Power and rack units, ∀p: the on-site fleet of p within the caps (constraints 7, 8 on I_p).

Objective (TCO over the horizon, weighted)
------------------------------------------
min Σ_{o∈O_b} Σ_q [ κ_q (μ_oq (cg Δn^q + cs Δs^q) + ig Δn^q + is Δs^q)
                  − ω_H ρ_oq (μ_oq (cg Δn^q + cs Δs^q) + V_o Δs^q)
                  + (Σ_{p≥q} m_p ω_p) (F^q_{o,gpu} Δn^q + F^q_{o,srv} Δs^q) ]
    + Σ_o Σ_p κ_p (NET^p_o − NET^{p−1}_o)
    + Σ_p m_p ω_p [ Σ_{o∉O_b held} (fg_o n^p_o + fs_o s^p_o) + BUSY^p + X_m ] + κ_0 X
    + Σ_{o∈O_l} Σ_q Σ_y λ_y L_oqy Δs^q_o
    + ε Σ_p GPUS^p                                   (the single-period model's tie-break measure)

(V_o = 0 and no L for a purchase; μ = 1 for a lease.) A server model is leased or bought in each
period (constraint 4c on I_p), hence over the horizon, since S2 keeps what is held.

With one period, flat prices and nominal weights (m_0 = H, μ = κ = ω = λ = 1, ρ_o0 = res_o) this is
term for term the single-period objective: the same optimum (``test_stages.py``).

Solve: SCIP on one thread; on large models (``driver.LP_GUIDED_MIN_REPLICA_VARS`` replica variables
or more) the single-period model's LP-guided search runs beside it on the other core over every
period's candidates, and its plan is kept when the full MIP proves nothing better.

Not modelled: selling hardware before the horizon's end; reserved terms longer than a period
(a reservation is held period by period at that period's price).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

from ortools.linear_solver import linear_solver_pb2, pywraplp

from solver.errors import SolveCancelled
from solver.optimizer.cancel import CancelToken, interrupting
from solver.optimizer.caps import Cap
from solver.optimizer.driver import (
    LP_GUIDED_MIN_REPLICA_VARS,
    SCIP_PARAMETERS,
    SEARCH_MARGIN_S,
    create_solver,
    solve_beside_search,
)
from solver.optimizer.gpu_costs import cheapest_cost_per_gpu, cost_alone
from solver.optimizer.instance import FleetInstance, is_on_site
from solver.optimizer.lp_guided import LpGuidedSearch, RestrictedResult, SearchCandidate
from solver.optimizer.model import NO_RELAXATION, TIE_BREAK_PER_GPU, MipValues, ModelBuilder, Relaxation
from solver.optimizer.results import LimitFired, SolverStats, SolveStatus
from solver.pricing.discounting import MONTHS_PER_YEAR
from solver.pricing.options import AcquisitionOption


@dataclass(frozen=True, slots=True)
class PeriodWeights:
    """Weights of money by when it is paid (nominal: all 1; discount factors plug in here)."""

    at_start: tuple[float, ...]
    """κ_p: a payment at the start of period p (purchases, fabric, installation)."""
    per_month: tuple[float, ...]
    """ω_p: one month's payment in period p (average over its months)."""
    at_horizon: float = 1.0
    """ω_H: the residual value at the end of the horizon."""
    year_end: tuple[float, ...] = ()
    """λ_y: a payment at the end of plan year y + 1 (a lease's payments; absent = 1)."""

    def at_year_end(self, y: int) -> float:
        return self.year_end[y] if y < len(self.year_end) else 1.0

    @staticmethod
    def nominal(periods: int) -> PeriodWeights:
        return PeriodWeights(at_start=(1.0,) * periods, per_month=(1.0,) * periods)


@dataclass(frozen=True, slots=True)
class StagedInstance:
    """A priced, measured multi-period planning problem (the module docstring's data)."""

    periods: tuple[FleetInstance, ...]
    """I_p: the single-period instance of each period (``horizon_months`` = the period's months)."""
    purchase_multiplier: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    """μ_oq of bought options (absent = 1 in every period)."""
    residual: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    """ρ_oq of bought options (absent = ``residual_fraction`` for period 0, the rest 0)."""
    weights: PeriodWeights | None = None
    """None = nominal."""

    @property
    def months(self) -> tuple[int, ...]:
        return tuple(i.horizon_months for i in self.periods)

    @property
    def first(self) -> FleetInstance:
        return self.periods[0]

    def weights_or_nominal(self) -> PeriodWeights:
        return self.weights or PeriodWeights.nominal(len(self.periods))

    def multiplier(self, o: AcquisitionOption, q: int) -> float:
        path = self.purchase_multiplier.get(o.id)
        return path[q] if path else 1.0

    @property
    def starts(self) -> tuple[int, ...]:
        months = self.months
        return tuple(sum(months[:p]) for p in range(len(months)))

    def lease_years(self, o: AcquisitionOption, q: int) -> tuple[tuple[int, float], ...]:
        """One server of lease o taken at the start of period q: (plan year − 1 of the horizon,
        payment) for each plan year it pays in (its instalments, and the buy-out with whatever is
        still due settled by the horizon's end, as the single-period lease)."""
        years = o.lease_payments_over(sum(self.months), self.starts[q])
        return tuple((y, amount) for y, amount in enumerate(years) if amount)

    def period_of_year(self, y: int) -> int:
        """The period holding the first month of plan year y + 1."""
        month = y * MONTHS_PER_YEAR
        return max(p for p, t in enumerate(self.starts) if t <= month)

    def lease_running(self, o: AcquisitionOption, q: int, p: int) -> bool:
        """Whether a lease of o taken at the start of period q still pays instalments in period p."""
        starts = self.starts
        return q <= p and starts[p] < starts[q] + o.lease_term_months

    def residual_of(self, o: AcquisitionOption, q: int) -> float:
        path = self.residual.get(o.id)
        if path:
            return path[q]
        return o.residual_fraction if q == 0 else 0.0


def is_bought(o: AcquisitionOption) -> bool:
    """Bought now (not already owned): a tranche that stays once bought."""
    return is_on_site(o) and not o.owned


def host_support_monthly(o: AcquisitionOption) -> float:
    """The support part of ``fixed_monthly_per_server`` (the rest is colocation and host power)."""
    return o.fixed_monthly_per_server - o.colocation_monthly_per_server - o.host_power_monthly_per_server


class StagedModel:
    """The module docstring's model on one solver: one ``ModelBuilder`` per period (S1), the links
    (S2), the caps (S3–S5) and the objective."""

    def __init__(self, staged: StagedInstance, solver: Any, relax: Relaxation = NO_RELAXATION) -> None:
        self.staged = staged
        self.solver = solver
        self.relax = relax
        self.periods: list[ModelBuilder] = []
        self.weights = staged.weights_or_nominal()
        self.unit = 1.0
        self.tco_expr: Any = 0

    def build(self) -> None:
        bound: dict[str, int] = {}
        for inst in self.staged.periods:
            b = ModelBuilder(inst, self.solver, self.relax)
            b.chassis_reduction = False  # R3 assumes one fleet bought at once
            for g, ub in bound.items():
                b.gpu_bound[g] = max(b.gpu_bound.get(g, 0), ub)
            bound = dict(b.gpu_bound)
            b.build_serving()
            self.periods.append(b)
        self.unit = max(b.unit for b in self.periods)
        self._keep_bought()
        self._caps()
        self._objective()

    # -- tranches ----------------------------------------------------------------------------
    def bought_options(self) -> list[AcquisitionOption]:
        """Bought options of any period, each once (in the order they first appear)."""
        seen: dict[str, AcquisitionOption] = {}
        for b in self.periods:
            for o in b.inst.options:
                if is_bought(o) and o.id in b.n:
                    seen.setdefault(o.id, o)
        return list(seen.values())

    def added(self, var: str, o_id: str, q: int) -> Any:
        """Δn^q_o or Δs^q_o: bought at the start of period q."""
        return self._at(var, o_id, q) - self._at(var, o_id, q - 1)

    def _at(self, var: str, o_id: str, p: int) -> Any:
        if p < 0:
            return 0
        table = self.periods[p].n if var == "n" else self.periods[p].s
        return table.get(o_id, 0)

    def network_at(self, o: AcquisitionOption, p: int) -> Any:
        if p < 0 or o.id not in self.periods[p].s:
            return 0
        return self.periods[p].network_expr(o)

    # S2
    def _keep_bought(self) -> None:
        slv = self.solver
        for o in self.bought_options():
            for p in range(1, len(self.periods)):
                cur = self.periods[p]
                for var in ("n", "s"):
                    before, now = self._at(var, o.id, p - 1), self._at(var, o.id, p)
                    if isinstance(before, int):
                        continue
                    slv.Add(now >= before, f"keep_{var}[{o.id},{p}]")
                if o.id in cur.single_node:
                    grown = self.network_at(o, p) - self.network_at(o, p - 1)
                    slv.Add(grown >= 0, f"keep_fabric[{o.id},{p}]")

    # -- money -------------------------------------------------------------------------------
    def tranche_hardware(self, o: AcquisitionOption, q: int) -> Any:
        """μ_oq (cg Δn^q + cs Δs^q): the hardware of tranche q at its price."""
        mu = self.staged.multiplier(o, q)
        return mu * (
            o.capex_per_gpu * self.added("n", o.id, q) + o.capex_per_server * self.added("s", o.id, q)
        )

    def tranche_capex(self, o: AcquisitionOption, q: int) -> Any:
        """Hardware and installation of tranche q (the fabric is counted by ``network_at``)."""
        install = o.installation_capex_per_gpu * self.added("n", o.id, q)
        install += o.installation_capex_per_server * self.added("s", o.id, q)
        return self.tranche_hardware(o, q) + install

    def tranche_monthly(self, o: AcquisitionOption, q: int) -> Any:
        """F^q: a month of tranche q (its support follows its price)."""
        mu = self.staged.multiplier(o, q)
        per_gpu = o.fixed_monthly_per_gpu + (mu - 1.0) * o.support_monthly_per_gpu
        per_srv = o.fixed_monthly_per_server + (mu - 1.0) * host_support_monthly(o)
        return per_gpu * self.added("n", o.id, q) + per_srv * self.added("s", o.id, q)

    def capex_paid(self, p: int) -> Any:
        """Everything paid at the start of period p: tranches, fabric grown, and (p = 0) X."""
        expr: Any = self.staged.first.extra_capex if p == 0 else 0
        for o in self.bought_options():
            expr += self.tranche_capex(o, p) + self.network_at(o, p) - self.network_at(o, p - 1)
        return expr

    def monthly(self, p: int) -> Any:
        """A month of period p: tranches held, other held options, busy hours, X_m."""
        b = self.periods[p]
        expr: Any = b.inst.extra_monthly + b._monthly_busy()
        for o in self.bought_options():
            expr += sum(self.tranche_monthly(o, q) for q in range(p + 1))
        for o in b.inst.options:
            if o.id in b.n and not is_bought(o):
                expr += o.fixed_monthly_per_gpu * b.n[o.id]
                if o.id in b.s:
                    expr += o.fixed_monthly_per_server * b.s[o.id]
        return expr

    def residual(self) -> Any:
        """Market value at the horizon of every tranche (a leased one's from its cash price)."""
        return sum(
            self.staged.residual_of(o, q)
            * (self.tranche_hardware(o, q) + o.lease_value_per_server * self.added("s", o.id, q))
            for o in self.bought_options()
            for q in range(len(self.periods))
        )

    # leases
    def leases(self) -> list[AcquisitionOption]:
        return [o for o in self.bought_options() if o.leased]

    def lease_cost(self) -> Any:
        """Every lease tranche's payments, each at the weight of the end of its plan year."""
        w = self.weights
        return sum(
            amount * w.at_year_end(y) * self.added("s", o.id, q)
            for o in self.leases()
            for q in range(len(self.periods))
            for y, amount in self.staged.lease_years(o, q)
        )

    def lease_instalments(self, p: int) -> Any:
        """A month's instalments in period p of the leases running then (the opex cap's share)."""
        return sum(
            o.lease_monthly_per_server * self.added("s", o.id, q)
            for o in self.leases()
            for q in range(p + 1)
            if self.staged.lease_running(o, q, p)
        )

    # S3–S5
    def _caps(self) -> None:
        caps = self.staged.first.caps
        slv = self.solver
        for cap in caps.present():
            if cap in self.relax.drop_caps:
                continue
            limit = caps.limit(cap)
            if cap is Cap.CAPEX_BUDGET:
                total = sum(self.capex_paid(p) for p in range(len(self.periods)))
                slv.Add(total <= limit, f"cap[{cap}]")
                continue
            for p, b in enumerate(self.periods):
                if cap is Cap.MONTHLY_OPEX:
                    usage = self.monthly(p) + self.lease_instalments(p)
                else:
                    usage = b.cap_usage_expr(cap)
                slv.Add(usage <= limit, f"cap[{cap},{p}]")

    def _objective(self) -> None:
        w = self.weights
        tco: Any = 0
        for p, b in enumerate(self.periods):
            tco += w.at_start[p] * self.capex_paid(p) + b.months * w.per_month[p] * self.monthly(p)
        tco += self.lease_cost() - w.at_horizon * self.residual()
        self.tco_expr = tco
        gpus: Any = 0
        for b in self.periods:
            gpus += sum(b.n.values()) + sum(b.s.values())
            gpus += sum(b.hours[i] / 24 * v[i] for v in b.d.values() for i in range(b.nb))
        self.solver.Minimize((tco + TIE_BREAK_PER_GPU * self.unit * gpus) * (1.0 / self.unit))
        for b in self.periods:
            b._branch_on_fleet_first()


@dataclass(frozen=True, slots=True)
class StagedResult:
    stats: SolverStats
    values: tuple[MipValues, ...] | None
    """Per period, the solved values of its model (None without a plan)."""
    tco: float | None = None
    """The weighted TCO of the plan (the objective without the tie-break), request currency."""


def solve_staged(
    staged: StagedInstance,
    *,
    time_limit_s: float,
    relative_gap: float = 1e-4,
    backend: str = "scip",
    relax: Relaxation = NO_RELAXATION,
    cancel: CancelToken | None = None,
) -> StagedResult:
    """Build and solve the staged MIP (1 thread, the single-period model's SCIP parameters; large
    models also run the single-period model's LP-guided search beside it, on the other core);
    ``cancel`` interrupts it (``SolveCancelled`` unless the plan was already proven)."""
    started = time.perf_counter()
    solver = create_solver(backend)
    solver.SuppressOutput()
    solver.SetNumThreads(1)
    if backend == "scip":
        solver.SetSolverSpecificParametersAsString(SCIP_PARAMETERS)
    model = StagedModel(staged, solver, relax)
    model.build()
    search = _search(model, relative_gap) if backend == "scip" else None
    margin = SEARCH_MARGIN_S if search is not None else 0.0
    remaining = max(0.01, time_limit_s - (time.perf_counter() - started) - margin)
    solver.SetTimeLimit(max(1, int(remaining * 1000)))
    params = pywraplp.MPSolverParameters()
    params.SetDoubleParam(pywraplp.MPSolverParameters.RELATIVE_MIP_GAP, relative_gap)
    restricted: RestrictedResult | None = None
    with (
        interrupting(cancel, solver.InterruptSolve),
        interrupting(cancel, search.interrupt) if search is not None else nullcontext(),
    ):
        if cancel is not None and cancel.cancelled:  # cancelled while the model was built
            raise SolveCancelled(f"staged solve cancelled after {time.perf_counter() - started:.2f} s")
        if search is None:
            code = solver.Solve(params)
        else:
            code, restricted = solve_beside_search(solver, params, search, remaining)
    if cancel is not None and cancel.cancelled and code != pywraplp.Solver.OPTIMAL:
        raise SolveCancelled(f"staged solve cancelled after {time.perf_counter() - started:.2f} s")
    seconds = time.perf_counter() - started
    stats = _stats(
        solver, model, code, backend=backend, seconds=seconds, limit=time_limit_s, gap_target=relative_gap
    )
    if _search_is_better(stats, code, restricted, model.unit) and restricted is not None:
        found = restricted.values
        stats = _with_objective(stats, restricted.objective * model.unit, relative_gap)
        values = tuple(b.values(lambda var: found[var.index()]) for b in model.periods)
        return StagedResult(stats=stats, values=values)
    if stats.objective is None:
        return StagedResult(stats=stats, values=None)
    values = tuple(b.values() for b in model.periods)
    return StagedResult(stats=stats, values=values, tco=float(model.tco_expr.solution_value()))


def _search(model: StagedModel, relative_gap: float) -> LpGuidedSearch | None:
    """The LP-guided search (``solver.optimizer.lp_guided``) on the staged model when it is large:
    every period's candidates, each with its cost alone in its period."""
    if sum(len(vs) for b in model.periods for vs in b.r.values()) < LP_GUIDED_MIN_REPLICA_VARS:
        return None
    proto = linear_solver_pb2.MPModelProto()
    model.solver.ExportModelToProto(proto)
    candidates = []
    for p, b in enumerate(model.periods):
        per_gpu = cheapest_cost_per_gpu(b.inst)
        candidates += [
            SearchCandidate(
                workload=f"{p}/{c.workload}",
                replica_indices=tuple(var.index() for var in b.r[c.id]),
                cost_alone=cost_alone(c, b.demand_of[c.workload], b.inst.buckets, per_gpu),
            )
            for c in b.cands
        ]
    return LpGuidedSearch(proto, candidates, relative_gap=relative_gap, solver_parameters=SCIP_PARAMETERS)


def _search_is_better(
    stats: SolverStats, code: int, restricted: RestrictedResult | None, unit: float
) -> bool:
    """The search's plan is returned when the full MIP did not prove its own and found a dearer one
    or none (as the single-period driver does)."""
    if restricted is None or code in (pywraplp.Solver.OPTIMAL, pywraplp.Solver.INFEASIBLE):
        return False
    return stats.objective is None or restricted.objective * unit < stats.objective


def _with_objective(stats: SolverStats, objective: float, gap_target: float) -> SolverStats:
    """``stats`` with the search's plan: its objective, the full MIP's bound, the gap between."""
    bound = stats.best_bound
    gap = (objective - bound) / abs(objective) if bound is not None and objective else None
    status = SolveStatus.OPTIMAL if gap is not None and gap <= gap_target else SolveStatus.FEASIBLE
    fired = LimitFired.NONE if status is SolveStatus.OPTIMAL else LimitFired.TIME
    return dataclasses.replace(stats, objective=objective, gap=gap, status=status, limit_fired=fired)


def _stats(
    solver: Any,
    model: StagedModel,
    code: int,
    *,
    backend: str,
    seconds: float,
    limit: float,
    gap_target: float,
) -> SolverStats:
    has_plan = code in (pywraplp.Solver.OPTIMAL, pywraplp.Solver.FEASIBLE)
    objective = bound = gap = None
    if has_plan:
        objective = solver.Objective().Value() * model.unit
        raw_bound = solver.Objective().BestBound() * model.unit
        bound = min(raw_bound, objective) if math.isfinite(raw_bound) else None
        gap = (objective - bound) / abs(objective) if bound is not None and objective else 0.0
    if code == pywraplp.Solver.OPTIMAL:
        status, fired = SolveStatus.OPTIMAL, LimitFired.NONE
        gap = min(gap or 0.0, gap_target)
    elif has_plan:
        status, fired = SolveStatus.FEASIBLE, LimitFired.TIME
    elif code == pywraplp.Solver.INFEASIBLE:
        status, fired = SolveStatus.INFEASIBLE, LimitFired.NONE
    else:
        status, fired = SolveStatus.NO_SOLUTION, LimitFired.TIME
    return SolverStats(
        backend=backend,
        status=status,
        objective=objective,
        best_bound=bound,
        gap=gap,
        seconds=seconds,
        limit_fired=fired,
        variables=solver.NumVariables(),
        constraints=solver.NumConstraints(),
        time_limit_s=limit,
        relative_gap_target=gap_target,
    )
