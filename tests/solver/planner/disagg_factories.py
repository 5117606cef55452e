"""Hand-built disaggregated plans (issue 33) for the renderers' tests: a real plan whose first
deployment group is rewritten as a prefill + decode deployment, and its comparison with the
cheapest aggregated plan. The renderers copy these fields; the tests check that the copies read
back as built here, never against numbers the renderers compute.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

from pricebook.schema import Money
from solver.domain import Precision
from solver.planner.results import (
    DeploymentLine,
    DisaggregatedRole,
    DisaggregatedRoles,
    DisaggregationComparison,
    PlanResult,
)

PREFILL_ENGINES = 1
DECODE_ENGINES = 3
PREFILL_TP = 2
KV_BYTES = 262_144_000.0
"""A 2000-token prompt of a 70B GQA model at fp8 (80 layers × 8 KV heads × 128 × 2 × 1 B × 2000)."""


def roles(
    line: DeploymentLine,
    *,
    prefill_gpu: str | None = None,
    kv_link: str = "network",
    network_cost: Money | None = None,
) -> DisaggregatedRoles:
    """``PREFILL_ENGINES`` prefill engines (``prefill_gpu``, default the line's, TP ``PREFILL_TP``)
    and ``DECODE_ENGINES`` decode engines (the line's own deployment) per unit, ``line``'s peak
    replicas counted as units."""
    units = line.replicas_peak
    prefill = DisaggregatedRole(
        gpu=prefill_gpu or line.gpu,
        tp=PREFILL_TP,
        ep=1,
        attention_dp=1,
        precision=Precision.FP8,
        engines_per_unit=PREFILL_ENGINES,
        gpus_peak=units * PREFILL_ENGINES * PREFILL_TP,
    )
    decode = DisaggregatedRole(
        gpu=line.gpu,
        tp=line.tp,
        ep=1,
        attention_dp=1,
        precision=line.precision,
        engines_per_unit=DECODE_ENGINES,
        gpus_peak=units * DECODE_ENGINES * line.tp,
    )
    return DisaggregatedRoles(
        prefill=prefill,
        decode=decode,
        kv_link=kv_link,
        kv_bytes_per_request=KV_BYTES,
        network_cost=network_cost,
    )


def disaggregated(
    result: PlanResult,
    *,
    prefill_gpu: str | None = None,
    saving: Decimal | None = Decimal("12345.67"),
    reason: str = "",
    network_cost: Decimal | None = Decimal("4321.09"),
) -> PlanResult:
    """``result`` with its first deployment group disaggregated (``roles``) and the comparison: the
    aggregated plan costs the plan's TCO + ``saving`` (None: no aggregated plan, ``reason`` says why)."""
    assert result.deployment_lines and result.horizon_tco is not None, "needs a plan with deployments"
    tco = result.horizon_tco
    first, *others = result.deployment_lines
    cost = None if network_cost is None else Money(amount=network_cost, currency=tco.currency)
    line = replace(first, disaggregation=roles(first, prefill_gpu=prefill_gpu, network_cost=cost))
    comparison = DisaggregationComparison(
        aggregated_tco=None if saving is None else Money(amount=tco.amount + saving, currency=tco.currency),
        saving=None if saving is None else Money(amount=saving, currency=tco.currency),
        reason=reason,
    )
    return replace(result, deployment_lines=(line, *others), disaggregation=comparison)


def small_plan() -> PlanResult:
    """A real plan of ``planner_factories.small_chat_request`` (an 8B chat on L40S or H100 SXM, no
    baselines nor sensitivity): quick to solve."""
    from pricebook import load_default  # noqa: PLC0415 - the planner only for the tests that plan
    from solver import planner  # noqa: PLC0415
    from solver.resolve import resolve  # noqa: PLC0415
    from tests.solver.planner.planner_factories import BARE, small_chat_request  # noqa: PLC0415

    return planner.plan(resolve(small_chat_request(BARE), load_default()), time_limit_s=10)
