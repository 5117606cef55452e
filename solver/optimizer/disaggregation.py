"""Disaggregated prefill/decode units in the MIP: GPUs of two types, and the network between them.

Mathematics
-----------
A disaggregated candidate c (``solver.optimizer.disagg_candidates``) is a *unit* of p_c prefill
engines of π_c GPUs of type g_P(c) and d_c decode engines of δ_c GPUs of type g_D(c), serving
``cap_c`` requests per second at its workload's SLA. Its integer variable r_cb counts units, like
a replica count, so demand (1), N+R spares (10) and the replica bounds apply unchanged. In the GPU
rows (2) a unit takes p_c π_c GPUs of g_P(c) and d_c δ_c of g_D(c) (``Candidate.gpus_by_type``),
so server packing, buy/rent, budgets and caps price both roles as any GPU. In the TP-domain rows
(3) each engine is a TP group of its size on its type (``DisaggUnit.groups``); a unit whose KV
stays inside one server (NVLink or PCIe, one GPU type) is a single group of p_c π_c + d_c δ_c GPUs
(a power of two, so 3 stays exact): nothing is added for its network.

A unit whose KV crosses the scale-out fabric (two GPU types, or one type beyond one domain) needs
its roles' servers in that fabric. The economics price the fabric per server (switch ports,
optics and NICs per GPU, ``network_capex_per_server``) once an option has ``MULTI_NODE_SERVERS``
(2) servers (model constraint 4, e_o = "single node"). So for every GPU type g hosting a role of
a networked candidate, a binary x_g, and ∀b, c networked with a role on g:

    r_cb ≤ ub(r_cb) · x_g,

and for every bought option o of type g with a fabric price, a binary v_o ("o is bought"):

    s_o ≤ ub(s_o) · v_o,    s_o ≥ 2 · v_o − 2 · (1 − x_g):

with networked units on g, each bought server model of g is absent or at least two servers, so
its fabric is priced by constraint 4 (conservative: a plan that needs one server of a model
buys a second or uses another option). Rented GPUs come with the provider's network (as
everywhere in the economics). The per-GPU NIC bandwidth is checked when the candidate is built:
cap_c × KV bytes per request ≤ line rate × the unit's GPUs of each role.

Independent check (``check_disaggregation``, from the solution's counts only): the fabric rule
above, and every unit's stated rate × KV bytes within its NICs. The capacity itself is re-checked
by ``recheck_unit``: the performance model (``solver.perf.disagg.estimate_disagg``) on the unit's
engines under a closed loop, bisected on users for the largest load within the SLA — not the
candidate builder's vectorised grid.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pricebook.schema import GpuSpec, ModelArch
from solver.domain import Engine, Precision, Sla
from solver.optimizer.instance import Candidate, FleetInstance
from solver.optimizer.pooling import Sizing
from solver.optimizer.results import FleetSolution, Violation, ViolationKind
from solver.perf.disagg import DisaggDeployment, Pool, estimate_disagg, load_disagg_calibration
from solver.perf.disagg_capacity import timing_meets
from solver.perf.physics import GB
from solver.perf.replica import WorkloadShape
from solver.perf.risk import quantile_factor
from solver.pricing.options import MULTI_NODE_SERVERS

if TYPE_CHECKING:
    from solver.optimizer.model import ModelBuilder


@dataclass(frozen=True, slots=True)
class NetworkedRoles:
    """The frozen view: per GPU type, the networked units with a role on it."""

    by_gpu: dict[str, tuple[Candidate, ...]]


def networked_roles(candidates: Iterable[Candidate]) -> NetworkedRoles:
    by_gpu: dict[str, list[Candidate]] = defaultdict(list)
    for c in candidates:
        if c.unit is not None and c.unit.networked:
            for g in dict.fromkeys((c.unit.prefill_gpu, c.unit.decode_gpu)):
                by_gpu[g].append(c)
    return NetworkedRoles({g: tuple(cs) for g, cs in by_gpu.items()})


# -- MIP -----------------------------------------------------------------------------------------
def add_kv_fabric(builder: ModelBuilder) -> None:
    """Networked units on GPU type g ⇒ every bought server model of g absent or multi-node."""
    slv = builder.solver
    for g, cands in networked_roles(builder.cands).by_gpu.items():
        bought = [
            o
            for o in builder.inst.options
            if o.gpu == g and o.id in builder.s and o.network_capex_per_server > 0
        ]
        if not bought:
            continue
        x = slv.BoolVar(f"kv_fabric[{g}]")
        for c in cands:
            for b, var in enumerate(builder.r[c.id]):
                big_m = var.ub() if var.ub() < slv.infinity() else 1e7
                slv.Add(var <= big_m * x, f"kv_fabric_use[{c.id},{b}]")
        for o in bought:
            s: Any = builder.s[o.id]
            v = slv.BoolVar(f"bought[{o.id}]")
            slv.Add(s <= s.ub() * v, f"bought_hi[{o.id}]")
            slv.Add(s >= MULTI_NODE_SERVERS * v - MULTI_NODE_SERVERS * (1 - x), f"kv_fabric_servers[{o.id}]")


# -- independent check ---------------------------------------------------------------------------
def check_disaggregation(instance: FleetInstance, solution: FleetSolution) -> list[Violation]:
    """Networked units in use ⇒ their types' bought servers in the fabric; units' KV within NICs."""
    out: list[Violation] = []
    used = [
        u.candidate
        for a in solution.assignments
        for u in a.uses
        if u.candidate.unit is not None and any(u.replicas)
    ]
    types = {
        g
        for c in used
        if c.unit is not None and c.unit.networked
        for g in (c.unit.prefill_gpu, c.unit.decode_gpu)
    }
    options = {o.id: o for o in instance.options}
    for chosen in solution.options:
        o = options.get(chosen.option_id)
        if o is None or o.gpu not in types or o.network_capex_per_server <= 0 or o.owned:
            continue
        if 0 < chosen.servers < MULTI_NODE_SERVERS:
            why = f"{chosen.servers} server of {o.id} outside the KV fabric of disaggregated units"
            out.append(Violation(ViolationKind.GPUS, o.id, why))
    for c in used:
        unit = c.unit
        assert unit is not None
        if not unit.networked:
            continue
        line = unit.nic_gbps / 8 * GB
        per_s = c.capacity_req_s * unit.kv_bytes_per_request
        if per_s > line * min(unit.prefill_gpus, unit.decode_gpus) * (1 + 1e-9):
            why = f"KV {per_s / GB:.3g} GB/s over the NICs of {unit.prefill_gpus}+{unit.decode_gpus} GPUs"
            out.append(Violation(ViolationKind.CAPACITY, c.id, why))
    return out


def unit_factor(sizing: Sizing) -> float:
    """A unit's capacity at the SLA → what the plan may load it with: the target utilization × the
    capacity quantile's factor of the disaggregated calibration's throughput band."""
    band_low = load_disagg_calibration().bands.get("throughput", (1.0, 1.0))[0]
    return sizing.utilization * quantile_factor(band_low, sizing.quantile)


def recheck_unit(
    model: ModelArch,
    specs: dict[str, GpuSpec],
    c: Candidate,
    *,
    engine: Engine,
    kv_precision: Precision | None,
    sla: Sla,
    factor: float,
) -> float:
    """The unit's capacity at ``sla`` × ``factor`` from ``estimate_disagg`` afresh (0 = none)."""
    unit = c.unit
    assert unit is not None
    pre, dec = unit.prefill, unit.decode
    dep = DisaggDeployment(
        Pool(specs[pre.gpu], pre.tp, pre.engines, pre.ep, pre.attention_dp),
        Pool(specs[dec.gpu], dec.tp, dec.engines, dec.ep, dec.attention_dp),
        c.precision,
        kv_precision,
        engine,
        scale_out_gbps=unit.nic_gbps,
    )
    shape = WorkloadShape(c.input_tokens, c.output_tokens, c.pool_shapes[0][2] if c.pool_shapes else 0.0)

    def meets(users: int) -> bool:
        e = estimate_disagg(model, dep, shape, users)
        return e.feasible and timing_meets(e.timing, sla)

    if not meets(1):
        return 0.0
    low, high = 1, 2
    while meets(high) and high < 10**7:
        low, high = high, high * 2
    while high - low > 1:  # the most users within the SLA, bisected on whole users
        mid = (low + high) // 2
        low, high = (mid, high) if meets(mid) else (low, mid)
    rate = estimate_disagg(model, dep, shape, low).timing.req_s
    if unit.networked and unit.kv_bytes_per_request > 0:
        line = unit.nic_gbps / 8 * GB
        rate = min(rate, line * min(unit.prefill_gpus, unit.decode_gpus) / unit.kv_bytes_per_request)
    return rate * factor
