"""Every label of the quote by key, in English (the message ids of the catalogue, ``report.catalogue``:
the Korean is in ``report/locale/ko/LC_MESSAGES/quote.po``), and the report language."""

from __future__ import annotations

from enum import StrEnum

from report.catalogue import translations


class Language(StrEnum):
    EN = "en"
    KO = "ko"


LABELS: dict[str, str] = {
    # Headings
    "title": "GPU fleet quote",
    "summary": "1. Summary",
    "alternatives": "2. Alternatives side by side",
    "bom": "3. Bill of materials",
    "rentals": "Rentals (monthly)",
    "cashflow": "4. Cash flow by year",
    "tco_breakdown": "TCO breakdown",
    "buy_vs_rent": "5. Buy vs rent",
    "api_vs_self": "Self-hosting vs per-token API",
    "workloads": "6. Workloads",
    "training": "Training runs",
    "sensitivity": "7. Sensitivity",
    "frontier": "Sweep frontier",
    "assumptions": "8. Assumptions",
    "provenance": "9. Provenance",
    "diagnosis": "Why there is no plan",
    "warnings": "Warnings",
    # Summary
    "recommended_fleet": "Recommended fleet",
    "horizon_tco": "Horizon TCO",
    "capex": "Capex",
    "opex_monthly": "Monthly opex",
    "horizon": "Horizon",
    "months": "months",
    "saving": "Saving against the best single-GPU fleet",
    "status": "Plan status",
    "quoted_on": "Quoted on",
    "gpus": "GPUs",
    "no_plan": "No plan: the request cannot be met as stated.",
    "vat_included": "Amounts exclude VAT; the VAT line shows what the bid pays with it",
    "vat_excluded": "Amounts exclude VAT",
    "tco_with_vat": "Horizon TCO incl. VAT",
    "vat_line": "VAT on every payment over the horizon",
    "vat_supply": "Supply: capex + opex × months",
    "book_depreciation": "Book depreciation (straight line; accounting only, the TCO uses market value)",
    "book_value_end": "Book value at year end",
    "depreciation_amount": "Depreciation",
    # Alternatives
    "alternative": "Alternative",
    "feasible": "Feasible",
    "fleet": "Fleet",
    "why": "Why it loses",
    "kind.recommended": "Recommended mix",
    "kind.single_gpu": "Single GPU type",
    "kind.rent_only": "Rent only",
    "kind.api": "Per-token API",
    "yes": "yes",
    "no": "no",
    "this_plan": "this plan",
    "costs_more": "costs {amount} ({fraction}) more",
    "costs_less": "costs {amount} less (plan stopped at its time limit)",
    "costs_same": "costs the same",
    "infeasible_because": "infeasible: {reason}",
    "not_comparable": "not comparable: {reason}",
    "no_rent_only": "Rent-only fleet not computed",
    "outside_requirement": "does not meet the request (it allows {modes} only); ",
    "rentals_not_allowed": "The request allows buying only: renting and per-token APIs are not compared.",
    "mode.buy": "buy",
    "mode.reserved": "reserved",
    "mode.on_demand": "on demand",
    "no_api_price": "no per-token API price in the pricebook for these workloads",
    # BOM
    "item": "Item",
    "model": "Model",
    "offer": "Offer",
    "provider": "Provider",
    "price_label": "Price label",
    "unit_price": "Unit price",
    "quantity": "Qty",
    "amount": "Amount",
    "supply_amount": "Supply amount",
    "vat": "VAT",
    "total": "Total",
    "kind.gpu": "GPU",
    "kind.host": "Server (host)",
    "kind.networking": "Networking (scale-out fabric)",
    "kind.installation": "Installation / integration",
    "kind.storage": "Storage",
    "kind.rounding": "Rounding adjustment",
    "owned": "owned",
    "mode": "Mode",
    "price_per_gpu_hour": "Price per GPU-hour",
    "gpu_hours_month": "GPU-hours / month",
    "monthly_amount": "Monthly amount",
    "no_purchases": "Nothing is bought in this plan.",
    "no_bom": "No bill of materials: there is no plan.",
    # Cash flow
    "year": "Year",
    "cf.capex": "Capex (purchase)",
    "cf.support": "Support",
    "cf.power": "Power",
    "cf.colocation": "Colocation",
    "cf.software": "Software licences",
    "cf.storage": "Storage (rented)",
    "cf.reserved": "Reserved rental",
    "cf.on_demand": "On-demand rental",
    "cf.residual": "Residual value",
    "cf.total": "Net cash out",
    "component": "Component",
    "monthly": "Per month",
    "comp.gpu_purchase": "GPU purchase",
    "comp.host_purchase": "Host purchase",
    "comp.residual_value": "Residual value",
    "comp.support": "Support",
    "comp.power": "Power",
    "comp.colocation": "Colocation",
    "comp.reserved_rental": "Reserved rental",
    "comp.on_demand_rental": "On-demand rental",
    "comp.networking": "Networking",
    "comp.installation": "Installation",
    "comp.storage": "Storage",
    "comp.software": "Software licences",
    "comp.vat": "VAT",
    # Buy vs rent
    "gpu": "GPU",
    "utilization": "Utilisation",
    "cost_per_gpu_month": "Cost per GPU-month",
    "owned_line": "Buy",
    "on_demand_line": "On-demand",
    "reserved_line": "Reserved",
    "break_even": "Break-even",
    "break_even_od": "Break-even vs on-demand",
    "break_even_res": "Break-even vs reserved",
    "plan_utilization": "Plan utilisation",
    "payback": "Payback (months)",
    "verdict": "Verdict",
    "no_buy_vs_rent": "No buy-vs-rent comparison (no GPU in the plan).",
    "workload": "Workload",
    "api_price": "API price / 1M tokens",
    "self_hosted_price": "Self-hosted / 1M tokens",
    "daily_tokens": "Daily tokens",
    "break_even_tokens": "Break-even daily tokens",
    "no_api_rows": "No inference workloads to compare with an API.",
    # Workloads
    "tp_slice": "TP/slice",
    "precision": "Precision",
    "replicas": "Replicas",
    "ttft": "p95 TTFT ms (target)",
    "tpot": "p95 TPOT ms (target)",
    "per_user": "tok/s per user",
    "aggregate": "Aggregate tok/s",
    "not_served": "not served",
    "latency_chart": "Latency against target (share of the SLA)",
    "share_of_target": "share of target",
    "batch": "batch (no latency target)",
    "hours_per_run": "Hours per run",
    "runs_per_month": "Runs / month",
    "deadline": "Deadline (h)",
    "cost_per_run": "Cost per run",
    "no_training": "This request has no training runs.",
    "no_inference": "This request has no inference workloads.",
    # Sensitivity
    "subject": "Subject",
    "parameter": "Parameter",
    "change_down": "Mix changes at (down)",
    "change_up": "Mix changes at (up)",
    "explanation": "Explanation",
    "not_in_range": "not within the range searched",
    "no_sensitivity": "Sensitivity was not computed.",
    "value": "Value",
    "pareto": "Pareto-optimal",
    # Assumptions and provenance
    "kind": "Kind",
    "key": "Entry",
    "source": "Source",
    "as_of": "As of",
    "label": "Label",
    "fx_rate": "FX rate",
    "vat_rate": "VAT rate",
    "depreciation": "Depreciation and residual",
    "uncertainty": "Performance model uncertainty band",
    "fleetplan_version": "fleetplan version",
    "pricebook_version": "Pricebook version",
    "pricebook_hash": "Pricebook hash",
    "calibration_date": "Calibration date",
    "solver_status": "Solver status",
    "solver_gap": "Solver gap",
    "solver_backend": "Solver",
    "overrides": "Overrides applied",
    "none": "none",
    "request": "The request (reproduces this quote)",
    "status.optimal": "optimal",
    "status.feasible": "feasible (time limit)",
    "status.infeasible": "infeasible",
    "status.no_solution": "no solution",
    "status.cancelled": "cancelled",
}
"""label key → its English text, the message id of its translations in ``report.catalogue`` (the
key is the message context)."""


class Columns:
    """The label keys of the tables both the page and the workbook show, in column order."""

    alternatives = ("alternative", "feasible", "horizon_tco", "capex", "gpus", "fleet", "why")
    bom = ("item", "model", "offer", "provider", "price_label", "unit_price", "quantity", "amount")
    rentals = (
        "gpu",
        "mode",
        "offer",
        "provider",
        "gpus",
        "price_per_gpu_hour",
        "gpu_hours_month",
        "monthly_amount",
    )
    training = ("workload", "gpu", "gpus", "hours_per_run", "runs_per_month", "deadline", "cost_per_run")
    sensitivity = ("subject", "parameter", "change_down", "change_up", "explanation")
    frontier = ("value", "status", "horizon_tco", "fleet", "pareto")
    assumptions = ("kind", "key", "value", "source", "as_of", "label")


COLUMNS = Columns()


def label(key: str, lang: Language) -> str:
    """The label ``key`` in ``lang``, from the message catalogue."""
    return translations(lang.value).pgettext(key, LABELS[key])
