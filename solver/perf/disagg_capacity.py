"""Capacity of a disaggregated unit at an SLA: the largest request rate it serves within the targets.

A *unit* is ``p`` prefill engines and ``d`` decode engines (``solver.perf.disagg``). Its capacity
at the SLA is the request rate of the steady closed loop of the most users for which the
p95 TTFT and the TPOT still meet their targets (``solve_steady``, the loop the disaggregated
calibration was fitted on; more users only add load). The p95 TTFT adds to the mean the tail of
the waits (for a prefill engine and for a decode slot) as the aggregated model does for its
queue: an exponential wait of mean W when busy a share ρ of the time has its 95th percentile at
(W/ρ)·ln(ρ/0.05) (``P95_TAIL``; no tail when ρ ≤ 0.05).

All the ratios of one pair of engines and all the loads are solved together (arrays), once on a
geometric grid of users and once more between the last grid point that meets the SLA and the
next; the answer is then ``estimate_disagg`` itself at that many users (whole users, stepped down
until it meets the SLA), so the plan's evaluator recomputes exactly what the candidate states.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from pricebook.schema import ModelArch
from solver.domain import Sla
from solver.perf.disagg import (
    DisaggCalibration,
    DisaggDeployment,
    DisaggFactors,
    DisaggTiming,
    RawPhysics,
    Transfer,
    disagg_infeasibility,
    estimate_disagg,
    factor_arrays,
    kv_transfer,
    load_disagg_calibration,
    raw_physics,
    solve_steady,
)
from solver.perf.physics import GB
from solver.perf.replica import WorkloadShape
from solver.perf.timing import P95_TAIL

USER_GRID_POINTS = 40
REFINE_POINTS = 24


@dataclass(frozen=True, slots=True)
class UnitCapacity:
    """One unit (``prefill_engines`` + ``decode_engines``) at its largest load within the SLA."""

    prefill_engines: int
    decode_engines: int
    req_s: float
    """Requests per second the unit serves within the SLA (0 = none)."""
    users: float
    ttft_p95_ms: float
    tpot_ms: float
    decode_batch: float
    prefill_utilisation: float
    transfer: Transfer
    reason: str = ""
    """Why it serves nothing ("" when ``req_s`` > 0)."""
    bracket: tuple[int, int | None] = (0, None)
    """Grid answers (``exact=False``): whole users within the SLA, and the first found beyond it
    (None: none below the loop's saturation), for ``refine_unit``."""


def ttft_p95(ttft_s: np.ndarray, wait_s: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """The p95 TTFT from the mean and the mean wait (see the module docstring)."""
    busy = np.clip(rho, 1e-12, 1.0 - 1e-12)
    with np.errstate(divide="ignore", invalid="ignore"):
        tail = np.where(busy > P95_TAIL, np.log(busy / P95_TAIL) / busy - 1.0, 0.0)
    extra = np.where(np.isfinite(wait_s), np.maximum(wait_s, 0.0) * tail, np.inf)
    result: np.ndarray = ttft_s + extra
    return result


def _meets(ttft_p95_s: np.ndarray, tpot_s: np.ndarray, sla: Sla) -> np.ndarray:
    ok: np.ndarray = np.isfinite(ttft_p95_s) & np.isfinite(tpot_s) & (tpot_s > 0)
    if sla.ttft_p95_ms is not None:
        ok &= ttft_p95_s * 1e3 <= sla.ttft_p95_ms
    if sla.tpot_p95_ms is not None:
        ok &= tpot_s * 1e3 <= sla.tpot_p95_ms
    if sla.min_per_user_tok_s is not None:
        with np.errstate(divide="ignore"):
            ok &= 1.0 / tpot_s >= sla.min_per_user_tok_s
    return ok


def _loads(raw: RawPhysics, users: Sequence[float] | np.ndarray) -> list[RawPhysics]:
    """``raw`` (a unit's engines, its batch grid up to the decode slots) under each number of users."""
    return [replace(raw, users=float(n)) for n in users]


def unit_capacities(
    model: ModelArch,
    deployment: DisaggDeployment,
    shape: WorkloadShape,
    sla: Sla,
    ratios: Sequence[tuple[int, int]],
    *,
    calibration: DisaggCalibration | None = None,
    exact: bool = True,
) -> list[UnitCapacity]:
    """Each (prefill engines, decode engines) unit of ``deployment``'s engines at ``sla``.
    ``deployment``'s own worker counts are ignored (one engine of each role is timed). With
    ``exact=False`` the grid's answers (within about 1 %; ``refine_unit`` makes one exact)."""
    if not ratios:
        return []
    cal = calibration or load_disagg_calibration()
    one = replace(
        deployment,
        prefill=replace(deployment.prefill, workers=1),
        decode=replace(deployment.decode, workers=1),
    )
    reason = disagg_infeasibility(model, one, shape)
    if reason:
        return [_none(p, d, reason) for p, d in ratios]
    f = cal.factors(deployment.engine, deployment.precision)
    base = raw_physics(model, one, shape, 10**9)  # one engine a role; the batch grid up to its slots
    raws = [
        _scaled(
            base,
            model,
            replace(one, prefill=replace(one.prefill, workers=p), decode=replace(one.decode, workers=d)),
            shape,
        )
        for p, d in ratios
    ]
    grids = [
        np.geomspace(0.5, max(r.decode_slots * r.decode_workers * 1.5, 2.0), USER_GRID_POINTS) for r in raws
    ]
    fine = []
    for grid, solved in zip(
        grids, _solve([_loads(r, g) for r, g in zip(raws, grids, strict=True)], f, sla), strict=True
    ):
        i = _last_within(solved["ok"])
        fine.append(np.linspace(grid[i], grid[min(i + 1, len(grid) - 1)], REFINE_POINTS) if i >= 0 else None)
    groups = [(r, g) for r, g in zip(raws, fine, strict=True) if g is not None]
    solved_fine = iter(_solve([_loads(r, g) for r, g in groups], f, sla))
    out = []
    for (p, d), raw, points in zip(ratios, raws, fine, strict=True):
        if points is None:
            out.append(_none(p, d, "even one request at a time misses the SLA"))
            continue
        solved = next(solved_fine)
        i = max(_last_within(solved["ok"]), 0)
        miss = math.ceil(points[i + 1]) if not solved["ok"].all() and i + 1 < len(points) else None
        grid_answer = UnitCapacity(
            p,
            d,
            float(solved["req_s"][i]),
            float(points[i]),
            float(solved["ttft_p95_s"][i] * 1e3),
            float(solved["tpot_s"][i] * 1e3),
            float(solved["batch"][i]),
            float(solved["rho"][i]),
            raw.transfer,
            bracket=(max(int(points[i]), 1), miss),
        )
        out.append(
            refine_unit(model, one, shape, sla, grid_answer, calibration=cal) if exact else grid_answer
        )
    return out


def _scaled(base: RawPhysics, model: ModelArch, unit: DisaggDeployment, shape: WorkloadShape) -> RawPhysics:
    """``base`` (one engine a role) for ``unit``'s engines: the prefill pool's rate and the decode
    engines scale with their counts; the KV link depends on the unit's size."""
    transfer = kv_transfer(model, unit, shape)
    return replace(
        base,
        prefill_rate=base.prefill_rate * unit.prefill.workers,
        decode_workers=float(unit.decode.workers),
        transfer_s=transfer.bytes_per_request / (transfer.gbytes_s * GB),
        transfer=transfer,
    )


def _last_within(ok: np.ndarray) -> int:
    """Index of the last point before the first that misses the SLA (-1: the first misses)."""
    bad = np.flatnonzero(~ok)
    return int(bad[0]) - 1 if bad.size else len(ok) - 1


def refine_unit(
    model: ModelArch,
    deployment: DisaggDeployment,
    shape: WorkloadShape,
    sla: Sla,
    grid: UnitCapacity,
    *,
    calibration: DisaggCalibration | None = None,
) -> UnitCapacity:
    """The exact capacity of a unit ``unit_capacities(exact=False)`` answered ``grid`` for."""
    cal = calibration or load_disagg_calibration()
    unit = replace(
        deployment,
        prefill=replace(deployment.prefill, workers=grid.prefill_engines),
        decode=replace(deployment.decode, workers=grid.decode_engines),
    )
    return _exact(model, unit, shape, sla, users=grid.bracket, cal=cal)


def _exact(
    model: ModelArch,
    unit: DisaggDeployment,
    shape: WorkloadShape,
    sla: Sla,
    *,
    users: tuple[int, int | None],
    cal: DisaggCalibration,
) -> UnitCapacity:
    """The unit at the most whole users that meet ``sla`` by ``estimate_disagg`` itself (what the
    plan's evaluator recomputes): from the grid's last users within the SLA (stepping down while
    the exact model misses) up to its first users beyond it (``users``; bisected)."""
    p, d = unit.prefill.workers, unit.decode.workers

    def estimate(n: int) -> DisaggTiming | None:
        e = estimate_disagg(model, unit, shape, n, disagg_calibration=cal)
        return e.timing if e.feasible and timing_meets(e.timing, sla) else None

    low, high = users
    met = estimate(low)
    while met is None and low > 1:
        high, low = low, low - max(1, low // 64)
        met = estimate(low)
    if met is None:
        return _none(p, d, "even one request at a time misses the SLA")
    while high is not None and high - low > 1:
        mid = (low + high) // 2
        at_mid = estimate(mid)
        low, high, met = (mid, high, at_mid) if at_mid is not None else (low, mid, met)
    t = met
    return UnitCapacity(
        p,
        d,
        t.req_s,
        float(low),
        timing_ttft_p95(t) * 1e3,
        t.tpot_s * 1e3,
        t.decode_batch,
        t.prefill_utilisation,
        t.transfer,
    )


def timing_ttft_p95(t: DisaggTiming) -> float:
    """The p95 TTFT (s) of one estimate (``ttft_p95``)."""
    return float(
        ttft_p95(np.array([t.ttft_s]), np.array([t.prefill_wait_s]), np.array([t.prefill_utilisation]))[0]
    )


def timing_meets(t: DisaggTiming, sla: Sla) -> bool:
    """Whether one estimate meets every target of ``sla``."""
    return bool(_meets(np.array([timing_ttft_p95(t)]), np.array([t.tpot_s]), sla)[0])


def _solve(groups: list[list[RawPhysics]], f: DisaggFactors, sla: Sla) -> list[dict[str, np.ndarray]]:
    """Each group's loads solved (one vectorised solve over all groups): request rate, p95 TTFT,
    TPOT, decode batch, prefill utilisation and whether the SLA is met, per load."""
    flat = [r for g in groups for r in g]
    if not flat:
        return []
    solved = solve_steady(flat, factor_arrays([f] * len(flat)))
    columns = {
        "req_s": solved.req_s,
        "ttft_p95_s": ttft_p95(solved.ttft_s, solved.prefill_wait_s, solved.rho),
        "tpot_s": solved.tpot_s,
        "batch": solved.batch,
        "rho": solved.rho,
    }
    columns["ok"] = _meets(columns["ttft_p95_s"], solved.tpot_s, sla)
    out, start = [], 0
    for g in groups:
        out.append({name: values[start : start + len(g)] for name, values in columns.items()})
        start += len(g)
    return out


def _none(p: int, d: int, reason: str) -> UnitCapacity:
    nan = math.nan
    return UnitCapacity(p, d, 0.0, 0.0, nan, nan, 0.0, 0.0, Transfer(0.0, "", 0.0), reason)
