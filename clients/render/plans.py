"""Saved plans: a list, one plan's record, the differences between two, a re-pricing."""

from __future__ import annotations

from api.fleetplan.v1 import plan_store_pb2 as store_api
from clients.render.plan import render_plan
from clients.render.tables import Cell, heading, section, verdicts
from clients.render.values import mode_name, money, status_name


def _when(plan: store_api.SavedPlan) -> str:
    return plan.create_time.ToDatetime().strftime("%Y-%m-%d %H:%M:%S UTC")


def render_plan_list(response: store_api.ListPlansResponse, *, markdown: bool = False) -> str:
    if not response.plans:
        return "No saved plans."
    rows = [
        [
            p.plan_id,
            _when(p),
            p.label or "-",
            ",".join(p.tags) or "-",
            status_name(p.status),
            money(p.horizon_tco),
        ]
        for p in response.plans
    ]
    lines = section(
        "Saved plans", ["id", "saved", "label", "tags", "status", "horizon TCO"], rows, markdown=markdown
    )
    if response.next_page_token:
        lines.append(f"\nmore: --page-token {response.next_page_token}")
    return "\n".join(lines).lstrip("\n")


def render_record(plan: store_api.SavedPlan, *, markdown: bool = False) -> str:
    """Who saved what when, from which pricebook and model."""
    rows = [
        ["id", plan.plan_id],
        ["saved", _when(plan)],
        ["label", plan.label or "-"],
        ["tags", ", ".join(plan.tags) or "-"],
        ["requester", plan.requester or "-"],
        ["request id", plan.request_id or "-"],
        ["pricebook", f"{plan.pricebook_version} (sha256 {plan.pricebook_content_hash[:16]}…)"],
        ["calibration", plan.calibration_date or "-"],
        ["fleetplan", plan.fleetplan_version or "-"],
    ]
    return "\n".join(section("Saved plan", ["field", "value"], rows, markdown=markdown)).lstrip("\n")


def render_saved_plan(plan: store_api.SavedPlan, *, markdown: bool = False) -> str:
    body = render_plan(plan.response.plan, plan.response.provenance, markdown=markdown)
    return render_record(plan, markdown=markdown) + "\n\n" + body


def render_comparison(response: store_api.ComparePlansResponse, *, markdown: bool = False) -> str:
    lines = [
        f"{response.base.plan_id} ({response.base.label or 'no label'}) → "
        f"{response.other.plan_id} ({response.other.label or 'no label'})"
    ]
    if response.fleet_changes:
        rows: list[list[Cell]] = [
            [
                c.gpu_id,
                "owned" if c.owned else mode_name(c.mode),
                c.server_id or "-",
                c.base_gpu_count,
                c.other_gpu_count,
                money(c.horizon_cost_change),
            ]
            for c in response.fleet_changes
        ]
        headers = ["GPU", "mode", "server", "GPUs before", "GPUs after", "Δ horizon cost"]
        lines += section("Fleet changes", headers, rows, markdown=markdown)
    costs = [*response.total_changes, *response.component_changes]
    if costs:
        cost_rows = [[c.name, money(c.base_amount), money(c.other_amount), money(c.change)] for c in costs]
        lines += section("Cost changes", ["cost", "before", "after", "change"], cost_rows, markdown=markdown)
    if response.deployment_changes or response.version_changes:
        lines.append(heading("Other changes", markdown=markdown))
        texts = [c.description for c in response.deployment_changes]
        texts += [f"{v.name}: {v.base_value} → {v.other_value}" for v in response.version_changes]
        lines += verdicts(texts, markdown=markdown)
    if len(lines) == 1:
        lines.append("The two plans are the same.")
    return "\n".join(lines)


def render_repricing(response: store_api.RepricePlanResponse, *, markdown: bool = False) -> str:
    verdict = "still feasible" if response.still_feasible else "NO LONGER FEASIBLE"
    lines = [
        f"Plan {response.saved.plan_id} ({response.saved.label or 'no label'}) against today's "
        f"pricebook: {verdict}",
        f"horizon TCO then {money(response.saved_horizon_tco)}, now {money(response.current_horizon_tco)}"
        f" (change {money(response.horizon_tco_change)})",
    ]
    if response.price_changes:
        rows = [
            [p.offer_id, p.gpu_id, mode_name(p.mode), money(p.saved_price), money(p.current_price)]
            for p in response.price_changes
        ]
        lines += section("Price changes", ["offer", "GPU", "mode", "then", "now"], rows, markdown=markdown)
    lines.append(heading("Why", markdown=markdown))
    lines += verdicts(list(response.reasons), markdown=markdown)
    return "\n".join(lines)
