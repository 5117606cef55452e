"""Hand-built instances for optimizer tests (prices and capacities stated in each test)."""

from __future__ import annotations

from solver.domain import AcquisitionMode, Precision
from solver.economics.options import AcquisitionOption
from solver.optimizer.instance import Bucket, Candidate, InferenceDemand

ALL_DAY = (Bucket(index=0, hours=tuple(range(24))),)


def option(
    gpu: str,
    *,
    mode: AcquisitionMode = AcquisitionMode.BUY,
    capex: float = 0.0,
    per_server: int = 1,
    domain: int = 1,
    fixed_monthly: float = 0.0,
    busy_hourly: float = 0.0,
    power_kw: float = 0.0,
    rack_units: float = 0.0,
    owned: bool = False,
    full: bool = False,
) -> AcquisitionOption:
    return AcquisitionOption(
        id=f"{gpu}/{mode.value}{'/owned' if owned else ''}",
        gpu=gpu,
        mode=mode,
        offer_id=f"{gpu}-{mode.value}",
        server_id=f"{gpu}-server" if mode is AcquisitionMode.BUY else None,
        gpus_per_server=per_server,
        server_must_be_full=full,
        scale_up_domain_size=domain,
        capex_per_gpu=capex,
        capex_per_server=0.0,
        residual_fraction=0.0,
        fixed_monthly_per_gpu=fixed_monthly,
        fixed_monthly_per_server=0.0,
        busy_hourly_per_gpu=busy_hourly,
        power_kw_per_gpu=power_kw,
        power_kw_per_server=0.0,
        rack_units_per_server=rack_units,
        owned=owned,
    )


def candidate(workload: str, gpu: str, capacity: float, tp: int = 1) -> Candidate:
    return Candidate(
        id=f"{workload}/{gpu}/tp{tp}",
        workload=workload,
        gpu=gpu,
        tp=tp,
        precision=Precision.FP8,
        kv_precision=Precision.FP8,
        capacity_req_s=capacity,
    )


def flat_demand(name: str, rate: float, redundancy: int = 0) -> InferenceDemand:
    return InferenceDemand(name=name, rate_req_s=(rate,), redundancy=redundancy)
