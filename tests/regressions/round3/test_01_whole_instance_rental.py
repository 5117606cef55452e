"""Round 3, reproduction 01 (``repro/01-whole-instance-rental*``): one Qwen3-14B workload that one
A100 SXM serves, on-demand A100 SXM only. The planner rented a whole 8-GPU Lambda instance
(250,886.40 USD over 24 months) because it chose one offer per GPU and mode by price per GPU-hour
(1.79 < 1.89 USD) although RunPod rents single GPUs; and ``evaluate --fleet a100-sxm-80gb:1:on_demand``
was refused as "not a multiple of 8".

Expected values come from the pricebook's offers and the horizon, not from the planner: a GPU rented
on demand around the clock costs price × 8,760 ÷ 12 hours a month.
"""

from __future__ import annotations

import io
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from clients import cli
from pricebook.loader import load_default

REPRO = Path(__file__).parent / "repro"
SCENARIO = REPRO / "01-whole-instance-rental.yaml"
PINNED = REPRO / "01-whole-instance-rental-1gpu-offer.yaml"
ONE_GPU_OFFER = "a100-sxm-80gb.od.runpod-secure"
HOURS_PER_MONTH = Decimal(8760) / 12
MONTHS = 24

pytestmark = pytest.mark.slow


def fleetplan(*argv: str) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    code = cli.main([*argv, "--json"], out=out)
    data: dict[str, Any] = json.loads(out.getvalue())
    return code, data


def around_the_clock(offer_id: str, gpus: int) -> Decimal:
    """``gpus`` GPUs of an on-demand offer rented every hour of the horizon."""
    offer = next(o for o in load_default().offers if o.id == offer_id)
    assert offer.price.currency == "USD"
    return gpus * offer.price.amount * HOURS_PER_MONTH * MONTHS


def horizon_tco(plan: dict[str, Any]) -> Decimal:
    return Decimal(plan["cost"]["horizon_tco"]["amount"])


def test_the_plan_rents_one_gpu_from_the_one_gpu_offer() -> None:
    code, answer = fleetplan("plan", str(SCENARIO), "--no-baselines", "--no-sensitivity")
    assert code == cli.EXIT_OK
    plan = answer["plan"]
    (line,) = plan["fleet"]
    assert (line["gpu_id"], line["gpu_count"], line["offer_id"]) == ("a100-sxm-80gb", 1, ONE_GPU_OFFER)
    one_gpu = around_the_clock(ONE_GPU_OFFER, 1)
    assert one_gpu == Decimal("33112.80")
    assert horizon_tco(plan) == one_gpu
    # The cheapest whole 8-GPU instance (Lambda, 1.79 USD/GPU-h) costs over seven times as much.
    assert around_the_clock("a100-sxm-80gb.od.lambda-8x", 8) > 7 * horizon_tco(plan)


def test_the_free_plan_is_no_dearer_than_the_plan_with_the_one_gpu_offer_pinned() -> None:
    _, free = fleetplan("plan", str(SCENARIO), "--no-baselines", "--no-sensitivity")
    _, pinned = fleetplan("plan", str(PINNED), "--no-baselines", "--no-sensitivity")
    assert horizon_tco(free["plan"]) <= horizon_tco(pinned["plan"])


def test_evaluate_prices_one_gpu_on_the_one_gpu_offer() -> None:
    code, answer = fleetplan(
        "evaluate", str(SCENARIO), "--fleet", "a100-sxm-80gb:1:on_demand", "--no-compare"
    )
    assert code == cli.EXIT_OK
    assert answer["feasible"] is True
    (line,) = answer["plan"]["fleet"]
    assert (line["gpu_count"], line["offer_id"]) == (1, ONE_GPU_OFFER)
    assert Decimal(answer["fleet_horizon_tco"]["amount"]) == around_the_clock(ONE_GPU_OFFER, 1)
