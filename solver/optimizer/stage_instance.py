"""The instance of one period of a multi-period plan (``solver.optimizer.stages``' I_p), derived
from the single-period instance: demand scaled, rentals priced at the period, GPU types not yet
available left out."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping

from solver.domain import AcquisitionMode
from solver.optimizer.instance import FleetInstance, InferenceDemand
from solver.pricing.options import AcquisitionOption


def scaled_demand(w: InferenceDemand, factor: float) -> InferenceDemand:
    """``w`` with every request rate × ``factor``."""
    return dataclasses.replace(
        w,
        rate_req_s=tuple(r * factor for r in w.rate_req_s),
        hourly_rate_req_s=tuple(r * factor for r in w.hourly_rate_req_s),
        quietest_rate_req_s=tuple(r * factor for r in w.quietest_rate_req_s),
    )


def rental_at(o: AcquisitionOption, multiplier: float) -> AcquisitionOption:
    """A rental option with its rent × ``multiplier`` (software licences and purchases unchanged)."""
    if multiplier == 1.0:
        return o
    if o.mode is AcquisitionMode.RESERVED:
        rent = o.support_monthly_per_gpu  # a reservation's "support" part is its rent
        return dataclasses.replace(
            o, fixed_monthly_per_gpu=o.fixed_monthly_per_gpu + (multiplier - 1.0) * rent
        )
    if o.mode is AcquisitionMode.ON_DEMAND:
        rent = o.busy_hourly_per_gpu - o.software_hourly_per_gpu
        return dataclasses.replace(o, busy_hourly_per_gpu=o.busy_hourly_per_gpu + (multiplier - 1.0) * rent)
    return o


def _over(o: AcquisitionOption, months: int) -> AcquisitionOption:
    """A lease's payments as if taken for the period alone (what the period's own lines show)."""
    return dataclasses.replace(o, lease_payments_per_server=o.lease_payments_over(months)) if o.leased else o


def period_instance(
    base: FleetInstance,
    *,
    months: int,
    demand_factor: Mapping[str, float],
    rental_multiplier: Mapping[str, float],
    unavailable_gpus: Collection[str] = (),
) -> FleetInstance:
    """I_p: ``base`` over ``months`` months with each inference workload's demand × its factor
    (absent = 1; a workload with factor 0 is left out, with its candidates), each rental option's
    rent × its multiplier (absent = 1), no option of an unavailable GPU type (a lease stays: the
    staged model prices its tranches by plan year, ``StagedInstance.lease_years``; the period's
    own instance holds it as if taken for the period alone)."""
    kept = tuple(
        scaled_demand(w, demand_factor.get(w.name, 1.0))
        for w in base.inference
        if demand_factor.get(w.name, 1.0) > 0
    )
    names = {w.name for w in kept}
    options = tuple(
        _over(rental_at(o, rental_multiplier.get(o.id, 1.0)), months)
        for o in base.options
        if o.gpu not in unavailable_gpus
    )
    return dataclasses.replace(
        base,
        horizon_months=months,
        inference=kept,
        candidates=tuple(c for c in base.candidates if c.workload in names),
        options=options,
    )
