"""Domain objects of a planning request: workloads, SLAs, constraints, fleets, overrides.

These pydantic models are the validated form of the ``fleetplan.v1`` request messages; the
service converts protobuf to them in one place (``service.convert``) and everything in
``solver`` works only with them. They are frozen: nothing downstream mutates a request.

Units are in the field names (``_ms``, ``_tok_s``, ``_kw``). Validation errors raised here carry
the field path (pydantic ``loc``), which the service turns into BadRequest field violations.
"""

from __future__ import annotations

from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from pricebook.overrides import PricebookOverrides
from pricebook.schema import Currency, GpuId, Money, SiteModel
from solver.pricing.discounting import check_rate
from solver.units import HOURS_PER_DAY, SECONDS_PER_DAY, SECONDS_PER_HOUR

# Caps that keep one request's model bounded (reliability issue: refuse, naming the limit).
MAX_WORKLOADS = 500
MAX_HORIZON_MONTHS = 120
MAX_DAILY_TOKENS = 10**15
MAX_PLAN_GPUS = 10**7
"""Most GPUs a plan's inference workloads may need at their peak, together (100× the largest
clusters built): past it, counts overflow the API's 32-bit fields and the MIP's tolerance is worth
whole GPUs."""
MAX_NAME_CHARS = 128
MAX_PERIODS = MAX_HORIZON_MONTHS
"""Most periods of a multi-year plan (one a month over the longest horizon)."""
MAX_PRICE_PATHS = 256
WorkloadName = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS, pattern=r"\S")]
"""A workload's name: 1–128 characters, not all blank (it names the workload in every answer)."""
"""Longest workload name (the service's request limits refuse longer ones before conversion)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Precision(StrEnum):
    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"
    INT8 = "int8"
    INT4 = "int4"
    FP4 = "fp4"


class Engine(StrEnum):
    VLLM = "vllm"
    SGLANG = "sglang"
    TRTLLM = "trtllm"


class Arrival(StrEnum):
    """How the users of a closed loop send their requests."""

    STEADY = "steady"
    """Each user sends the next request as soon as the last one ends, for a long run (the usual
    serving benchmark: ``--concurrency N`` with many more requests than users)."""
    BURST = "burst"
    """All N users send one request at the same moment (seed 000's benchmark)."""


class AcquisitionMode(StrEnum):
    BUY = "buy"
    RESERVED = "reserved"
    ON_DEMAND = "on_demand"


class Isolation(StrEnum):
    """Whether an inference workload may share replicas with others running the same model."""

    SHARED = "shared"
    """Pooled: workloads on the same model share replicas of a deployment (the default)."""
    DEDICATED = "dedicated"
    """Its own replicas only (e.g. a customer who requires its own hardware)."""


class CapacityQuantile(StrEnum):
    """Which quantile of the performance model's calibrated band capacities are sized at."""

    P50 = "p50"
    """The estimate itself (the band's median)."""
    P80 = "p80"
    """Capacity the real replica reaches with 80 % probability."""
    P95 = "p95"
    """The band's low end: capacity reached with 95 % probability."""


INTERACTIVE_TARGET_UTILIZATION = 0.85
"""Default target utilization of interactive work: replicas sized to run at 85 % of their capacity
at the SLA, not at 99-100 % with TPOT 39.99 ms against a 40 ms target."""
BATCH_TARGET_UTILIZATION = 1.0
"""Default target utilization of batch work: it queues, so replicas may run flat out."""
MAX_LENGTH_BUCKETS = 64
MAX_BATCH_DEADLINE_HOURS = 168
"""A week: a batch window longer than that is not a plan's hour-by-hour concern."""
"""Most request-length buckets one workload may give (an 8×8 input × output histogram)."""
TP_CHOICES = (1, 2, 4, 8)
"""Tensor-parallel degrees a deployment may use (``allowed_tp`` values)."""


class CostObjective(StrEnum):
    """What the plan minimises: the net present value of its cash flows at the request's
    ``discount_rate_annual`` (``solver.pricing.discounting``), or the undiscounted TCO."""

    NPV = "npv"
    NOMINAL = "nominal"


class OfferPolicy(StrEnum):
    """Which offers of a GPU and acquisition mode the planner weighs (``solver.pricing.costs``:
    every eligible rental offer is an option; purchases take the cheapest per server model)."""

    MOST_RELIABLE = "most_reliable"
    """The offers with the most reliable price label available (``pricebook.schema.LABEL_RELIABILITY``:
    quote > list > street > derived > estimate)."""
    CHEAPEST = "cheapest"
    """Every offer whatever its label."""


class DeploymentPolicy(StrEnum):
    """How replicas follow the hours of the day (``solver.optimizer.static``)."""

    STATIC = "static"
    """One set of replicas all day on held GPUs (bought, owned, reserved); replicas on GPUs rented
    on demand may still follow the hours."""
    HOURLY = "hourly"
    """Replicas follow each hour's demand on every GPU (re-deployed as demand changes)."""


class TrainingMethod(StrEnum):
    FULL = "full"
    LORA = "lora"
    QLORA = "qlora"


class ModelSpec(_Frozen):
    """An inline architecture. With only ``params_b`` (and ``active_params_b``) a typical
    architecture of that size is assumed and every answer says so."""

    params_b: Annotated[float, Field(gt=0, le=20_000)]
    active_params_b: Annotated[float, Field(gt=0, le=20_000)] | None = None
    layers: Annotated[int, Field(gt=0)] | None = None
    hidden: Annotated[int, Field(gt=0)] | None = None
    intermediate: Annotated[int, Field(gt=0)] | None = None
    heads: Annotated[int, Field(gt=0)] | None = None
    kv_heads: Annotated[int, Field(gt=0)] | None = None
    head_dim: Annotated[int, Field(gt=0)] | None = None
    vocab: Annotated[int, Field(gt=0)] | None = None
    experts: Annotated[int, Field(ge=0)] | None = None
    experts_per_token: Annotated[int, Field(ge=0)] | None = None
    kv_lora_rank: Annotated[int, Field(ge=0)] | None = None
    max_context: Annotated[int, Field(gt=0)] | None = None

    @model_validator(mode="after")
    def _active_not_above_total(self) -> ModelSpec:
        if self.active_params_b is not None and self.active_params_b > self.params_b:
            msg = "active_params_b cannot exceed params_b"
            raise ValueError(msg)
        return self


class ModelRef(_Frozen):
    """Exactly one of a catalogue id (or alias) and an inline spec."""

    model_id: str | None = None
    spec: ModelSpec | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> ModelRef:
        if (self.model_id is None) == (self.spec is None):
            msg = "give exactly one of a catalogue model id and an inline model spec"
            raise ValueError(msg)
        return self


class Sla(_Frozen):
    """Service level for interactive work. All None = throughput-only (batch) work."""

    ttft_p95_ms: Annotated[float, Field(gt=0)] | None = None
    tpot_p95_ms: Annotated[float, Field(gt=0)] | None = None
    min_per_user_tok_s: Annotated[float, Field(gt=0)] | None = None

    @property
    def is_batch(self) -> bool:
        return self.ttft_p95_ms is None and self.tpot_p95_ms is None and self.min_per_user_tok_s is None


class LengthBucket(_Frozen):
    """One bucket of a workload's request-length mix: requests of about this size and their share."""

    input_tokens: Annotated[int, Field(gt=0, le=2_000_000)]
    output_tokens: Annotated[int, Field(gt=0, le=1_000_000)]
    share: Annotated[float, Field(gt=0, le=1e9)]
    """Relative share of the workload's requests (the mix's shares are normalised to sum to 1)."""


MIN_PEAK_REQUEST_RATE = 1e-6
MIN_DEMAND_MULTIPLIER = 1e-4
"""Smallest non-zero ``demand_by_year`` multiplier: a vanishing one made the capacity rows'
coefficients infinite, as a vanishing peak rate did."""
"""Fewest requests per second at peak (one every 11.6 days): a rate of 1e-300 made the capacity
rows' coefficients infinite, and the solver gave up without a word."""


DISAGGREGATION_BY_DEFAULT = True
"""Whether interactive work with TTFT and TPOT targets may be disaggregated unless it says."""


class InferenceWorkload(_Frozen):
    name: WorkloadName
    model: ModelRef
    precision: Precision | None = None
    """Weight precision; None lets the planner choose: the weights' own precision as released or FP8,
    plus ``allowed_precisions`` (``solver.optimizer.candidates.precisions_to_try``)."""
    allowed_precisions: tuple[Precision, ...] = ()
    """Further precisions the planner may choose when ``precision`` is None (e.g. INT4 or FP4 to fit
    one card); no quantization the workload does not list."""
    kv_precision: Precision | None = None
    """KV-cache precision; None = same as weights for fp8, else bf16."""
    engine: Engine = Engine.VLLM
    input_tokens: Annotated[int, Field(gt=0, le=2_000_000)]
    output_tokens: Annotated[int, Field(gt=0, le=1_000_000)]
    daily_tokens: Annotated[int, Field(gt=0, le=MAX_DAILY_TOKENS)] | None = None
    """Input + output tokens processed per day."""
    peak_request_rate_per_s: Annotated[float, Field(ge=MIN_PEAK_REQUEST_RATE, le=1e9)] | None = None
    """Alternative demand: requests per second at peak."""
    peak_to_average: Annotated[float, Field(ge=1.0, le=100.0)] = 1.0
    hourly_profile: tuple[Annotated[float, Field(ge=0)], ...] | None = None
    """24 relative weights, one per hour of day; replaces ``peak_to_average`` when given."""
    sla: Sla = Sla()
    prefix_cache_hit_rate: Annotated[float, Field(ge=0.0, lt=1.0)] = 0.0
    interactive: bool = True
    redundancy: Annotated[int, Field(ge=0, le=8)] = 0
    """Extra replicas beyond what demand needs (1 = N+1)."""
    isolation: Isolation = Isolation.SHARED
    """SHARED pools replicas with other workloads of the same model; DEDICATED keeps its own."""
    length_mix: Annotated[tuple[LengthBucket, ...], Field(max_length=MAX_LENGTH_BUCKETS)] = ()
    """Request sizes as a histogram; empty = every request is ``input_tokens`` + ``output_tokens``.
    When given, ``input_tokens``/``output_tokens`` may be left out (they become the mix's mean)."""
    allowed_tp: tuple[Literal[1, 2, 4, 8], ...] = ()
    """Tensor-parallel degrees the workload may run at; empty = any."""
    max_tp: Annotated[int, Field(ge=1, le=8)] | None = None
    """Largest tensor-parallel degree (e.g. "TP ≤ 2"); None = no limit."""
    allow_mig: bool = True
    """False: never on a MIG slice (e.g. "no MIG in production")."""
    allow_disaggregation: bool | None = None
    """Prefill and decode on separate engines (possibly GPU types) with the KV cache moved between
    them (``solver.optimizer.disagg_candidates``); None = on for interactive work with both a TTFT
    and a TPOT target (``disaggregation_allowed``)."""
    target_utilization: Annotated[float, Field(gt=0, le=1)] | None = None
    """Share of a replica's capacity at the SLA the plan may use; None = 0.85 interactive, 1.0 batch."""
    batch_deadline_hours: Annotated[int, Field(ge=1, le=MAX_BATCH_DEADLINE_HOURS)] | None = None
    """Batch work only: every request is done within this many hours of arriving (24 = within the
    day), so the plan may serve it in idle hours instead of at its average rate in every hour;
    None = at the average rate in every hour (as 1 does)."""
    demand_by_year: Annotated[
        tuple[Annotated[float, Field(ge=0, le=1e6, allow_inf_nan=False)], ...], Field(max_length=MAX_PERIODS)
    ] = ()
    """Multi-year plans: the stated demand × this multiplier in each period (one per period of
    ``Constraints.periods``); empty = the stated demand in every period."""
    daily_tokens_by_year: Annotated[
        tuple[Annotated[int, Field(ge=0, le=MAX_DAILY_TOKENS)], ...], Field(max_length=MAX_PERIODS)
    ] = ()
    """Multi-year plans: input + output tokens a day in each period (absolute; instead of
    ``demand_by_year``): the stated demand × its ratio to the stated daily tokens."""
    peak_request_rate_by_year: Annotated[
        tuple[Annotated[float, Field(ge=0, le=1e9, allow_inf_nan=False)], ...], Field(max_length=MAX_PERIODS)
    ] = ()
    """Multi-year plans: requests per second at peak in each period (absolute; instead of
    ``demand_by_year``): the stated demand × its ratio to the stated peak rate."""

    @model_validator(mode="before")
    @classmethod
    def _sizes_from_mix(cls, data: object) -> object:
        """With a length mix and no single size, the single size is the mix's mean (reports)."""
        if not isinstance(data, dict) or not data.get("length_mix"):
            return data
        if data.get("input_tokens") and data.get("output_tokens"):
            return data
        buckets = [LengthBucket.model_validate(b) if isinstance(b, dict) else b for b in data["length_mix"]]
        if not all(isinstance(b, LengthBucket) for b in buckets):
            return data
        total = sum(b.share for b in buckets)
        filled = dict(data)
        if not filled.get("input_tokens"):
            filled["input_tokens"] = max(1, round(sum(b.input_tokens * b.share for b in buckets) / total))
        if not filled.get("output_tokens"):
            filled["output_tokens"] = max(1, round(sum(b.output_tokens * b.share for b in buckets) / total))
        return filled

    @field_validator("demand_by_year")
    @classmethod
    def _no_vanishing_demand(cls, values: tuple[float, ...]) -> tuple[float, ...]:
        for v in values:
            if 0 < v < MIN_DEMAND_MULTIPLIER:
                msg = (
                    f"a period's multiplier is 0 (no demand) or at least {MIN_DEMAND_MULTIPLIER:g}, got {v:g}"
                )
                raise ValueError(msg)
        return values

    @field_validator("allow_disaggregation")
    @classmethod
    def _disaggregation_is_interactive(cls, value: bool | None, info: ValidationInfo) -> bool | None:
        if value and info.data.get("interactive") is False:
            msg = "disaggregated prefill and decode is for interactive work (serving_kind interactive)"
            raise ValueError(msg)
        return value

    @model_validator(mode="after")
    def _batch_window(self) -> InferenceWorkload:
        if self.batch_deadline_hours is not None and self.interactive:
            msg = (
                "batch_deadline_hours is for batch work (serving_kind batch); "
                "interactive work is served as it arrives"
            )
            raise ValueError(msg)
        if self.batch_deadline_hours is not None and self.redundancy > 0:
            msg = "batch_deadline_hours with redundancy: spare replicas are for work served as it arrives"
            raise ValueError(msg)
        return self

    @model_validator(mode="after")
    def _demand(self) -> InferenceWorkload:
        if (self.daily_tokens is None) == (self.peak_request_rate_per_s is None):
            msg = "give exactly one of daily_tokens and peak_request_rate_per_s"
            raise ValueError(msg)
        if self.hourly_profile is not None:
            if len(self.hourly_profile) != HOURS_PER_DAY:
                msg = f"hourly_profile needs {HOURS_PER_DAY} values, got {len(self.hourly_profile)}"
                raise ValueError(msg)
            if sum(self.hourly_profile) <= 0:
                msg = "hourly_profile must have a positive hour"
                raise ValueError(msg)
        return self

    @property
    def tokens_per_request(self) -> float:
        """Mean input + output tokens of one request (over the length mix when given)."""
        if not self.length_mix:
            return self.input_tokens + self.output_tokens
        return sum((b.input_tokens + b.output_tokens) * s for b, s in self.length_shares())

    def length_shares(self) -> tuple[tuple[LengthBucket, float], ...]:
        """Each request size with its share of requests (summing to 1); one bucket without a mix."""
        if not self.length_mix:
            only = LengthBucket(input_tokens=self.input_tokens, output_tokens=self.output_tokens, share=1.0)
            return ((only, 1.0),)
        total = sum(b.share for b in self.length_mix)
        return tuple((b, b.share / total) for b in self.length_mix)

    @property
    def utilization_target(self) -> float:
        """``target_utilization``, or its default by serving kind."""
        if self.target_utilization is not None:
            return self.target_utilization
        return INTERACTIVE_TARGET_UTILIZATION if self.interactive else BATCH_TARGET_UTILIZATION

    @property
    def disaggregation_allowed(self) -> bool:
        """``allow_disaggregation``, or its default: interactive work with TTFT and TPOT targets."""
        if self.allow_disaggregation is not None:
            return self.allow_disaggregation
        return DISAGGREGATION_BY_DEFAULT and self.interactive and (
            self.sla.ttft_p95_ms is not None and self.sla.tpot_p95_ms is not None
        )

    def allows_tp(self, tp: int) -> bool:
        """Whether the workload's restrictions let it run at tensor-parallel degree ``tp``."""
        return (not self.allowed_tp or tp in self.allowed_tp) and (self.max_tp is None or tp <= self.max_tp)

    def hourly_request_rates(self) -> tuple[float, ...]:
        """Requests per second to serve in each of the 24 hours of a day.

        Interactive work is served as it arrives: at the peak in every hour without a profile (the
        peak may come at any hour), in the profile's shape with one. Batch work may queue within the
        day, so only its daily volume matters: it is served at the day's average rate in every hour.
        """
        if not self.interactive:
            return (self.average_request_rate(),) * HOURS_PER_DAY
        if self.peak_request_rate_per_s is not None:
            peak = self.peak_request_rate_per_s
            if self.hourly_profile is None:
                return (peak,) * HOURS_PER_DAY
            top = max(self.hourly_profile)
            return tuple(peak * w / top for w in self.hourly_profile)
        assert self.daily_tokens is not None  # guaranteed by _demand
        daily_requests = self.daily_tokens / self.tokens_per_request
        if self.hourly_profile is None:
            return (daily_requests / SECONDS_PER_DAY * self.peak_to_average,) * HOURS_PER_DAY
        total = sum(self.hourly_profile)
        return tuple(daily_requests * w / total / SECONDS_PER_HOUR for w in self.hourly_profile)

    def demand_factors(self) -> tuple[float, ...]:
        """The stated demand's multiplier in each period, from whichever per-period figure is given
        (``demand_by_year``, ``daily_tokens_by_year`` or ``peak_request_rate_by_year``; every rate
        is linear in the demand); empty = the stated demand in every period."""
        if self.daily_tokens_by_year:
            stated = self.average_request_rate() * self.tokens_per_request * SECONDS_PER_DAY
            daily = self.daily_tokens or stated
            return tuple(v / daily for v in self.daily_tokens_by_year)
        if self.peak_request_rate_by_year:
            peak = self.stated_peak_rate()
            return tuple(v / peak for v in self.peak_request_rate_by_year)
        return self.demand_by_year

    def stated_peak_rate(self) -> float:
        """Requests per second at the day's peak of the stated demand (as interactive work)."""
        if self.peak_request_rate_per_s is not None:
            return self.peak_request_rate_per_s
        assert self.daily_tokens is not None  # guaranteed by _demand
        daily_requests = self.daily_tokens / self.tokens_per_request
        if self.hourly_profile is None:
            return daily_requests / SECONDS_PER_DAY * self.peak_to_average
        return daily_requests * max(self.hourly_profile) / sum(self.hourly_profile) / SECONDS_PER_HOUR

    def average_request_rate(self) -> float:
        """The day's average requests per second (the peak ÷ ``peak_to_average`` for a peak rate)."""
        if self.peak_request_rate_per_s is not None:
            peak = self.peak_request_rate_per_s
            if self.hourly_profile is None:
                return peak / self.peak_to_average
            return peak * sum(self.hourly_profile) / (HOURS_PER_DAY * max(self.hourly_profile))
        assert self.daily_tokens is not None  # guaranteed by _demand
        return self.daily_tokens / self.tokens_per_request / SECONDS_PER_DAY


class ReferenceGpuHours(_Frozen):
    """Training demand as hours on a reference GPU (e.g. 300 H100-hours a month)."""

    gpu: GpuId
    gpu_hours_per_month: Annotated[float, Field(gt=0, le=1e9)]


MIN_RUNS_PER_MONTH = 1 / 1200
"""Fewest training runs a month a request may ask for: one a century."""


class TrainingWorkload(_Frozen):
    name: WorkloadName
    model: ModelRef
    method: TrainingMethod
    tokens_per_run: Annotated[float, Field(gt=0, le=1e15)] | None = None
    runs_per_month: Annotated[float, Field(ge=MIN_RUNS_PER_MONTH, le=10_000)] = 1.0
    """At least one run a century: the cost per run divides by it (1e-300 overflowed the money
    rounding, INTERNAL; found by the mutation fuzzer)."""
    reference: ReferenceGpuHours | None = None
    seq_len: Annotated[int, Field(gt=0, le=1_000_000)] = 4096
    deadline_hours: Annotated[float, Field(gt=0, le=24 * 366)] | None = None
    """Each run must finish within this many wall-clock hours."""
    max_gpus_per_run: Annotated[int, Field(gt=0, le=4096)] | None = None
    """At most this many GPUs work on one run (1 = single-GPU jobs, as seed 000 compares
    time-to-train); None = as many as the deadline needs."""

    @model_validator(mode="after")
    def _demand(self) -> TrainingWorkload:
        if (self.tokens_per_run is None) == (self.reference is None):
            msg = "give exactly one of tokens_per_run and reference GPU-hours"
            raise ValueError(msg)
        return self


Workload = InferenceWorkload | TrainingWorkload


MAX_GPU_COUNT = 100_000
"""Most GPUs a request may name in one place (a fleet line, owned GPUs, a count bound's minimum): a
fleet line's count is an int32 in the API, and no bid is near it."""


class OwnedGpus(_Frozen):
    gpu: GpuId
    count: Annotated[int, Field(gt=0, le=MAX_GPU_COUNT)]


class CountBound(_Frozen):
    gpu: GpuId
    min_count: Annotated[int, Field(ge=0, le=MAX_GPU_COUNT)] = 0
    """At least this many at the plan's busiest hour, GPUs of every mode counted (held + rented)."""
    max_count: Annotated[int, Field(ge=0)] | None = None

    @model_validator(mode="after")
    def _ordered(self) -> CountBound:
        if self.max_count is not None and self.min_count > self.max_count:
            msg = f"min_count {self.min_count} exceeds max_count {self.max_count}"
            raise ValueError(msg)
        return self


class PricePath(_Frozen):
    """Price multipliers per period for one GPU class or one offer (multi-year plans): purchases
    through it in period p cost its price × ``multipliers[p]``, rentals in period p likewise."""

    gpu: GpuId | None = None
    offer: str | None = Field(default=None, min_length=1, max_length=256)
    multipliers: Annotated[
        tuple[Annotated[float, Field(gt=0, le=1e3, allow_inf_nan=False)], ...],
        Field(min_length=1, max_length=MAX_PERIODS),
    ]

    @model_validator(mode="after")
    def _one_target(self) -> PricePath:
        if (self.gpu is None) == (self.offer is None):
            msg = "give exactly one of a GPU class and an offer id"
            raise ValueError(msg)
        return self


class GpuAvailability(_Frozen):
    """A GPU type that can only be bought or rented from a later period (e.g. a next generation)."""

    gpu: GpuId
    from_year: Annotated[int, Field(ge=1, le=MAX_PERIODS)]
    """First period (1 = the first) in which the GPU may be acquired."""


MAX_STORAGE_TB = 1_000_000
"""Most storage a request may add (an exabyte: beyond it the number is a typo, not a fleet)."""
MAX_SOFTWARE_LICENCES = 16


def _non_negative_money(value: Money | None) -> Money | None:
    if value is not None and value.amount < 0:
        msg = f"must not be negative, got {value.amount}"
        raise ValueError(msg)
    return value


class SoftwareLicence(_Frozen):
    """A software subscription the fleet pays per GPU-year (e.g. NVIDIA AI Enterprise)."""

    name: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    price_per_gpu_year: Money
    nvidia_ai_enterprise: bool = False
    """The licence is NVIDIA AI Enterprise: bought GPUs whose purchase includes it
    (``Offer.ai_enterprise_included_months``) pay it only after those months."""

    _price = field_validator("price_per_gpu_year")(_non_negative_money)


class Storage(_Frozen):
    """Storage the fleet adds: ``capacity_tb`` at ``price_per_tb`` (one-off, or per TB-month)."""

    capacity_tb: Annotated[float, Field(gt=0, le=MAX_STORAGE_TB, allow_inf_nan=False)]
    price_per_tb: Money
    monthly: bool = False
    """True: ``price_per_tb`` is per TB-month (a storage service); False: a purchase per TB."""

    _price = field_validator("price_per_tb")(_non_negative_money)


class Constraints(_Frozen):
    currency: Currency = "USD"
    horizon_months: Annotated[int, Field(gt=0, le=MAX_HORIZON_MONTHS)] = 36
    capex_budget: Money | None = None
    monthly_opex_cap: Money | None = None
    power_cap_kw: Annotated[float, Field(gt=0)] | None = None
    rack_units_cap: Annotated[int, Field(gt=0)] | None = None
    allowed_gpus: tuple[GpuId, ...] = ()
    """Empty = every catalogue GPU."""
    allowed_modes: tuple[AcquisitionMode, ...] = (AcquisitionMode.BUY,)
    """A mode listed twice is the same set of modes: repeats are dropped (first order kept)."""
    owned: tuple[OwnedGpus, ...] = ()
    count_bounds: tuple[CountBound, ...] = ()
    include_vat: bool = False
    """Add a VAT line (and supply / VAT / total) to the answer; every other amount stays ex-VAT."""
    include_host_costs: bool = True
    """False prices GPUs alone (cards going into hosts already owned), as the seeds' budget tables do."""
    capacity_quantile: CapacityQuantile = CapacityQuantile.P50
    """Size replicas at this quantile of the performance model's band (p50 = the estimate)."""
    capex_budget_includes_vat: bool = False
    """Whether ``capex_budget`` is a VAT-inclusive figure (then purchases + VAT must fit it); default:
    the budget is ex-VAT, like every amount the planner compares."""
    offer_policy: OfferPolicy = OfferPolicy.MOST_RELIABLE
    deployment_policy: DeploymentPolicy | None = None
    """None = static for a buy-only request (``allowed_modes`` just buy), else hourly."""
    include_providers: tuple[str, ...] = ()
    """Only offers from these providers (case-insensitive); empty = every provider."""
    exclude_providers: tuple[str, ...] = ()
    """Never offers from these providers (case-insensitive)."""
    include_regions: tuple[str, ...] = ()
    """Only offers in these regions (case-insensitive; an offer without a region never matches);
    empty = every region."""
    exclude_regions: tuple[str, ...] = ()
    """Never offers in these regions (case-insensitive)."""
    pinned_offers: tuple[str, ...] = ()
    """Offer ids to use: for a GPU and acquisition kind with a pinned offer, only pinned offers count."""
    include_network_costs: bool = True
    """Price the scale-out fabric (switch ports, optics, NICs) of bought servers that are multi-node."""
    installation_fraction: Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)] = 0.0
    """One-off installation/integration as a fraction of the hardware bought (GPUs + hosts); no
    sourced default, so 0."""
    installation_per_server: Money | None = None
    """One-off installation/integration per server bought (on top of ``installation_fraction``)."""
    software_licences: tuple[SoftwareLicence, ...] = Field(default=(), max_length=MAX_SOFTWARE_LICENCES)
    """Licences paid per GPU-year on every GPU of the fleet (held, or per hour rented on demand)."""
    storage: Storage | None = None
    allow_colocation: bool = True
    """Small models may share a card with another deployment (``solver.optimizer.colocation``);
    False keeps every deployment on cards (or MIG slices) of its own."""
    allow_consumer_gpus: bool = False
    """Consumer (GeForce) cards may be planned; off by default: NVIDIA's GeForce driver licence
    excludes data-centre deployment, and they have no ECC and no enterprise support."""
    site_model: SiteModel | None = None
    """Where bought servers run (colocation or the buyer's own site); None = the pricebook's
    ``site.site_model``."""
    residual_value_credit: bool | None = None
    """Credit the hardware's market value at the horizon in the TCO; None = the pricebook's
    ``site.residual_value_credit``. False for a buyer who cannot sell it (public sector: 불용 처리)."""
    period_months: Annotated[int, Field(ge=1, le=MAX_HORIZON_MONTHS)] | None = None
    """Multi-year plans: the horizon splits into periods of this many months (the last one may be
    shorter); None = years when the request gives any per-year figure, else one period (a plan of
    one fleet for the whole horizon)."""
    price_by_year: Annotated[tuple[PricePath, ...], Field(max_length=MAX_PRICE_PATHS)] = ()
    """Price multipliers per period per GPU class or offer (an offer's path wins over its GPU's);
    unlisted ones follow the pricebook's default trend paths (estimates) in a multi-period plan."""
    available_from_year: Annotated[tuple[GpuAvailability, ...], Field(max_length=MAX_PRICE_PATHS)] = ()
    """GPU types that may only be acquired from a given period on."""
    discount_rate_annual: float | None = None
    """The buyer's cost of capital a year (0.1 = 10 %, e.g. a WACC): the answer shows the yearly cash
    flows and their NPV (``solver.pricing.discounting``); None = no discounting shown."""
    objective: CostObjective | None = None
    """What the MIP minimises; None = NPV when a rate is given, else the nominal TCO."""
    include_leases: bool = False
    """Weigh the pricebook's lease / instalment offers as ways to buy servers (used as if bought,
    paid monthly for the term, then the buy-out)."""

    _money = field_validator("capex_budget", "monthly_opex_cap", "installation_per_server")(
        _non_negative_money
    )

    @field_validator("discount_rate_annual")
    @classmethod
    def _usable_rate(cls, rate: float | None) -> float | None:
        return None if rate is None else check_rate(rate)

    @model_validator(mode="after")
    def _npv_needs_a_rate(self) -> Constraints:
        if self.objective is CostObjective.NPV and self.discount_rate_annual is None:
            msg = "objective npv needs constraints.discount_rate_annual (the rate to discount at)"
            raise ValueError(msg)
        return self

    @property
    def cost_objective(self) -> CostObjective:
        """The objective in force (``objective``, else NPV when a rate is given)."""
        if self.objective is not None:
            return self.objective
        return CostObjective.NOMINAL if self.discount_rate_annual is None else CostObjective.NPV

    @property
    def objective_discount_rate(self) -> float:
        """The rate the MIP's cost coefficients are discounted at (0 for the nominal objective)."""
        if self.cost_objective is CostObjective.NOMINAL or self.discount_rate_annual is None:
            return 0.0
        return self.discount_rate_annual

    @field_validator("allowed_modes")
    @classmethod
    def _distinct_modes(cls, modes: tuple[AcquisitionMode, ...]) -> tuple[AcquisitionMode, ...]:
        # Every mode is one set of options: a repeat would add each of its options twice.
        return tuple(dict.fromkeys(modes))

    @property
    def static_deployment(self) -> bool:
        """Replicas on held GPUs stay the same all day (``deployment_policy``, default static when
        only buying is allowed)."""
        if self.deployment_policy is None:
            return set(self.allowed_modes) == {AcquisitionMode.BUY}
        return self.deployment_policy is DeploymentPolicy.STATIC


DEFAULT_MAX_GAP = 0.10
"""Largest relative gap of a time-limited plan still presented as a plan to buy (issue 19: under load,
5 s plans of 50–100 workloads came back 'verified' with gaps of 99.6–100 % and 200–400× the GPUs)."""


class SolverOptions(_Frozen):
    time_limit_s: Annotated[float, Field(gt=0, le=3600)] = 10.0
    relative_gap: Annotated[float, Field(ge=0, le=1)] = 1e-4
    backend: Literal["auto", "scip", "highs"] = "auto"
    """The MIP backend; "auto" is SCIP. CP-SAT is not offered (``_offered_backend``)."""
    compute_baselines: bool = True
    compute_sensitivity: bool = True
    max_gap: Annotated[float, Field(ge=0, le=1)] = DEFAULT_MAX_GAP
    """A plan stopped by its time limit further than this (relative gap) from the bound is returned
    for inspection, not as a plan to buy (``PlanResult.gap_too_wide``)."""

    @field_validator("backend", mode="before")
    @classmethod
    def _offered_backend(cls, value: object) -> object:
        if value == "cp_sat":
            # CP-SAT needs integral coefficients; scaled to integers, this model's prices and
            # capacities gave it a wrong bound and "optimal" plans 0.45-85 % dearer than SCIP's.
            msg = "CP-SAT is not offered (it proved wrong optima on this model); use scip or highs"
            raise ValueError(msg)
        return value


MAX_MEASUREMENTS = 1000
PER_USER_SPEED_SLACK = 1.25
"""Measured output tok/s above users × (1 / TPOT) by more than this share is inconsistent."""


class MeasuredPoint(_Frozen):
    """One benchmark run of one deployment that the user measured (issue 29): it corrects the
    model's estimates of that deployment (``solver.perf.measured``), never of any other."""

    gpu: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    model: str = Field(min_length=1, max_length=256)
    """Catalogue model id or alias."""
    engine: Engine = Engine.VLLM
    engine_version: str = Field(default="", max_length=64)
    precision: Precision = Precision.BF16
    kv_precision: Precision | None = None
    tp: Annotated[int, Field(ge=1, le=72)] = 1
    num_gpus: Annotated[int, Field(ge=1, le=MAX_GPU_COUNT)] | None = None
    """GPUs of the run (num_gpus / tp replicas); None = one replica."""
    input_len: Annotated[int, Field(ge=1, le=2_000_000)]
    output_len: Annotated[int, Field(ge=1, le=1_000_000)]
    concurrency: Annotated[int, Field(ge=1, le=1_000_000)] | None = None
    request_rate_per_s: Annotated[float, Field(gt=0, le=1e9)] | None = None
    arrival: Arrival = Arrival.STEADY
    measured_ttft_ms: Annotated[float, Field(gt=0, le=1e7, allow_inf_nan=False)] | None = None
    ttft_statistic: Literal["mean", "median", "p95"] = "mean"
    """Which statistic ``measured_ttft_ms`` is."""
    measured_tpot_ms: Annotated[float, Field(gt=0, le=1e6, allow_inf_nan=False)] | None = None
    measured_output_tok_s: Annotated[float, Field(gt=0, le=1e9, allow_inf_nan=False)] | None = None
    """Output tokens per second of the whole run (all its replicas)."""
    label: str = Field(default="", max_length=256)
    """Where the point comes from (file and run); named in every estimate it corrects."""

    @model_validator(mode="after")
    def _consistent(self) -> MeasuredPoint:
        if (self.concurrency is None) == (self.request_rate_per_s is None):
            msg = "give exactly one of concurrency and request_rate_per_s"
            raise ValueError(msg)
        if (
            self.measured_ttft_ms is None
            and self.measured_tpot_ms is None
            and self.measured_output_tok_s is None
        ):
            msg = "give at least one of measured_ttft_ms, measured_tpot_ms and measured_output_tok_s"
            raise ValueError(msg)
        if self.num_gpus is not None and self.num_gpus % self.tp:
            msg = f"num_gpus {self.num_gpus} is not a multiple of tp {self.tp}"
            raise ValueError(msg)
        if self.concurrency and self.measured_tpot_ms and self.measured_output_tok_s:
            ceiling = self.concurrency * 1e3 / self.measured_tpot_ms * PER_USER_SPEED_SLACK
            if self.measured_output_tok_s > ceiling:
                msg = (
                    f"measured_output_tok_s {self.measured_output_tok_s:g} is more than "
                    f"{self.concurrency} users at a TPOT of {self.measured_tpot_ms:g} ms can generate"
                )
                raise ValueError(msg)
        return self

    @property
    def replicas(self) -> int:
        return (self.num_gpus or self.tp) // self.tp


class PlanRequest(_Frozen):
    inference: tuple[InferenceWorkload, ...] = ()
    training: tuple[TrainingWorkload, ...] = ()
    constraints: Constraints = Constraints()
    overrides: PricebookOverrides = PricebookOverrides()
    options: SolverOptions = SolverOptions()
    measurements: Annotated[tuple[MeasuredPoint, ...], Field(max_length=MAX_MEASUREMENTS)] = ()
    """The user's own benchmark runs: they correct the deployments they measured."""

    @model_validator(mode="after")
    def _workloads(self) -> PlanRequest:
        count = len(self.inference) + len(self.training)
        if count == 0:
            msg = "a plan needs at least one inference or training workload"
            raise ValueError(msg)
        if count > MAX_WORKLOADS:
            msg = f"at most {MAX_WORKLOADS} workloads per request, got {count}"
            raise ValueError(msg)
        names = [w.name for w in self.inference] + [w.name for w in self.training]
        if len(set(names)) != len(names):
            msg = "workload names must be unique"
            raise ValueError(msg)
        return self


class FleetItem(_Frozen):
    """Some GPUs of one type acquired one way (a vendor's proposal or what is installed)."""

    gpu: GpuId
    mode: AcquisitionMode
    count: Annotated[int, Field(gt=0, le=MAX_GPU_COUNT)]
    owned: bool = False
    """Already owned: no capex."""
    server: str | None = None
    """Catalogue server model the GPUs are in; None = the cheapest valid packing."""
    offer: str | None = None
    """Pricebook offer the GPUs are bought or rented through (as a plan's fleet line names it);
    None = the cheapest valid mix of the eligible offers of the GPU and mode."""
    from_year: Annotated[int, Field(ge=1, le=MAX_PERIODS)] = 1
    """Multi-year fleets: the first period (1 = the first) the line is in service."""
    until_year: Annotated[int, Field(ge=1, le=MAX_PERIODS)] | None = None
    """Rented lines: the last period they are rented in (None = to the end); bought lines stay."""

    @model_validator(mode="after")
    def _years_in_order(self) -> FleetItem:
        if self.until_year is not None and self.until_year < self.from_year:
            msg = f"until_year {self.until_year} is before from_year {self.from_year}"
            raise ValueError(msg)
        if self.until_year is not None and (self.mode is AcquisitionMode.BUY or self.owned):
            msg = "until_year is for rented lines: bought and owned hardware stays to the horizon"
            raise ValueError(msg)
        return self

    @model_validator(mode="after")
    def _owned_names_no_offer(self) -> FleetItem:
        if self.owned and self.offer is not None:
            msg = "an owned line names no offer (owned GPUs are not bought or rented)"
            raise ValueError(msg)
        return self


class Fleet(_Frozen):
    items: tuple[FleetItem, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _servers_named_alike(self) -> Fleet:
        for what in ("server model", "offer"):
            kinds: dict[tuple[str, AcquisitionMode, bool], set[bool]] = {}
            for item in self.items:
                name = item.server if what == "server model" else item.offer
                kinds.setdefault((item.gpu, item.mode, item.owned), set()).add(name is not None)
            mixed = sorted(f"{gpu} {mode.value}" for (gpu, mode, _), k in kinds.items() if len(k) > 1)
            if mixed:
                msg = f"name the {what} on every line of {', '.join(mixed)} or on none"
                raise ValueError(msg)
        return self


def money(amount: float | int | str | Decimal, currency: Currency) -> Money:
    """Convenience constructor that keeps Decimal exactness for str/int inputs."""
    return Money(amount=Decimal(str(amount)), currency=currency)
