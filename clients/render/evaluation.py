"""A given fleet's evaluation: what it serves, what it costs against the optimum, then its plan."""

from __future__ import annotations

from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients.render.plan import render_plan
from clients.render.tables import heading, table
from clients.render.values import money


def render_evaluation(r: api.EvaluateFleetResponse, *, markdown: bool = False) -> str:
    out = [heading("Fleet evaluation", markdown=markdown), f"feasible: {'yes' if r.feasible else 'no'}"]
    if r.fits:
        out.append(
            table(
                ["workload", "served", "headroom"],
                [
                    [f.workload_name, f"{f.served_fraction:.0%}", f"{f.headroom_fraction:+.0%}"]
                    for f in r.fits
                ],
                markdown=markdown,
            )
        )
    if r.HasField("fleet_horizon_tco"):
        out.append(f"fleet TCO: {money(r.fleet_horizon_tco)}")
    if r.HasField("optimal_horizon_tco"):
        out.append(f"optimal plan TCO: {money(r.optimal_horizon_tco)} (saving {money(r.saving_of_optimal)})")
    out += [f"- {m}" for m in r.messages]
    out.append(render_plan(r.plan, r.provenance, markdown=markdown))
    return "\n".join(out)
