"""SweepPlans: one plan per value of a capex budget, demand multiplier, SLA target or discount rate, at most
``MAX_SWEEP_THREADS`` solved at once, streamed with progress as they complete, then the Pareto
frontier.

``prepare_sweep`` checks the sweep and builds every point's request once, before any solve (the
service calls it before a solve slot is taken); ``sweep`` solves what it prepared.

The capex, demand and discount-rate axes change only caps, demand or the objective's weights, so
every point re-solves the request's one built instance; the SLA axes change which deployments
qualify, so each point builds its own.
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from collections.abc import Generator, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import closing
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from solver.analysis.whatif import describe_fleet, scale_inference_demand, with_capex_budget
from solver.domain import PlanRequest
from solver.errors import FieldViolation, InvalidRequest, SolveCancelled
from solver.optimizer.cancel import CancelToken, polls_cancel
from solver.optimizer.candidates import build_instance
from solver.optimizer.instance import FleetInstance
from solver.planner.plan import plan_instance
from solver.planner.results import FrontierPoint, PlanResult, SweepAxis, SweepFrontier, SweepPoint
from solver.pricing.costs import capex_budget_ex_vat
from solver.resolve import ResolvedRequest

MAX_SWEEP_THREADS = 2
"""Sweep points solved at once (the machine has 2 cores; OR-Tools releases the GIL)."""
POLL_S = 0.1
"""How often the stream looks at the cancel token while points are being solved."""

_INSTANCE_AXES = (SweepAxis.CAPEX_BUDGET, SweepAxis.DEMAND_MULTIPLIER, SweepAxis.DISCOUNT_RATE_ANNUAL)
"""Axes that change only caps, demand or the objective's discounting: the base instance is reused
(no performance re-run)."""
_SLA_AXES = (SweepAxis.TPOT_P95_MS, SweepAxis.TTFT_P95_MS, SweepAxis.MIN_PER_USER_TOK_S)
"""Axes that change the inference workloads' SLA."""

_MINIMISE = {
    SweepAxis.CAPEX_BUDGET: True,
    SweepAxis.DEMAND_MULTIPLIER: False,
    SweepAxis.TPOT_P95_MS: True,
    SweepAxis.TTFT_P95_MS: True,
    SweepAxis.MIN_PER_USER_TOK_S: False,
}
"""Whether a smaller swept value is better (less capital, stricter latency) or a larger one (more
demand served, faster per-user speed). A discount rate is neither: its points are not ranked."""


@dataclass(frozen=True, slots=True)
class PreparedSweep:
    """A checked sweep: the base request, the axis and its values, and the request at each value."""

    base: ResolvedRequest
    axis: SweepAxis
    values: tuple[float, ...]
    workload: str | None
    """The inference workload whose SLA the SLA axes change (None: every inference workload)."""
    points: tuple[ResolvedRequest, ...]
    """The request at ``values[i]`` (same pricebook and overrides as ``base``)."""


def prepare_sweep(
    base: ResolvedRequest, axis: SweepAxis, values: Sequence[float], workload: str | None = None
) -> PreparedSweep:
    """Check a sweep and build the request of every point, before any solve: raises
    ``InvalidRequest`` naming ``values[i]``, ``workload_name`` or ``dimension``."""
    problems = value_violations(values, zero_allowed=axis is SweepAxis.DISCOUNT_RATE_ANNUAL)
    points: list[ResolvedRequest] = []
    for i, value in enumerate(values):
        if any(v.field == f"values[{i}]" for v in problems):
            continue
        point = _point_request(base.request, axis, i, value, workload)
        if isinstance(point, FieldViolation):
            problems.append(point)
        else:
            points.append(base.with_request(point))
    if workload is not None and workload not in {w.name for w in base.request.inference}:
        problems.append(FieldViolation("workload_name", f"no inference workload named {workload!r}"))
    if axis in _SLA_AXES and not base.request.inference:
        problems.append(FieldViolation("dimension", f"{axis.value} needs at least one inference workload"))
    if problems:
        raise InvalidRequest(problems)
    return PreparedSweep(base, axis, tuple(float(v) for v in values), workload, tuple(points))


def value_violations(values: Sequence[float], *, zero_allowed: bool = False) -> list[FieldViolation]:
    """Swept values that are not positive (or, ``zero_allowed``, non-negative) finite numbers
    (``values[i]``)."""
    kind = "a non-negative" if zero_allowed else "a positive"
    return [
        FieldViolation(f"values[{i}]", f"must be {kind} number (got {value})")
        for i, value in enumerate(values)
        if not math.isfinite(value) or value < 0 or (value == 0 and not zero_allowed)
    ]


def _point_request(
    request: PlanRequest, axis: SweepAxis, index: int, value: float, workload: str | None
) -> PlanRequest | FieldViolation:
    """The request at one sweep point, or why the point makes it invalid (its first problem)."""
    try:
        return sweep_request(request, axis, value, workload)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        why = str(first["msg"]).removeprefix("Value error, ")
        return FieldViolation(f"values[{index}]", f"{value:g} makes {where} invalid: {why}")
    except (OverflowError, ValueError) as error:
        return FieldViolation(f"values[{index}]", f"{value:g} is out of range: {error}")


def sweep(
    prepared: PreparedSweep,
    *,
    cancel: CancelToken | None = None,
    time_limit_s_per_point: float | None = None,
) -> Iterator[SweepPoint | SweepFrontier]:
    """Solve one plan per value (≤ 2 at once), yield each as it completes with progress, then the
    Pareto frontier. Cancelling ``cancel`` stops the running solves and skips the rest
    (raises ``SolveCancelled``)."""
    if not prepared.values:
        return
    points = _PointSolver(
        prepared,
        cancel=cancel if cancel is not None else CancelToken(),
        time_limit_s=time_limit_s_per_point
        if time_limit_s_per_point is not None
        else prepared.base.request.options.time_limit_s,
    )
    values = prepared.values
    plans: dict[int, PlanResult] = {}
    # Closed explicitly: a caller that stops reading cancels the solves still running.
    with closing(_stream(points, values)) as stream:
        for point in stream:
            plans[point.index] = point.plan
            yield point
    yield frontier(prepared.axis, [(values[i], plans[i]) for i in range(len(values))])


class _PointSolver:
    """Plans one sweep point: the request at that value, solved without baselines or sensitivity."""

    @polls_cancel
    def __init__(self, prepared: PreparedSweep, *, cancel: CancelToken, time_limit_s: float) -> None:
        self.prepared = prepared
        self.cancel = cancel
        self.time_limit_s = time_limit_s
        base = prepared.base
        self.base_instance = (
            build_instance(base.request, base.book) if prepared.axis in _INSTANCE_AXES else None
        )
        self._build_lock = threading.Lock()

    def __call__(self, index: int) -> PlanResult:
        if self.cancel.cancelled:
            raise SolveCancelled("sweep cancelled")
        started = time.monotonic()
        point = self.prepared.points[index]
        return plan_instance(
            point,
            self._instance(point, self.prepared.values[index]),
            time_limit_s=self.time_limit_s,
            cancel=self.cancel,
            started=started,
            with_extras=False,
        )

    def _instance(self, point: ResolvedRequest, value: float) -> FleetInstance:
        if self.base_instance is not None:
            if self.prepared.axis is SweepAxis.CAPEX_BUDGET:
                # The point's budget on the planner's ex-VAT basis (a VAT-inclusive budget shrinks).
                return with_capex_budget(
                    self.base_instance, capex_budget_ex_vat(point.request.constraints, point.book)
                )
            if self.prepared.axis is SweepAxis.DISCOUNT_RATE_ANNUAL:
                rate = point.request.constraints.objective_discount_rate
                return dataclasses.replace(self.base_instance, discount_rate=rate)
            return scale_inference_demand(self.base_instance, value)
        with self._build_lock:  # the perf model's caches are shared; build one instance at a time
            return build_instance(point.request, point.book)


def _stream(solve_point: _PointSolver, values: Sequence[float]) -> Generator[SweepPoint, None, None]:
    """Each point as it completes (ties in index order), with progress; any failure or an early
    stop of the caller cancels the rest."""
    cancel = solve_point.cancel
    total = len(values)
    done_count = 0
    executor = ThreadPoolExecutor(max_workers=MAX_SWEEP_THREADS, thread_name_prefix="sweep")
    try:
        futures: dict[Future[PlanResult], int] = {
            executor.submit(solve_point, i): i for i in range(len(values))
        }
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=POLL_S, return_when=FIRST_COMPLETED)
            if cancel.cancelled:
                raise SolveCancelled("sweep cancelled")
            for future in sorted(done, key=lambda f: futures[f]):
                index = futures[future]
                result = future.result()
                done_count += 1
                yield SweepPoint(index, float(values[index]), result, done_count, total)
    except BaseException:
        cancel.cancel()
        raise
    finally:
        executor.shutdown(wait=True, cancel_futures=True)


def sweep_values(start: float, stop: float, points: int) -> tuple[float, ...]:
    """``points`` evenly spaced values from ``start`` to ``stop`` inclusive (a SweepRange)."""
    if points < 1:
        msg = "a sweep needs at least one point"
        raise ValueError(msg)
    if points == 1:
        return (float(start),)
    step = (stop - start) / (points - 1)
    return tuple(start + i * step for i in range(points))


def sweep_request(
    request: PlanRequest, axis: SweepAxis, value: float, workload: str | None = None
) -> PlanRequest:
    """The request at one sweep point (the SLA axes change ``workload`` only, or every inference
    workload), validated like any request: a point beyond the request limits raises
    ``pydantic.ValidationError`` naming the field."""
    data = request.model_dump()
    if axis is SweepAxis.CAPEX_BUDGET:
        data["constraints"]["capex_budget"] = {
            "amount": repr(value),
            "currency": request.constraints.currency,
        }
    elif axis is SweepAxis.DEMAND_MULTIPLIER:
        _scale_demand_fields(data, value)
    elif axis is SweepAxis.DISCOUNT_RATE_ANNUAL:
        data["constraints"]["discount_rate_annual"] = value
    else:
        for w in data["inference"]:
            if workload in (None, w["name"]):
                w["sla"][axis.value] = value
    return PlanRequest.model_validate(data)


def _scale_demand_fields(data: dict[str, Any], factor: float) -> None:
    """Every inference workload's demand in a dumped request × ``factor`` (in place); training is
    not demand served to users and stays as it is (the proto's DEMAND_MULTIPLIER)."""
    for w in data["inference"]:
        if w["daily_tokens"] is not None:
            w["daily_tokens"] = _scaled_count(w["daily_tokens"], factor)
        else:
            w["peak_request_rate_per_s"] *= factor


def _scaled_count(count: int, factor: float) -> int | float:
    scaled = count * factor
    # Out-of-range values are left for validation to refuse with the field's own message.
    return max(1, round(scaled)) if math.isfinite(scaled) and scaled < 2**62 else scaled


def frontier(axis: SweepAxis, points: Sequence[tuple[float, PlanResult]]) -> SweepFrontier:
    """All points sorted by value, Pareto-optimal ones marked: no other point is at least as good
    on the swept quantity and strictly cheaper, or strictly better and no dearer."""
    minimise = _MINIMISE.get(axis)

    def better_or_equal(a: float, b: float) -> bool:
        return a <= b if minimise else a >= b

    rows = [(value, result, result.horizon_tco) for value, result in sorted(points, key=lambda p: p[0])]
    marked = []
    for value, result, cost in rows:
        pareto = False
        if cost is not None and minimise is not None:
            pareto = not any(
                other_cost is not None
                and better_or_equal(other_value, value)
                and other_cost.amount <= cost.amount
                and (other_value != value or other_cost.amount < cost.amount)
                for other_value, _, other_cost in rows
            )
        marked.append(
            FrontierPoint(
                value=value,
                status=result.status,
                horizon_tco=cost,
                # Without a plan, the summary says why (e.g. which cap is short, by how much).
                fleet_summary=describe_fleet(result.solution) if result.solution.has_plan else result.summary,
                pareto_optimal=pareto,
                npv=None if result.cash_flows is None else result.cash_flows.npv,
            )
        )
    return SweepFrontier(axis, tuple(marked))
