"""Hand-built instances for optimizer tests (prices and capacities stated in each test)."""

from __future__ import annotations

import random

from solver.domain import AcquisitionMode, Fleet, FleetItem, InferenceWorkload, ModelRef, Precision, Sla
from solver.optimizer.api import solve
from solver.optimizer.instance import Bucket, Candidate, Caps, FixedGroup, FleetInstance, InferenceDemand
from solver.optimizer.results import FleetSolution, LimitFired, SolverStats, SolveStatus
from solver.pricing.options import AcquisitionOption

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


THREE_BUCKETS = (
    Bucket(index=0, hours=tuple(range(8))),
    Bucket(index=1, hours=tuple(range(8, 18))),
    Bucket(index=2, hours=tuple(range(18, 24))),
)


def random_portfolio(seed: int, workloads: int = 8) -> FleetInstance:
    """Four GPU types on 8-GPU servers (about half of them whole boards) plus on-demand rentals;
    workloads with a three-bucket day profile, so an LP uses few of the candidates."""
    rng = random.Random(seed)
    gpus = ("g1", "g2", "g3", "g4")
    options = []
    for g in gpus:
        price = rng.uniform(5_000, 40_000)
        options.append(option(g, capex=price, per_server=8, domain=8, full=rng.random() < 0.5))
        options.append(
            option(
                g,
                mode=AcquisitionMode.ON_DEMAND,
                per_server=8,
                domain=8,
                busy_hourly=price / 9_000,
            )
        )
    demands, cands = [], []
    for i in range(workloads):
        name = f"w{i}"
        peak = rng.uniform(0.3, 30.0)
        demands.append(
            InferenceDemand(name=name, rate_req_s=(*(peak * rng.uniform(0.2, 1.0) for _ in range(2)), peak))
        )
        for g in gpus:
            cands.append(candidate(name, g, rng.uniform(0.5, 6.0)))
            cands.append(candidate(name, g, rng.uniform(1.0, 14.0), tp=2))
    return FleetInstance(
        currency="USD",
        horizon_months=36,
        buckets=THREE_BUCKETS,
        options=tuple(options),
        inference=tuple(demands),
        candidates=tuple(cands),
    )


def two_gpu_instance(rate: float, caps: Caps | None = None, redundancy: int = 0) -> FleetInstance:
    # GPU "a": 100 per GPU, 10 req/s per replica; GPU "b": 250 per GPU, 30 req/s per replica.
    return FleetInstance(
        currency="USD",
        horizon_months=36,
        buckets=ALL_DAY,
        options=(
            option("a", capex=100, power_kw=1.0, rack_units=2),
            option("b", capex=250, power_kw=2.0, rack_units=2),
        ),
        inference=(flat_demand("chat", rate, redundancy),),
        candidates=(candidate("chat", "a", 10.0), candidate("chat", "b", 30.0)),
        caps=caps or Caps(),
    )


def fixed_fleet_instance(count_a: int, rate: float = 55.0) -> FleetInstance:
    """``count_a`` GPUs "a" bought (fixed counts): 100 per GPU, 10 req/s per replica (the numbers of
    ``two_gpu_instance``)."""
    return FleetInstance(
        currency="USD",
        horizon_months=36,
        buckets=ALL_DAY,
        options=(option("a", capex=100),),
        inference=(flat_demand("chat", rate),),
        candidates=(candidate("chat", "a", 10.0),),
        fixed_fleet=(FixedGroup(("a/buy",), count_a),),
    )


def fleet_of_a(count: int) -> Fleet:
    return Fleet(items=(FleetItem(gpu="a", mode=AcquisitionMode.BUY, count=count),))


def proven_plan(seed: int, workloads: int) -> tuple[FleetInstance, FleetSolution]:
    """A random portfolio and its plan, proven optimal (no explanations)."""
    inst = random_portfolio(seed, workloads=workloads)
    sol = solve(inst, time_limit_s=30, relative_gap=1e-9, explain=False)
    assert sol.status is SolveStatus.OPTIMAL
    return inst, sol


def chat_workload(rate: float, *, tpot_ms: float = 50.0) -> InferenceWorkload:
    """Qwen3-8B at FP8 serving ``rate`` chat requests/s (1 500 tokens in, 300 out, p95 TTFT 2 s)."""
    return InferenceWorkload(
        name="chat",
        model=ModelRef(model_id="Qwen/Qwen3-8B"),
        precision=Precision.FP8,
        input_tokens=1500,
        output_tokens=300,
        peak_request_rate_per_s=rate,
        sla=Sla(ttft_p95_ms=2000, tpot_p95_ms=tpot_ms),
    )


def solver_stats(
    status: SolveStatus,
    objective: float | None = None,
    bound: float | None = None,
    gap: float | None = None,
    *,
    seconds: float = 0.7,
    relative_gap_target: float = 0.0,
) -> SolverStats:
    """Statistics of a solve the time limit stopped (``seconds`` = its limit), as the driver reports."""
    return SolverStats(
        backend="scip",
        status=status,
        objective=objective,
        best_bound=bound,
        gap=gap,
        seconds=seconds,
        limit_fired=LimitFired.TIME,
        variables=1,
        constraints=1,
        time_limit_s=seconds,
        relative_gap_target=relative_gap_target,
    )


def no_plan(seconds: float = 0.7) -> FleetSolution:
    """A solve that found no plan within ``seconds``."""
    return FleetSolution(
        status=SolveStatus.NO_SOLUTION,
        stats=solver_stats(SolveStatus.NO_SOLUTION, seconds=seconds),
        currency="USD",
        horizon_months=36,
        buckets=(),
    )
