"""Acquisition options: what one unit of capacity costs, in the request's currency.

The contract between the economics (which prices things) and the optimizer (which chooses how
many). One option = one way to get ``gpus_per_unit`` GPUs of one type: buy a whole server, buy
GPUs (hosted in the SKU's default server), reserve, or rent on demand. All money is a float in
the request's currency (converted with the dated FX rate); reports use Decimal ``Money``.
"""

from __future__ import annotations

from dataclasses import dataclass

from pricebook.schema import GpuId, OfferId, ServerId
from solver.domain import AcquisitionMode

OptionId = str


@dataclass(frozen=True, slots=True)
class AcquisitionOption:
    id: OptionId
    """Stable, e.g. ``h200-sxm/buy/hgx-h200-8gpu``."""
    gpu: GpuId
    mode: AcquisitionMode
    offer_id: OfferId
    server_id: ServerId | None
    gpus_per_unit: int
    """Whole servers for BUY (8 for an HGX board); 1 for rentals (priced per GPU-hour)."""
    scale_up_domain_size: int
    """Largest TP group that stays inside one NVLink/P2P domain of this unit."""
    capex_per_unit: float
    """Up-front purchase (GPUs + host share) per unit; 0 for rentals and owned units."""
    residual_per_unit: float
    """Value recovered at the end of the horizon (reduces TCO)."""
    fixed_monthly_per_unit: float
    """Paid every month whether busy or not: support, colocation, reserved rental, idle power."""
    busy_hourly_per_gpu: float
    """Paid per GPU-hour actually used: on-demand rental plus busy power above idle."""
    power_kw_per_unit: float
    """Wall power at full load, with PUE (for the power cap)."""
    rack_units_per_unit: float
    owned: bool = False
    """Already owned: capex is sunk (0)."""

    def horizon_cost(self, horizon_months: int, busy_gpu_hours: float) -> float:
        """TCO of one unit over the horizon for a given number of busy GPU-hours."""
        return (
            self.capex_per_unit
            - self.residual_per_unit
            + self.fixed_monthly_per_unit * horizon_months
            + self.busy_hourly_per_gpu * busy_gpu_hours
        )
