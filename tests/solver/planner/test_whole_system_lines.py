"""Whole-system lines reach the plan (issue 15): a plan of several HGX servers pays their fabric, a
request's installation, licences and storage are lines of the answer, and the TCO breakdown still
equals the solver's objective (no internal warning)."""

from __future__ import annotations

from decimal import Decimal

from planner_factories import BARE, request

from api.fleetplan.v1 import common_pb2
from clients.render.plan import render_plan
from pricebook.schema import Money, Pricebook
from service.convert.plan import plan_to_proto
from solver.domain import AcquisitionMode, SoftwareLicence, Storage
from solver.planner import PlanResult, plan
from solver.resolve import resolve

FABRIC_PER_HGX_GPU = 635 + 1_365  # NDR switch port + optics per GPU (derived midpoints, B6); NICs in the host


def _plan(book: Pricebook, **constraints: object) -> PlanResult:
    base = request(**BARE)
    update = {"allowed_gpus": ("h200-sxm",), "allowed_modes": (AcquisitionMode.BUY,), **constraints}
    req = base.model_copy(update={"constraints": base.constraints.model_copy(update=update)})
    return plan(resolve(req, book), time_limit_s=20)


def _usd(amount: int) -> Money:
    return Money(amount=Decimal(amount), currency="USD")


def test_a_multi_node_plan_pays_its_fabric_and_the_requests_lines(book: Pricebook) -> None:
    result = _plan(
        book,
        installation_per_server=_usd(5_000),
        software_licences=(SoftwareLicence(name="NVIDIA AI Enterprise", price_per_gpu_year=_usd(4_500)),),
        storage=Storage(capacity_tb=50, price_per_tb=_usd(20), monthly=True),
    )
    assert result.tco is not None
    (line,) = result.fleet
    assert line.servers >= 2, "the factory's demand needs more than one HGX H200 server"
    total = result.tco.total
    assert total.networking.amount == line.servers * 8 * FABRIC_PER_HGX_GPU
    assert total.installation.amount == line.servers * 5_000
    assert total.software_monthly.amount == line.gpus * Decimal(4_500) / 12
    assert total.storage_monthly.amount == 50 * 20 and total.storage.amount == 0
    assert not [w for w in result.warnings if w.startswith("internal")]
    # The capex the answer reports is the one the solver budgeted.
    assert result.solution.cost is not None
    assert float(total.capex.amount) == round(result.solution.cost.capex, 2)
    # Issue 28 item 9: the fleet lines and the fleet-wide storage add up to the TCO exactly.
    storage = total.storage.amount + total.storage_monthly.amount * result.horizon_months
    assert (
        sum((f.horizon_cost.amount for f in result.fleet), storage) == result.tco.total.horizon_total.amount
    )


def test_leaving_networking_out_removes_the_line(book: Pricebook) -> None:
    with_fabric = _plan(book)
    without = _plan(book, include_network_costs=False)
    assert with_fabric.tco is not None and without.tco is not None
    assert with_fabric.tco.total.networking.amount > 0
    assert without.tco.total.networking.amount == 0
    assert without.tco.total.horizon_total.amount < with_fabric.tco.total.horizon_total.amount


def test_the_lines_reach_proto_text_and_markdown(book: Pricebook) -> None:
    """The new lines travel as ``CostBreakdown.components`` (JSON/proto) and render in text and
    Markdown with their formula in words."""
    result = _plan(
        book,
        installation_fraction=0.01,
        software_licences=(SoftwareLicence(name="AIE", price_per_gpu_year=_usd(1_000)),),
        storage=Storage(capacity_tb=10, price_per_tb=_usd(100)),
    )
    message = plan_to_proto(result, book)
    names = {c.name: c for c in message.cost.components}
    assert {"networking", "installation", "storage", "software"} <= set(names)
    assert Decimal(names["storage"].horizon_amount.amount) == 10 * 100
    assert "switch port" in names["networking"].explanation
    for markdown in (False, True):
        text = render_plan(message, common_pb2.Provenance(), markdown=markdown)
        for name in ("networking", "installation", "storage", "software"):
            assert name in text
        assert "storage TB × price per TB" in text
