"""Periods of a multi-year plan: how the horizon splits, and the request's per-period figures.

A request is *staged* when it asks for periods (``constraints.period_months``) or gives any
per-period figure (``demand_by_year`` or its absolute forms, ``price_by_year``,
``available_from_year``); then the
horizon splits into periods of ``period_months`` (12 by default: years), the last one shorter
when the horizon is not a whole number of periods. A request that is not staged is one period
as long as the horizon: the single-period plan (``solver.optimizer.stages`` delegates to it).

Every per-period list must have one entry per period; a wrong length is refused as
``InvalidRequest`` naming the field (domain paths, mapped to proto paths by the service).
"""

from __future__ import annotations

from pricebook import catalog
from pricebook.errors import UnknownEntryError
from pricebook.schema import Pricebook
from solver.domain import MIN_DEMAND_MULTIPLIER, InferenceWorkload, PlanRequest
from solver.errors import FieldViolation, InvalidRequest

DEFAULT_PERIOD_MONTHS = 12
"""Periods are years unless the request says otherwise."""


def is_staged(request: PlanRequest) -> bool:
    """The request asks for a plan in periods (see the module docstring)."""
    c = request.constraints
    return (
        c.period_months is not None
        or bool(c.price_by_year)
        or bool(c.available_from_year)
        or any(w.demand_factors() for w in request.inference)
    )


def period_months(request: PlanRequest) -> tuple[int, ...]:
    """Months of each period: whole periods of ``period_months`` and a shorter last one; one period
    of the whole horizon when the request is not staged."""
    horizon = request.constraints.horizon_months
    if not is_staged(request):
        return (horizon,)
    step = request.constraints.period_months or DEFAULT_PERIOD_MONTHS
    whole, rest = divmod(horizon, step)
    return (step,) * whole + ((rest,) if rest else ())


DEMAND_BY_YEAR_FIELDS = ("demand_by_year", "daily_tokens_by_year", "peak_request_rate_by_year")
"""A workload's demand per period: multipliers, or absolute daily tokens or peak request rates."""


def _demand_by_year(w: InferenceWorkload, path: str, periods: int) -> list[FieldViolation]:
    """One of the per-period demand figures at most, one value per period, none vanishing."""
    given = [name for name in DEMAND_BY_YEAR_FIELDS if getattr(w, name)]
    if len(given) > 1:
        why = f"give the demand per period once: {', '.join(given)} are both given"
        return [FieldViolation(f"{path}.{given[1]}", why)]
    if not given:
        return []
    name, values = given[0], getattr(w, given[0])
    if len(values) != periods:
        why = f"needs one value per period ({periods}), got {len(values)}"
        return [FieldViolation(f"{path}.{name}", why)]
    return [
        FieldViolation(
            f"{path}.{name}[{p}]",
            f"is {f:g} × the stated demand: 0 (no demand) or at least {MIN_DEMAND_MULTIPLIER:g} × it",
        )
        for p, f in enumerate(w.demand_factors())
        if 0 < f < MIN_DEMAND_MULTIPLIER
    ]


def check_periods(request: PlanRequest, book: Pricebook) -> None:
    """Every per-period list has one entry per period, and names what the book has."""
    periods = len(period_months(request))
    violations: list[FieldViolation] = []

    def length(path: str, values: tuple[float, ...]) -> None:
        if values and len(values) != periods:
            violations.append(
                FieldViolation(path, f"needs one value per period ({periods}), got {len(values)}")
            )

    for i, w in enumerate(request.inference):
        violations += _demand_by_year(w, f"inference[{i}]", periods)
    c = request.constraints
    for i, path in enumerate(c.price_by_year):
        length(f"constraints.price_by_year[{i}].multipliers", path.multipliers)
        if path.offer is not None:
            try:
                catalog.offer(book, path.offer)
            except UnknownEntryError as exc:
                violations.append(FieldViolation(f"constraints.price_by_year[{i}].offer", str(exc)))
    for i, a in enumerate(c.available_from_year):
        if a.from_year > periods:
            violations.append(
                FieldViolation(
                    f"constraints.available_from_year[{i}].from_year",
                    f"is after the last period ({periods})",
                )
            )
    if violations:
        raise InvalidRequest(violations)
