"""What the planner answers: frozen result types of the four pipelines (money is Decimal ``Money``).

``PlanResult`` is one PlanFleet answer (proto ``fleetplan.v1.Plan``); EvaluateFleet wraps one in an
``EvaluationResult``, AnalyzeBreakEven in a ``BreakEvenAnalysis``, and SweepPlans streams
``SweepPoint``s then a ``SweepFrontier``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from pricebook.schema import Currency, GpuId, Money, PriceLabel
from solver.analysis.breakeven import ApiBreakEven, BuyVsRent
from solver.analysis.cash_flows import CashFlows
from solver.analysis.headroom import Headroom
from solver.analysis.tco import CostComponent, DepreciationYear, FleetTco, UnitCost, VatLines
from solver.budget import StageTime
from solver.domain import AcquisitionMode, CapacityQuantile, Precision
from solver.optimizer.instance import GUEST_SHARE_MAX, deployment_label, role_label
from solver.optimizer.results import CapRelaxation, FleetSolution, SolveStatus, WorkloadFit
from solver.planner.notices import Notice
from solver.planner.schedule import StagedSchedule


@dataclass(frozen=True, slots=True)
class PlanFleetLine:
    """GPUs of one type acquired one way, with everything a bid line shows."""

    option_id: str
    gpu: GpuId
    mode: AcquisitionMode
    owned: bool
    server_id: str | None
    offer_id: str
    provider: str
    price_label: PriceLabel | None
    """The offer's price label (quote, list, street, derived, estimate); None for owned GPUs
    without a current offer."""
    gpus: int
    """Held every hour (buy, reserved, owned); on-demand: the peak hour's count."""
    servers: int
    on_demand_gpus_by_hour: tuple[int, ...]
    """24 values for on-demand lines (empty otherwise)."""
    price_per_gpu: Money | None
    """Purchases: price of one GPU."""
    price_per_gpu_hour: Money | None
    """Rentals: price per GPU-hour (reserved: the effective rate over whole terms)."""
    horizon_cost: Money
    power_kw: float
    """Wall power at full load incl. PUE (on-site lines)."""
    rack_units: float
    busy_gpu_hours_per_month: float
    utilization: float
    gpus_per_instance: int = 1
    """Rentals: GPUs per rented instance (the line rents ``gpus / gpus_per_instance`` instances)."""
    workloads: tuple[str, ...] = ()
    """Workloads this line's GPU type serves (deployment groups and training runs on it)."""


@dataclass(frozen=True, slots=True)
class GroupShare:
    """One workload's part of a deployment group."""

    workload: str
    share: float
    """Its fraction of the group's load over the day: the replica-hours it occupies ÷ those of
    every workload in the group (the shares of a group sum to 1)."""
    replicas_by_hour: tuple[float, ...]
    """Replica-equivalents it occupies in each hour of the day (24 values): its own replicas, or
    its part of a shared pool's (demand served ÷ capacity per replica)."""
    output_tok_s: float
    """Output tokens per second its part of the group delivers at the SLA in the group's peak hour."""


@dataclass(frozen=True, slots=True)
class DisaggregatedRole:
    """One role (prefill or decode) of a disaggregated deployment (``solver.perf.disagg``)."""

    gpu: GpuId
    tp: int
    """Tensor parallelism of one attention-DP rank."""
    ep: int
    """Expert parallelism (1 = none)."""
    attention_dp: int
    """Attention data-parallel ranks per engine (1 = none)."""
    precision: Precision
    engines_per_unit: int
    """Engines of this role in one unit of the deployment (the prefill:decode ratio)."""
    gpus_peak: int
    """GPUs of this role in the deployment's peak hour (all units)."""

    @property
    def gpus_per_unit(self) -> int:
        return self.engines_per_unit * self.tp * self.attention_dp

    @property
    def label(self) -> str:
        """E.g. "3× h200-sxm TP4 EP4" (engines per unit, GPU, parallelism)."""
        return role_label(self.engines_per_unit, self.gpu, self.tp, self.attention_dp, self.ep)


@dataclass(frozen=True, slots=True)
class DisaggregatedRoles:
    """A deployment that runs prefill and decode on separate engines and moves the KV cache between
    them; the line's ``replicas_by_hour`` count units of ``prefill.engines_per_unit`` prefill and
    ``decode.engines_per_unit`` decode engines."""

    prefill: DisaggregatedRole
    decode: DisaggregatedRole
    kv_link: str
    """How the KV cache travels: "nvlink" (one scale-up domain), "network" (the servers' NICs) or
    "pcie"."""
    kv_bytes_per_request: float
    network_cost: Money | None = None
    """The scale-out ports and optics priced for the KV transfer over the horizon (None: none needed)."""

    @property
    def gpus_per_unit(self) -> int:
        return self.prefill.gpus_per_unit + self.decode.gpus_per_unit

    @property
    def label(self) -> str:
        return f"prefill {self.prefill.label} + decode {self.decode.label} {self.decode.precision.value}"


@dataclass(frozen=True, slots=True)
class DisaggregationComparison:
    """Why disaggregation won: the cheapest plan of the same request without disaggregated
    deployments, and what the plan saves against it."""

    aggregated_tco: Money | None
    """None: no aggregated plan meets the SLAs (with the reason in ``reason``)."""
    saving: Money | None
    reason: str = ""


@dataclass(frozen=True, slots=True)
class DeploymentLine:
    """A deployment group: replicas of one deployment (GPU, TP or MIG slice, precision), either a
    pool shared by several workloads or loads, or one workload's own replicas."""

    id: str
    """The shared pool's id, or the deployment candidate's id for a workload's own replicas."""
    gpu: GpuId
    tp: int
    mig_slice: int
    """0 = whole GPUs (``tp`` per replica); n = a replica runs on 1/n of one GPU."""
    precision: Precision
    kv_precision: Precision
    shared: bool
    """A shared pool (several workloads or request sizes on the same replicas)."""
    replicas_by_hour: tuple[int, ...]
    """Replicas in each hour of the day (24 values, spares included)."""
    spares: int
    peak_hour: int
    """The hour with the most replicas (the busiest of them when several tie)."""
    shares: tuple[GroupShare, ...]
    output_tok_s: float
    """Output tokens per second the group delivers at the SLA in its peak hour (all shares)."""
    utilization: float
    """Demand carried ÷ capacity of the replicas in the peak hour (spares count as capacity)."""
    card_share: float = 1.0
    """< 1: co-located (``solver.optimizer.colocation``): a guest's share of one host card (≤ 1/2),
    or a host's share of each of its cards."""
    co_located_with: tuple[str, ...] = ()
    """The groups on the other side of the shared cards of this GPU type (a guest's hosts, a
    host's guests)."""
    disaggregation: DisaggregatedRoles | None = None
    """Set for a disaggregated deployment (issue 33): its two roles; ``gpu``/``tp``/``precision``
    then describe the decode role."""

    @property
    def label(self) -> str:
        """The deployment in words, e.g. "l40s TP2 fp8", "l40s 1/16 of a card bf16" or
        "prefill 1× b200 TP2 EP2 + decode 3× h200-sxm TP4 EP4 fp8" (disaggregated)."""
        if self.disaggregation is not None:
            return self.disaggregation.label
        return deployment_label(self.gpu, self.tp, self.precision, self.mig_slice, self.card_share)

    @property
    def replicas_peak(self) -> int:
        return max(self.replicas_by_hour, default=0)

    @property
    def replicas_off_peak(self) -> int:
        """The fewest replicas in any hour."""
        return min(self.replicas_by_hour, default=0)

    @property
    def gpus_per_replica(self) -> float:
        """GPUs a replica occupies (a fraction for a MIG slice; none for a co-located guest; a
        disaggregated unit's GPUs of both roles, ``disaggregation`` splits them by GPU type)."""
        if self.disaggregation is not None:
            return float(self.disaggregation.gpus_per_unit)
        if self.card_share <= GUEST_SHARE_MAX:
            return 0.0
        return 1.0 / self.mig_slice if self.mig_slice else float(self.tp)

    @property
    def gpus_peak(self) -> float:
        """GPUs the group occupies in its peak hour (a fraction of one for MIG slices; 0 for a guest
        on its hosts' cards; both roles' for a disaggregated deployment)."""
        if self.disaggregation is not None:
            return float(self.disaggregation.prefill.gpus_peak + self.disaggregation.decode.gpus_peak)
        return self.replicas_peak * self.gpus_per_replica

    @property
    def workloads(self) -> tuple[str, ...]:
        return tuple(s.workload for s in self.shares)


@dataclass(frozen=True, slots=True)
class WorkloadGroupUse:
    """How much of one deployment group serves one workload."""

    group_id: str
    gpu: GpuId
    tp: int
    mig_slice: int
    precision: Precision
    shared: bool
    replicas: float
    """Replica-equivalents serving the workload in its peak hour."""
    replicas_max: float
    """The most in any hour (a group may serve the workload only outside its peak)."""
    share: float
    """The workload's share of the group's load over the day (``GroupShare.share``)."""
    output_tok_s: float
    """Output tokens per second at the SLA of these replica-equivalents in the workload's peak hour."""
    ttft_p95_ms: float
    tpot_ms: float
    per_user_tok_s: float
    card_share: float = 1.0
    """The group's ``DeploymentLine.card_share``."""
    co_located_with: tuple[str, ...] = ()
    """The group's ``DeploymentLine.co_located_with``."""
    label: str = ""
    """The group's ``DeploymentLine.label``."""


@dataclass(frozen=True, slots=True)
class WorkloadLine:
    """How one inference workload is served, group by group, in its peak hour."""

    workload: str
    peak_hour: int
    """The first hour of the workload's busiest demand."""
    demand_req_s: float
    capacity_req_s: float
    utilization: float
    """Demand ÷ capacity at the SLA in the peak hour."""
    uses: tuple[WorkloadGroupUse, ...]
    """Every group that serves it in some hour, most replica-equivalents at peak first."""
    replicas: float
    """Replica-equivalents serving it in the peak hour (all groups)."""
    output_tok_s: float
    """Output tokens per second at the SLA of those replicas (all groups)."""
    ttft_p95_ms: float
    """The slowest p95 time to first token among the groups serving it at peak."""
    tpot_ms: float
    per_user_tok_s: float
    """The lowest per-user decode speed among the groups serving it at peak."""

    @property
    def served(self) -> bool:
        return bool(self.uses)


@dataclass(frozen=True, slots=True)
class UncertaintyBand:
    """How far the plan's deployments' throughput may be from the performance model's estimate."""

    low_factor: float
    high_factor: float
    note: str


@dataclass(frozen=True, slots=True)
class BreakEvenResult:
    """A plan's break-even section: buy vs rent per GPU type, self-host vs API per workload."""

    buy_vs_rent: tuple[BuyVsRent, ...]
    api: tuple[ApiBreakEven, ...]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Baseline:
    """What is owned plus the best fleet of one GPU type alone, or why there is none."""

    gpu: GpuId
    feasible: bool
    fleet: tuple[PlanFleetLine, ...]
    horizon_tco: Money | None
    extra_cost: Money | None
    """Baseline TCO − chosen plan TCO."""
    reason: str
    fleet_summary: str
    capex: Money | None = None
    """Purchase price of the baseline fleet (GPUs and hosts), None without one."""
    binding_caps: tuple[CapRelaxation, ...] = ()
    """Why no fleet of this type alone exists: each cap it exceeds, its limit, what the least
    fleet found needs (``needed``; a bound unless within 5 % of ``needed_at_least``) and that
    fleet (``reason`` says it in English; a quote words it from these fields)."""


@dataclass(frozen=True, slots=True)
class BaselineSaving:
    """The plan's saving over the cheapest baseline."""

    best_baseline_gpu: GpuId
    saving: Money
    saving_fraction: float
    """Saving ÷ the best baseline's TCO."""
    in_npv: bool = False
    """The saving (and each baseline's extra cost) is in net present value: the plan minimised it."""


@dataclass(frozen=True, slots=True)
class Sensitivity:
    """How far one price (or total demand) must move before the plan's mix changes."""

    subject: str
    """A GPU id (its price) or ``demand``."""
    parameter: str
    change_down_fraction: float | None
    """E.g. −0.25: 25 % lower changes the mix; None = not within the searched range."""
    change_up_fraction: float | None
    last_same_down_fraction: float | None
    """The largest decrease checked that keeps the mix (just before the threshold)."""
    last_same_up_fraction: float | None
    plan_below: str
    plan_above: str
    explanation: str
    solves: int


@dataclass(frozen=True, slots=True)
class PlanResult:
    """Everything PlanFleet answers (see proto ``fleetplan.v1.Plan``)."""

    status: SolveStatus
    summary: str
    currency: Currency
    horizon_months: int
    solution: FleetSolution
    """The optimizer's plan: assignments, training, statistics, diagnosis, cap usage."""
    fleet: tuple[PlanFleetLine, ...]
    tco: FleetTco | None
    cost_components: tuple[CostComponent, ...]
    includes_vat: bool
    """The request asked for VAT: ``vat`` holds the VAT line (every other amount is ex-VAT)."""
    fx_rate_note: str
    unit_costs: tuple[UnitCost, ...]
    break_even: BreakEvenResult
    baselines: tuple[Baseline, ...]
    baseline_saving: BaselineSaving | None
    sensitivity: tuple[Sensitivity, ...]
    uncertainty: UncertaintyBand
    warnings: tuple[str, ...]
    pricebook_version: str
    pricebook_hash: str
    overrides_applied: tuple[str, ...]
    candidates_considered: int
    seconds: float
    rejected: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Per workload name: the deployments (or, for training, GPU types) turned away and why."""
    deadline_limited: bool = False
    """The caller's deadline, not the request's own ``time_limit_s``, set the main solve's limit (so
    a plan not found in time is the deadline's doing)."""
    gap_too_wide: bool = False
    """A plan stopped by its time limit with a gap above the request's ``max_gap``: for inspection,
    not a plan to buy (the summary and the warnings say so)."""
    capacity_quantile: CapacityQuantile = CapacityQuantile.P50
    """The quantile of the performance band replicas were sized at (issue 20)."""
    tco_at_quantile: float | None = None
    """This plan's horizon TCO as the optimizer priced it (request currency, before VAT)."""
    tco_at_p50: float | None = None
    """The same for the plan sized at p50 (the estimate): this plan's own with a p50 request;
    None when that re-solve found no plan in time."""
    notices: tuple[Notice, ...] = ()
    """Structured notices (code, parameters; English and Korean words in ``planner.notices``);
    their English texts are among ``warnings`` too."""
    meets_demand: tuple[tuple[str, float], ...] = ()
    """Per inference workload: the probability the fleet meets its demand (``optimizer.risk``)."""
    vat: VatLines | None = None
    """Supply / VAT / total of the plan's payments (only when the request includes VAT)."""
    depreciation: tuple[DepreciationYear, ...] = ()
    """Straight-line book depreciation of the purchases per year of the horizon (accounting only)."""
    cash_flows: CashFlows | None = None
    """The cash per plan year, nominal and discounted, and the NPV (only with a discount rate)."""
    schedule: StagedSchedule | None = None
    """A multi-year plan's acquisition schedule (``solver.planner.staged``); None for one period."""
    lease_by_year: tuple[Money, ...] = ()
    """The leases' payments per plan year (1 …); () without a lease."""
    deployment_lines: tuple[DeploymentLine, ...] = ()
    """The plan's deployment groups (``solver.planner.rows``): every consumer copies these."""
    workload_lines: tuple[WorkloadLine, ...] = ()
    """One per inference workload of the plan, in request order (``solver.planner.rows``)."""
    complete: bool = False
    """Every part finished within its limits (main solve proven optimal, baselines and sensitivity
    not cut short, not cancelled): the same request and pricebook always give this same answer,
    so it may be reused (the service caches only complete results)."""
    headroom: Headroom | None = None
    """How much more demand the plan's fleet carries at the SLA (the evaluator on the fixed fleet),
    and what to add beyond it; None when not computed (no sensitivity asked, or no plan)."""
    stages: tuple[StageTime, ...] = ()
    """What each stage of the call used (main solve, baselines, headroom, sensitivity, p50
    re-solve), in the order they ran, against what the time budget gave it."""
    disaggregation: DisaggregationComparison | None = None
    """Set when the plan has a disaggregated deployment (issue 33): the cheapest aggregated
    alternative and the saving against it."""

    @property
    def horizon_tco(self) -> Money | None:
        return self.tco.total.horizon_total if self.tco is not None else None


@dataclass(frozen=True, slots=True)
class EvaluationResult:
    """Everything EvaluateFleet answers."""

    feasible: bool
    plan: PlanResult
    """The given fleet, with the best assignment of the workloads onto it."""
    fits: tuple[WorkloadFit, ...]
    fleet_horizon_tco: Money | None
    optimal_horizon_tco: Money | None
    saving_of_optimal: Money | None
    """How much cheaper the optimal plan is than the given fleet."""
    messages: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class BreakEvenAnalysis:
    """Everything AnalyzeBreakEven answers: the plan's break-even section and unit costs, and the plan."""

    break_even: BreakEvenResult
    unit_costs: tuple[UnitCost, ...]
    plan: PlanResult


class SweepAxis(StrEnum):
    """What a sweep varies (the values are the SLA fields' names for the SLA axes)."""

    CAPEX_BUDGET = "capex_budget"
    DEMAND_MULTIPLIER = "demand_multiplier"
    TPOT_P95_MS = "tpot_p95_ms"
    TTFT_P95_MS = "ttft_p95_ms"
    MIN_PER_USER_TOK_S = "min_per_user_tok_s"
    DISCOUNT_RATE_ANNUAL = "discount_rate_annual"


@dataclass(frozen=True, slots=True)
class SweepPoint:
    """One solved sweep point, with the sweep's progress when it completed."""

    index: int
    value: float
    plan: PlanResult
    points_done: int
    points_total: int


@dataclass(frozen=True, slots=True)
class FrontierPoint:
    """One sweep point on the cost-vs-value frontier."""

    value: float
    status: SolveStatus
    horizon_tco: Money | None
    fleet_summary: str
    """The fleet in words; without a plan, the plan's summary (why there is none)."""
    pareto_optimal: bool
    npv: Money | None = None
    """The plan's NPV when the point's request has a discount rate (``PlanResult.cash_flows``)."""


@dataclass(frozen=True, slots=True)
class SweepFrontier:
    axis: SweepAxis
    points: tuple[FrontierPoint, ...]
    """Every point, sorted by value; ``pareto_optimal`` marks the cost-vs-value frontier."""

    @property
    def pareto(self) -> tuple[FrontierPoint, ...]:
        return tuple(p for p in self.points if p.pareto_optimal)
