"""Per-workload facts the quote adds to the planner's rows: embedding workloads in the units that
describe them — embeddings (requests) per second, input tokens per second and the cost per million
input tokens, not output speed or TPOT, which an embedding model does not have (it reads its input
and returns one vector) — and each workload's demand against its capacity hour by hour."""

from __future__ import annotations

from pricebook import catalog
from pricebook.errors import UnknownEntryError
from pricebook.schema import Money
from report.data import EmbeddingRow, HourlyLoad
from solver.analysis.tco import to_unit_price
from solver.domain import InferenceWorkload
from solver.planner.results import PlanResult
from solver.resolve import ResolvedRequest
from solver.units import TOKENS_PER_MILLION


def is_embedding(workload: InferenceWorkload, resolved: ResolvedRequest) -> bool:
    """The workload's model is an embedding model in the catalogue."""
    if workload.model.model_id is None:
        return False
    try:
        return catalog.model(resolved.book, workload.model.model_id).kind == "embedding"
    except UnknownEntryError:
        return False


def embedding_rows(result: PlanResult, resolved: ResolvedRequest) -> tuple[EmbeddingRow, ...]:
    """Each served embedding workload: what its replicas at the peak hour can take (each request
    is one embedding of ``input_tokens`` tokens) and its share of the TCO per million of them."""
    assignments = {a.workload: a for a in result.solution.assignments}
    unit_costs = {u.workload: u for u in result.unit_costs}
    rows = []
    for w in resolved.request.inference:
        a = assignments.get(w.name)
        if a is None or not is_embedding(w, resolved):
            continue
        peak = a.peak_bucket
        per_second = sum(u.replicas[peak] * u.candidate.max_output_tok_s for u in a.uses) / w.output_tokens
        cost = unit_costs.get(w.name)
        per_million: Money | None = None
        if cost is not None and cost.total_tokens_per_month > 0:
            inputs = cost.total_tokens_per_month * w.input_tokens / (w.input_tokens + w.output_tokens)
            monthly = float(cost.monthly_cost.amount)
            per_million = to_unit_price(monthly * TOKENS_PER_MILLION / inputs, cost.monthly_cost.currency)
        rows.append(
            EmbeddingRow(
                name=w.name,
                embeddings_per_s=per_second,
                input_tok_s=per_second * w.input_tokens,
                input_tokens=w.input_tokens,
                per_million_input_tokens=per_million,
            )
        )
    return tuple(rows)


HOURS = 24


def hourly_loads(result: PlanResult) -> tuple[HourlyLoad, ...]:
    """Each served workload's demand and capacity per hour of the day (its bucket's values)."""
    bucket_of = {hour: b.index for b in result.solution.buckets for hour in b.hours}
    if sorted(bucket_of) != list(range(HOURS)):
        return ()
    return tuple(
        HourlyLoad(
            workload=a.workload,
            demand_req_s=tuple(a.demand_req_s[bucket_of[h]] for h in range(HOURS)),
            capacity_req_s=tuple(a.capacity_req_s[bucket_of[h]] for h in range(HOURS)),
        )
        for a in result.solution.assignments
    )
