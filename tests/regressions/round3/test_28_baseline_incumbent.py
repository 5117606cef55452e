"""Issue 28: the Korean public bid (``examples/bids/``) was answered with a fleet 60 KRW dearer than
its own rtx-pro-6000-server baseline ("The best single-GPU fleet … costs 60 KRW less"). A feasible
baseline cheaper than the main solve's plan becomes the answer, verified against the full request.

Through the CLI: the plan's TCO is no more than any feasible baseline's (both read from the answer),
and the fleet answered evaluates feasible at that TCO (EvaluateFleet, an independent check)."""

from __future__ import annotations

import io
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from clients import cli

pytestmark = pytest.mark.slow

BID = Path(__file__).resolve().parents[3] / "examples" / "bids" / "kr_public_rag_bid.yaml"


def fleetplan(*argv: str) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    code = cli.main([*argv, "--json"], out=out)
    data: dict[str, Any] = json.loads(out.getvalue())
    return code, data


def _fleet_arg(line: dict[str, Any]) -> str:
    """A plan's fleet line as ``--fleet`` takes it: GPU:COUNT:buy:SERVER:OFFER, or GPU:COUNT:MODE:OFFER."""
    mode = line["mode"].removeprefix("ACQUISITION_MODE_").lower()
    where = f"{line['server_id']}:{line['offer_id']}" if mode == "buy" else line["offer_id"]
    return f"{line['gpu_id']}:{line['gpu_count']}:{mode}:{where}"


def test_no_feasible_baseline_is_cheaper_than_the_bid_plan() -> None:
    code, answer = fleetplan("plan", str(BID), "--no-sensitivity")
    assert code == cli.EXIT_OK
    plan = answer["plan"]
    total = Decimal(plan["cost"]["horizon_tco"]["amount"])
    priced = {
        b["gpu_id"]: Decimal(b["horizon_tco"]["amount"]) for b in plan["baselines"] if b.get("feasible")
    }
    assert priced, plan["baselines"]
    assert all(total <= cost for cost in priced.values()), (total, priced)
    fleet = ",".join(_fleet_arg(line) for line in plan["fleet"])
    code, evaluated = fleetplan("evaluate", str(BID), "--fleet", fleet, "--no-compare")
    assert code == cli.EXIT_OK, evaluated
    assert evaluated["feasible"] is True
    assert Decimal(evaluated["fleet_horizon_tco"]["amount"]) == total
