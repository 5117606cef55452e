"""Constraint 4c of ``solver.optimizer.model``: a server model is leased or bought, not both.

Each option prices its own multi-node fabric (constraint 4), so one server bought and one leased
of the same model would each be a lone node and the plan would miss their fabric. One binary z
per server model that has a lease option (``AcquisitionOption.leased``) and another option:
s_o ≤ ub(s_o) · z for the lease, s_o ≤ ub(s_o) · (1 − z) for the others. The pricing offers one
lease per server model (``solver.pricing.costs._lease_options``).
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from solver.pricing.options import MULTI_NODE_SERVERS, AcquisitionOption

if TYPE_CHECKING:
    from solver.optimizer.model import ModelBuilder


def add_lease_or_buy(builder: ModelBuilder) -> None:
    slv = builder.solver
    by_server: dict[str, list[AcquisitionOption]] = defaultdict(list)
    for o in builder.inst.options:
        if o.server_id is not None and o.id in builder.s and not o.owned:
            by_server[o.server_id].append(o)
    for server, options in by_server.items():
        if not any(o.leased for o in options) or len(options) < MULTI_NODE_SERVERS:
            continue
        choice = slv.BoolVar(f"leased[{server}]")
        for o in options:
            s = builder.s[o.id]
            slv.Add(s <= int(s.ub()) * (choice if o.leased else 1 - choice), f"lease_or_buy[{o.id}]")
