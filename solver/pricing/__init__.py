"""Pricing, below the optimizer: what one unit of capacity costs (DESIGN §5).

* ``costs.acquisition_options(book, constraints)`` — the price of one GPU (and server) per
  acquisition option in the request's currency and VAT basis: purchase, depreciation to residual,
  support, colocation, host and GPU power, reserved and on-demand rent (``options.AcquisitionOption``).

The optimizer prices its decisions with these options; ``solver.analysis`` breaks a chosen fleet
down with the same numbers, so both always agree.
"""
