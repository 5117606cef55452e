"""Disaggregated candidates: units of prefill and decode engines, on one GPU type or two.

For an inference workload that allows it (``InferenceWorkload.disaggregation_allowed``: asked for,
or by default interactive work with TTFT and TPOT targets in requests of at most
``MAX_DEFAULT_WORKLOADS`` inference workloads over at most ``MAX_DEFAULT_GPU_TYPES`` GPU types; one
request size), every (prefill GPU, decode GPU)
pair of the allowed GPU types, each weight precision both run (``candidates.precisions_to_try``),
and a few engines per role:

- the two smallest TP degrees whose engine holds the weights and one sequence
  (``disagg_infeasibility``), the MoE layers over expert parallelism across the engine (EP = TP)
  when the experts divide;
- for MLA models (DeepSeek), decode engines with attention data parallelism (TP 1 × DP n, EP n).

Each (prefill engine, decode engine) is timed as units of ``RATIOS`` (p prefill : d decode engines)
by ``solver.perf.disagg_capacity.unit_capacities``: the unit's capacity at the workload's SLA (p95
TTFT = overhead + waits + prefill + KV transfer, TPOT from the decode batch). The KV link: one
NVLink domain when both roles are one GPU type and the unit is a power-of-two group within one
server's domain (a TP group of the unit's size for the MIP), else the servers' scale-out NICs (the
smallest per-GPU NIC among the type's servers; rented instances: 400G). A unit's rate is capped so
its KV bytes per second fit its prefill GPUs' NICs and its decode GPUs' NICs at line rate. Units
on a GPU type without a scale-out NIC are not built across servers.

Pruning keeps the MIP small: per GPU pair and precision, the ``REFINED_PER_PAIR`` units of least
cost per request at the grid's capacities (each role's GPUs at the type's cheapest horizon cost per
GPU) are made exact (``refine_unit``), the ``KEEP_PER_PAIR`` cheapest of them kept, and per workload
the ``KEEP_PER_WORKLOAD`` cheapest of those. Capacities are scaled like every candidate's (target
utilization × the capacity quantile's factor of the disaggregated calibration's throughput band).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from pricebook import catalog
from pricebook.schema import GpuSpec, ModelArch, Pricebook, ScaleUpLink
from solver.domain import InferenceWorkload, PlanRequest, Precision
from solver.optimizer.disaggregation import unit_factor
from solver.optimizer.gpu_costs import horizon_cost_per_gpu
from solver.optimizer.instance import Candidate, DisaggRole, DisaggUnit
from solver.optimizer.pooling import Sizing, families
from solver.perf import Bottleneck, WorkloadShape, resolve_model
from solver.perf.disagg import (
    DEFAULT_SCALE_OUT_GBPS,
    DisaggDeployment,
    Pool,
    disagg_infeasibility,
    load_disagg_calibration,
)
from solver.perf.disagg_capacity import UnitCapacity, refine_unit, unit_capacities
from solver.perf.physics import GB
from solver.pricing.options import AcquisitionOption

RATIOS = ((1, 1), (1, 2), (2, 1), (1, 3), (3, 1), (2, 3), (3, 2), (1, 4), (4, 1))
"""Prefill : decode engines of a unit (coprime; larger units are multiples)."""
MAX_DEFAULT_WORKLOADS = 12
"""Units are built for workloads that leave ``allow_disaggregation`` unset only in requests of at
most this many inference workloads (as shared pools, ``pooling.MAX_SHARING_WORKLOADS``): each
such workload adds 0.3-4 s of candidates on 2 GPU types (measured on the examples, load ~12)."""
MAX_DEFAULT_GPU_TYPES = 2
"""... and over at most this many allowed GPU types: units are timed for every (prefill, decode)
pair, so the whole catalogue (21 types, 441 pairs) took a one-workload request from 0.9 s to 27.6 s
(load ~3); ``allow_disaggregation: true`` builds them over any number of types."""
KEEP_PER_PAIR = 2
REFINED_PER_PAIR = 4
"""Units per GPU pair and precision whose grid capacity is made exact before the final ranking."""
KEEP_PER_WORKLOAD = 8
ENGINE_TPS = (1, 2, 4, 8)
ATTENTION_DP = (4, 8)


@dataclass(frozen=True, slots=True)
class _Types:
    """What the candidates need of each allowed GPU type."""

    spec: GpuSpec
    max_tp: int
    cost_per_gpu: float
    nic_gbps: float
    """Smallest per-GPU scale-out NIC of the type's servers (0 = some server has none)."""


def disaggregated_candidates(
    request: PlanRequest,
    book: Pricebook,
    gpus: Sequence[GpuSpec],
    max_tp: dict[str, int],
    options: Sequence[AcquisitionOption],
    *,
    precisions: Precisions,
) -> list[Candidate]:
    """The kept disaggregated units of every workload that allows them."""
    few = len(request.inference) <= MAX_DEFAULT_WORKLOADS and len(gpus) <= MAX_DEFAULT_GPU_TYPES
    allowed = [
        w
        for w in request.inference
        if w.disaggregation_allowed and not w.length_mix and (few or w.allow_disaggregation)
    ]
    if not allowed:
        return []
    types = _types(book, gpus, max_tp, options, request.constraints.horizon_months)
    sizings = {f.members[0].name: f.sizing for f in families(request) if not f.sizing.shared}
    out: list[Candidate] = []
    for w in allowed:
        model = resolve_model(w.model, book)
        out += workload_units(w, model, types, sizings[w.name], precisions)
    return out


def _types(
    book: Pricebook,
    gpus: Sequence[GpuSpec],
    max_tp: dict[str, int],
    options: Sequence[AcquisitionOption],
    months: int,
) -> dict[str, _Types]:
    cost: dict[str, float] = {}
    nic: dict[str, float] = {}
    for o in options:
        cost[o.gpu] = min(cost.get(o.gpu, math.inf), horizon_cost_per_gpu(o, months))
        gbps = DEFAULT_SCALE_OUT_GBPS
        if o.server_id is not None:
            nics = catalog.server(book, o.server_id).scale_out_nics
            gbps = nics.gbps * nics.per_gpu if nics is not None else 0.0
        nic[o.gpu] = min(nic.get(o.gpu, math.inf), gbps)
    return {g.id: _Types(g, max_tp.get(g.id, 1), cost.get(g.id, math.inf), nic.get(g.id, 0.0)) for g in gpus}


def _engines(w: InferenceWorkload, model: ModelArch, t: _Types, *, decode: bool) -> list[Pool]:
    """The two smallest fitting TP engines of ``t``'s GPU (EP across them for MoE), and for a
    decode role of an MLA model the attention-DP engines."""
    pools: list[Pool] = []
    for tp in ENGINE_TPS:
        if tp > t.max_tp or not w.allows_tp(tp):
            continue
        ep = tp if model.is_moe and model.experts % tp == 0 else 1
        pools.append(Pool(t.spec, tp=tp, ep=ep))
    if decode and model.kv_lora_rank and model.is_moe:
        pools += [
            Pool(t.spec, tp=1, attention_dp=n, ep=n)
            for n in ATTENTION_DP
            if n <= t.max_tp and model.experts % n == 0
        ]
    return pools


def _fitting(
    pools: Iterable[Pool], model: ModelArch, precision: Precision, w: InferenceWorkload, shape: WorkloadShape
) -> list[Pool]:
    fit = [p for p in pools if not disagg_infeasibility(model, _deployment(p, p, precision, w, 0.0), shape)]
    plain = [p for p in fit if p.attention_dp == 1][:2]
    return plain + [p for p in fit if p.attention_dp > 1][:1]


def _deployment(
    pre: Pool, dec: Pool, precision: Precision, w: InferenceWorkload, nic: float
) -> DisaggDeployment:
    return DisaggDeployment(pre, dec, precision, w.kv_precision, w.engine, scale_out_gbps=nic)


Precisions = Callable[[InferenceWorkload, ModelArch, GpuSpec], tuple[Precision, ...]]
"""The weight precisions a workload may run at on a GPU (``candidates.precisions_to_try``)."""


def workload_units(
    w: InferenceWorkload, model: ModelArch, types: dict[str, _Types], sizing: Sizing, precisions: Precisions
) -> list[Candidate]:
    """``w``'s kept units over every pair of ``types`` (see the module docstring): per pair, the
    cheapest by the grid's capacities, made exact (``refine_unit``) and ranked again."""
    size, _ = w.length_shares()[0]
    shape = WorkloadShape(size.input_tokens, size.output_tokens, w.prefix_cache_hit_rate)
    ranked: list[tuple[float, Candidate]] = []
    for pre_type in types.values():
        for dec_type in types.values():
            if pre_type.spec.id != dec_type.spec.id and min(pre_type.nic_gbps, dec_type.nic_gbps) <= 0:
                continue  # two servers with no fabric between them
            common = set(precisions(w, model, pre_type.spec)) & set(precisions(w, model, dec_type.spec))
            for precision in sorted(common, key=lambda p: p.value):
                units = _pair_units(w, model, (pre_type, dec_type), precision, shape=shape, sizing=sizing)
                grid = sorted(
                    ((_unit_cost(c, types) / c.capacity_req_s, c, dep, cap) for c, dep, cap in units),
                    key=lambda x: (x[0], x[1].id),
                )
                exact = [
                    c
                    for _, _, dep, cap in grid[:REFINED_PER_PAIR]
                    if (
                        c := _unit_candidate(
                            w,
                            dep,
                            refine_unit(model, dep, shape, sizing.sla, cap),
                            shape,
                            sizing=sizing,
                            nic_gbps=dep.scale_out_gbps,
                        )
                    )
                    is not None
                ]
                ranked += sorted(((_unit_cost(c, types) / c.capacity_req_s, c) for c in exact), key=_rank)[
                    :KEEP_PER_PAIR
                ]
    return [c for _, c in sorted(ranked, key=_rank)[:KEEP_PER_WORKLOAD]]


def _rank(item: tuple[float, Candidate]) -> tuple[float, str]:
    return item[0], item[1].id


def _pair_units(
    w: InferenceWorkload,
    model: ModelArch,
    roles: tuple[_Types, _Types],
    precision: Precision,
    *,
    shape: WorkloadShape,
    sizing: Sizing,
) -> list[tuple[Candidate, DisaggDeployment, UnitCapacity]]:
    """Every unit of the fitting engines of one (prefill type, decode type) pair at one precision,
    at the grid's capacities."""
    pre_type, dec_type = roles
    same = pre_type.spec.id == dec_type.spec.id
    nic = min(pre_type.nic_gbps, dec_type.nic_gbps)
    out = []
    for pre in _fitting(_engines(w, model, pre_type, decode=False), model, precision, w, shape):
        for dec in _fitting(_engines(w, model, dec_type, decode=True), model, precision, w, shape):
            dep = _deployment(pre, dec, precision, w, nic)
            ratios = _ratios(pre, dec, same, pre_type, nic)
            for cap in unit_capacities(model, dep, shape, sizing.sla, ratios, exact=False):
                c = _unit_candidate(w, dep, cap, shape, sizing=sizing, nic_gbps=nic)
                if c is not None:
                    out.append((c, dep, cap))
    return out


def _ratios(pre: Pool, dec: Pool, same: bool, t: _Types, nic: float) -> list[tuple[int, int]]:
    """The ratios whose unit the MIP can place. The KV link is the performance model's
    (``disagg.kv_transfer``): NVLink for one GPU type within one scale-up domain, else the NICs,
    else PCIe. Over NVLink or PCIe the unit must sit in one server's domain: a power-of-two group
    (one TP group of the unit's size, model constraint 3); over the NICs its engines are apart."""
    out = []
    for p, d in RATIOS:
        gpus = p * pre.gpus_per_worker + d * dec.gpus_per_worker
        one_group = same and not gpus & (gpus - 1) and gpus <= t.max_tp
        nvlink = same and pre.gpu.scale_up_link is ScaleUpLink.NVLINK and gpus <= pre.gpu.scale_up_domain_size
        if (nvlink or nic <= 0) and not one_group:
            continue
        out.append((p, d))
    return out


def _unit_candidate(
    w: InferenceWorkload,
    dep: DisaggDeployment,
    cap: UnitCapacity,
    shape: WorkloadShape,
    *,
    sizing: Sizing,
    nic_gbps: float,
) -> Candidate | None:
    if cap.req_s <= 0:
        return None
    pre, dec = dep.prefill, dep.decode
    rate = cap.req_s
    kv = cap.transfer.bytes_per_request
    networked = cap.transfer.link == "network"
    if networked and kv > 0:  # the unit's KV per second within its NICs on both sides, at line rate
        line = nic_gbps / 8 * GB
        rate = min(
            rate,
            line * cap.prefill_engines * pre.gpus_per_worker / kv,
            line * cap.decode_engines * dec.gpus_per_worker / kv,
        )
    band_low, band_high = load_disagg_calibration().bands.get("throughput", (1.0, 1.0))
    factor = unit_factor(sizing)
    prefill = DisaggRole(pre.gpu.id, pre.tp, pre.ep, pre.attention_dp, cap.prefill_engines)
    decode = DisaggRole(dec.gpu.id, dec.tp, dec.ep, dec.attention_dp, cap.decode_engines)
    unit = DisaggUnit(prefill, decode, cap.transfer.link, kv, nic_gbps if networked else 0.0)
    cid = (
        f"{w.name}/disagg/{pre.gpu.id}-tp{pre.tp}{_extra(pre)}x{cap.prefill_engines}"
        f"+{dec.gpu.id}-tp{dec.tp}{_extra(dec)}x{cap.decode_engines}/{dep.precision.value}"
    )
    return Candidate(
        id=cid,
        workload=w.name,
        gpu=dec.gpu.id,
        tp=dec.tp,
        precision=dep.precision,
        kv_precision=dep.effective_kv_precision,
        capacity_req_s=rate * factor,
        max_output_tok_s=rate * factor * shape.output_tokens,
        ttft_p95_ms=cap.ttft_p95_ms,
        tpot_ms=cap.tpot_ms,
        per_user_tok_s=1e3 / cap.tpot_ms,
        concurrency=cap.users,
        bottleneck=Bottleneck.INTERCONNECT if rate < cap.req_s else None,
        band_low=band_low,
        band_high=band_high,
        rated_req_s=rate,
        pool_shapes=((shape.input_tokens, shape.output_tokens, shape.prefix_cache_hit_rate),),
        input_tokens=shape.input_tokens,
        output_tokens=shape.output_tokens,
        unit=unit,
    )


def _extra(pool: Pool) -> str:
    return (f"dp{pool.attention_dp}" if pool.attention_dp > 1 else "") + (
        f"ep{pool.ep}" if pool.ep > 1 else ""
    )


def _unit_cost(c: Candidate, types: dict[str, _Types]) -> float:
    return sum(types[g].cost_per_gpu * n for g, n in c.gpus_by_type())


def units_by_workload(cands: Iterable[Candidate]) -> dict[str, list[Candidate]]:
    out: dict[str, list[Candidate]] = defaultdict(list)
    for c in cands:
        if c.unit is not None:
            out[c.workload].append(c)
    return out
