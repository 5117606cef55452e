"""Economics (DESIGN §5): what capacity costs, what a fleet costs, and when buying pays.

Where each number comes from, one hop away:

* ``costs.acquisition_options(book, constraints)`` — the price of one GPU (and server) per
  acquisition option in the request's currency and VAT basis: purchase, depreciation to residual,
  support, colocation, host and GPU power, reserved and on-demand rent (``options.AcquisitionOption``).
* ``tco.fleet_tco(lines, horizon_months, currency)`` — a fleet's TCO by component and option;
  ``tco.unit_costs(...)`` — cost per 1M output/total tokens and per training run.
* ``breakeven.buy_vs_rent(...)`` — break-even utilisation vs on-demand and reserved, payback months;
  ``breakeven.api_break_even(...)`` — self-hosting vs a per-token API; ``rental_cost`` and
  ``budget_table`` — the seeds' arithmetic.
* ``whatif`` — instance transforms for single-GPU baselines and price/demand sensitivity.

``solver.planner`` orchestrates these around the optimizer.
"""
