"""Analysis, above the optimizer: what a chosen fleet costs and when buying pays (DESIGN §5).

* ``tco.fleet_tco(lines, horizon_months, currency)`` — a fleet's TCO by component and option;
  ``tco.unit_costs(...)`` — cost per 1M output/total tokens and per training run.
* ``breakeven.buy_vs_rent(...)`` — break-even utilization vs on-demand and reserved, payback months;
  ``breakeven.api_break_even(...)`` — self-hosting vs a per-token API (``gpu_day_cost``: one GPU
  held and busy for a day); ``rental_cost`` and ``budget_table`` — the seeds' arithmetic.
* ``whatif`` — instance transforms for single-GPU baselines and price/demand sensitivity.

``solver.planner`` orchestrates these around the optimizer (``solver.planner.assemble`` prices a
plan with them).
"""
