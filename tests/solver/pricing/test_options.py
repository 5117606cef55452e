"""An acquisition option's own arithmetic (test book in econ_factories.py)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pricebook.schema import Pricebook
from solver.domain import AcquisitionMode, Constraints
from solver.pricing.costs import acquisition_options

BookFactory = Callable[..., Pricebook]
MODES = (AcquisitionMode.BUY, AcquisitionMode.RESERVED, AcquisitionMode.ON_DEMAND)


def test_capex_per_gpu_with_host_shares_the_host_among_the_slots(make_book: BookFactory) -> None:
    opts = {
        o.id: o for o in acquisition_options(make_book(), Constraints(currency="USD", allowed_modes=MODES))
    }
    # $35,000 a GPU plus an eighth of the HGX's $40,000 host.
    assert opts["h200-sxm/buy/hgx-h200-8gpu"].capex_per_gpu_with_host == pytest.approx(40_000)
    # A rental has no purchase price at all.
    assert opts["h200-sxm/on_demand/h200-od-cheap"].capex_per_gpu_with_host == 0


def test_horizon_cost_is_capex_net_of_residual_plus_running_costs(make_book: BookFactory) -> None:
    opts = acquisition_options(
        make_book(), Constraints(currency="USD", horizon_months=36, allowed_modes=MODES)
    )
    bought = next(o for o in opts if o.id == "h200-sxm/buy/hgx-h200-8gpu")
    busy = 1_000.0
    expected = (
        320_000 * (1 - bought.residual_fraction)
        + (bought.fixed_monthly_per_gpu * 8 + bought.fixed_monthly_per_server) * 36
        + bought.busy_hourly_per_gpu * busy
    )
    assert bought.horizon_cost(8, 1, 36, busy) == pytest.approx(expected)
