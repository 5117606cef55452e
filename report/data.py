"""What a quote shows, as one typed JSON document: ``QuoteData``.

Built once from a plan (``report.build.build_quote``) and rendered by every format from this alone,
so a stored plan (its ``QuoteData.model_dump_json()``) renders again without re-planning, and the
HTML, PDF and XLSX of one plan show the same numbers. Money is ``pricebook.schema.Money`` (a
Decimal amount, a string in JSON): ``model_validate_json(model_dump_json())`` round-trips exactly.
Words that come from the planner (reasons, verdicts, explanations) are kept as it wrote them;
every label around them comes from ``report.labels``.
"""

from __future__ import annotations

import datetime as dt
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from pricebook.schema import Currency, Money
from report.disagg_data import DisaggregationWhy, RolesRow
from report.presentation import Audience, QuoteHeader
from report.schedule import Schedule

QUOTE_SCHEMA_VERSION = 1
"""Bumped when a stored ``QuoteData`` document would no longer validate."""


class _Quote(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class AlternativeKind(StrEnum):
    """One column of the alternatives table."""

    RECOMMENDED = "recommended"
    SINGLE_GPU = "single_gpu"
    """The best fleet of one allowed GPU type alone (the plan's baseline)."""
    RENT_ONLY = "rent_only"
    """The cheapest fleet of reserved and on-demand rentals (plus what is owned)."""
    API = "api"
    """Every inference workload on a per-token API."""


class QuoteCap(_Quote):
    """A cap a single-GPU fleet exceeds (``solver.optimizer.results.CapRelaxation``): worded in
    the quote's language when rendered."""

    cap: str
    """``capex_budget``, ``monthly_opex_cap``, ``power_cap_kw``, ``rack_units_cap`` or
    ``count:<gpu>``."""
    limit: float
    needed: float
    """What the least fleet found needs (in the request's currency, kW, U or GPUs)."""
    proven: bool
    """``needed`` is the least within the planner's tolerance; else an upper bound ("at most")."""
    fleet: str = ""
    """That fleet, in the planner's words (``h100-nvl ×6 buy``)."""


class Alternative(_Quote):
    kind: AlternativeKind
    name: str
    """GPU id (single-GPU), API providers (API), or empty."""
    feasible: bool
    horizon_tco: Money | None
    capex: Money | None
    gpus: int
    fleet_summary: str
    extra_cost: Money | None
    """This alternative's TCO − the recommended plan's (positive: it costs more)."""
    extra_fraction: float | None
    """``extra_cost`` ÷ the recommended plan's TCO."""
    reason: str
    """Why it is infeasible or not comparable (planner's words); empty otherwise."""
    meets_requirement: bool = True
    binding_caps: tuple[QuoteCap, ...] = ()
    """Why no fleet of this GPU type alone meets the request: the caps it exceeds (``reason`` says
    it in the planner's English)."""
    """False when it acquires GPUs in a way the request does not allow (renting, or a hosted API,
    for a buy-only request): shown to the bidder's team marked as such, never to the customer."""


class BomKind(StrEnum):
    GPU = "gpu"
    HOST = "host"
    NETWORKING = "networking"
    """The scale-out fabric of multi-node servers (switch ports, optics, NICs)."""
    INSTALLATION = "installation"
    STORAGE = "storage"
    ROUNDING = "rounding"
    """단수 조정: the plan's capex less the lines' unit price × quantity, each unit price rounded to
    the minor unit (a few won or cents at most), so the supply amount is the plan's capex."""


class BomLine(_Quote):
    """One purchased item: GPUs of one offer, or the hosts (servers) they go in."""

    kind: BomKind
    item_id: str
    """GPU id or server id."""
    item_name: str
    offer_id: str
    provider: str
    price_label: str
    unit_price: Money
    quantity: int
    amount: Money
    owned: bool = False
    covers: int = 0
    """Installation: the servers (``covers_servers``) or GPUs it installs; storage: its TB."""
    covers_servers: bool = False
    server_name: str = ""
    """Networking: the server model whose fabric it is."""
    support_rate: float = 0.0
    """Support per year as a share of ``amount`` (GPUs and hosts: the plan's support of the line's
    option ÷ the option's purchase lines), so the workbook's support follows an edited price."""
    residual_fraction: float = 0.0
    """Market value at the end of the horizon as a share of ``amount`` (the same way)."""
    year: int = 0
    """The plan year it is bought at the start of (a multi-year plan's tranche); 0 for one period."""


class RentalLine(_Quote):
    gpu_id: str
    mode: str
    offer_id: str
    provider: str
    price_label: str
    gpus: int
    price_per_gpu_hour: Money | None
    busy_gpu_hours_per_month: float
    monthly_amount: Money


class Bom(_Quote):
    lines: tuple[BomLine, ...]
    rentals: tuple[RentalLine, ...]
    supply_amount: Money
    """Sum of the purchase lines (= the plan's capex)."""
    vat_rate: float
    vat: Money | None
    """VAT on the purchases at the request's rate; None when the request did not ask for VAT."""
    total: Money
    """Supply amount + VAT (the supply amount without VAT)."""


class CostComponentRow(_Quote):
    name: str
    """``solver.analysis.tco.CostComponentName`` value."""
    horizon_amount: Money
    monthly_amount: Money
    explanation: str


class OpexMonthly(_Quote):
    """The plan's monthly operating cost by component (rounded lines; they add up to ``total``)."""

    support: Money
    power: Money
    colocation: Money
    reserved: Money
    on_demand: Money
    total: Money
    software: Money | None = None
    """Software licences (None in quotes saved before issue 15's whole-system lines)."""
    storage: Money | None = None
    """Storage rented per TB-month."""

    def by_row(self) -> dict[str, Money]:
        """The monthly lines by cash-flow row (``report.cashflow.ROWS``), zero lines included."""
        zero = Money(amount=self.total.amount * 0, currency=self.total.currency)
        return {
            "support": self.support,
            "power": self.power,
            "colocation": self.colocation,
            "software": self.software or zero,
            "storage": self.storage or zero,
            "reserved": self.reserved,
            "on_demand": self.on_demand,
        }


class VatSummary(_Quote):
    """The plan's VAT line (issue 15: supply = capex + opex × months, VAT on it, total), when the
    request asked for VAT; every other amount is ex-VAT."""

    rate: float
    supply: Money
    vat: Money
    total: Money
    horizon_tco_with_vat: Money


class BookDepreciationYear(_Quote):
    year: int
    months: int
    depreciation: Money
    book_value_end: Money


class DiscountedYear(_Quote):
    """One plan year of cash (the planner's ``CashFlowYear``): 0 = purchases at the start."""

    year: int
    months: int
    nominal: Money
    discounted: Money


class Discounting(_Quote):
    """The plan's cash in today's money at the request's discount rate (``PlanResult.cash_flows``)."""

    rate: float
    objective: str
    """What the plan minimised: "npv" or "nominal"."""
    years: tuple[DiscountedYear, ...]
    npv: Money
    nominal_total: Money | None = None
    """Σ nominal: the horizon's TCO in cash (None in quotes stored before it was kept)."""


class Economics(_Quote):
    horizon_tco: Money
    capex: Money
    residual_value: Money
    depreciation_monthly: Money
    opex: OpexMonthly
    components: tuple[CostComponentRow, ...]
    vat: VatSummary | None = None
    book_depreciation: tuple[BookDepreciationYear, ...] = ()
    """Straight-line book depreciation per year (accounting only; the TCO uses market value)."""
    discounting: Discounting | None = None
    """Set when the request gives a discount rate."""
    lease_by_year: tuple[Money, ...] = ()
    """The leases' payments per plan year (1 …); () without a lease."""


class WorkloadUseRow(_Quote):
    """The part of one deployment group serving a workload (the planner's ``WorkloadGroupUse``)."""

    gpu_id: str
    tp: int
    mig_slice: int
    """0 = whole GPUs; n = a replica runs on 1/n of one GPU."""
    precision: str
    shared: bool
    replicas: float
    """Replica-equivalents serving the workload in its peak hour."""
    replicas_max: float
    """The most in any hour."""
    share: float
    """The workload's share of the group's load over the day."""
    output_tok_s: float
    deployment: str = ""
    """The planner's name of a co-located group (``DeploymentLine.label``); "" = named from the fields."""
    card_share: float = 1.0
    """The share of each card the group runs on (co-location; 1 = whole cards)."""
    disaggregation: RolesRow | None = None
    """The group's roles when it is disaggregated (its replicas are then units)."""


class GroupShareRow(_Quote):
    workload: str
    share: float
    """Fraction of the group's load over the day (a group's shares sum to 1)."""


class DeploymentGroupRow(_Quote):
    """One deployment group of the plan (the planner's ``DeploymentLine``): a shared pool or one
    workload's own replicas of one deployment."""

    gpu_id: str
    tp: int
    mig_slice: int
    precision: str
    shared: bool
    replicas_peak: int
    replicas_off_peak: int
    replicas_by_hour: tuple[int, ...]
    gpus_peak: float
    peak_hour: int
    shares: tuple[GroupShareRow, ...]
    output_tok_s: float
    utilization: float
    deployment: str = ""
    """The planner's name of a co-located group (``DeploymentLine.label``); "" = named from the fields."""
    card_share: float = 1.0
    """The share of each card the group runs on (co-location; 1 = whole cards)."""
    disaggregation: RolesRow | None = None
    """Its two roles when the group is disaggregated (``replicas_*`` then count units)."""


class WorkloadRow(_Quote):
    name: str
    served: bool
    gpu_id: str
    """The group with the most replicas at the workload's peak (``uses`` has every group)."""
    tp: int
    mig_slice: str
    precision: str
    replicas: float
    """Replica-equivalents serving it in its peak hour (own replicas plus shares of pools)."""
    ttft_p95_ms: float | None
    ttft_target_ms: float | None
    tpot_p95_ms: float | None
    tpot_target_ms: float | None
    per_user_tok_s: float | None
    min_per_user_tok_s: float | None
    aggregate_tok_s: float | None
    """Output tokens/s its replica-equivalents at the peak hour deliver at the SLA."""
    utilization: float | None
    note: str
    """Why it is not served, or empty."""
    uses: tuple[WorkloadUseRow, ...] = ()
    """Every deployment group serving it in some hour, most replicas at peak first."""


class TrainingRow(_Quote):
    name: str
    gpu_id: str
    gpus: int
    hours_per_run: float
    runs_per_month: float
    deadline_hours: float | None
    cost_per_run: Money | None


class BuyVsRentRow(_Quote):
    gpu_id: str
    owned_fixed_monthly_per_gpu: float | None
    power_per_busy_gpu_hour: float
    on_demand_per_gpu_hour: Money | None
    reserved_per_gpu_hour: Money | None
    break_even_on_demand: float | None
    break_even_reserved: float | None
    plan_utilization: float | None
    payback_months: float | None
    verdict: str


class ApiRow(_Quote):
    workload: str
    api_price_id: str
    provider: str
    api_model: str
    same_model: bool
    api_per_million_tokens: Money | None
    self_hosted_per_million_tokens: Money | None
    workload_daily_tokens: float
    break_even_daily_tokens: float | None
    verdict: str


class HourlyLoad(_Quote):
    """One workload's demand and its replicas' capacity at the SLA through the day (requests/s)."""

    workload: str
    demand_req_s: tuple[float, ...]
    """24 values, hour 0 to 23."""
    capacity_req_s: tuple[float, ...]


class EmbeddingRow(_Quote):
    """An embedding workload in its own units (``report.embeddings``)."""

    name: str
    embeddings_per_s: float
    """Requests (one embedding each) the replicas at the peak hour can take per second."""
    input_tok_s: float
    input_tokens: int
    per_million_input_tokens: Money | None


class SensitivityRow(_Quote):
    subject: str
    parameter: str
    change_down_fraction: float | None
    change_up_fraction: float | None
    last_same_down_fraction: float | None = None
    """The largest decrease checked that keeps the mix: with ``change_down_fraction`` it brackets
    where the mix changes (a wide bracket: the search stopped before narrowing it)."""
    last_same_up_fraction: float | None = None
    plan_below: str
    plan_above: str
    explanation: str


class FrontierRow(_Quote):
    value: float
    status: str
    horizon_tco: Money | None
    fleet_summary: str
    pareto_optimal: bool


class Frontier(_Quote):
    axis: str
    points: tuple[FrontierRow, ...]


class AssumptionKind(StrEnum):
    OFFER = "offer"
    SERVER = "server"
    API_PRICE = "api_price"
    SITE = "site"
    FX = "fx"
    MODEL = "model"
    PERFORMANCE = "performance"


class Assumption(_Quote):
    kind: AssumptionKind
    key: str
    """Entry id (offer, server, API price) or the site field's name."""
    value: str
    """The number with its unit as the pricebook states it (e.g. ``50000000 KRW``, ``1.3``)."""
    source: str
    as_of: dt.date | None
    label: str
    """Price label (list, quote, estimate…) or empty."""


class SolverInfo(_Quote):
    status: str
    backend: str
    objective: float | None
    best_bound: float | None
    gap: float | None
    seconds: float
    limit_fired: str
    complete: bool


class Provenance(_Quote):
    fleetplan_version: str
    pricebook_version: str
    pricebook_hash: str
    calibration_date: str
    overrides_applied: tuple[str, ...]
    request_json: str
    """The request itself (JSON of the scenario), so the quote can be reproduced."""


class QuoteSite(_Quote):
    """Where the bought servers run and whether their resale value is credited: what the cost
    lines of the site and the residual value are called. The defaults read as quotes stored
    before these were kept (a plain colocation line, a residual credit)."""

    site_model: str = ""
    """``pricebook.schema.SiteModel`` value (the request's, else the pricebook's); empty: unknown."""
    colocation_includes_power: bool = False
    residual_value_credit: bool = True


class QuoteNotice(_Quote):
    """One of the plan's structured notices (``solver.planner.notices.Notice``): worded when the
    quote is rendered, in its language."""

    code: str
    params: tuple[tuple[str, str], ...] = ()


class QuoteData(_Quote):
    """Everything a quote shows; see the module docstring."""

    schema_version: int = QUOTE_SCHEMA_VERSION
    title: str
    quoted_on: dt.date
    status: str
    """``solver.optimizer.results.SolveStatus`` value."""
    summary: str
    currency: Currency
    horizon_months: int
    includes_vat: bool
    """The request asked for VAT: ``economics.vat`` holds the VAT line (amounts stay ex-VAT)."""
    fleet_summary: str
    gpus: int
    economics: Economics | None
    """None without a plan (infeasible, no solution)."""
    saving: Money | None
    saving_fraction: float | None
    saving_against: str
    alternatives: tuple[Alternative, ...]
    bom: Bom | None
    workloads: tuple[WorkloadRow, ...]
    groups: tuple[DeploymentGroupRow, ...] = ()
    """The plan's deployment groups (absent in quotes stored before they were added)."""
    training: tuple[TrainingRow, ...]
    buy_vs_rent: tuple[BuyVsRentRow, ...]
    api: tuple[ApiRow, ...]
    sensitivity: tuple[SensitivityRow, ...]
    frontier: Frontier | None
    assumptions: tuple[Assumption, ...]
    fx_note: str
    vat_rate: float
    uncertainty_low: float
    uncertainty_high: float
    uncertainty_note: str
    depreciation_note: str
    diagnosis: tuple[str, ...]
    warnings: tuple[str, ...]
    """The planner's warnings as it wrote them (the notices' English words among them)."""
    notices: tuple[QuoteNotice, ...] = ()
    solver: SolverInfo
    provenance: Provenance
    allowed_modes: tuple[str, ...] = ()
    """The request's allowed acquisition modes (``solver.domain.AcquisitionMode`` values)."""
    audience: Audience = Audience.CUSTOMER
    """Who it is rendered for (set on export, like ``title`` and ``header``)."""
    header: QuoteHeader = QuoteHeader()
    capex_budget: Money | None = None
    """The request's capex budget (None: no budget)."""
    budget_includes_vat: bool = False
    """The budget is VAT-inclusive: purchases + their VAT must fit it."""
    embeddings: tuple[EmbeddingRow, ...] = ()
    hourly: tuple[HourlyLoad, ...] = ()
    power_kw: float | None = None
    """Wall power of the on-site fleet at full load, PUE included (None: no plan)."""
    rack_units: float | None = None
    site: QuoteSite = QuoteSite()
    disaggregation: DisaggregationWhy | None = None
    """Why the plan's disaggregated deployments won (None: the plan has none)."""
    schedule: Schedule | None = None
    """A multi-year plan's schedule (연차별 도입 계획); None for one period. The other sections'
    fleet, bill of materials and cost lines are then the final year's, for its months alone."""

    @property
    def internal(self) -> bool:
        return self.audience is Audience.INTERNAL

    @property
    def rentals_allowed(self) -> bool:
        """The request allows renting (reserved or on demand); unknown (old quotes) counts as yes."""
        return not self.allowed_modes or bool({"reserved", "on_demand"} & set(self.allowed_modes))

    def shown_alternatives(self) -> tuple[Alternative, ...]:
        """The alternatives this audience sees: the customer only those meeting the request."""
        return tuple(a for a in self.alternatives if self.internal or a.meets_requirement)

    @property
    def has_plan(self) -> bool:
        return self.economics is not None
