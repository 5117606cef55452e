"""Result types of the optimizer: what ``optimize`` and ``evaluate_fleet`` return.

All frozen dataclasses. Money is a float in the request's currency (``FleetSolution.currency``);
the planner turns it into Decimal ``Money`` for reports. Bucket-indexed tuples follow
``FleetSolution.buckets`` (hours of the day sharing one demand pattern).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum

from pricebook.schema import GpuId
from solver.domain import AcquisitionMode, Fleet, FleetItem
from solver.optimizer.instance import Bucket, Candidate, FleetInstance


class SolveStatus(StrEnum):
    OPTIMAL = "optimal"
    """Proven optimal within the requested relative gap."""
    FEASIBLE = "feasible"
    """A verified plan, but the time limit fired before the gap closed (see ``SolverStats.gap``)."""
    INFEASIBLE = "infeasible"
    """Proven: no fleet meets every constraint (see ``FleetSolution.diagnosis``)."""
    NO_SOLUTION = "no_solution"
    """The time limit fired before any plan was found."""
    CANCELLED = "cancelled"


class LimitFired(StrEnum):
    NONE = "none"
    TIME = "time"
    CANCEL = "cancel"


@dataclass(frozen=True, slots=True)
class SolverStats:
    backend: str
    status: SolveStatus
    objective: float | None
    """TCO over the horizon of the returned plan (request currency), None without a plan."""
    best_bound: float | None
    """Best proven bound of the objective; None when the solver proved none."""
    gap: float | None
    """(objective − bound) / objective; None with a plan but no proven bound (an unknown gap)."""
    seconds: float
    limit_fired: LimitFired
    variables: int
    constraints: int
    time_limit_s: float = 0.0
    relative_gap_target: float = 0.0
    """The relative gap the solve was asked to prove (``SolverOptions.relative_gap``): ``OPTIMAL``
    means the plan is proven within it."""

    @property
    def gap_unknown(self) -> bool:
        """A plan without a proven bound: how far it is from optimal is not known."""
        return self.objective is not None and self.gap is None

    def restated(self, objective: float, bound: float | None) -> SolverStats:
        """These statistics for another plan of the same request, costing ``objective``, against
        ``bound`` (a proven bound of every plan of the request; None = none proven): the bound
        capped at the objective, the gap recomputed, ``OPTIMAL`` when within the requested gap."""
        bound = None if bound is None else min(bound, objective)
        gap = None if bound is None else (abs(objective - bound) / abs(objective) if objective else 0.0)
        status = SolveStatus.OPTIMAL if gap is not None and gap <= self.relative_gap_target else self.status
        return replace(self, status=status, objective=objective, best_bound=bound, gap=gap)


@dataclass(frozen=True, slots=True)
class ChosenOption:
    """GPUs acquired through one ``AcquisitionOption``."""

    option_id: str
    gpu: GpuId
    mode: AcquisitionMode
    owned: bool
    gpus: int
    """GPUs held every hour (buy, reserved, owned). 0 for on-demand."""
    servers: int
    server_id: str | None = None
    """The option's server model (bought and owned hardware)."""
    offer_id: str | None = None
    """The pricebook offer the GPUs are bought or rented through (None for owned GPUs)."""
    on_demand_gpus: tuple[int, ...] = ()
    """On-demand GPUs rented in each bucket (on-demand options only)."""
    training_gpus: int = 0
    """On-demand GPUs rented at once for training runs (each run rents all of its GPUs)."""
    busy_gpu_hours_per_month: float = 0.0
    """GPU-hours per month in use (serving + training), which the busy hourly cost applies to."""
    horizon_cost: float = 0.0

    @property
    def peak_gpus(self) -> int:
        """Most GPUs held or rented at once (a training run may coincide with the peak hour)."""
        return max(self.gpus, max(self.on_demand_gpus, default=0) + self.training_gpus)


@dataclass(frozen=True, slots=True)
class DeploymentUse:
    candidate: Candidate
    replicas: tuple[int, ...]
    """Replicas of this deployment in each bucket that serve this load alone (0 in a shared pool)."""
    shared_load: tuple[float, ...] = ()
    """In a shared pool (``candidate.pool``): this load's replica-equivalents on the pool's
    replicas in each bucket (demand served ÷ capacity per replica); empty = not pooled."""

    def serving(self, b: int) -> float:
        """Replica-equivalents serving this load in bucket ``b`` (own replicas or pool share)."""
        return self.replicas[b] + (self.shared_load[b] if self.shared_load else 0.0)

    @property
    def pooled(self) -> bool:
        return bool(self.shared_load)


@dataclass(frozen=True, slots=True)
class PoolUse:
    """A shared pool's replicas: several loads (workloads on one model, sizes of a mix) on them."""

    id: str
    deployment: Candidate
    """A member standing for the pool's GPU, TP, precision and MIG slice."""
    replicas: tuple[int, ...]
    """Replicas in each bucket (spares included)."""
    spares: int = 0
    members: tuple[str, ...] = ()
    """Workloads whose loads the pool serves."""


@dataclass(frozen=True, slots=True)
class RunnerUp:
    """The best plan that forbids this workload's chosen GPU type."""

    gpu: GpuId
    tp: int
    precision: str
    replicas_at_peak: int
    total_cost: float
    cost_difference: float
    """Runner-up plan TCO minus chosen plan TCO (≥ 0 up to the solver gap)."""


@dataclass(frozen=True, slots=True)
class Assignment:
    """How one inference workload is served."""

    workload: str
    uses: tuple[DeploymentUse, ...]
    demand_req_s: tuple[float, ...]
    capacity_req_s: tuple[float, ...]
    """Capacity at the SLA of the replicas in each bucket."""
    redundancy: int = 0
    runner_up: RunnerUp | None = None
    runner_up_note: str = ""
    """Why there is no runner-up (e.g. "no other allowed GPU can serve it")."""

    @property
    def peak_bucket(self) -> int:
        return max(range(len(self.demand_req_s)), key=lambda b: self.demand_req_s[b])

    @property
    def utilization(self) -> float:
        """Demand ÷ capacity in the peak bucket."""
        b = self.peak_bucket
        return self.demand_req_s[b] / self.capacity_req_s[b] if self.capacity_req_s[b] > 0 else 0.0

    @property
    def primary(self) -> DeploymentUse:
        """The deployment with the most replicas at peak."""
        b = self.peak_bucket
        return max(self.uses, key=lambda u: (u.serving(b) * u.candidate.capacity_req_s, u.candidate.id))


@dataclass(frozen=True, slots=True)
class TrainingAllocation:
    workload: str
    gpu: GpuId
    min_gpus: int
    gpu_hours_per_month: float
    on_demand_gpu_hours_per_month: float
    """Part of the GPU-hours rented on demand (the rest runs in idle hours of held GPUs)."""
    hours_per_run: float = 0.0


@dataclass(frozen=True, slots=True)
class CostSplit:
    """TCO over the horizon as the MIP objective sees it (request currency)."""

    capex: float
    residual: float
    fixed_monthly: float
    busy_monthly: float
    horizon_months: int
    opex_weight: float | None = None
    """What 1 a month weighs in the objective (``FleetInstance.opex_weight``); None = the months."""
    residual_weight: float = 1.0
    """What the residual credit weighs in the objective (``FleetInstance.residual_weight``)."""
    lease: float = 0.0
    """Leases' payments over the horizon (instalments and buy-outs), undiscounted."""
    lease_objective: float = 0.0
    """The same as the objective weighs them (today's money under objective npv)."""

    @property
    def total(self) -> float:
        total = self.capex - self.residual + (self.fixed_monthly + self.busy_monthly) * self.horizon_months
        return total + self.lease if self.lease else total

    @property
    def objective_total(self) -> float:
        """The cost as the MIP's objective weighs it: ``total`` for the nominal TCO, the NPV under
        objective npv."""
        if self.opex_weight is None:
            return self.total
        monthly = self.fixed_monthly + self.busy_monthly
        total = self.capex - self.residual * self.residual_weight + monthly * self.opex_weight
        return total + self.lease_objective


@dataclass(frozen=True, slots=True)
class UnservableWorkload:
    workload: str
    reasons: tuple[str, ...]
    """One line per rejected deployment (GPU, TP, precision: reason)."""


@dataclass(frozen=True, slots=True)
class CapRelaxation:
    cap: str
    """A ``caps.Cap`` (``capex_budget``, ``monthly_opex_cap``, ``power_cap_kw``, ``rack_units_cap``) or
    ``caps.count_cap(gpu)`` (``count:<gpu>``)."""
    limit: float
    needed: float
    """The cap's usage in the least-using plan found with this cap removed (the other caps kept)."""
    message: str
    needed_at_least: float | None = None
    """Proven: no plan needs less (None = not known). ``needed`` is the least within
    ``explain.NEEDED_TOLERANCE`` when ``needed ≤ needed_at_least × (1 + tolerance)``; else a bound."""
    fleet: str = ""
    """The fleet found that needs ``needed``, in words."""

    @property
    def shortfall(self) -> float:
        return self.needed - self.limit


@dataclass(frozen=True, slots=True)
class Diagnosis:
    unservable: tuple[UnservableWorkload, ...] = ()
    binding_caps: tuple[CapRelaxation, ...] = ()
    messages: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class FleetSolution:
    status: SolveStatus
    stats: SolverStats
    currency: str
    horizon_months: int
    buckets: tuple[Bucket, ...]
    options: tuple[ChosenOption, ...] = ()
    assignments: tuple[Assignment, ...] = ()
    training: tuple[TrainingAllocation, ...] = ()
    cost: CostSplit | None = None
    diagnosis: Diagnosis | None = None
    usage: dict[str, float] = field(default_factory=dict)
    """Cap usage of the plan: ``capex``, ``monthly_opex``, ``power_kw``, ``rack_units``."""
    pools: tuple[PoolUse, ...] = ()
    """Shared pools with replicas (their members' ``DeploymentUse.shared_load``)."""
    static_replicas: dict[str, int] = field(default_factory=dict)
    """A static deployment's replicas on held GPUs all day: by candidate id for a deployment's own
    replicas, by ``PoolUse.id`` for a shared pool (``solver.optimizer.static``)."""

    @property
    def has_plan(self) -> bool:
        return self.status in (SolveStatus.OPTIMAL, SolveStatus.FEASIBLE)

    def gpu_counts(self) -> dict[GpuId, int]:
        """Peak GPUs per type (held + on-demand at the busiest bucket)."""
        counts: dict[GpuId, int] = {}
        for b in range(len(self.buckets)):
            per_b: dict[GpuId, int] = {}
            for opt in self.options:
                od = opt.on_demand_gpus[b] if opt.on_demand_gpus else 0
                per_b[opt.gpu] = per_b.get(opt.gpu, 0) + opt.gpus + od
            for gpu, n in per_b.items():
                counts[gpu] = max(counts.get(gpu, 0), n)
        return {g: n for g, n in sorted(counts.items()) if n > 0}

    def fleet(self) -> Fleet | None:
        """The plan as a domain ``Fleet`` (on-demand at its peak bucket), each line naming its offer."""
        items = [
            FleetItem(
                gpu=o.gpu, mode=o.mode, count=o.peak_gpus, owned=o.owned, server=o.server_id, offer=o.offer_id
            )
            for o in self.options
            if o.peak_gpus > 0
        ]
        return Fleet(items=tuple(items)) if items else None


class ViolationKind(StrEnum):
    """The constraint family a failed check belongs to (``solver.optimizer.evaluate``)."""

    DEMAND = "demand"
    CAPACITY = "capacity"
    GPUS = "gpus"
    """Replicas do not fit the plan's GPUs, or a TP group fits no NVLink/P2P domain."""
    SERVERS = "servers"
    STATIC = "static"
    """A static deployment's held GPUs change replicas with the hours."""
    CAP = "cap"
    COUNT = "count"
    TRAINING = "training"


@dataclass(frozen=True, slots=True)
class Violation:
    """One failed check of the independent evaluator."""

    kind: ViolationKind
    subject: str
    message: str


@dataclass(frozen=True, slots=True)
class WorkloadFit:
    workload: str
    served_fraction: float
    """Share of peak demand the fleet serves at the SLA (1.0 = fully served)."""
    headroom_fraction: float
    """Spare capacity over demand at peak (capacity/demand − 1; negative = shortfall)."""
    message: str = ""
    """What is short, in words ("" when the workload is fully served)."""


@dataclass(frozen=True, slots=True)
class FleetEvaluation:
    feasible: bool
    solution: FleetSolution
    """Best assignment of the workloads onto the given fleet (or, if infeasible, the best partial)."""
    fits: tuple[WorkloadFit, ...]
    tco: float | None
    optimal_tco: float | None = None
    """TCO of the optimal plan for the same request (None if not computed)."""
    messages: tuple[str, ...] = ()
    optimal: FleetSolution | None = None
    """The optimal plan for the same request (None if not computed or none found), with
    ``optimal_instance``: callers price it exactly like the evaluated fleet (``solver.planner``),
    so that fleet − optimum = saving to the unit."""
    optimal_instance: FleetInstance | None = None

    @property
    def saving_of_optimal(self) -> float | None:
        if self.tco is None or self.optimal_tco is None:
            return None
        return self.tco - self.optimal_tco
