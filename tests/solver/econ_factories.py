"""A small hand-built pricebook: every number here is chosen so tests can derive costs by hand."""

from __future__ import annotations

import datetime as dt
from typing import Any

from pricebook.schema import (
    ApiPrice,
    FxRate,
    GpuSpec,
    Offer,
    Pricebook,
    ResidualCurve,
    ServerSpec,
    SiteAssumptions,
)

AS_OF = dt.date(2026, 7, 1)
SRC = "hand-built test book"


def gpu(gpu_id: str, *, tdp_w: float, form_factor: str, domain: int, memory_gb: float = 80) -> GpuSpec:
    return GpuSpec(
        id=gpu_id,
        name=gpu_id.upper(),
        vendor="nvidia",
        architecture="hopper",
        form_factor=form_factor,
        memory_gb=memory_gb,
        memory_type="HBM3",
        memory_bandwidth_gbs=3350,
        bf16_tflops=989,
        fp8_tflops=1979,
        fp4_tflops=0,
        int8_tops=1979,
        l2_mb=50,
        tdp_w=tdp_w,
        scale_up_link="nvlink" if domain > 1 else "pcie_p2p",
        scale_up_bandwidth_gbs=900 if domain > 1 else 128,
        scale_up_domain_size=domain,
        pcie_gen=5,
        pcie_bandwidth_gbs=128,
        p2p_over_pcie=True,
        mig_max_instances=7,
        ecc=True,
        source=SRC,
        as_of=AS_OF,
    )


def offer(offer_id: str, kind: str, gpu_id: str, price: str, **extra: Any) -> Offer:
    fields: dict[str, Any] = {
        "id": offer_id,
        "kind": kind,
        "gpu": gpu_id,
        "provider": "p",
        "price": price,
        "label": "street",
        "source": SRC,
        "as_of": AS_OF,
    }
    fields.update(extra)
    return Offer.model_validate(fields)


def residual_curve(
    gpu_class: str = "datacenter", age_months: int = 36, fraction: float = 0.3, **extra: Any
) -> ResidualCurve:
    """Market value ``fraction`` after ``age_months`` (one point: value(m) = fraction^(m / age))."""
    fields: dict[str, Any] = {
        "gpu_class": gpu_class,
        "points": [{"age_months": age_months, "fraction": fraction, "low": fraction, "high": fraction}],
        "source": SRC,
        "as_of": AS_OF,
    }
    fields.update(extra)
    return ResidualCurve.model_validate(fields)


def site(**extra: Any) -> SiteAssumptions:
    fields: dict[str, Any] = {
        "electricity_krw_per_kwh": 180.0,
        "electricity_usd_per_kwh": 0.08,
        "pue": 1.5,
        "depreciation_months": 60,
        "residual_curves": [residual_curve()],
        "support_fraction_per_year": 0.12,
        "colocation_price_month": "100 USD",
        "colocation_basis": "per_rack_unit",
        "colocation_includes_power": False,
        "average_gpu_power_fraction": 0.75,
        "vat_rate": 0.1,
        "prices_include_vat": False,
        "fx_rates": [FxRate(base="USD", quote="KRW", rate=1400.0, source=SRC, as_of=AS_OF)],
        "source": SRC,
        "as_of": AS_OF,
    }
    fields.update(extra)
    return SiteAssumptions.model_validate(fields)


def book(**extra: Any) -> Pricebook:
    fields: dict[str, Any] = {
        "version": "test-1",
        "gpus": (
            gpu("h200-sxm", tdp_w=700, form_factor="sxm", domain=8, memory_gb=141),
            gpu("rtx-pro-6000", tdp_w=600, form_factor="pcie", domain=1, memory_gb=96),
        ),
        "servers": (
            ServerSpec(
                id="hgx-h200-8gpu",
                name="HGX H200",
                gpu="h200-sxm",
                gpus_per_server=8,
                scale_up_domain_size=8,
                host_cost="40000 USD",
                host_power_w=2000,
                rack_units=8,
                source=SRC,
                as_of=AS_OF,
            ),
            ServerSpec(
                id="pcie-4gpu",
                name="4-slot PCIe",
                gpu="rtx-pro-6000",
                gpus_per_server=4,
                scale_up_domain_size=1,
                host_cost="10000 USD",
                host_power_w=1000,
                rack_units=4,
                source=SRC,
                as_of=AS_OF,
            ),
        ),
        "offers": (
            offer(
                "h200-buy-old",
                "purchase_gpu",
                "h200-sxm",
                "30000 USD",
                as_of=dt.date(2025, 1, 1),
                label="estimate",
            ),
            offer("h200-buy", "purchase_gpu", "h200-sxm", "35000 USD"),
            offer("rtx-buy", "purchase_gpu", "rtx-pro-6000", "11000000 KRW", includes_vat=True),
            offer("h200-od-cheap", "on_demand", "h200-sxm", "3.5 USD"),
            offer("h200-od-dear", "on_demand", "h200-sxm", "13 USD"),
            offer("h200-res-12", "reserved", "h200-sxm", "2.5 USD", term_months=12),
            offer("rtx-od", "on_demand", "rtx-pro-6000", "1.5 USD"),
        ),
        "api_prices": (
            ApiPrice(
                id="api-70b",
                provider="p",
                model="meta-llama/Llama-3.1-70B",
                input_per_mtok="0.5 USD",
                output_per_mtok="1.0 USD",
                source=SRC,
                as_of=AS_OF,
            ),
        ),
        "site": site(),
        "models": (),
    }
    fields.update(extra)
    return Pricebook.model_validate(fields)
