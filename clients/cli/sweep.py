"""``fleetplan sweep``: solve a scenario over values of one dimension, with a progress bar on stderr,
the frontier as a table (or every streamed message as JSON lines) and optionally as CSV."""

from __future__ import annotations

import argparse
import contextlib
import csv
import sys
from pathlib import Path
from typing import TextIO

import grpc

from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import plan_pb2
from clients import render
from clients.cli.connection import connect
from clients.cli.exits import EXIT_OK
from clients.cli.measured import attach_measurements
from clients.cli.output import to_json
from clients.cli.progress import status_line
from clients.client import FleetPlanError
from clients.scenario import ScenarioError, load_scenario

PROGRESS_BAR_WIDTH = 30
CSV_HEADER = ["status", "horizon_tco", "currency", "fleet", "pareto_optimal"]
"""The CSV's columns after the swept dimension's own."""


def sweep_request(args: argparse.Namespace) -> api.SweepPlansRequest:
    base = load_scenario(Path(args.scenario), api.PlanFleetRequest)
    attach_measurements(args, base.measurements)
    request = api.SweepPlansRequest(base=base, workload_name=args.workload or "")
    name = f"SWEEP_DIMENSION_{args.dimension.upper()}"
    if name not in api.SweepDimension.DESCRIPTOR.values_by_name:
        raise ScenarioError(
            "--dimension",
            args.dimension,
            "unknown; use capex_budget, demand_multiplier, tpot_p95_ms, ttft_p95_ms, min_per_user_tok_s "
            "or discount_rate_annual",
        )
    request.dimension = api.SweepDimension.Value(name)
    if args.values:
        try:
            request.values.extend(float(v) for v in args.values.split(","))
        except ValueError as exc:
            raise ScenarioError("--values", args.values, "expected comma-separated numbers") from exc
    elif args.range:
        parts = args.range.split(":")
        if len(parts) != 3:
            raise ScenarioError("--range", args.range, "expected START:STOP:POINTS")
        request.range.CopyFrom(
            api.SweepRange(start=float(parts[0]), stop=float(parts[1]), points=int(parts[2]))
        )
    return request


def sweep_stage(progress: api.SweepProgress) -> str:
    """The sweep's progress as the server streams it: a bar and the points solved."""
    done, total = progress.points_done, max(1, progress.points_total)
    bar = "#" * int(PROGRESS_BAR_WIDTH * done / total)
    return f"[{bar:<{PROGRESS_BAR_WIDTH}}] {done}/{total} points"


def _stream(args: argparse.Namespace, request: api.SweepPlansRequest) -> list[api.SweepPlansResponse]:
    """Every streamed message (the progress shown on the way, unless the output is JSON: a terminal
    sees one bar redrawn, a file or pipe one line per solved point)."""
    messages: list[api.SweepPlansResponse] = []
    showing = (
        contextlib.nullcontext(None)
        if args.json
        else status_line(sys.stderr, after_s=0.0, lines=bool(getattr(args, "verbose", False)))
    )
    with showing as status, connect(args, status=status) as client:
        for message in client.sweep_plans(request):
            messages.append(message)
            if status is not None and message.WhichOneof("event") == "progress":
                status.show(sweep_stage(message.progress))
    return messages


def write_csv(path: str, dimension: str, frontier: api.SweepFrontier) -> None:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow([dimension, *CSV_HEADER])
        for p in frontier.points:
            writer.writerow(
                [
                    p.value,
                    plan_pb2.PlanStatus.Name(p.status),
                    p.horizon_tco.amount,
                    p.horizon_tco.currency_code,
                    p.fleet_summary,
                    p.pareto_optimal,
                ]
            )


def cmd_sweep(args: argparse.Namespace, out: TextIO) -> int:
    messages = _stream(args, sweep_request(args))
    frontiers = [m.frontier for m in messages if m.WhichOneof("event") == "frontier"]
    if not frontiers:
        raise FleetPlanError(grpc.StatusCode.UNKNOWN, "the sweep ended without a frontier")
    frontier = frontiers[-1]
    if args.csv:
        write_csv(args.csv, args.dimension, frontier)
    if args.json:
        out.write("\n".join(to_json(m, indent=None) for m in messages) + "\n")
    else:
        out.write(render.render_frontier(frontier, args.dimension, markdown=args.markdown) + "\n")
    return EXIT_OK
