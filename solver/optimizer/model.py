"""The fleet MIP: cheapest GPUs (bought, reserved or rented by the hour) serving every workload.

Data
----
- ``O``: acquisition options (``solver.pricing.options.AcquisitionOption``), each for one GPU type
  ``g(o)`` and mode (buy / reserved / on-demand; ``O_od`` = on-demand, ``O_held`` = the rest), per
  server model bought or undominated rental offer (``costs.undominated_rentals``: own size ``i_o``).
  ``k_o`` GPU slots per server, ``D_o`` TP domain (``instance.tp_domain``), costs
  ``capex_gpu_o, capex_srv_o, res_o, fix_gpu_o, fix_srv_o, busy_o`` (per GPU-hour), power, rack units.
- ``B``: buckets (hours of the day with one demand pattern, ``instance.buckets_from_rates``: exact
  unless a large portfolio forces clustering, then λ_wb is the bucket's busiest hour and the plan's
  bound comes from its quietest hours, ``api.with_clustered_hours_bound``), ``h_b`` hours in b;
  ``DAYS`` = 365/12 days per month; ``H`` = horizon in months.
- ``W``: inference workloads, ``λ_wb`` request rate in bucket b, ``R_w`` spare replicas (N+R).
  A workload's *loads* k are its request sizes (``length_mix``; one without), ``σ_wk`` their
  shares of its requests (Σ_k σ_wk = 1), so load (w, k) has rate σ_wk · λ_wb.
- ``P``: replica pools (``instance.replica_pools``): candidates sharing integer replicas of one
  deployment. A pool of one candidate is that candidate's own replicas (all plans before pooling);
  a shared pool P holds loads of one *family* (``solver.optimizer.pooling``): the sizes of one
  workload's mix, or every load of the ``isolation: shared`` workloads on one model, engine and
  KV precision. ``S_P`` spares of a shared pool = its members' largest R_w.
- ``C_w``: candidate deployments of w's loads (GPU ``g(c)``, TP ``t_c``, precision, MIG slice,
  load ``k(c)``, pool ``P(c)``), each with ``cap_c`` = request rate one replica sustains for its
  load: at w's SLA (``solver.perf.capacity_at_sla``) for its own replicas; in a shared pool at the
  family's *strictest* SLA (smallest TTFT and TPOT targets, highest per-user speed), single-stream
  (13 is Mélange's linear rule; ``pool_timing`` derates pools whose mix misses by its timing);
  times the target utilization (w's, or the family's lowest) and the capacity-quantile factor
  (``solver.perf.risk``). Every load also keeps candidates of its own family, so sharing is
  always optional. And
  ``a_c`` = GPUs one replica occupies (``t_c``, or ``1/m`` for a MIG slice of 1/m). Packing MIG
  instances by this fractional sum is exact for the catalogue's layouts: instances are 1/2 and
  1/m of a GPU (m = 4, 7, 8; ``solver.perf.physics.mig_share``). With m even, halves are whole
  numbers of 1/m. With m = 7 (H100 3g.40gb + 1g.10gb), a half shares a GPU with up to three
  sevenths; h halves and s sevenths whose sum fits N GPUs then also fit N physical GPUs (pairs of
  halves, an odd half with ≤ 3 sevenths, the remaining sevenths seven to a GPU).
- ``T``: training workloads; for each allowed GPU type g: ``G_tg`` GPU-hours per month and ``m_tg``
  GPUs that must run at once (memory fit and deadline), from ``solver.perf.estimate_training``.
- Caps: capex budget ``BUD``, monthly opex ``OPX``, power ``PWR`` (kW at the wall, PUE included
  by the economics), rack units ``RU``; count bounds ``[lo_g, hi_g]``; owned GPUs ``own_g``.

Variables
---------
- ``n_o ∈ Z+`` GPUs held through ``o ∈ O_held`` (all hours); ``s_o ∈ Z+`` servers (bought/owned).
- ``d_ob ∈ Z+`` on-demand GPUs of ``o ∈ O_od`` rented in bucket b.
- ``u_ob ≥ 0`` GPUs of ``o ∈ O_held`` busy serving in bucket b (drives busy power cost).
- ``r_cb ∈ Z+`` replicas of candidate c in bucket b, for c alone in its pool; in a shared pool
  ``r_cb ≥ 0`` is continuous: c's load in replica-equivalents (its served rate ÷ cap_c).
- ``R_Pb ∈ Z+`` replicas of pool P in bucket b (= r_cb for a pool of one candidate);
  ``y_P ∈ {0,1}`` pool P is used (only shared pools with S_P > 0).
- ``y_c ∈ {0,1}`` candidate c is used (only for workloads with ``R_w > 0``).
- ``z_tg ∈ {0,1}`` training workload t runs on GPU type g; ``f_to ∈ [0,1]`` share of its monthly
  GPU-hours run on option o (held options: in idle hours; on-demand: rented for the run).

Constraints (numbers match ``ModelBuilder`` method comments and the evaluator's checks)
-----------------------------------------------------------------------------------
1. Demand, ∀w, k, b with λ_wb > 0:  Σ_{c∈C_w, k(c)=k} cap_c · r_cb ≥ σ_wk · λ_wb   (rows
   divided by max_b λ_wb); 1'. batch work with a window: ``batch_window``.
2. GPUs, ∀g, b:  Σ_{P: g(P)=g} a_P · R_Pb ≤ Σ_{o∈O_held(g)} u_ob + Σ_{o∈O_od(g)} d_ob,  u_ob ≤ n_o.
3. TP domains, ∀g, b, ∀ TP degree τ > 1 used on g: integer ``k_obτ`` TP-τ groups hosted by
   option o (only options with D_o ≥ τ):  Σ_{P: g(P)=g, t_P=τ} R_Pb ≤ Σ_o k_obτ  and, ∀o,
   Σ_τ τ · k_obτ ≤ (u_ob | d_ob). With power-of-two TP degrees dividing the domains, groups laid
   out largest first in one option's GPUs never straddle a domain or server boundary, so this
   is exactly "every TP group inside one NVLink/P2P domain of one server". Candidates whose TP
   exceeds every domain of their GPU are rejected before the model.
4. Whole servers, ∀o bought/owned: n_o ≤ k_o · s_o  (n_o = k_o · s_o for bought fixed boards).
   Whole rental instances, ∀o rented with i_o GPUs per instance > 1: n_o = i_o · w_o (reserved),
   d_o,b = i_o · w_o,b (on-demand), w ∈ Z+.
   Multi-node fabric, ∀o bought with a fabric price c_o > 0 (``network_capex_per_server``) and
   ub(s_o) ≥ 2: ``e_o ∈ {0,1}`` "o is a single node": e_o ≤ s_o, s_o ≤ 1 + (ub(s_o) − 1)(1 − e_o);
   the fabric costs NET_o = c_o (s_o − e_o), i.e. c_o s_o once s_o ≥ 2 and 0 for one server (the
   minimisation sets e_o = 1 whenever s_o = 1; ``AcquisitionOption.network_capex``).
   A server model is leased or bought, not both (``leases.add_lease_or_buy``: one binary per model
   with a lease option), so each option's fabric rule stays exact.
   Owned GPUs sit densely in owned hosts: n_o ≥ k_o · s_o − (k_o − 1). A bought option b of the
   same GPU and server model as an owned option o (b not a fixed board) shares o's free slots:
   n_b + n_o ≤ k (s_b + s_o) replaces n_b ≤ k · s_b (``instance.owned_host_of``).
5. Capex: Σ_o (capex_gpu_o + inst_gpu_o) n_o + (capex_srv_o + inst_srv_o) s_o + NET_o + X ≤ BUD
   (inst = installation, X = the request's one-off storage).
6. Monthly opex: Σ_o fix_gpu_o n_o + fix_srv_o s_o + X_m + DAYS Σ_b h_b (Σ busy_o u_ob + Σ busy_o d_ob)
   + Σ_{t,o} busy_o · G'_{to} · f_to ≤ OPX (G' = G, × ⌈m_tg / i_o⌉ i_o / m_tg on demand: whole instances).
7. Power: Σ_{o on site} pw_gpu_o · n_o + pw_srv_o · s_o ≤ PWR   (rentals use the cloud's power).
8. Rack units: Σ_{o on site} ru_o · s_o ≤ RU.
9. Allowed GPUs/modes are the options given (economics filters them); owned:
   Σ_{o owned, g(o)=g} n_o ≤ own_g (capex 0: sunk; one owned option per server model, and some
   may stay unused, so owning more GPUs never raises the optimum); counts, ∀g, b:
   Σ_{O_held(g)} n_o + Σ_{O_od(g)} d_ob ≤ hi_g, and ≥ lo_g · k_gb (k_gb ∈ {0,1}, Σ_b k_gb = 1: every
   mode counts, at the busiest hour); without on-demand options lo_g ≤ Σ_{O_held(g)} n_o.
10. N+R redundancy, ∀w with R_w > 0, k, c ∈ C_w alone in its pool with k(c) = k, b with λ_wb > 0:
    Σ_{c'∈C_w, k(c')=k} cap_c' r_c'b ≥ σ_wk λ_wb + R_w · cap_c · y_c,  r_cb ≤ M · y_c
    (losing the R largest replicas in use still covers demand; shared pools keep their own
    spares, constraint 13).
11. Training, ∀t: Σ_g z_tg = 1;  ∀g: Σ_{o on g} f_to = z_tg.
    Idle hours, ∀o ∈ O_held: Σ_t max(G_{t,g(o)}, G_min) f_to ≤ DAYS · Σ_b h_b (n_o − u_ob) (off-peak
    hours count; G_min = ``MIN_TRAINING_GPU_HOURS``). Deadline, ∀t, g without an on-demand option:
    Σ_{O_held(g)} n_o ≥ m_tg · z_tg. With one, runs either rent their m_tg GPUs on demand or run
    on held GPUs: q_tg ∈ {0,1}, Σ_{o∈O_held(g)} f_to ≤ q_tg, Σ_{O_held(g)} n_o ≥ m_tg · q_tg.
13. Shared pools, ∀P shared, b:  Σ_{c∈P} r_cb + S_P · y_P ≤ R_Pb,  R_Pb ≤ M · y_P (when S_P > 0):
    the pool's replicas carry every member's load at its capacity, with S_P of them to spare
    (losing any S_P replicas leaves Σ load ≤ R − S_P). The independent evaluator checks the
    pool by the sharing rule instead: the mixed batch on R − S_P replicas meets the SLA by the
    performance model's timing (``evaluate.check_pools``, ``pool_timing``).
14. Static deployments (``solver.optimizer.static``): one set of replicas on held GPUs all day.
15. Shared cards (``solver.optimizer.colocation``): a small model's guest replica takes a share of
    a host replica's card (``a_c = 0`` in 2), ∀g, b: Σ guests r_cb ≤ Σ hosts t_c r_cb.
16. Disaggregated units (``solver.optimizer.disaggregation``): r_cb counts units of prefill and
    decode engines, taking GPUs of both roles' types in 2 and their engines' TP groups in 3; units
    whose KV crosses the scale-out fabric put their types' bought servers in it (s_o = 0 or ≥ 2).

Exact reductions (``ModelBuilder(reduce=True)``; ``test_model.py``: same optimum on random instances)
------------------------------------------------------------------------------------------
R1. Replica bounds: r_cb ≤ ⌈σ_wk λ_wb / cap_c⌉ + R_w (0 when λ_wb = 0; a host of 15 + cards for its
    type's guests), R_Pb ≤ Σ_{c∈P} of those + S_P; k_obτ ≤ the sum of their replicas' bounds (more
    replicas than needed only add GPUs; static: the busiest bucket's; 10's big-M never below).
R2. Reservations dominated by on-demand (``reductions.reserved_dominated_by_on_demand``): n_o = 0
    when an on-demand option of the same GPU costs no more around the clock, holds as large TP groups.
R3. Small chassis (``reductions.small_server_limits``): s_A ≤ m − 1 when a bought option B with
    k_B = m·k_A costs no more per GPU and per m A-servers (capex, residual, monthly, power, racks).

Objective (TCO over the horizon, request currency, divided by a cost unit for scaling)
-------------------------------------------------------------------------------------
min TCO + ε · GPUS, where
TCO  = Σ_o (capex_gpu_o n_o + capex_srv_o s_o)(1 − res_o) + H (fix_gpu_o n_o + fix_srv_o s_o)
       + Σ_o inst_gpu_o n_o + inst_srv_o s_o + NET_o + X + H · X_m   (X, X_m: storage, a constant)
       + H · DAYS Σ_b h_b (Σ busy_o u_ob + Σ busy_o d_ob) + H Σ_{t,o} busy_o G'_{to} f_to
GPUS = Σ n_o + Σ s_o + Σ_b h_b/24 · d_ob           (ε ≪ any price difference)
Under ``objective: npv`` at rate r, H becomes W = Σ_y months_y (1 + r)^−y and res_o becomes
res_o (1 + r)^−Y (``solver.pricing.discounting``): the NPV, the same shape (W = H, 1 at r = 0).

12. Tie-break stage (main plans, once proven optimal; ``driver.tie_break_stage``): with TCO* the
    optimum, binaries v_g ≥ n_o / ub(n_o), d_ob / ub(d_ob) for the options of GPU type g, and
    TCO ≤ TCO* (1 + 1e-7):  min 1000 · GPUS + Σ_g v_g  — fewer GPUs, then fewer GPU types (SKUs).

Scaling: demand rows ÷ the workload's peak rate (rates 1e-8…1e8 req/s), costs ÷ ``cost_unit`` (the
dearest option's per-GPU horizon cost): coefficients within a few orders of magnitude.

The solve driver (backend, the LP-guided search beside this model, status mapping, tie-break stage
12): ``solver.optimizer.driver``. Benchmarks and speed-ups tried and removed: ``docs/optimizer.md``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from solver.optimizer.batch_window import add_window_demand
from solver.optimizer.cancel import checkpoint
from solver.optimizer.caps import Cap, CapKey, add_count_minimum, count_cap, counted_gpu
from solver.optimizer.colocation import add_card_pairing, host_cards_for, shared_cards
from solver.optimizer.disaggregation import add_kv_fabric
from solver.optimizer.gpu_costs import horizon_cost_per_gpu, lease_cost_per_server, replicas_alone
from solver.optimizer.instance import (
    MIN_TRAINING_GPU_HOURS,
    Candidate,
    FleetInstance,
    InferenceDemand,
    ReplicaPool,
    billed_training_hours,
    is_on_site,
    is_rental_on_demand,
    owned_host_of,
    rented_for_run,
    replica_pools,
    tp_domain,
)
from solver.optimizer.leases import add_lease_or_buy
from solver.optimizer.reductions import gpu_upper_bounds, reserved_dominated_by_on_demand, small_server_limits
from solver.optimizer.results import SolverStats
from solver.optimizer.static import add_static_deployment, is_static
from solver.pricing.options import MULTI_NODE_SERVERS, AcquisitionOption
from solver.units import DAYS_PER_MONTH

TIE_BREAK_PER_GPU = 1e-7
"""Tie-break weight per GPU in cost units (1 unit = the dearest option's per-GPU horizon cost)."""
GPU_TIE_WEIGHT = 1000.0
"""Tie-break stage weight of one GPU against one GPU type: one on-demand GPU for the shortest
bucket (1/24 of a GPU in the measure) still outweighs every GPU type of the catalogue (19)."""
FLEET_BRANCHING_PRIORITY = 10
"""SCIP branching priority of held-fleet variables (servers, held GPUs; the rest keep 0)."""


@dataclass(frozen=True, slots=True)
class Relaxation:
    """Which caps/constraints to drop when re-solving (explanations, fleet evaluation)."""

    drop_caps: frozenset[CapKey] = frozenset()
    forbid: frozenset[tuple[str, str]] = frozenset()
    """(workload, gpu) pairs that may not be used (runner-up plans)."""
    elastic_demand: bool = False
    """Allow unserved demand at a large penalty (EvaluateFleet's shortfall on a fixed fleet)."""
    maximize_demand_scale: bool = False
    """Maximise α such that α × every workload's demand is served (EvaluateFleet's headroom)."""
    minimize: CapKey | None = None
    """Minimise this cap's usage instead of TCO (a ``Cap`` or ``count_cap(gpu)``): the smallest
    relaxation of that cap."""
    fixed_replicas: tuple[tuple[str, tuple[float, ...]], ...] = ()
    """(candidate id, replicas per bucket) held at these values (local runner-ups: the other
    workloads keep their planned replicas while one workload moves); a shared pool's id holds its
    replicas, a member's id its load (``solver.optimizer.idle``: a plan's deployments kept)."""


NO_RELAXATION = Relaxation()
"""Every cap and constraint as the request states it."""


@dataclass(frozen=True, slots=True)
class MipValues:
    """Raw values of a solved MIP (integers rounded)."""

    n: dict[str, int]
    s: dict[str, int]
    d: dict[str, tuple[int, ...]]
    u: dict[str, tuple[float, ...]]
    r: dict[str, tuple[int, ...]]
    """Replicas of each candidate with replicas of its own (a pool of one)."""
    train_gpu: dict[str, str]
    train_share: dict[tuple[str, str], float]
    unserved: dict[str, tuple[float, ...]] = field(default_factory=dict)
    """Elastic mode: request rate not served per workload and bucket."""
    pools: dict[str, tuple[int, ...]] = field(default_factory=dict)
    """Replicas of each shared pool (constraint 13) per bucket."""
    shared_load: dict[str, tuple[float, ...]] = field(default_factory=dict)
    """Replica-equivalents ``v_cb`` of each pooled candidate per bucket."""
    static: dict[str, int] = field(default_factory=dict)  # pool id → static replicas (constraint 14)


@dataclass(frozen=True, slots=True)
class MipResult:
    stats: SolverStats
    values: MipValues | None


def _cost_unit(instance: FleetInstance) -> float:
    unit = max((horizon_cost_per_gpu(o, instance.horizon_months) for o in instance.options), default=0.0)
    return unit if unit > 0 else 1.0


def usable_candidates(instance: FleetInstance) -> tuple[Candidate, ...]:
    """Candidates whose TP group fits some option's domain on their GPU (constraint 3)."""
    max_domain: dict[str, int] = defaultdict(int)
    for o in instance.options:
        max_domain[o.gpu] = max(max_domain[o.gpu], tp_domain(o))
    return tuple(
        c
        for c in instance.candidates
        if c.capacity_req_s > 0
        and (c.mig_slice or c.tp <= max_domain.get(c.gpu, 0))
        and all(size <= max_domain.get(g, 0) for g, size, _ in c.tp_groups())
    )


class ModelBuilder:
    """Variables, constraints 1–11 and the objective of the module docstring, on ``solver`` (an
    empty ``pywraplp.Solver``; ``solver.optimizer.driver`` picks the backend and runs it)."""

    def __init__(
        self, instance: FleetInstance, solver: Any, relax: Relaxation, *, reduce: bool = True
    ) -> None:
        self.inst = instance
        self.relax = relax
        self.reduce = reduce
        """Apply the exact option reductions (off only to test that they are exact)."""
        self.solver: Any = solver
        self.unit = _cost_unit(instance)
        self.hours = [b.hours_per_day for b in instance.buckets]
        self.nb = len(instance.buckets)
        self.months = instance.horizon_months
        self.n: dict[str, Any] = {}
        self.s: dict[str, Any] = {}
        self.single_node: dict[str, Any] = {}
        self.d: dict[str, list[Any]] = {}
        self.u: dict[str, list[Any]] = {}
        self.r: dict[str, list[Any]] = {}
        self.y: dict[str, Any] = {}
        self.z: dict[tuple[str, str], Any] = {}
        self.f: dict[tuple[str, str], Any] = {}
        self.short: dict[str, list[Any]] = {}
        self.static: dict[str, Any] = {}
        self.tco_expr: Any = 0
        self.gpu_count_expr: Any = 0
        self.cands = tuple(c for c in usable_candidates(instance) if (c.workload, c.gpu) not in relax.forbid)
        self.demand_of = {w.name: w for w in instance.inference}
        self.pools = replica_pools(self.cands, instance.inference)
        self.cards = shared_cards(self.cands)
        self.pool_r: dict[str, list[Any]] = {}
        """Integer replicas ``R_Pb`` of every pool (a one-member pool's are its member's ``r``)."""
        self.pool_y: dict[str, Any] = {}
        self.shared_pool_ids = frozenset(p.id for p in self.pools if p.shared)
        self.gpu_bound = gpu_upper_bounds(instance, self.cands)
        self.chassis_reduction = True
        """R3 (small chassis); exact for one fleet, not when purchases are staged over periods."""

    # -- bounds ------------------------------------------------------------------------------
    def _replica_bound(self, c: Candidate, b: int) -> float:
        """Replicas of c in bucket b an optimal plan could use: the demand on c alone plus spares (more
        only adds GPUs; static: the busiest bucket's). Unbounded when maximising the demand scale."""
        if self.relax.maximize_demand_scale or not self.reduce:
            return float(self.solver.infinity())
        hours = range(self.nb) if is_static(self.inst) else (b,)
        return float(max(self._alone_bound(c, k) + self._guest_slots(c, k) for k in hours))

    def _alone_bound(self, c: Candidate, b: int) -> int:
        return replicas_alone(self.rate(c, b), c.capacity_req_s, self.demand_of[c.workload].redundancy)

    def _guest_slots(self, c: Candidate, b: int, scale: float = 1.0) -> int:
        """Host ``c``'s replicas beyond its own demand's that carry its type's guests (``host_cards_for``)."""
        return host_cards_for(c, [self._alone_bound(g, b) * scale for g in self.cards.guests.get(c.gpu, ())])

    def rate(self, c: Candidate, b: int) -> float:
        """Request rate of the load ``c`` serves (its size's share of the workload) in bucket ``b``."""
        w = self.demand_of[c.workload]
        return (w.rate_req_s[b] if w.deadline_hours is None else w.peak_served_req_s) * w.loads[c.load]

    # -- variables ---------------------------------------------------------------------------
    def build(self) -> None:
        self.build_serving()
        self._caps()  # after training: the opex cap counts training's busy hours
        checkpoint()
        self._objective()
        self._branch_on_fleet_first()

    def build_serving(self) -> None:
        """Variables and the constraints that serve the instance's demand with its fleet (1–4,
        9–11, 13, 14): all but the caps and the objective (a multi-period model,
        ``solver.optimizer.stages``, builds one per period and adds its own)."""
        slv = self.solver
        inf = slv.infinity()
        unused = reserved_dominated_by_on_demand(self.inst, self.relax) if self.reduce else frozenset()
        server_limit = small_server_limits(self.inst) if self.reduce and self.chassis_reduction else {}
        for o in self.inst.options:
            ub = self.gpu_bound.get(o.gpu, 0)
            fixed = self.inst.fixed_count_of(o.id)
            if fixed is not None:
                ub = min(ub, fixed)
            if o.id in unused:
                ub = 0
            if o.id in server_limit:
                ub = min(ub, server_limit[o.id] * max(1, o.gpus_per_server))
            if is_rental_on_demand(o):
                self.d[o.id] = [slv.IntVar(0, ub, f"d[{o.id},{b}]") for b in range(self.nb)]
                continue
            lo, hi = 0, (self.inst.owned_counts.get(o.gpu, 0) if o.owned else ub)
            k = max(1, o.gpus_per_server)
            servers_hi = math.ceil(max(ub, self.inst.owned_counts.get(o.gpu, 0)) / k)
            self.n[o.id] = slv.IntVar(lo, hi, f"n[{o.id}]")
            self.u[o.id] = [slv.NumVar(0, inf, f"u[{o.id},{b}]") for b in range(self.nb)]
            if is_on_site(o):
                self.s[o.id] = slv.IntVar(0, servers_hi, f"s[{o.id}]")
        for pool in self.pools:
            self._pool_variables(pool)
        for key, replicas in self.relax.fixed_replicas:
            held = self.pool_r.get(key) if key in self.shared_pool_ids else self.r.get(key)
            for var, count in zip(held or (), replicas, strict=bool(held)):
                var.SetBounds(count, count)
        checkpoint()
        self._demand()
        checkpoint()
        self._shared_pools()
        self._gpus_and_domains()
        self.static = add_static_deployment(self)
        add_card_pairing(self)
        checkpoint()
        self._servers()
        self._multi_node_fabric()
        add_kv_fabric(self)  # 16
        add_lease_or_buy(self)  # 4c
        self._rental_instances()
        self._owned_and_counts()
        self._fixed_fleet()
        self._training()

    def _branch_on_fleet_first(self) -> None:
        """Branch on the held fleet (servers and held GPU counts) before replicas: once it is
        integral, the replica subproblems mostly are too. On-demand counts keep priority 0: they
        follow from integral replicas and TP groups, and branching on them first was 5× slower
        on the 4-workload buy + on-demand portfolio (measured: docs/optimizer.md)."""
        for var in self.s.values():
            var.SetBranchingPriority(FLEET_BRANCHING_PRIORITY)
        for var in self.n.values():
            var.SetBranchingPriority(FLEET_BRANCHING_PRIORITY)

    def _pool_variables(self, pool: ReplicaPool) -> None:
        """``r_cb`` of every member and the pool's integer replicas ``R_Pb``: for a pool of one,
        the member's replicas are integers and the pool's; in a shared pool, members carry
        continuous replica-equivalents ``v_cb`` (constraint 13)."""
        slv = self.solver
        if not pool.shared:
            c = pool.deployment
            self.r[c.id] = [
                slv.IntVar(0, self._replica_bound(c, b), f"r[{c.id},{b}]") for b in range(self.nb)
            ]
            self.pool_r[pool.id] = self.r[c.id]
            return
        for c in pool.members:
            self.r[c.id] = [
                slv.NumVar(0, self._replica_bound(c, b), f"v[{c.id},{b}]") for b in range(self.nb)
            ]
        self.pool_r[pool.id] = [
            slv.IntVar(
                0,
                min(slv.infinity(), sum(self._replica_bound(c, b) for c in pool.members) + pool.spares),
                f"R[{pool.id},{b}]",
            )
            for b in range(self.nb)
        ]

    # 13: shared pools
    def _shared_pools(self) -> None:
        slv = self.solver
        for pool in self.pools:
            if not pool.shared:
                continue
            replicas = self.pool_r[pool.id]
            spare: Any = 0
            if pool.spares > 0:
                y = self.pool_y[pool.id] = slv.BoolVar(f"y_pool[{pool.id}]")
                spare = pool.spares * y
                for var in replicas:
                    big_m = var.ub() if var.ub() < slv.infinity() else 1e7
                    slv.Add(var <= big_m * y)
            for b in range(self.nb):
                load = sum(self.r[c.id][b] for c in pool.members)
                slv.Add(load + spare <= replicas[b], f"pool[{pool.id},{b}]")

    # 1 and 10: demand and N+R redundancy
    def _demand(self) -> None:
        slv = self.solver
        by_load: dict[tuple[str, int], list[Candidate]] = defaultdict(list)
        for c in self.cands:
            by_load[(c.workload, c.load)].append(c)
        self.penalty = 1e3
        self.alpha: Any = slv.NumVar(0, 1e3, "alpha") if self.relax.maximize_demand_scale else None
        for w in self.inst.inference:
            checkpoint()
            peak = w.peak_req_s
            if self.relax.elastic_demand:
                self.short[w.name] = [
                    slv.NumVar(0, w.rate_req_s[b] / peak if peak > 0 else 0, f"short[{w.name},{b}]")
                    for b in range(self.nb)
                ]
            for k, share in enumerate(w.loads):
                cands = by_load.get((w.name, k), [])
                row = w.name if len(w.loads) == 1 else f"{w.name}#{k}"
                self._load_demand(w, share, cands, row)
            self._min_replicas(w, [c for k in range(len(w.loads)) for c in by_load.get((w.name, k), [])])

    def _load_demand(self, w: InferenceDemand, share: float, cands: list[Candidate], row: str) -> None:
        """Constraints 1 and 10 for one request size of ``w`` (``share`` of its requests)."""
        if w.deadline_hours is not None:  # 1': batch work with a window
            add_window_demand(self, w, share, cands, row)
            return
        slv = self.solver
        peak = w.peak_req_s
        own = [c for c in cands if not self._pooled(c)]
        if w.redundancy > 0:
            for c in own:
                self.y[c.id] = slv.BoolVar(f"y[{c.id}]")
        for b in range(self.nb):
            lam = w.rate_req_s[b] * share
            if lam <= 0:
                continue
            served = sum(c.capacity_req_s / peak * self.r[c.id][b] for c in cands) if cands else 0
            if self.relax.elastic_demand:
                served = served + self.short[w.name][b] * share
            need: Any = lam / peak if self.alpha is None else (lam / peak) * self.alpha
            slv.Add(served >= need, f"demand[{row},{b}]")
            if w.redundancy > 0:
                for c in own:
                    scale = 1.0 if self.alpha is None else 1e3
                    big_m = math.ceil(lam * scale / c.capacity_req_s) + w.redundancy + 1
                    ub = self.r[c.id][b].ub()
                    big_m = max(big_m + self._guest_slots(c, b, scale), int(ub) if ub < slv.infinity() else 0)
                    slv.Add(self.r[c.id][b] <= big_m * self.y[c.id])
                    slv.Add(served >= need + w.redundancy * c.capacity_req_s / peak * self.y[c.id])

    def _pooled(self, c: Candidate) -> bool:
        """``c`` shares its pool's replicas with other loads."""
        return c.pool in self.shared_pool_ids

    def _min_replicas(self, w: InferenceDemand, cands: list[Candidate]) -> None:
        """Valid cut (Chvátal–Gomory with divisor max cap): the pools serving ``w`` hold at least
        ⌈Σ_k share_k λ / max cap_k⌉ replicas (+ R_w when all of them are its own)."""
        if not cands or self.alpha is not None or self.relax.elastic_demand or w.deadline_hours is not None:
            return
        pools = {c.pool if self._pooled(c) else c.id: c for c in cands}
        own_only = not any(self._pooled(c) for c in cands)
        for b in range(self.nb):
            need = 0.0
            for k, share in enumerate(w.loads):
                caps = [c.capacity_req_s for c in cands if c.load == k]
                if caps:
                    need += w.rate_req_s[b] * share / max(caps)
            if need <= 0:
                continue
            replicas = math.ceil(need * (1 - 1e-9)) + (w.redundancy if own_only else 0)
            total = sum(self.pool_r[p][b] if p in self.pool_r else self.r[p][b] for p in pools)
            self.solver.Add(total >= replicas, f"min_replicas[{w.name},{b}]")

    # 2 and 3: GPUs and TP domains per GPU type and bucket
    def _gpus_and_domains(self) -> None:
        by_g: dict[str, list[tuple[ReplicaPool, float]]] = defaultdict(list)
        for pool in self.pools:
            for g, gpus in pool.deployment.gpus_by_type():  # a disaggregated unit: both roles' types
                by_g[g].append((pool, gpus))
        for o in self.inst.options:
            if o.id in self.u:
                for b in range(self.nb):
                    self.solver.Add(self.u[o.id][b] <= self.n[o.id])
        for g in self.inst.gpu_types():
            pools = by_g.get(g, [])
            if not pools:
                continue
            opts = [o for o in self.inst.options if o.gpu == g]
            for b in range(self.nb):
                demand = sum(gpus * self.pool_r[p.id][b] for p, gpus in pools)
                self.solver.Add(demand <= sum(self._supply(o, b) for o in opts), f"gpus[{g},{b}]")
                self._tp_groups(g, b, opts, [p for p, _ in pools])

    def _supply(self, o: AcquisitionOption, b: int) -> Any:
        """GPUs of option ``o`` in use in bucket ``b``: held ones serving, or rented ones."""
        return self.u[o.id][b] if o.id in self.u else self.d[o.id][b]

    def _tp_groups(self, g: str, b: int, opts: list[AcquisitionOption], pools: list[ReplicaPool]) -> None:
        """Constraint 3 on GPU type ``g`` in bucket ``b``: TP groups of each degree are hosted by
        options whose domain holds them, and fill no more than each option's GPUs in use."""
        groups_on: dict[str, Any] = defaultdict(int)
        deps = [
            (size, count, self.pool_r[p.id][b])
            for p in pools
            for gpu, size, count in p.deployment.tp_groups()
            if gpu == g and size > 1
        ]
        for tau in sorted({size for size, _, _ in deps}):
            of_degree = [count * var for size, count, var in deps if size == tau]
            groups_ub = min(
                self.solver.infinity(), sum(count * var.ub() for size, count, var in deps if size == tau)
            )
            hosts = [o for o in opts if tp_domain(o) >= tau]
            k = {o.id: self.solver.IntVar(0, groups_ub, f"k[{o.id},{b},{tau}]") for o in hosts}
            replicas = sum(of_degree)
            self.solver.Add(replicas <= sum(k.values()), f"tp_groups[{g},{b},{tau}]")
            for o_id, var in k.items():
                groups_on[o_id] += tau * var
        for o in opts:
            if o.id in groups_on:
                self.solver.Add(groups_on[o.id] <= self._supply(o, b), f"tp_domain[{o.id},{b}]")

    # 4: whole servers
    def _servers(self) -> None:
        slv = self.solver
        for o in self.inst.options:
            if o.id not in self.s:
                continue
            k = max(1, o.gpus_per_server)
            n, s = self.n[o.id], self.s[o.id]
            host = owned_host_of(o, self.inst.options)
            if o.owned:
                slv.Add(n <= k * s, f"servers[{o.id}]")
                slv.Add(n >= k * s - (k - 1), f"owned_hosts[{o.id}]")
            elif o.server_must_be_full:
                slv.Add(n == k * s, f"servers[{o.id}]")
            elif host is not None and host.id in self.s:
                slv.Add(n + self.n[host.id] <= k * (s + self.s[host.id]), f"servers[{o.id}]")
            else:
                slv.Add(n <= k * s, f"servers[{o.id}]")

    # 4: the scale-out fabric of bought servers is paid once they are multi-node
    def _multi_node_fabric(self) -> None:
        slv = self.solver
        for o in self.inst.options:
            if o.network_capex_per_server <= 0 or o.id not in self.s:
                continue
            s = self.s[o.id]
            servers_hi = int(s.ub())
            if servers_hi < MULTI_NODE_SERVERS:
                continue  # never multi-node: no fabric
            single = slv.BoolVar(f"single_node[{o.id}]")
            slv.Add(single <= s, f"single_node_lo[{o.id}]")
            slv.Add(s <= 1 + (servers_hi - 1) * (1 - single), f"single_node_hi[{o.id}]")
            self.single_node[o.id] = single

    def network_expr(self, o: AcquisitionOption) -> Any:
        """NET_o: the fabric of option o's servers (constraint 4)."""
        if o.id not in self.single_node:
            return 0
        return o.network_capex_per_server * (self.s[o.id] - self.single_node[o.id])

    # 4b: rentals come in whole instances of ``rental_instance_gpus`` GPUs
    def _rental_instances(self) -> None:
        slv = self.solver
        for o in self.inst.options:
            k = o.rental_instance_gpus
            if k <= 1 or is_on_site(o):
                continue
            counts = self.d[o.id] if o.id in self.d else [self.n[o.id]]
            for i, count in enumerate(counts):
                whole = slv.IntVar(0, slv.infinity(), f"instances[{o.id},{i}]")
                slv.Add(count == k * whole, f"rental_instances[{o.id},{i}]")

    def _monthly_busy(self) -> Any:
        expr: Any = 0
        for o in self.inst.options:
            if o.busy_hourly_per_gpu == 0:
                continue
            if o.id in self.u:
                expr += sum(
                    o.busy_hourly_per_gpu * DAYS_PER_MONTH * self.hours[b] * self.u[o.id][b]
                    for b in range(self.nb)
                )
            else:
                expr += sum(
                    o.busy_hourly_per_gpu * DAYS_PER_MONTH * self.hours[b] * self.d[o.id][b]
                    for b in range(self.nb)
                )
        for (t_name, o_id), var in self.f.items():
            o = self.inst.option(o_id)
            expr += o.busy_hourly_per_gpu * self._train_hours(t_name, o) * var
        return expr

    def _train_hours(self, t_name: str, o: AcquisitionOption) -> float:
        for t in self.inst.training:
            if t.name == t_name:
                for ch in t.choices:
                    if ch.gpu == o.gpu:
                        return billed_training_hours(o, ch.gpu_hours_per_month, ch.min_gpus)
        return 0.0

    def capex_expr(self) -> Any:
        return self.inst.extra_capex + sum(
            (o.capex_per_gpu + o.installation_capex_per_gpu) * self.n[o.id]
            + (
                (o.capex_per_server + o.installation_capex_per_server) * self.s[o.id] + self.network_expr(o)
                if o.id in self.s
                else 0
            )
            for o in self.inst.options
            if o.id in self.n
        )

    def fixed_monthly_expr(self) -> Any:
        return self.inst.extra_monthly + sum(
            o.fixed_monthly_per_gpu * self.n[o.id]
            + (o.monthly_per_server * self.s[o.id] if o.id in self.s else 0)
            for o in self.inst.options
            if o.id in self.n
        )

    def power_expr(self) -> Any:
        return sum(
            o.power_kw_per_gpu * self.n[o.id] + o.power_kw_per_server * self.s[o.id]
            for o in self.inst.options
            if o.id in self.s and is_on_site(o)
        )

    def rack_expr(self) -> Any:
        return sum(
            o.rack_units_per_server * self.s[o.id]
            for o in self.inst.options
            if o.id in self.s and is_on_site(o)
        )

    # 5–8: caps (training variables must exist first: the opex cap counts their busy hours)
    def _caps(self) -> None:
        for cap in self.inst.caps.present():
            if cap not in self.relax.drop_caps:
                self.solver.Add(self.cap_usage_expr(cap) <= self.inst.caps.limit(cap), f"cap[{cap}]")

    # 9: owned GPUs and count bounds
    def _owned_and_counts(self) -> None:
        slv = self.solver
        for g, count in self.inst.owned_counts.items():
            owned_vars = [
                self.n[o.id] for o in self.inst.options if o.gpu == g and o.owned and o.id in self.n
            ]
            if owned_vars:
                # At most: owned GPUs are sunk, and leaving some unused must stay possible so that
                # owning more GPUs can never make the optimum dearer.
                slv.Add(sum(owned_vars) <= count, f"owned[{g}]")
        for lim in self.inst.count_limits:
            if count_cap(lim.gpu) in self.relax.drop_caps:
                continue
            held = [self.n[o.id] for o in self.inst.options if o.gpu == lim.gpu and o.id in self.n]
            ods = [self.d[o.id] for o in self.inst.options if o.gpu == lim.gpu and o.id in self.d]
            if lim.min_count > 0:
                add_count_minimum(slv, lim, held, ods, self.nb)
            if lim.max_count is not None:
                for b in range(self.nb):
                    slv.Add(sum(held) + sum(d[b] for d in ods) <= lim.max_count, f"count_max[{lim.gpu},{b}]")

    # 9: a given fleet (EvaluateFleet): held GPUs exactly, on-demand GPUs at most, per group
    def _fixed_fleet(self) -> None:
        for i, group in enumerate(self.inst.fixed_fleet or ()):
            held = [self.n[o_id] for o_id in group.option_ids if o_id in self.n]
            rented = [self.d[o_id] for o_id in group.option_ids if o_id in self.d]
            if group.at_least:  # held GPUs at least the count; on-demand ones free to grow
                if held:
                    self.solver.Add(sum(held) >= group.count, f"fixed_fleet_min[{i}]")
                continue
            if held:
                self.solver.Add(sum(held) == group.count, f"fixed_fleet[{i}]")
            for b in range(self.nb):
                if rented:
                    self.solver.Add(sum(d[b] for d in rented) <= group.count, f"fixed_fleet[{i},{b}]")

    # 11: training
    def _training(self) -> None:
        slv = self.solver
        idle_use: dict[str, Any] = defaultdict(int)
        for t in self.inst.training:
            zs = []
            for ch in t.choices:
                opts = [o for o in self.inst.options if o.gpu == ch.gpu]
                if not opts:
                    continue
                z = slv.BoolVar(f"z[{t.name},{ch.gpu}]")
                self.z[(t.name, ch.gpu)] = z
                zs.append(z)
                shares = []
                for o in opts:
                    # A given fleet rents at most its on-demand count at once: too few for a run.
                    fixed = self.inst.fixed_count_of(o.id)
                    rentable = fixed if fixed is not None else rented_for_run(o, ch.min_gpus)
                    too_few = is_rental_on_demand(o) and rentable < rented_for_run(o, ch.min_gpus)
                    f = slv.NumVar(0, 0 if too_few else 1, f"f[{t.name},{o.id}]")
                    self.f[(t.name, o.id)] = f
                    shares.append(f)
                    if o.id in self.n:
                        idle_use[o.id] += max(ch.gpu_hours_per_month, MIN_TRAINING_GPU_HOURS) * f
                slv.Add(sum(shares) == z)
                held_opts = [o for o in opts if o.id in self.n]
                if not any(is_rental_on_demand(o) for o in opts):
                    held = [self.n[o.id] for o in held_opts]
                    slv.Add(sum(held) >= ch.min_gpus * z, f"train_deadline[{t.name},{ch.gpu}]")
                elif held_opts:
                    # Runs on held GPUs need the run's GPUs at once, rented runs rent them all:
                    # q = some of the runs use held GPUs.
                    q = slv.BoolVar(f"q[{t.name},{ch.gpu}]")
                    slv.Add(sum(self.f[(t.name, o.id)] for o in held_opts) <= q)
                    held = [self.n[o.id] for o in held_opts]
                    slv.Add(sum(held) >= ch.min_gpus * q, f"train_deadline[{t.name},{ch.gpu}]")
            slv.Add(sum(zs) == 1 if zs else slv.Sum([]) == 1, f"train_choice[{t.name}]")
        # In GPUs idle all month (GPU-hours ÷ the month's), as every other row counts GPUs: with
        # coefficients of ~730 SCIP 10's conflicts proved a dearer optimum (docs/optimizer.md).
        month = DAYS_PER_MONTH * 24
        for o_id, used in idle_use.items():
            idle = sum(self.hours[b] / 24 * (self.n[o_id] - self.u[o_id][b]) for b in range(self.nb))
            slv.Add(used * (1 / month) <= idle, f"train_idle[{o_id}]")

    def cap_usage_expr(self, cap: CapKey) -> Any:
        """What the plan uses of ``cap`` (constraints 5–8; held GPUs of a count cap's type)."""
        gpu = counted_gpu(cap)
        if gpu is not None:
            return sum(self.n[o.id] for o in self.inst.options if o.gpu == gpu and o.id in self.n)
        if cap == Cap.CAPEX_BUDGET:
            return self.capex_expr()
        if cap == Cap.MONTHLY_OPEX:
            return self.fixed_monthly_expr() + self._monthly_busy()
        if cap == Cap.POWER_KW:
            return self.power_expr()
        if cap == Cap.RACK_UNITS:
            return self.rack_expr()
        msg = f"unknown cap {cap!r}"
        raise ValueError(msg)

    def _objective(self) -> None:
        slv = self.solver
        if self.alpha is not None:
            self.unit = 1.0
            slv.Maximize(self.alpha)
            return
        if self.relax.minimize is not None:
            limit = self.cap_limit(self.relax.minimize)
            self.unit = limit if limit and limit > 0 else 1.0
            slv.Minimize(self.cap_usage_expr(self.relax.minimize) * (1.0 / self.unit))
            return
        # Months and the residual credit as the objective weighs them: H and 1 for the nominal TCO,
        # their discounted values under objective npv (``FleetInstance.opex_weight``).
        months = self.inst.opex_weight
        credit = self.inst.residual_weight
        tco: Any = self.inst.extra_capex + months * self.inst.extra_monthly
        gpus: Any = 0  # the tie-break measure: held GPUs, servers, on-demand GPUs × share of the day
        for o in self.inst.options:
            keep = 1.0 - (0.0 if o.owned else o.residual_fraction * credit)
            if o.id in self.n:
                per_gpu = (
                    o.capex_per_gpu * keep + o.installation_capex_per_gpu + months * o.fixed_monthly_per_gpu
                )
                tco += per_gpu * self.n[o.id]
                gpus += self.n[o.id]
            if o.id in self.s:
                per_server = (
                    o.capex_per_server * keep
                    + o.installation_capex_per_server
                    + months * o.fixed_monthly_per_server
                    + lease_cost_per_server(o, self.inst)
                )
                tco += per_server * self.s[o.id] + self.network_expr(o)
                gpus += self.s[o.id]  # no empty servers when hosts are free
            if o.id in self.d:
                gpus += sum(self.hours[b] / 24 * self.d[o.id][b] for b in range(self.nb))
        tco += months * self._monthly_busy()
        self.tco_expr = tco
        self.gpu_count_expr = gpus
        objective = (tco + TIE_BREAK_PER_GPU * self.unit * gpus) * (1.0 / self.unit)
        if self.relax.elastic_demand:
            objective += sum(self.penalty * v for vs in self.short.values() for v in vs)
        slv.Minimize(objective)

    def prefer_fewer_gpu_types(self, tco_limit: float) -> dict[str, Any]:
        """Tie-break stage (constraint 12): keep TCO ≤ ``tco_limit`` and minimise
        ``GPU_TIE_WEIGHT`` × GPUs + GPU types in use, i.e. fewer GPUs, then fewer SKUs. Returns the
        new "type used" binaries (to complete a hint)."""
        slv = self.solver
        used: dict[str, Any] = {}
        for g in self.inst.gpu_types():
            fleet = [self.n[o.id] for o in self.inst.options if o.gpu == g and o.id in self.n]
            fleet += [v for o in self.inst.options if o.gpu == g and o.id in self.d for v in self.d[o.id]]
            if not fleet:
                continue
            used[g] = slv.BoolVar(f"type_used[{g}]")
            for var in fleet:
                slv.Add(var <= var.ub() * used[g], f"type_used[{g},{var.name()}]")
        slv.Add(self.tco_expr <= tco_limit, "tie_break[tco]")
        slv.Minimize(GPU_TIE_WEIGHT * self.gpu_count_expr + sum(used.values()))
        return used

    def cap_limit(self, cap: CapKey) -> float | None:
        gpu = counted_gpu(cap)
        if gpu is not None:
            return next(
                (float(c.max_count) for c in self.inst.count_limits if c.gpu == gpu and c.max_count), None
            )
        value = self.inst.caps.limit(Cap(cap))
        return None if value is None else float(value)

    # -- values ------------------------------------------------------------------------------
    def values(self, value_of: Callable[[Any], float] | None = None) -> MipValues:
        """The solved values; ``value_of(var)`` reads them from another solver loaded from this
        model's proto (the LP-guided search), by default from this builder's solver."""

        def own(var: Any) -> float:
            return float(var.solution_value())

        read = value_of if value_of is not None else own

        def iv(var: Any) -> int:
            return round(float(read(var)))

        train_gpu = {t: g for (t, g), z in self.z.items() if read(z) > 0.5}
        return MipValues(
            n={k: iv(v) for k, v in self.n.items()},
            s={k: iv(v) for k, v in self.s.items()},
            d={k: tuple(iv(v) for v in vs) for k, vs in self.d.items()},
            u={k: tuple(max(0.0, read(v)) for v in vs) for k, vs in self.u.items()},
            r={
                c.id: tuple(iv(v) for v in self.r[c.id])
                for p in self.pools
                if not p.shared
                for c in p.members
            },
            pools={p.id: tuple(iv(v) for v in self.pool_r[p.id]) for p in self.pools if p.shared},
            shared_load={
                c.id: tuple(max(0.0, read(v)) for v in self.r[c.id])
                for p in self.pools
                if p.shared
                for c in p.members
            },
            static={k: iv(v) for k, v in self.static.items()},
            train_gpu=train_gpu,
            train_share={k: max(0.0, read(v)) for k, v in self.f.items()},
            unserved={
                k: tuple(max(0.0, read(v)) * self._peak(k) for v in vs) for k, vs in self.short.items()
            },
        )

    def _peak(self, name: str) -> float:
        return next(w.peak_req_s for w in self.inst.inference if w.name == name)
