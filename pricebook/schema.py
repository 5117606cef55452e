"""Typed schema of the pricebook: GPUs, servers, offers, API prices, site assumptions, models.

Every entry carries ``source`` (where its numbers come from) and ``as_of`` (the date of that
source). Numbers that are analyst estimates or derived by arithmetic are listed in
``estimated_fields`` (with the reason in ``notes``); a field whose number has a different
source than the entry's carries it in ``field_sources``.

This module is the contract shared by the loader (``pricebook.loader``), the performance model
(``solver.perf``), the optimizer and the economics (``solver``). It never imports grpc.
"""

from __future__ import annotations

import datetime as dt
import itertools
from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

GpuId = str
"""Stable lowercase GPU id, part of the public API (e.g. ``h200-sxm``)."""
ServerId = str
OfferId = str
ModelId = str
"""Hugging Face id of a model architecture (e.g. ``meta-llama/Llama-3.1-70B``)."""
Currency = Literal["USD", "KRW"]

NonNegFloat = Annotated[float, Field(ge=0)]
PosFloat = Annotated[float, Field(gt=0)]
PosInt = Annotated[int, Field(gt=0)]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Provenance(_Frozen):
    """Where a number comes from and when that source was dated."""

    source: str = Field(min_length=3)
    as_of: dt.date


class Sourced(_Frozen):
    """Base for every pricebook entry: one provenance for the entry, per-field exceptions."""

    source: str = Field(min_length=3)
    as_of: dt.date
    field_sources: dict[str, Provenance] = Field(default_factory=dict)
    estimated_fields: tuple[str, ...] = ()
    """Fields whose value is an estimate (EST/DERIVED/UNVERIFIED in the research notes)."""
    notes: str = ""


MAX_MONEY_AMOUNT = Decimal("1e18")
"""Largest amount of money anywhere (10^18 won is a thousand times the world's GPU spend): beyond it
a number is a typo or an attack ("1e400" would mean an unlimited budget), not a price."""


class Money(_Frozen):
    """An amount in one currency. Decimal so that KRW/USD totals add up exactly."""

    amount: Decimal
    currency: Currency

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: object) -> object:
        """Accept the compact YAML form ``"15000000 KRW"`` / ``"3.99 USD"`` (commas allowed)."""
        if isinstance(value, str):
            parts = value.replace(",", "").split()
            if len(parts) != 2:
                msg = f"money must look like '3.99 USD', got {value!r}"
                raise ValueError(msg)
            return {"amount": parts[0], "currency": parts[1]}
        return value

    @field_validator("amount")
    @classmethod
    def _finite(cls, value: Decimal) -> Decimal:
        if not value.is_finite():
            msg = "amount must be a finite number"
            raise ValueError(msg)
        if abs(value) > MAX_MONEY_AMOUNT:
            msg = f"amount must be at most {MAX_MONEY_AMOUNT:.0e} in size, got {value:.3e}"
            raise ValueError(msg)
        return value


# --------------------------------------------------------------------------------------------
# GPUs and servers
# --------------------------------------------------------------------------------------------


class Vendor(StrEnum):
    NVIDIA = "nvidia"
    AMD = "amd"


class GpuSegment(StrEnum):
    """Who the card is sold to; consumer cards are planned only when a request allows them."""

    DATA_CENTER = "data_center"
    WORKSTATION = "workstation"
    """Professional cards (RTX PRO / RTX Ada): ECC, enterprise drivers that allow data centres."""
    CONSUMER = "consumer"
    """GeForce: the driver licence excludes data-centre deployment; no ECC, no enterprise support."""


class Architecture(StrEnum):
    """GPU generation; decides which tensor-core precisions run at full speed."""

    AMPERE = "ampere"
    ADA = "ada"
    HOPPER = "hopper"
    BLACKWELL = "blackwell"
    CDNA3 = "cdna3"
    CDNA4 = "cdna4"


class ScaleUpLink(StrEnum):
    """How GPUs inside one server talk to each other for tensor parallelism."""

    NVLINK = "nvlink"
    """NVLink through NVSwitch: every GPU of the domain at full link bandwidth."""
    NVLINK_BRIDGE = "nvlink_bridge"
    """NVLink bridge pairing 2 (or 4) PCIe cards."""
    INFINITY_FABRIC = "infinity_fabric"
    PCIE_P2P = "pcie_p2p"
    """Plain PCIe with GPU-to-GPU peer-to-peer DMA."""
    PCIE_HOST = "pcie_host"
    """PCIe without P2P (GeForce): every transfer bounces through host memory."""


class GpuSpec(Sourced):
    id: GpuId = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    name: str
    aliases: tuple[str, ...] = ()
    vendor: Vendor
    architecture: Architecture
    form_factor: Literal["sxm", "oam", "pcie"]
    memory_gb: PosFloat
    memory_type: str
    memory_bandwidth_gbs: PosFloat
    bf16_tflops: PosFloat
    """Dense BF16/FP16 tensor TFLOPs (FP32 accumulate; what training and serving use)."""
    fp8_tflops: NonNegFloat
    """Dense FP8 TFLOPs; 0 where the GPU has no FP8 tensor cores (Ampere)."""
    fp4_tflops: NonNegFloat
    """Dense FP4 TFLOPs; 0 where unsupported (everything before Blackwell/CDNA4)."""
    int8_tops: NonNegFloat
    l2_mb: NonNegFloat
    tdp_w: PosFloat
    scale_up_link: ScaleUpLink
    scale_up_bandwidth_gbs: NonNegFloat
    """Bidirectional GPU-to-GPU bandwidth per GPU over ``scale_up_link`` (GB/s)."""
    scale_up_domain_size: PosInt
    """GPUs that share the scale-up link (8 for HGX NVSwitch, 2 for an NVLink bridge, 1 if none)."""
    pcie_gen: Annotated[int, Field(ge=3, le=6)]
    pcie_bandwidth_gbs: PosFloat
    """Bidirectional host PCIe x16 bandwidth (GB/s), e.g. 128 for Gen5."""
    p2p_over_pcie: bool
    """Whether GPU-to-GPU peer-to-peer DMA works over PCIe (GeForce: False)."""
    mig_max_instances: Annotated[int, Field(ge=0)]
    ecc: bool
    segment: GpuSegment = GpuSegment.DATA_CENTER
    """Market segment (``consumer`` cards need ``Constraints.allow_consumer_gpus``)."""
    servers: tuple[ServerId, ...] = ()
    """Servers (by id) this GPU is sold in."""
    rental_only: bool = False
    """Only rented (reserved or on demand), never bought: no server model holds it and no purchase or
    lease offer names it (e.g. an NVL72 rack GPU whose rack price is not sourced)."""


class NicSpec(_Frozen):
    kind: Literal["infiniband", "ethernet"]
    gbps: PosFloat
    per_gpu: NonNegFloat
    """NICs per GPU (1.0 = one NIC each, 0.25 = one per four GPUs)."""


class ServerSpec(Sourced):
    """A whole machine as a bid quotes it: chassis + host + a fixed number of one GPU type."""

    id: ServerId = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    name: str
    gpu: GpuId
    gpus_per_server: PosInt
    scale_up_domain_size: PosInt
    """GPUs per NVLink/Infinity-Fabric domain inside the server (TP groups stay inside one)."""
    p2p_groups: tuple[tuple[int, ...], ...] = ()
    """For PCIe servers: GPU slot indices that share a PCIe switch (P2P works fastest inside)."""
    host_cost: Money
    """Chassis, CPUs, RAM, NICs, storage: everything but the GPUs."""
    host_power_w: NonNegFloat
    """Power the host draws on top of the GPUs' TDP."""
    rack_units: PosInt
    nics: tuple[NicSpec, ...] = ()
    host_includes_nics: bool = False
    """``host_cost`` already pays for the scale-out NICs (a sourced node price "incl. 8×400G IB NICs"):
    the networking line then adds only switch ports and optics."""

    @property
    def scale_out_nics(self) -> NicSpec | None:
        """The NIC of a scale-out (rail-optimised) fabric: one NIC per GPU or more; None for a box
        with only a shared front-end NIC (a workstation's 10 GbE), which joins no GPU fabric."""
        fabric = [n for n in self.nics if n.per_gpu >= 1.0]
        return max(fabric, key=lambda n: n.gbps) if fabric else None


# --------------------------------------------------------------------------------------------
# Offers: ways to acquire capacity
# --------------------------------------------------------------------------------------------


class OfferKind(StrEnum):
    PURCHASE_GPU = "purchase_gpu"
    """Buy one GPU (the card/module); the host comes from a server's ``host_cost``."""
    PURCHASE_SERVER = "purchase_server"
    """Buy a whole server with its GPUs (``server`` set, price per server)."""
    RESERVED = "reserved"
    """Rent with a commitment of ``term_months``; price per GPU-hour, paid for every hour."""
    ON_DEMAND = "on_demand"
    """Rent by the hour; price per GPU-hour, paid only for hours used."""
    LEASE = "lease"
    """Lease or buy in instalments a whole server (``server`` set): ``price`` is the payment per
    server and month for ``term_months`` months, then ``buyout_price``; the hardware is used as if
    bought (``financed_price`` is its cash price: the basis of its support and market value)."""


class PriceLabel(StrEnum):
    LIST = "list"
    STREET = "street"
    ESTIMATE = "estimate"
    DERIVED = "derived"
    QUOTE = "quote"
    """A vendor quote supplied as a request override."""


LABEL_RELIABILITY: tuple[PriceLabel, ...] = (
    PriceLabel.QUOTE,
    PriceLabel.LIST,
    PriceLabel.STREET,
    PriceLabel.DERIVED,
    PriceLabel.ESTIMATE,
)
"""Price labels from the most reliable to the least: a vendor's quote to you, the vendor's published
list price, a dated reseller listing or cloud price page, arithmetic on a sourced number, an analyst
or press estimate. The default offer policy takes the first label available per GPU and mode."""


def label_rank(label: PriceLabel) -> int:
    """0 for the most reliable label (``LABEL_RELIABILITY``)."""
    return LABEL_RELIABILITY.index(label)


class Offer(Sourced):
    id: OfferId = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    kind: OfferKind
    gpu: GpuId
    server: ServerId | None = None
    """Set for PURCHASE_SERVER offers."""
    provider: str
    region: str = ""
    price: Money
    """Per GPU for PURCHASE_GPU, per server for PURCHASE_SERVER, per GPU-hour for rentals."""
    term_months: Annotated[int, Field(ge=0)] = 0
    label: PriceLabel
    includes_vat: bool = False
    gpus_per_instance: PosInt = 1
    """Rentals: GPUs in the smallest instance the provider rents (8 for p5.48xlarge); plans rent
    whole instances. Purchases: 1."""
    ai_enterprise_included_months: Annotated[int, Field(ge=0)] = 0
    """Purchases: months of NVIDIA AI Enterprise subscription that come with the GPU (60 for the
    H100 PCIe, H100 NVL and H200 NVL SKUs; SXM parts list it as an "Add-on": 0)."""
    buyout_price: Money | None = None
    """Leases: paid per server at the end of the term to own the hardware (0 for a full-payout lease)."""
    financed_price: Money | None = None
    """Leases: the cash price per server of what the lease finances."""


class ApiPrice(Sourced):
    """A per-token API price for an open model (the buy-vs-API comparison)."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    provider: str
    model: ModelId
    """The catalogue model this API serves (or the closest class)."""
    input_per_mtok: Money
    output_per_mtok: Money


# --------------------------------------------------------------------------------------------
# Site assumptions
# --------------------------------------------------------------------------------------------


class FxRate(Sourced):
    """``rate`` units of ``quote`` for one unit of ``base`` (e.g. 1 USD = 1,400 KRW)."""

    base: Currency
    quote: Currency
    rate: PosFloat


class GpuClass(StrEnum):
    """Which resale market a GPU belongs to (their values may fall at different rates)."""

    DATACENTER = "datacenter"
    """HBM parts sold as modules or datacentre cards (H100, H200, B200, MI300X, A100)."""
    WORKSTATION = "workstation"
    """GDDR cards: workstation (RTX PRO 6000, L40S, L4) and consumer (RTX 5090, 4090)."""


class ResidualPoint(_Frozen):
    """A sourced market value: ``fraction`` of the purchase price after ``age_months``."""

    age_months: PosInt
    fraction: Annotated[float, Field(gt=0.0, lt=1.0)]
    """The value used (the midpoint of the source's range)."""
    low: Annotated[float, Field(gt=0.0, lt=1.0)]
    """The source's range, low end (``fraction`` when the source gives one number)."""
    high: Annotated[float, Field(gt=0.0, lt=1.0)]

    @model_validator(mode="after")
    def _in_range(self) -> ResidualPoint:
        if not self.low <= self.fraction <= self.high:
            msg = f"fraction {self.fraction} must lie within [low {self.low}, high {self.high}]"
            raise ValueError(msg)
        return self


class ResidualCurve(Sourced):
    """Market (resale) value of one GPU class as its hardware ages.

    The value at month m runs through (0, 100 %) and the sourced points, exponentially between
    neighbours (a constant monthly rate of loss on each segment: value(m) = v₀ · (v₁ / v₀)^((m − m₀) /
    (m₁ − m₀))) and beyond the last point at the last segment's rate. One point (36 months, 30 %)
    gives value(m) = 0.30^(m / 36): 71.8 % after 12 months, 13.4 % after 60.
    """

    gpu_class: GpuClass
    points: tuple[ResidualPoint, ...] = Field(min_length=1)

    @field_validator("points")
    @classmethod
    def _ordered(cls, points: tuple[ResidualPoint, ...]) -> tuple[ResidualPoint, ...]:
        ages = [p.age_months for p in points]
        values = [p.fraction for p in points]
        if ages != sorted(set(ages)) or values != sorted(values, reverse=True):
            msg = "points must have increasing ages and decreasing fractions"
            raise ValueError(msg)
        return points

    def value_at(self, age_months: float) -> float:
        """Market value after ``age_months`` as a share of the purchase price (the class docstring)."""
        if age_months <= 0:
            return 1.0
        knots = [(0.0, 1.0), *((float(p.age_months), p.fraction) for p in self.points)]
        for (m0, v0), (m1, v1) in itertools.pairwise(knots):
            if age_months <= m1:
                return float(v0 * (v1 / v0) ** ((age_months - m0) / (m1 - m0)))
        (m0, v0), (m1, v1) = knots[-2], knots[-1]
        return float(v1 * (v1 / v0) ** ((age_months - m1) / (m1 - m0)))


class ColocationBasis(StrEnum):
    """What a colocation price is per."""

    PER_KW = "per_kw"
    """Per kW of provisioned IT power (GPU TDP + host power) per month."""
    PER_RACK_UNIT = "per_rack_unit"
    """Per rack unit (U) per month."""


class SiteModel(StrEnum):
    """Where bought servers run, and so what running them costs besides the hardware."""

    COLOCATION = "colocation"
    """A colocation provider's rack: ``colocation_price_month`` (with or without the power)."""
    OWN_SITE = "own_site"
    """The buyer's own machine room: power at the site tariff × PUE, no colocation fee, and
    ``own_site_space_price_month`` for the space when one is given."""


class NetworkPrice(Sourced):
    """One sourced price of a networking component, with how reliable it is."""

    price: Money
    label: PriceLabel


class NetworkFabric(Sourced):
    """What one GPU's place in a scale-out fabric costs: its switch port share, its optics (or
    cables) and its NIC, per fabric kind (InfiniBand, RoCE Ethernet). Servers of a plan join a
    fabric only when the plan buys more than one of them (``solver.pricing.costs``)."""

    kind: Literal["infiniband", "ethernet"]
    switch_port_per_gpu: NetworkPrice
    """Leaf/spine switch cost per GPU NIC port."""
    optics_per_gpu: NetworkPrice
    """Transceivers and cables per GPU NIC."""
    nic: NetworkPrice
    """One scale-out NIC (charged per NIC unless the server's host price includes them)."""


class PriceTrend(Sourced):
    """How a kind of price moves a year, for multi-year plans: the default path of every offer of
    that kind (``multiplier_per_year`` compounded by a period's start month ÷ 12); a request's
    ``constraints.price_by_year`` replaces it."""

    applies_to: Literal["purchase", "rental"]
    multiplier_per_year: PosFloat
    label: PriceLabel


class SiteAssumptions(Sourced):
    electricity_krw_per_kwh: PosFloat
    electricity_usd_per_kwh: PosFloat
    pue: Annotated[float, Field(ge=1.0, le=3.0)]
    depreciation_months: PosInt
    """Accounting life for straight-line book depreciation to zero (a schedule shown beside the TCO;
    the TCO itself uses the market value of ``residual_curves``)."""
    residual_curves: tuple[ResidualCurve, ...] = Field(min_length=1)
    """Market value by age, one curve per ``GpuClass`` (a class without one uses the datacentre's)."""
    support_fraction_per_year: Annotated[float, Field(ge=0.0, lt=1.0)]
    """Support/maintenance per year as a fraction of purchase price."""
    colocation_price_month: Money
    """Colocation price per month, per kW of IT power or per rack unit (``colocation_basis``)."""
    colocation_basis: ColocationBasis = ColocationBasis.PER_KW
    colocation_includes_power: bool
    """True: the colocation price includes the electricity (and cooling) of the hardware, so no
    power line is charged for colocated hardware; False: power is metered and charged apart."""
    average_gpu_power_fraction: Annotated[float, Field(gt=0.0, le=1.0)]
    """Average GPU draw as a fraction of TDP when busy (Epoch uses 0.75 of server TDP)."""
    idle_gpu_power_fraction: Annotated[float, Field(ge=0.0, le=1.0)] = 0.0
    """GPU draw when idle as a fraction of TDP, paid every hour a GPU is held on site. 0 = not
    modelled (no sourced figure yet): then all GPU power is counted per busy hour."""
    vat_rate: Annotated[float, Field(ge=0.0, lt=1.0)]
    prices_include_vat: bool
    fx_rates: tuple[FxRate, ...]
    network_fabrics: tuple[NetworkFabric, ...] = ()
    price_trends: tuple[PriceTrend, ...] = ()
    """Default price paths of multi-year plans, per kind (a kind without one stays flat)."""
    """Scale-out networking prices per fabric kind (a kind without one is not priced)."""
    site_model: SiteModel = SiteModel.COLOCATION
    """Where bought servers run (a request's ``Constraints.site_model`` takes precedence)."""
    own_site_space_price_month: Money | None = None
    """On the buyer's own site: rack/space cost a month per ``own_site_space_basis`` (None = 0)."""
    own_site_space_basis: ColocationBasis = ColocationBasis.PER_RACK_UNIT
    residual_value_credit: bool = True
    """Whether the TCO credits the hardware's market value at the end of the horizon; false for a
    buyer who cannot sell it (Korean public sector: 불용 처리). A request's
    ``Constraints.residual_value_credit`` takes precedence."""

    @field_validator("own_site_space_price_month")
    @classmethod
    def _space_not_negative(cls, value: Money | None) -> Money | None:
        if value is not None and value.amount < 0:
            msg = f"must not be negative, got {value.amount}"
            raise ValueError(msg)
        return value


# --------------------------------------------------------------------------------------------
# Model architectures
# --------------------------------------------------------------------------------------------


class AttentionType(StrEnum):
    MHA = "mha"
    GQA = "gqa"
    MLA = "mla"
    """Multi-head latent attention (DeepSeek): KV cache holds a compressed rank per layer."""
    HYBRID = "hybrid"
    """Mix of full-attention and sliding-window or linear-attention layers."""


class ModelArch(Sourced):
    id: ModelId
    aliases: tuple[str, ...] = ()
    family: str
    kind: Literal["decoder", "embedding"] = "decoder"
    params_b: PosFloat
    active_params_b: PosFloat
    layers: PosInt
    hidden: PosInt
    intermediate: PosInt
    moe_intermediate: Annotated[int, Field(ge=0)] = 0
    heads: PosInt
    kv_heads: PosInt
    head_dim: PosInt
    vocab: PosInt
    max_context: PosInt
    experts: Annotated[int, Field(ge=0)] = 0
    """Routed experts per MoE layer (0 for dense models)."""
    experts_per_token: Annotated[int, Field(ge=0)] = 0
    shared_experts: Annotated[int, Field(ge=0)] = 0
    attention: AttentionType
    kv_lora_rank: Annotated[int, Field(ge=0)] = 0
    """MLA compressed KV rank (DeepSeek-V3: 512)."""
    qk_rope_head_dim: Annotated[int, Field(ge=0)] = 0
    sliding_window: Annotated[int, Field(ge=0)] = 0
    """Tokens a sliding-window layer attends to (0 = no sliding-window layers)."""
    full_attention_layers: Annotated[int, Field(ge=0)]
    """Layers that keep KV for the whole context; the rest are window (or linear) layers."""
    linear_attention_layers: Annotated[int, Field(ge=0)] = 0
    """Layers with linear attention (Gated DeltaNet): a fixed per-sequence state, no growing KV."""
    kv_bytes_per_token_bf16_full_layers: Annotated[int, Field(ge=0)] | None = None
    """KV bytes per token at BF16 summed over full-attention layers, as published in the research
    table (covers cross-layer KV sharing and per-layer head dims the generic formula misses).
    None = compute from ``kv_heads × head_dim`` (or the MLA rank)."""
    kv_bytes_per_token_bf16_window_layers: Annotated[int, Field(ge=0)] | None = None
    """Same for sliding-window layers (their cache stops growing at ``sliding_window`` tokens)."""
    assumed: bool = False
    """True when the architecture was synthesised from a parameter count, not read from a config."""
    released_weights: Literal["bf16", "fp8", "fp4"] = "bf16"
    """Precision of the weights as the model's publisher releases them (the checkpoint's own dtype:
    FP8 for DeepSeek-V3/R1 and Ministral 3, MXFP4 experts for gpt-oss); from the model card, named
    in ``notes``. Plans use it (and FP8) unless a workload allows more quantization."""
    four_bit_experts_only: bool = False
    """The model's 4-bit checkpoint quantizes only the routed experts (gpt-oss MXFP4, Kimi K2 INT4
    W4A16): at FP4/INT4 attention, embeddings and shared experts stay BF16."""
    sparse_attention_topk: Annotated[int, Field(ge=0)] = 0
    """DeepSeek sparse attention: each query attends to at most this many keys chosen by an
    indexer (GLM-5, DeepSeek-V3.2: 2048); 0 = dense attention."""
    sparse_attention_index_dim: Annotated[int, Field(ge=0)] = 0
    """Width of the indexer's key cached per token and layer (FP8), read over the whole context."""

    @property
    def is_moe(self) -> bool:
        return self.experts > 0


# --------------------------------------------------------------------------------------------
# The whole book
# --------------------------------------------------------------------------------------------


class Pricebook(_Frozen):
    version: str
    gpus: tuple[GpuSpec, ...]
    servers: tuple[ServerSpec, ...]
    offers: tuple[Offer, ...]
    api_prices: tuple[ApiPrice, ...]
    site: SiteAssumptions
    models: tuple[ModelArch, ...]
    content_hash: str = ""
    """sha256 of the canonical content (set by the loader; independent of file layout)."""
