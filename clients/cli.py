"""The ``fleetplan`` command line.

    fleetplan serve [--address 127.0.0.1:50051] [--pricebook DIR]
    fleetplan plan SCENARIO.yaml                      # PlanFleetRequest-shaped YAML
    fleetplan evaluate SCENARIO.yaml [--fleet h200-sxm:4:buy,rtx-pro-6000-server:16]
    fleetplan estimate --gpu h100-sxm --model ministral-3-14b --precision fp8 --input-len 7000 \
        --output-len 1024 --concurrency 50            # or: --cases FILE.jsonl [--output FILE.jsonl]
    fleetplan breakeven SCENARIO.yaml [--gpu h200-sxm] [--utilization 0.6]
    fleetplan catalog [--kind gpu --kind offer]
    fleetplan sweep SCENARIO.yaml --dimension capex_budget --values 1e8,2e8,3e8 [--csv frontier.csv]

Client commands talk to ``--target host:port``; without it they start the real server in-process
on a free loopback port and call it through the real client. Output: readable tables (default),
``--json`` (protobuf JSON mapping, proto field names) or ``--markdown``.

Exit status: 0 success; 2 invalid input (the message names the file/field and the reason);
3 the plan is infeasible or found no solution; 1 any other error.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import logging
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

import grpc
from google.protobuf import json_format
from google.protobuf.message import Message

from api.fleetplan.v1 import catalog_pb2, common_pb2, performance_pb2, plan_pb2, scenario_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients import render
from clients.client import DEFAULT_TIMEOUT_S, FleetPlanError, FleetPlannerClient
from clients.scenario import ScenarioError, case_from_json, load_scenario, load_yaml, parse_scenario
from pricebook.errors import PricebookError
from service.interceptors import configure_logging
from service.security import SecurityConfigError, channel_credentials, read_token
from service.server import serve, start_in_thread
from service.settings import ServerSettings

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_INVALID = 2
EXIT_NO_PLAN = 3


# --------------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------------


def _to_json(message: Message, indent: int | None = 2) -> str:
    """Protobuf's JSON mapping with proto field names; zeros, false and empty lists are printed
    too, so a consumer never has to know proto3's defaults (a missing ``relative_gap`` is 0)."""
    return json_format.MessageToJson(
        message, preserving_proto_field_name=True, indent=indent, always_print_fields_with_no_presence=True
    )


def _emit(args: argparse.Namespace, message: Message, text: str, out: TextIO) -> None:
    out.write((_to_json(message) if args.json else text) + "\n")


# --------------------------------------------------------------------------------------------
# Connection: --target or an in-process server
# --------------------------------------------------------------------------------------------


def _credentials(args: argparse.Namespace) -> grpc.ChannelCredentials | None:
    """TLS when any of --ca-file/--cert-file/--key-file is given (never silently plaintext)."""
    if not (args.ca_file or args.cert_file or args.key_file):
        return None

    def path(value: str | None) -> Path | None:
        return Path(value) if value else None

    return channel_credentials(path(args.ca_file), path(args.cert_file), path(args.key_file))


@contextlib.contextmanager
def _client(args: argparse.Namespace) -> Iterator[FleetPlannerClient]:
    # --token-file, else $FLEETPLAN_TOKEN; never echoed anywhere.
    token = read_token(Path(args.token_file) if args.token_file else None)
    if args.target:
        with FleetPlannerClient(
            args.target, credentials=_credentials(args), timeout_s=args.timeout_s, bearer_token=token
        ) as client:
            yield client
        return

    configure_logging(level=logging.INFO if args.verbose else logging.WARNING)
    settings = ServerSettings(address="127.0.0.1:0", pricebook_dir=args.pricebook, grace_period_s=1.0)
    server = start_in_thread(settings)
    try:
        with FleetPlannerClient(server.address, timeout_s=args.timeout_s) as client:
            yield client
    finally:
        server.stop(grace_s=0.5)


# --------------------------------------------------------------------------------------------
# Commands
# --------------------------------------------------------------------------------------------


def cmd_serve(args: argparse.Namespace, out: TextIO) -> int:

    overrides: dict[str, Any] = {"address": args.address}
    for key in (
        "pricebook_dir",
        "grace_period_s",
        "tls_cert_file",
        "tls_key_file",
        "tls_client_ca_file",
        "token_file",
        "solve_slots",
        "max_queued_solves",
        "plan_cache_entries",
    ):
        value = getattr(args, key, None)
        if value is not None:
            overrides[key] = value
    settings = ServerSettings(**overrides)
    configure_logging(json=settings.log_json)
    serve(settings)
    return EXIT_OK


def _plan_status_exit(plan: plan_pb2.Plan) -> int:
    has_plan = plan.status in (plan_pb2.PLAN_STATUS_OPTIMAL, plan_pb2.PLAN_STATUS_FEASIBLE)
    return EXIT_OK if has_plan else EXIT_NO_PLAN


def cmd_plan(args: argparse.Namespace, out: TextIO) -> int:
    request = load_scenario(Path(args.scenario), api.PlanFleetRequest)
    with _client(args) as client:
        response = client.plan_fleet(request)
    _emit(args, response, render.render_plan(response.plan, response.provenance, markdown=args.markdown), out)
    return _plan_status_exit(response.plan)


def _mode_names() -> dict[str, common_pb2.AcquisitionMode.ValueType]:
    return {name: common_pb2.AcquisitionMode.Value(name) for name in common_pb2.AcquisitionMode.keys()[1:]}


_MODE_NAMES = _mode_names()


def _parse_fleet(spec: str) -> scenario_pb2.Fleet:
    """``h200-sxm:4[:buy],rtx-pro-6000-server:16`` → Fleet."""
    fleet = scenario_pb2.Fleet()
    for part in filter(None, (p.strip() for p in spec.split(","))):
        pieces = part.split(":")
        if len(pieces) not in (2, 3) or not pieces[1].isdigit():
            raise ScenarioError("--fleet", part, "expected GPU:COUNT[:MODE], e.g. h200-sxm:4:buy")
        mode = pieces[2] if len(pieces) == 3 else "buy"
        owned = mode == "owned"
        enum_name = f"ACQUISITION_MODE_{'BUY' if owned else mode.upper().replace('-', '_')}"
        if enum_name not in _MODE_NAMES:
            raise ScenarioError(
                "--fleet", part, f"unknown mode {mode!r}; use buy, reserved, on_demand or owned"
            )
        fleet.items.append(
            scenario_pb2.FleetItem(
                gpu_id=pieces[0], count=int(pieces[1]), mode=_MODE_NAMES[enum_name], owned=owned
            )
        )
    return fleet


def cmd_evaluate(args: argparse.Namespace, out: TextIO) -> int:
    path = Path(args.scenario)
    data = load_yaml(path)
    request = parse_scenario(data, api.EvaluateFleetRequest, str(path))
    if args.fleet:
        request.fleet.CopyFrom(_parse_fleet(args.fleet))
    request.compare_with_optimal = not args.no_compare
    with _client(args) as client:
        response = client.evaluate_fleet(request)
    _emit(args, response, render.render_evaluation(response, markdown=args.markdown), out)
    return EXIT_OK if response.feasible else EXIT_NO_PLAN


def _case_from_flags(args: argparse.Namespace) -> performance_pb2.PerformanceCase:
    line: dict[str, Any] = {"mode": args.mode}
    for key in (
        "gpu",
        "num_gpus",
        "tp",
        "model",
        "precision",
        "kv_precision",
        "engine",
        "input_len",
        "output_len",
        "request_rate",
        "prefix_hit_rate",
        "method",
        "tokens",
        "seq_len",
    ):
        value = getattr(args, key)
        if value is not None:
            line[key] = value
    if args.concurrency is not None:
        line["concurrency"] = "max" if args.concurrency == "max" else int(args.concurrency)
    if args.params_b is not None:
        line.pop("model", None)
        line["model_spec"] = {
            "params_b": args.params_b,
            **({"active_params_b": args.active_params_b} if args.active_params_b else {}),
        }
    return case_from_json(line, "flags")


_FILE_NAMES = {
    "gpu_id": "gpu",
    "model.model_id": "model",
    "model": "model",
    "request_rate_per_s": "request_rate",
    "max_concurrency": "concurrency",
}


def _file_field(proto_path: str) -> str:
    """``cases[3].model.spec.layers`` → ``model_spec.layers`` (the batch file's own field names)."""
    field = (
        proto_path.split("].", 1)[1] if proto_path.startswith("cases[") and "]." in proto_path else proto_path
    )
    if field.startswith("model.spec."):
        return "model_spec." + field.removeprefix("model.spec.")
    return _FILE_NAMES.get(field, field)


def _flag_name(proto_path: str) -> str:
    """``cases[0].input_len`` → ``--input-len`` (errors of a case given by flags)."""
    field = _file_field(proto_path)
    if field.startswith("model_spec."):
        field = field.removeprefix("model_spec.")
    return "--" + field.replace("_", "-")


def _result_row(result: performance_pb2.PerformanceResult, source: dict[str, Any]) -> dict[str, Any]:
    """One output line of the batch file: the case's fields plus the estimate (issue #4 names)."""
    row = dict(source)
    outcome = result.WhichOneof("outcome")
    if outcome is None or outcome == "error":
        row["error"] = {"field": _file_field(result.error.field), "reason": result.error.reason}
        return row
    fields = json_format.MessageToDict(
        getattr(result, outcome), preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    row.update(fields)
    if result.architecture_assumed:
        row["architecture_assumed"] = True
    if result.warnings:
        row["warnings"] = list(result.warnings)
    return row


def cmd_estimate(args: argparse.Namespace, out: TextIO) -> int:
    if not args.cases:
        request = api.EstimatePerformanceRequest(cases=[_case_from_flags(args)])
        with _client(args) as client:
            response = client.estimate_performance(request)
        _emit(args, response, render.render_estimates(response, markdown=args.markdown), out)
        return EXIT_OK
    path = Path(args.cases)
    sources: list[dict[str, Any]] = []
    cases: list[performance_pb2.PerformanceCase | None] = []
    rows: list[dict[str, Any] | None] = []
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not text.strip():
            continue
        where = f"{path}:{number}"
        try:
            line = json.loads(text)
        except json.JSONDecodeError as exc:
            sources.append({})
            cases.append(None)
            rows.append({"line": number, "error": {"field": "", "reason": f"not valid JSON: {exc.msg}"}})
            continue
        if not isinstance(line, dict):
            line = {}
            error: dict[str, Any] | None = {"field": "", "reason": "each line must be a JSON object"}
        else:
            error = None
        sources.append(line)
        try:
            cases.append(None if error else case_from_json(line, where))
            rows.append({**line, "line": number, "error": error} if error else None)
        except ScenarioError as exc:
            cases.append(None)
            rows.append({**line, "error": {"field": _file_field(exc.path), "reason": exc.reason}})
    valid = [c for c in cases if c is not None]
    results: list[performance_pb2.PerformanceResult] = []
    if valid:
        with _client(args) as client:
            results = list(client.estimate_performance(valid, allow_partial_failure=True).results)
    it = iter(results)
    lines = []
    for case, source, row in zip(cases, sources, rows, strict=True):
        lines.append(row if case is None else _result_row(next(it), source))
    target = open(args.output, "w", encoding="utf-8") if args.output else out  # noqa: SIM115
    try:
        for line in lines:
            target.write(json.dumps(line, ensure_ascii=False) + "\n")
    finally:
        if target is not out:
            target.close()
    return EXIT_OK


def cmd_breakeven(args: argparse.Namespace, out: TextIO) -> int:
    path = Path(args.scenario)
    data = load_yaml(path)
    if isinstance(data, dict):
        # A plan scenario works as is: its solver options do not apply to a break-even analysis.
        data = {k: v for k, v in data.items() if k != "solver_options"}
    request = parse_scenario(data, api.AnalyzeBreakEvenRequest, str(path))
    if args.gpu:
        request.gpu_id = args.gpu
    if args.utilization is not None:
        request.utilization = args.utilization
    with _client(args) as client:
        response = client.analyze_break_even(request)
    text = render.render_break_even_answer(response, markdown=args.markdown)
    _emit(args, response, text + render.render_provenance(response.provenance), out)
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
    with _client(args) as client:
        response = client.list_catalog(kinds)
    _emit(args, response, render.render_catalog(response, markdown=args.markdown), out)
    return EXIT_OK


def cmd_sweep(args: argparse.Namespace, out: TextIO) -> int:
    base = load_scenario(Path(args.scenario), api.PlanFleetRequest)
    request = api.SweepPlansRequest(base=base, workload_name=args.workload or "")
    name = f"SWEEP_DIMENSION_{args.dimension.upper()}"
    if name not in api.SweepDimension.DESCRIPTOR.values_by_name:
        raise ScenarioError(
            "--dimension",
            args.dimension,
            "unknown; use capex_budget, demand_multiplier, tpot_p95_ms, ttft_p95_ms or min_per_user_tok_s",
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
    frontier: api.SweepFrontier | None = None
    messages: list[api.SweepPlansResponse] = []
    with _client(args) as client:
        for message in client.sweep_plans(request):
            messages.append(message)
            event = message.WhichOneof("event")
            if event == "progress" and not args.json:
                done, total = message.progress.points_done, max(1, message.progress.points_total)
                bar = "#" * int(30 * done / total)
                sys.stderr.write(f"\r[{bar:<30}] {done}/{total} points")
                sys.stderr.flush()
            elif event == "frontier":
                frontier = message.frontier
    if not args.json:
        sys.stderr.write("\n")
    if frontier is None:
        raise FleetPlanError(grpc.StatusCode.UNKNOWN, "the sweep ended without a frontier")
    if args.csv:
        with open(args.csv, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow([args.dimension, "status", "horizon_tco", "currency", "fleet", "pareto_optimal"])
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
    if args.json:
        out.write("\n".join(_to_json(m, indent=None) for m in messages) + "\n")
    else:
        out.write(render.render_frontier(frontier, args.dimension, markdown=args.markdown) + "\n")
    return EXIT_OK


# --------------------------------------------------------------------------------------------
# Argument parsing
# --------------------------------------------------------------------------------------------


def _client_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--target", help="server host:port (default: start one in-process on loopback)")
    parser.add_argument("--timeout-s", type=float, default=DEFAULT_TIMEOUT_S, help="call deadline in seconds")
    parser.add_argument("--pricebook", type=Path, help="pricebook directory for the in-process server")
    parser.add_argument("--ca-file", help="CA certificate (PEM) to verify a TLS server")
    parser.add_argument("--cert-file", help="client certificate (PEM) for mutual TLS")
    parser.add_argument("--key-file", help="client private key (PEM) for mutual TLS")
    parser.add_argument("--token-file", help="file holding a bearer token (default: $FLEETPLAN_TOKEN)")
    parser.add_argument("--verbose", action="store_true", help="show the in-process server's log lines")
    fmt = parser.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="protobuf JSON of the response (proto field names)")
    fmt.add_argument("--markdown", action="store_true", help="Markdown tables")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fleetplan", description="Plan GPU fleets for LLM inference and training."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the gRPC server")
    serve.add_argument("--address", default="127.0.0.1:50051", help="host:port to listen on")
    serve.add_argument(
        "--pricebook", dest="pricebook_dir", type=Path, help="pricebook directory (default: embedded)"
    )
    serve.add_argument("--grace-period-s", type=float, help="shutdown grace period")
    serve.add_argument("--tls-cert-file", type=Path)
    serve.add_argument("--tls-key-file", type=Path)
    serve.add_argument(
        "--tls-client-ca-file", type=Path, help="require client certificates signed by this CA"
    )
    serve.add_argument("--token-file", type=Path, help="accepted bearer tokens, one per line")
    serve.add_argument("--solve-slots", type=int, help="solves that run at once (default: from the cores)")
    serve.add_argument("--max-queued-solves", type=int, help="solves that may wait for a slot")
    serve.add_argument(
        "--plan-cache-entries", type=int, help="complete answers kept for identical requests (0 = off)"
    )
    serve.set_defaults(func=cmd_serve)

    plan = sub.add_parser("plan", help="plan the cheapest fleet for a scenario file")
    plan.add_argument("scenario", help="YAML with the shape of PlanFleetRequest")
    _client_options(plan)
    plan.set_defaults(func=cmd_plan)

    evaluate = sub.add_parser("evaluate", help="evaluate a given fleet against a scenario")
    evaluate.add_argument(
        "scenario", help="YAML with the shape of EvaluateFleetRequest (PlanFleetRequest + fleet)"
    )
    evaluate.add_argument(
        "--fleet", help="GPU:COUNT[:MODE],… (mode buy|reserved|on_demand|owned; default buy)"
    )
    evaluate.add_argument(
        "--no-compare", action="store_true", help="skip solving the optimal plan for comparison"
    )
    _client_options(evaluate)
    evaluate.set_defaults(func=cmd_evaluate)

    estimate = sub.add_parser("estimate", help="performance what-ifs (one case by flags, or a JSONL file)")
    estimate.add_argument("--cases", help="JSONL file of cases (issue #4 field names)")
    estimate.add_argument("--output", help="write JSONL results here (default stdout)")
    estimate.add_argument("--mode", choices=["infer", "train"], default="infer")
    estimate.add_argument("--gpu")
    estimate.add_argument("--num-gpus", type=int)
    estimate.add_argument("--tp", type=int)
    estimate.add_argument("--model", help="catalogue model id or alias")
    estimate.add_argument("--params-b", type=float, help="size-only model: total parameters (billions)")
    estimate.add_argument(
        "--active-params-b", type=float, help="size-only MoE model: active parameters (billions)"
    )
    estimate.add_argument("--precision")
    estimate.add_argument("--kv-precision")
    estimate.add_argument("--engine")
    estimate.add_argument("--input-len", type=int)
    estimate.add_argument("--output-len", type=int)
    estimate.add_argument("--concurrency", help="closed-loop users, or 'max' for offline maximum throughput")
    estimate.add_argument("--request-rate", type=float, help="open-loop requests per second")
    estimate.add_argument("--prefix-hit-rate", type=float)
    estimate.add_argument("--method", help="training: full, lora or qlora")
    estimate.add_argument("--tokens", type=float, help="training tokens of one run")
    estimate.add_argument("--seq-len", type=int)
    _client_options(estimate)
    estimate.set_defaults(func=cmd_estimate)

    breakeven = sub.add_parser("breakeven", help="buy vs rent vs API")
    breakeven.add_argument(
        "scenario", help="YAML with the shape of AnalyzeBreakEvenRequest (workloads, constraints)"
    )
    breakeven.add_argument("--gpu", help="analyse this GPU type instead of the optimal plan")
    breakeven.add_argument("--utilization", type=float, help="utilization (0–1] to assume for buy vs rent")
    _client_options(breakeven)
    breakeven.set_defaults(func=cmd_breakeven)

    catalog = sub.add_parser("catalog", help="list the pricebook with sources and dates")
    catalog.add_argument(
        "--kind", action="append", help="gpu, server, offer, api_price, model, site (repeatable)"
    )
    _client_options(catalog)
    catalog.set_defaults(func=cmd_catalog)

    sweep = sub.add_parser("sweep", help="solve a scenario over a range of budgets, SLAs or demand")
    sweep.add_argument("scenario", help="YAML with the shape of PlanFleetRequest")
    sweep.add_argument(
        "--dimension",
        required=True,
        help="capex_budget, demand_multiplier, tpot_p95_ms, ttft_p95_ms or min_per_user_tok_s",
    )
    sweep.add_argument("--values", help="comma-separated values")
    sweep.add_argument("--range", help="START:STOP:POINTS")
    sweep.add_argument("--workload", help="for SLA dimensions: the workload to vary (default all)")
    sweep.add_argument("--csv", help="also write the frontier as CSV")
    _client_options(sweep)
    sweep.set_defaults(func=cmd_sweep)
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    args = build_parser().parse_args(argv)
    stream = out or sys.stdout
    try:
        return int(args.func(args, stream))
    except ScenarioError as exc:
        sys.stderr.write(f"fleetplan: invalid input: {exc}\n")
        return EXIT_INVALID
    except FleetPlanError as exc:
        scenario = getattr(args, "scenario", None)
        prefix = f"{scenario}: " if scenario and exc.violations else ""
        from_flags = args.command == "estimate" and not args.cases
        if exc.violations:
            lines = [f"fleetplan: {exc.code.name}: the request is invalid"]
            lines += [
                f"  {_flag_name(v.field) if from_flags else prefix + v.field}: {v.description}"
                for v in exc.violations
            ]
            sys.stderr.write("\n".join(lines) + "\n")
        else:
            sys.stderr.write(f"fleetplan: {exc.code.name}: {exc.message}\n")
        return EXIT_INVALID if exc.code == grpc.StatusCode.INVALID_ARGUMENT else EXIT_ERROR
    except PricebookError as exc:  # the server refuses to start half-configured
        sys.stderr.write(f"fleetplan: cannot start: the pricebook does not load: {exc}\n")
        return EXIT_ERROR
    except OSError as exc:
        sys.stderr.write(f"fleetplan: {exc}\n")
        return EXIT_ERROR
    except SecurityConfigError as exc:  # TLS/token files that cannot be used as given
        sys.stderr.write(f"fleetplan: {exc}\n")
        return EXIT_ERROR


if __name__ == "__main__":
    raise SystemExit(main())
