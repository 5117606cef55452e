"""Human-readable rendering of responses: plain-text tables (default) or Markdown.

Only formatting: every number shown comes from the response message. One module per answer
(plan, evaluation, break-even, estimates, catalogue, sweep frontier); ``tables`` lays out cells,
tables and headings, ``values`` says how one value reads (money, enum names, provenance).
"""

from clients.render.break_even import (
    api_break_even,
    has_on_demand,
    payback,
    render_break_even,
    render_break_even_answer,
)
from clients.render.catalog import render_catalog
from clients.render.estimates import render_estimates
from clients.render.evaluation import render_evaluation
from clients.render.plan import plan_tables, render_plan
from clients.render.sweep import render_frontier, swept_value
from clients.render.tables import Cell, Table, heading, section, table, verdicts
from clients.render.values import enum_name, money, render_provenance

__all__ = [
    "Cell",
    "Table",
    "api_break_even",
    "enum_name",
    "has_on_demand",
    "heading",
    "money",
    "payback",
    "plan_tables",
    "render_break_even",
    "render_break_even_answer",
    "render_catalog",
    "render_estimates",
    "render_evaluation",
    "render_frontier",
    "render_plan",
    "render_provenance",
    "section",
    "swept_value",
    "table",
    "verdicts",
]
