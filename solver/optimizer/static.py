"""Static deployments (``constraints.deployment_policy: static``): one set of replicas all day on
held GPUs (bought, owned, reserved); replicas on GPUs rented on demand may follow the hours.

Constraint 14 of ``solver.optimizer.model`` (``add_static_deployment``), for every replica pool P
(GPU ``g``, TP ``t_P``, ``a_P`` GPUs a replica) with integer static replicas ``F_P ≤ R_Pb`` in
every bucket b, and every GPU type g:

- held GPUs carry the static replicas in every bucket, each TP group inside one option's domain,
  in one layout for the whole day:  Σ_P a_P F_P ≤ Σ_{o∈O_held(g)} u_ob;
  ∀τ > 1: Σ_{P: t_P=τ} F_P ≤ Σ_{o held, D_o≥τ} K_oτ,  Σ_τ τ K_oτ ≤ n_o  (K ∈ Z+);
- GPUs rented on demand carry the rest, bucket by bucket:  Σ_P a_P (R_Pb − F_P) ≤ Σ_{o∈O_od(g)} d_ob;
  ∀τ > 1: Σ_{P: t_P=τ} (R_Pb − F_P) ≤ Σ_{o od, D_o≥τ} K'_obτ,  Σ_τ τ K'_obτ ≤ d_ob.

Without on-demand options of g this is just R_Pb = R_P0 (= F_P) in every bucket. With one bucket
(no hourly profile) every plan is static and nothing is added. The static replicas count as GPUs
in use all day (their busy power, no idle hours for training on them). A static plan is a plan of
the hourly model with these constraints added, so it is never cheaper.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from solver.optimizer.instance import FleetInstance, ReplicaPool, is_rental_on_demand, tp_domain
from solver.pricing.options import AcquisitionOption

if TYPE_CHECKING:
    from solver.optimizer.model import ModelBuilder


def is_static(instance: FleetInstance) -> bool:
    """Whether ``instance`` needs constraint 14: a static deployment over more than one bucket
    (with one, every plan runs the same replicas all day and the model is the hourly one)."""
    return instance.static_deployment and len(instance.buckets) > 1


def add_static_deployment(builder: ModelBuilder) -> dict[str, Any]:
    """Constraint 14 on ``builder``'s model; returns the static replicas ``F_P`` by pool id."""
    if not is_static(builder.inst):
        return {}
    slv = builder.solver
    static: dict[str, Any] = {}
    by_gpu: dict[str, list[ReplicaPool]] = defaultdict(list)
    rented_gpus = {o.gpu for o in builder.inst.options if is_rental_on_demand(o)}
    for pool in builder.pools:
        replicas = builder.pool_r[pool.id]
        if pool.deployment.unit is not None or pool.deployment.gpu not in rented_gpus:
            # Held GPUs only, or a disaggregated unit (two GPU types): the same replicas every bucket
            # (equalities presolve aggregates; the GPU and TP-domain rows of constraints 2 and 3
            # then hold all day).
            static[pool.id] = replicas[0]
            for b, var in enumerate(replicas[1:], start=1):
                slv.Add(var == replicas[0], f"static_replicas[{pool.id},{b}]")
            continue
        static[pool.id] = slv.IntVar(0, min(var.ub() for var in replicas), f"static[{pool.id}]")
        for b, var in enumerate(replicas):
            slv.Add(static[pool.id] <= var, f"static_le_replicas[{pool.id},{b}]")
        by_gpu[pool.deployment.gpu].append(pool)
    for gpu, pools in by_gpu.items():
        options = [o for o in builder.inst.options if o.gpu == gpu]
        held = [o for o in options if o.id in builder.n]
        rented = [o for o in options if is_rental_on_demand(o)]
        _held_layout(builder, gpu, pools, held, static)
        for b in range(builder.nb):
            hourly = [(pool, builder.pool_r[pool.id][b] - static[pool.id]) for pool in pools]
            _rented_layout(builder, f"{gpu},{b}", hourly, [(o, builder.d[o.id][b]) for o in rented])
            in_use = sum(builder.u[o.id][b] for o in held)
            demand = sum(pool.deployment.gpus_per_replica * static[pool.id] for pool in pools)
            slv.Add(demand <= in_use, f"static_gpus[{gpu},{b}]")
    return static


def _held_layout(
    builder: ModelBuilder,
    gpu: str,
    pools: Sequence[ReplicaPool],
    held: Sequence[AcquisitionOption],
    static: dict[str, Any],
) -> None:
    """TP groups of the static replicas inside held options' domains, one layout all day."""
    _tp_layout(
        builder, f"static_tp[{gpu}", [(p, static[p.id]) for p in pools], [(o, builder.n[o.id]) for o in held]
    )


def _rented_layout(
    builder: ModelBuilder,
    where: str,
    hourly: Sequence[tuple[ReplicaPool, Any]],
    rented: Sequence[tuple[AcquisitionOption, Any]],
) -> None:
    """The replicas beyond the static ones on on-demand GPUs in one bucket (GPUs and TP groups)."""
    gpus = sum(pool.deployment.gpus_per_replica * count for pool, count in hourly)
    builder.solver.Add(gpus <= sum(count for _, count in rented), f"hourly_gpus[{where}]")
    _tp_layout(builder, f"hourly_tp[{where}", hourly, rented)


def _tp_layout(
    builder: ModelBuilder,
    name: str,
    replicas: Sequence[tuple[ReplicaPool, Any]],
    hosts: Sequence[tuple[AcquisitionOption, Any]],
) -> None:
    """Every TP-τ replica (τ > 1) in a group of τ GPUs of one host option whose domain holds it,
    the groups filling no more than each option's GPUs (constraint 3's layout rule)."""
    slv = builder.solver
    groups_on: dict[str, Any] = defaultdict(int)
    degrees = sorted(
        {p.deployment.tp for p, _ in replicas if not p.deployment.mig_slice and p.deployment.tp > 1}
    )
    for tau in degrees:
        of_degree = [count for p, count in replicas if not p.deployment.mig_slice and p.deployment.tp == tau]
        able = [(o, count) for o, count in hosts if tp_domain(o) >= tau]
        groups = {o.id: slv.IntVar(0, slv.infinity(), f"{name},{o.id},{tau}]") for o, _ in able}
        slv.Add(sum(of_degree) <= sum(groups.values()), f"{name},{tau}]")
        for o_id, var in groups.items():
            groups_on[o_id] += tau * var
    for o, count in hosts:
        if o.id in groups_on:
            slv.Add(groups_on[o.id] <= count, f"{name},{o.id}]")
