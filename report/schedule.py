"""A multi-year plan's acquisition schedule as the quote keeps it (연차별 도입 계획): per year what
is added, its capex, the monthly opex, the fleet in service and the deployments; per tranche its
depreciation to the horizon. Copied from the planner's ``PlanResult.schedule`` (computed once
there), never recomputed here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from pricebook.schema import Money

if TYPE_CHECKING:
    from solver.planner.schedule import ScheduleItem, StagedSchedule


class _Row(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ScheduleItemRow(_Row):
    """GPUs of one option: added at the start of a year (with their ``capex``), or in service."""

    gpu_id: str
    mode: str
    """``solver.domain.AcquisitionMode`` value."""
    gpus: int
    servers: int = 0
    offer_id: str = ""
    server_id: str = ""
    capex: Money | None = None


class ScheduleDeploymentRow(_Row):
    workload: str
    deployment: str
    """The planner's name of the deployment (``h200-sxm TP4 fp8``)."""
    peak_replicas: int


class ScheduleYearRow(_Row):
    year: int
    """1 = the first year."""
    months: int
    added: tuple[ScheduleItemRow, ...]
    capex: Money
    """Paid at the year's start."""
    opex_monthly: Money
    fleet: tuple[ScheduleItemRow, ...]
    """In service during the year (bought so far, rented at the peak)."""
    deployments: tuple[ScheduleDeploymentRow, ...]


class TrancheRow(_Row):
    year: int
    gpu_id: str
    offer_id: str
    server_id: str = ""
    gpus: int
    servers: int
    hardware: Money
    residual_value: Money
    """Its market value at the horizon (by its age), 0 without a residual credit."""
    depreciation: Money
    """hardware − residual value."""


class Schedule(_Row):
    years: tuple[ScheduleYearRow, ...]
    tranches: tuple[TrancheRow, ...]
    horizon_tco: Money
    """The plan's objective over the horizon (the NPV when it minimised the NPV)."""
    nominal_tco: Money
    discount_rate: float = 0.0

    @property
    def months(self) -> int:
        return sum(y.months for y in self.years)


def _item(i: ScheduleItem) -> ScheduleItemRow:
    return ScheduleItemRow(
        gpu_id=i.gpu,
        mode=i.mode.value,
        gpus=i.gpus,
        servers=i.servers,
        offer_id=i.offer_id or "",
        server_id=i.server_id or "",
        capex=i.capex,
    )


def schedule_of(staged: StagedSchedule | None) -> Schedule | None:
    """The planner's schedule as quote rows (None for a plan of one period)."""
    if staged is None:
        return None
    return Schedule(
        years=tuple(
            ScheduleYearRow(
                year=y.year,
                months=y.months,
                added=tuple(_item(i) for i in y.added),
                capex=y.capex,
                opex_monthly=y.opex_monthly,
                fleet=tuple(_item(i) for i in y.fleet),
                deployments=tuple(
                    ScheduleDeploymentRow(
                        workload=d.workload, deployment=d.deployment, peak_replicas=d.peak_replicas
                    )
                    for d in y.deployments
                ),
            )
            for y in staged.years
        ),
        tranches=tuple(
            TrancheRow(
                year=t.year,
                gpu_id=t.gpu,
                offer_id=t.offer_id,
                server_id=t.server_id or "",
                gpus=t.gpus,
                servers=t.servers,
                hardware=t.hardware,
                residual_value=t.residual_value,
                depreciation=t.depreciation,
            )
            for t in staged.tranches
        ),
        horizon_tco=staged.horizon_tco,
        nominal_tco=staged.nominal_tco,
        discount_rate=staged.discount_rate,
    )
