"""The commands ``plan``, ``evaluate``, ``breakeven`` and ``catalog`` (``serve``, ``estimate`` and
``sweep`` have their own modules)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from api.fleetplan.v1 import catalog_pb2, common_pb2, scenario_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients import render
from clients.cli.connection import connect, connect_for
from clients.cli.exits import EXIT_NO_PLAN, EXIT_OK, plan_status_exit
from clients.cli.measured import attach_measurements
from clients.cli.output import emit
from clients.cli.progress import planning_stage
from clients.scenario import ScenarioError, load_scenario, load_yaml, parse_scenario


def cmd_plan(args: argparse.Namespace, out: TextIO) -> int:
    request = load_scenario(Path(args.scenario), api.PlanFleetRequest)
    attach_measurements(args, request.measurements)
    if args.no_baselines:
        request.solver_options.compute_baselines = False
    if args.no_sensitivity:
        request.solver_options.compute_sensitivity = False
    if args.save:
        request.save = True
        request.label = args.label or request.label
        request.tags.extend(args.tag or ())
        request.request_id = args.request_id or request.request_id
    with connect_for(args, planning_stage(request.solver_options)) as client:
        response = client.plan_fleet(request)
    text = render.render_plan(response.plan, response.provenance, markdown=args.markdown)
    if response.plan_id:
        text += f"\nsaved as plan {response.plan_id}"
    emit(args, response, text, out)
    if args.csv is not None:
        args.csv.mkdir(parents=True, exist_ok=True)
        written = [table.write_csv(args.csv) for table in render.plan_tables(response.plan)]
        sys.stderr.write(f"wrote {len(written)} CSV files to {args.csv}\n")
    return plan_status_exit(response.plan)


def _mode_names() -> dict[str, common_pb2.AcquisitionMode.ValueType]:
    return {name: common_pb2.AcquisitionMode.Value(name) for name in common_pb2.AcquisitionMode.keys()[1:]}


_MODE_NAMES = _mode_names()


def parse_fleet(spec: str) -> scenario_pb2.Fleet:
    """``h200-sxm:8:buy:hgx-h200-8gpu,a100-sxm-80gb:1:on_demand:a100-sxm-80gb.od.runpod-secure`` →
    Fleet. Mode optional (buy); then a bought line's server model and offer, a rented line's offer
    (each optional: the cheapest valid packing and offer mix)."""
    fleet = scenario_pb2.Fleet()
    for part in filter(None, (p.strip() for p in spec.split(","))):
        pieces = part.split(":")
        if len(pieces) not in (2, 3, 4, 5) or not pieces[1].isdigit():
            raise ScenarioError(
                "--fleet",
                part,
                "expected GPU:COUNT[:MODE[:SERVER[:OFFER]]] or GPU:COUNT:MODE:OFFER for rentals, "
                "e.g. h200-sxm:8:buy:hgx-h200-8gpu",
            )
        mode = pieces[2] if len(pieces) >= 3 else "buy"
        owned = mode == "owned"
        enum_name = f"ACQUISITION_MODE_{'BUY' if owned else mode.upper().replace('-', '_')}"
        if enum_name not in _MODE_NAMES:
            raise ScenarioError(
                "--fleet", part, f"unknown mode {mode!r}; use buy, reserved, on_demand or owned"
            )
        rented = enum_name in ("ACQUISITION_MODE_RESERVED", "ACQUISITION_MODE_ON_DEMAND")
        names = [*pieces[3:], "", ""]
        server, offer = ("", names[0]) if rented else (names[0], names[1])
        if rented and len(pieces) == 5:
            raise ScenarioError("--fleet", part, "a rented line names its offer only: GPU:COUNT:MODE:OFFER")
        fleet.items.append(
            scenario_pb2.FleetItem(
                gpu_id=pieces[0],
                count=int(pieces[1]),
                mode=_MODE_NAMES[enum_name],
                owned=owned,
                server_id=server,
                offer_id=offer,
            )
        )
    return fleet


def cmd_evaluate(args: argparse.Namespace, out: TextIO) -> int:
    path = Path(args.scenario)
    data = load_yaml(path)
    request = parse_scenario(data, api.EvaluateFleetRequest, str(path), echo=sys.stderr)
    if args.fleet:
        request.fleet.CopyFrom(parse_fleet(args.fleet))
    request.compare_with_optimal = not args.no_compare
    attach_measurements(args, request.measurements)
    with connect_for(args, "evaluating the fleet") as client:
        response = client.evaluate_fleet(request)
    emit(args, response, render.render_evaluation(response, markdown=args.markdown), out)
    return EXIT_OK if response.feasible else EXIT_NO_PLAN


def cmd_breakeven(args: argparse.Namespace, out: TextIO) -> int:
    path = Path(args.scenario)
    data = load_yaml(path)
    if isinstance(data, dict):
        # A plan scenario works as is: its solver options do not apply to a break-even analysis.
        data = {k: v for k, v in data.items() if k != "solver_options"}
    request = parse_scenario(data, api.AnalyzeBreakEvenRequest, str(path), echo=sys.stderr)
    if args.gpu:
        request.gpu_id = args.gpu
    if args.utilization is not None:
        request.utilization = args.utilization
    with connect_for(args, "analysing buy vs rent") as client:
        response = client.analyze_break_even(request)
    text = render.render_break_even_answer(response, markdown=args.markdown)
    emit(args, response, text + render.render_provenance(response.provenance), out)
    return EXIT_OK


def cmd_catalog(args: argparse.Namespace, out: TextIO) -> int:
    kinds = []
    for kind in args.kind or ():
        name = f"CATALOG_KIND_{kind.upper()}"
        if name not in catalog_pb2.CatalogKind.DESCRIPTOR.values_by_name:
            raise ScenarioError(
                "--kind", kind, "unknown kind; use gpu, server, offer, api_price, model or site"
            )
        kinds.append(catalog_pb2.CatalogKind.Value(name))
    with connect(args) as client:
        response = client.list_catalog(kinds)
    emit(args, response, render.render_catalog(response, markdown=args.markdown), out)
    return EXIT_OK
