"""Small models sharing a card with another deployment (co-location) before a card is bought for them.

Mathematics
-----------
A card of GPU type g may be split by time and memory between two deployments (time-slicing, e.g.
CUDA MPS with an SM share and a pinned-memory limit per process):

- a *guest* replica of a small model w (``params_b ≤ GUEST_MAX_PARAMS_B``, TP 1) gets a share
  ``s_g`` of one card's time and memory;
- a *host* replica of another deployment (TP t, whole cards) gets ``1 − s_g`` of each of its t
  cards' time and memory, so each of its cards has room for one guest. Host options are
  pruned to keep the MIP small (``candidates.colocated_candidates``): only deployments whose
  whole-card candidate survives dominance, at most two per workload, request size and GPU type
  (the smallest TP group and the most requests per card).

Guests and hosts are replicas of a workload's own (not of a shared pool): for a workload with a
length mix, one per request size, each sized for its own requests (as its whole-card candidates of
its own are), so the memory check and the timing are those of its size.

Both are timed by the performance model as a smaller card (``solver.perf.physics.GpuPhysics
.card_part``: compute, memory bandwidth, links and memory × their share; each step of either
model runs on the whole card, so over time a model with share s does what a card s times as fast
does). Each is sized at its own SLA on its part, like any candidate (target utilization and
capacity quantile included). The busy fractions of the two add up to s_g + (1 − s_g) = 1 by
construction: neither may use more than its share, so neither slows the other below what its
capacity assumed. Conservative: a host whose load leaves its card idle still gives up s_g.

``s_g`` is one layout per GPU type and request (``guest_share``): the smallest of
``GUEST_SHARES`` at which every small model of the request fits on g (its weights and the KV cache
of its concurrency at capacity within ``s_g`` of the memory, by ``memory_fits``).

MIP (``add_card_pairing``; constraint 15 of ``solver.optimizer.model``): a guest occupies no card
of its own (``a_c = 0`` in constraint 2) and a host occupies its t cards; ∀g, b:

    Σ_{c guest on g} r_cb ≤ Σ_{c host on g} t_c · r_cb

(with static deployments also on the static replicas: F of guests ≤ Σ t · F of hosts). A host
may run more replicas than its own demand needs, to give guests cards (the off-peak hours of a
static plan do): its replica bound (R1 of ``solver.optimizer.model``) leaves room for every guest
of its GPU type (``host_cards_for``), so each static use of a fleet is an hourly use too. Counting a
host card as a whole card and a guest as none is exact: each guest sits on one host card, each
host card holds at most one guest, and the host cards are among the cards counted.

Memory check (``memory_fits``; from the model's own figures, independent of the performance
model's engine reserve): ``weights / t + concurrency × (input + output) × KV bytes per token / t
≤ share × card memory``, with weights = parameters × bytes per element of the precision, and KV per
token at the KV precision over every layer (MLA: the compressed rank), an upper bound. The
evaluator (``check_shared_cards``) checks the pairing in every bucket and this memory bound for
every guest and host in use, so a guest and its host fit the card together.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pricebook.schema import GpuId, GpuSpec, ModelArch
from solver.domain import Precision
from solver.optimizer.instance import Candidate, FleetInstance
from solver.optimizer.results import FleetSolution, Violation, ViolationKind
from solver.perf.physics import bytes_per_element

if TYPE_CHECKING:
    from solver.optimizer.model import ModelBuilder

GUEST_SHARES = (1 / 16, 1 / 8, 1 / 4)
"""Shares of one card's time and memory a guest may get (powers of two: exact in binary, so a
host's ``1 − s`` identifies its layout exactly)."""
GUEST_MAX_PARAMS_B = 14.0
"""Models up to this size may be guests (larger ones never fit a quarter of a card)."""
GIB = 1024**3


@dataclass(frozen=True, slots=True)
class SharedCards:
    """The co-location layout of an instance: per GPU type, the guest share and the candidates."""

    share: dict[GpuId, float]
    """Guest share ``s_g`` of a card of each GPU type with guests."""
    guests: dict[GpuId, tuple[Candidate, ...]]
    hosts: dict[GpuId, tuple[Candidate, ...]]


def shared_cards(candidates: Iterable[Candidate]) -> SharedCards:
    """The guests and hosts of ``candidates`` by GPU type (the frozen view the MIP and the check use)."""
    guests: dict[GpuId, list[Candidate]] = defaultdict(list)
    hosts: dict[GpuId, list[Candidate]] = defaultdict(list)
    share: dict[GpuId, float] = {}
    for c in candidates:
        if c.guest:
            guests[c.gpu].append(c)
            share[c.gpu] = c.card_share
        elif c.host:
            hosts[c.gpu].append(c)
    return SharedCards(
        share=share,
        guests={g: tuple(cs) for g, cs in guests.items()},
        hosts={g: tuple(cs) for g, cs in hosts.items()},
    )


def small_model(model: ModelArch) -> bool:
    return model.params_b <= GUEST_MAX_PARAMS_B


def kv_bytes_per_token(model: ModelArch, kv_precision: Precision) -> float:
    """KV cache bytes per token over every layer (an upper bound: window layers counted in full)."""
    per_element = bytes_per_element(kv_precision)
    if model.kv_lora_rank:
        return model.layers * (model.kv_lora_rank + model.qk_rope_head_dim) * per_element
    return 2.0 * model.layers * model.kv_heads * model.head_dim * per_element


def memory_needed_gib(model: ModelArch, c: Candidate) -> float:
    """GiB one card of ``c``'s replica holds: its weights share and its KV at capacity."""
    weights = model.params_b * 1e9 * bytes_per_element(c.precision)
    tokens = c.concurrency * (c.input_tokens + c.output_tokens)
    return (weights + tokens * kv_bytes_per_token(model, c.kv_precision)) / c.tp / GIB


def memory_fits(model: ModelArch, c: Candidate, gpu: GpuSpec) -> bool:
    """Whether ``c``'s replica fits its share of each card's memory."""
    return memory_needed_gib(model, c) <= c.card_share * gpu.memory_gb * GIB / GIB


def guest_share(fits: Sequence[float]) -> float | None:
    """The layout of a GPU type: the smallest share every small model that fits at all fits at
    (``fits``: each such model's smallest fitting share); None without any."""
    return max(fits) if fits else None


# -- MIP (constraint 15) -----------------------------------------------------------------------
def host_cards_for(host: Candidate, guest_replicas: Iterable[float]) -> int:
    """Replicas of ``host`` that give a card to each of ``guest_replicas``: a host may run beyond its
    own demand to give guests cards, so its replica bound and big-M must leave room for them (0 for
    any other candidate)."""
    return math.ceil(sum(guest_replicas) / host.tp) if host.host else 0


def add_card_pairing(builder: ModelBuilder) -> None:
    """Guests on GPU type g ≤ host cards of g, in every bucket (and on the static replicas)."""
    cards = shared_cards(builder.cands)
    slv = builder.solver
    for g, guests in cards.guests.items():
        hosts = cards.hosts.get(g, ())
        for b in range(builder.nb):
            slots: Any = sum(h.tp * builder.r[h.id][b] for h in hosts)
            slv.Add(sum(builder.r[c.id][b] for c in guests) <= slots, f"shared_cards[{g},{b}]")
        static = builder.static
        if static and all(f"~{c.id}" in static for c in (*guests, *hosts)):
            slots = sum(h.tp * static[f"~{h.id}"] for h in hosts)
            slv.Add(sum(static[f"~{c.id}"] for c in guests) <= slots, f"static_shared_cards[{g}]")


# -- independent check -------------------------------------------------------------------------
Specs = Callable[[str, str], tuple[ModelArch, GpuSpec]]
"""(workload, GPU id) → the model it serves and the card, from the pricebook."""


def check_shared_cards(
    instance: FleetInstance, solution: FleetSolution, specs: Specs | None
) -> list[Violation]:
    """Every guest sits on a host card (every bucket), and every guest and host in use fits its
    share of the card's memory (``memory_fits``, from the model's figures; skipped on hand-built
    instances, ``specs`` None)."""
    out: list[Violation] = []
    nb = len(instance.buckets)
    guests: dict[GpuId, list[int]] = defaultdict(lambda: [0] * nb)
    slots: dict[GpuId, list[int]] = defaultdict(lambda: [0] * nb)
    shares: dict[GpuId, set[float]] = defaultdict(set)
    for a in solution.assignments:
        for use in a.uses:
            c = use.candidate
            if c.card_share >= 1 or not any(use.replicas):
                continue
            shares[c.gpu].add(c.card_share if c.guest else 1 - c.card_share)
            for b in range(nb):
                if c.guest:
                    guests[c.gpu][b] += use.replicas[b]
                else:
                    slots[c.gpu][b] += c.tp * use.replicas[b]
            if specs is None:
                continue
            model, gpu = specs(a.workload, c.gpu)
            if not memory_fits(model, c, gpu):
                need = memory_needed_gib(model, c)
                message = (
                    f"needs {need:.1f} GiB per card, over its {c.card_share:g} share of {gpu.memory_gb:g} GB"
                )
                out.append(Violation(ViolationKind.GPUS, c.id, message))
    for g, per_bucket in guests.items():
        if len(shares[g]) > 1:
            out.append(Violation(ViolationKind.GPUS, g, f"guests and hosts of {g} split cards differently"))
        for b, count in enumerate(per_bucket):
            if count > slots[g][b]:
                message = f"{count} co-located replicas but {slots[g][b]} host cards in bucket {b}"
                out.append(Violation(ViolationKind.GPUS, g, message))
    return out
