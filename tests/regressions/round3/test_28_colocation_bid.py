"""Issue 28, item 3: small workloads share a card before a card is bought for them. In the Korean
public RAG bid (``examples/bids/``) the embedding model (bge-m3, a few % of one card) took a MIG
slice of a fifth rtx-pro-6000 card (rtx-pro-6000-server ×5, 193,864,642 KRW). With co-location it
sits on a share of a card that already serves a chat model, and no card is held for it.

Checked here, independently of the planner's figures: the plan is cheaper than the same instance
without co-located candidates; the embedding model occupies no card of its own (the cards held are
exactly those of the other groups at their peak); and the guest and its host fit one card's memory,
computed from the model cards (weights + KV of their concurrency at capacity)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients.scenario import load_scenario
from pricebook import catalog, load_default
from pricebook.schema import Pricebook
from service.convert.scenario import scenario_request
from solver.domain import ModelRef
from solver.optimizer.api import solve
from solver.optimizer.candidates import build_instance
from solver.optimizer.evaluate import check_solution, perf_capacity_checker
from solver.optimizer.instance import Candidate
from solver.optimizer.results import FleetSolution, SolveStatus
from solver.perf import resolve_model

pytestmark = pytest.mark.slow

BID = Path(__file__).resolve().parents[3] / "examples" / "bids" / "kr_public_rag_bid.yaml"
EMBEDDING = "doc-embedding"
GIB = 1024**3
BYTES = {"bf16": 2, "fp8": 1, "fp4": 0.5, "int4": 0.5}


def _uses(solution: FleetSolution, workload: str | None = None) -> list[tuple[str, Candidate, int]]:
    """(workload, candidate, peak replicas) of every deployment in use."""
    return [
        (a.workload, u.candidate, max(u.replicas))
        for a in solution.assignments
        for u in a.uses
        if max(u.replicas) > 0 and (workload is None or a.workload == workload)
    ]


def _card_gib(model_id: str, c: Candidate, book: Pricebook) -> float:
    """GiB on one card of ``c``'s replica: weights ÷ TP, plus the KV cache of its concurrency."""
    m = resolve_model(ModelRef(model_id=model_id), book)
    weights = m.params_b * 1e9 * BYTES[c.precision.value]
    kv_per_token = 2 * m.layers * m.kv_heads * m.head_dim * BYTES[c.kv_precision.value]
    kv = c.concurrency * (c.input_tokens + c.output_tokens) * kv_per_token
    return (weights + kv) / c.tp / GIB


def test_the_embedding_model_shares_a_card_instead_of_taking_one() -> None:
    resolved = scenario_request(load_scenario(BID, api.PlanFleetRequest), load_default())
    request, book = resolved.request, resolved.book
    checker = perf_capacity_checker(request, book)
    instance = build_instance(request, book)
    shared = solve(instance, time_limit_s=120, capacity_of=checker, explain=False)
    whole = dataclasses.replace(
        instance, candidates=tuple(c for c in instance.candidates if c.card_share == 1)
    )
    alone = solve(whole, time_limit_s=120, capacity_of=checker, explain=False)
    assert shared.status is SolveStatus.OPTIMAL and alone.status is SolveStatus.OPTIMAL
    assert shared.cost is not None and alone.cost is not None
    assert shared.cost.total < alone.cost.total * (1 - 1e-3), (shared.cost.total, alone.cost.total)
    assert not check_solution(instance, shared, checker)

    embedding = _uses(shared, EMBEDDING)
    assert embedding and all(c.guest for _, c, _ in embedding)
    held = sum(o.gpus for o in shared.options)
    own = sum(c.tp * n for w, c, n in _uses(shared) if w != EMBEDDING)
    pooled = sum(p.deployment.tp * max(p.replicas) for p in shared.pools if not p.deployment.guest)
    assert held == own + pooled  # every held card serves another workload; none is the embedding's

    models = {w.name: w.model.model_id for w in request.inference}
    hosts = [(w, c) for w, c, _ in _uses(shared) if c.host]
    assert hosts
    for _, guest, _ in embedding:
        memory = catalog.gpu(book, guest.gpu).memory_gb
        for host_workload, host in hosts:
            if host.gpu != guest.gpu:
                continue
            assert abs(guest.card_share + host.card_share - 1) < 1e-12
            together = _card_gib(models[EMBEDDING], guest, book) + _card_gib(
                models[host_workload], host, book
            )
            assert together <= memory, (guest.id, host.id, together, memory)
            assert math.isfinite(together)
