"""The ``fleetplan`` command line's arguments: one function per command."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

from clients.cli.commands import cmd_breakeven, cmd_catalog, cmd_evaluate, cmd_plan
from clients.cli.estimate import cmd_estimate
from clients.cli.measured import add_measurement_flags
from clients.cli.plans import (
    cmd_plans_delete,
    cmd_plans_diff,
    cmd_plans_list,
    cmd_plans_reprice,
    cmd_plans_show,
)
from clients.cli.report import add_report
from clients.cli.sweep import cmd_sweep
from clients.client import DEFAULT_TIMEOUT_S

Subparsers = argparse._SubParsersAction  # the type argparse gives no public name


class CommandParser(argparse.ArgumentParser):
    """A parser some of whose arguments are added only when it is used (``defer``): the flags of
    ``serve`` come from the server's settings, which the other commands never import."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deferred: list[Callable[[argparse.ArgumentParser], None]] = []

    def defer(self, add: Callable[[argparse.ArgumentParser], None]) -> None:
        self._deferred.append(add)

    def add_deferred_arguments(self) -> None:
        while self._deferred:
            self._deferred.pop(0)(self)

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        self.add_deferred_arguments()
        return super().parse_known_args(args, namespace)

    def format_usage(self) -> str:
        self.add_deferred_arguments()
        return super().format_usage()

    def format_help(self) -> str:
        self.add_deferred_arguments()
        return super().format_help()


def build_parser() -> argparse.ArgumentParser:
    parser = CommandParser(prog="fleetplan", description="Plan GPU fleets for LLM inference and training.")
    # Every command's parser is a CommandParser too (argparse makes them of the parent's class).
    sub = cast("Subparsers[argparse.ArgumentParser]", parser.add_subparsers(dest="command", required=True))
    _add_serve(sub)
    _add_plan(sub)
    _add_evaluate(sub)
    _add_estimate(sub)
    _add_breakeven(sub)
    _add_catalog(sub)
    _add_sweep(sub)
    add_report(sub, _client_options)
    _add_plans(sub)
    return parser


def _client_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--target", help="server host:port (default: start one in-process on loopback)")
    parser.add_argument("--timeout-s", type=float, default=DEFAULT_TIMEOUT_S, help="call deadline in seconds")
    parser.add_argument("--pricebook", type=Path, help="pricebook directory for the in-process server")
    parser.add_argument(
        "--store",
        help="plan store of the in-process server (URL, file or none; default for plans, plan --save"
        " and report --plan-id: $FLEETPLAN_STORE, else SQLite in the user's data directory; other"
        " commands: none)",
    )
    parser.add_argument("--ca-file", help="CA certificate (PEM) to verify a TLS server")
    parser.add_argument("--cert-file", help="client certificate (PEM) for mutual TLS")
    parser.add_argument("--key-file", help="client private key (PEM) for mutual TLS")
    parser.add_argument("--token-file", help="file holding a bearer token (default: $FLEETPLAN_TOKEN)")
    parser.add_argument("--verbose", action="store_true", help="show the in-process server's log lines")
    fmt = parser.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="protobuf JSON of the response (proto field names)")
    fmt.add_argument("--markdown", action="store_true", help="Markdown tables")


def _add_serve(sub: Subparsers[argparse.ArgumentParser]) -> None:
    serve = sub.add_parser(
        "serve",
        help="run the gRPC server",
        description="Every flag is also a FLEETPLAN_<NAME> environment variable (the token only that).",
    )
    assert isinstance(serve, CommandParser)
    serve.defer(_add_serve_flags)


def _add_serve_flags(serve: argparse.ArgumentParser) -> None:
    from clients.cli.serve import add_serve_flags  # noqa: PLC0415 - the server, when serve runs

    add_serve_flags(serve)


def _add_plan(sub: Subparsers[argparse.ArgumentParser]) -> None:
    plan = sub.add_parser("plan", help="plan the cheapest fleet for a scenario file")
    plan.add_argument("scenario", help="YAML with the shape of PlanFleetRequest")
    plan.add_argument(
        "--no-baselines", action="store_true", help="skip the best single-GPU-type fleets (a faster answer)"
    )
    plan.add_argument(
        "--no-sensitivity", action="store_true", help="skip the price and demand sensitivity (faster)"
    )
    plan.add_argument(
        "--csv", type=Path, metavar="DIR", help="also write the plan's tables as CSV files into DIR"
    )
    plan.add_argument(
        "--save", action="store_true", help="save the plan in the server's plan store; prints its id"
    )
    plan.add_argument("--label", help="with --save: a label to find the plan by")
    plan.add_argument("--tag", action="append", help="with --save: a tag (repeatable)")
    plan.add_argument("--request-id", help="with --save: idempotency key (a retry with it saves one plan)")
    add_measurement_flags(plan)
    _client_options(plan)
    plan.set_defaults(func=cmd_plan)


def _add_evaluate(sub: Subparsers[argparse.ArgumentParser]) -> None:
    evaluate = sub.add_parser("evaluate", help="evaluate a given fleet against a scenario")
    evaluate.add_argument(
        "scenario", help="YAML with the shape of EvaluateFleetRequest (PlanFleetRequest + fleet)"
    )
    evaluate.add_argument(
        "--fleet",
        help="GPU:COUNT[:MODE[:SERVER[:OFFER]]],… or GPU:COUNT:MODE:OFFER for rentals (mode"
        " buy|reserved|on_demand|owned, default buy; server model and offer as a plan names them,"
        " default the cheapest packing and offer mix)",
    )
    evaluate.add_argument(
        "--no-compare", action="store_true", help="skip solving the optimal plan for comparison"
    )
    add_measurement_flags(evaluate)
    _client_options(evaluate)
    evaluate.set_defaults(func=cmd_evaluate)


def _add_estimate(sub: Subparsers[argparse.ArgumentParser]) -> None:
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
    estimate.add_argument(
        "--arrival",
        choices=["steady", "burst"],
        help="with --concurrency: steady closed loop (default) or all requests arriving at once",
    )
    estimate.add_argument("--engine-version", help="engine release, e.g. 0.11.2 (its documented defaults)")
    estimate.add_argument("--max-num-seqs", type=int, help="engine cap on concurrent sequences")
    estimate.add_argument("--max-batched-tokens", type=int, help="engine per-iteration token budget")
    estimate.add_argument("--request-rate", type=float, help="open-loop requests per second")
    estimate.add_argument("--prefix-hit-rate", type=float)
    estimate.add_argument("--method", help="training: full, lora or qlora")
    estimate.add_argument("--tokens", type=float, help="training tokens of one run")
    estimate.add_argument("--seq-len", type=int)
    estimate.add_argument(
        "--sla-ttft-p95-ms", type=float, help="also give one replica's capacity at this p95 TTFT"
    )
    estimate.add_argument("--sla-tpot-p95-ms", type=float, help="… at this p95 TPOT")
    estimate.add_argument("--sla-min-per-user-tok-s", type=float, help="… at this per-user decode speed")
    _add_disaggregated_flags(estimate)
    add_measurement_flags(estimate)
    _client_options(estimate)
    estimate.set_defaults(func=cmd_estimate)


def _add_disaggregated_flags(estimate: argparse.ArgumentParser) -> None:
    """Disaggregated serving: any of these makes the case a prefill pool and a decode pool."""
    for role in ("prefill", "decode"):
        estimate.add_argument(f"--{role}-gpu", help=f"disaggregated: the {role} role's GPU (default --gpu)")
        estimate.add_argument(f"--{role}-tp", type=int, help=f"disaggregated: {role} attention TP per rank")
        estimate.add_argument(f"--{role}-workers", type=int, help=f"disaggregated: {role} engines")
        estimate.add_argument(f"--{role}-ep", type=int, help=f"disaggregated: {role} expert parallelism")
        estimate.add_argument(
            f"--{role}-attention-dp", type=int, help=f"disaggregated: {role} attention data-parallel ranks"
        )


def _add_breakeven(sub: Subparsers[argparse.ArgumentParser]) -> None:
    breakeven = sub.add_parser("breakeven", help="buy vs rent vs API")
    breakeven.add_argument(
        "scenario", help="YAML with the shape of AnalyzeBreakEvenRequest (workloads, constraints)"
    )
    breakeven.add_argument("--gpu", help="analyse this GPU type instead of the optimal plan")
    breakeven.add_argument("--utilization", type=float, help="utilization (0–1] to assume for buy vs rent")
    _client_options(breakeven)
    breakeven.set_defaults(func=cmd_breakeven)


def _add_catalog(sub: Subparsers[argparse.ArgumentParser]) -> None:
    catalog = sub.add_parser("catalog", help="list the pricebook with sources and dates")
    catalog.add_argument(
        "--kind", action="append", help="gpu, server, offer, api_price, model, site (repeatable)"
    )
    _client_options(catalog)
    catalog.set_defaults(func=cmd_catalog)


def _add_plans(sub: Subparsers[argparse.ArgumentParser]) -> None:
    plans = sub.add_parser("plans", help="saved plans: list, show, diff, reprice, delete")
    commands = plans.add_subparsers(dest="plans_command", required=True)
    listing = commands.add_parser("list", help="saved plans, newest first")
    listing.add_argument("--label", help="only plans with this label")
    listing.add_argument("--tag", help="only plans with this tag")
    listing.add_argument("--since", help="only plans saved at or after this date / ISO time")
    listing.add_argument("--until", help="only plans saved before this date / ISO time")
    listing.add_argument("--page-size", type=int, help="plans per page (default 50, at most 200)")
    listing.add_argument("--page-token", help="next page (as printed by the previous page)")
    listing.set_defaults(func=cmd_plans_list)
    one_plan = {
        "show": ("a saved plan: its record and the full plan", cmd_plans_show),
        "reprice": ("a saved plan's fleet against today's pricebook and model", cmd_plans_reprice),
        "delete": ("remove a saved plan", cmd_plans_delete),
    }
    for name, (text, func) in one_plan.items():
        command = commands.add_parser(name, help=text)
        command.add_argument("plan_id")
        command.set_defaults(func=func)
    diff = commands.add_parser("diff", help="what changed between two saved plans")
    diff.add_argument("base_plan_id")
    diff.add_argument("other_plan_id")
    diff.set_defaults(func=cmd_plans_diff)
    for command in (listing, diff, *(commands.choices[n] for n in one_plan)):
        _client_options(command)


def _add_sweep(sub: Subparsers[argparse.ArgumentParser]) -> None:
    sweep = sub.add_parser("sweep", help="solve a scenario over a range of budgets, SLAs or demand")
    sweep.add_argument("scenario", help="YAML with the shape of PlanFleetRequest")
    sweep.add_argument(
        "--dimension",
        required=True,
        help="capex_budget, demand_multiplier, tpot_p95_ms, ttft_p95_ms, min_per_user_tok_s or "
        "discount_rate_annual",
    )
    sweep.add_argument("--values", help="comma-separated values")
    sweep.add_argument("--range", help="START:STOP:POINTS")
    sweep.add_argument("--workload", help="for SLA dimensions: the workload to vary (default all)")
    sweep.add_argument("--csv", help="also write the frontier as CSV")
    add_measurement_flags(sweep)
    _client_options(sweep)
    sweep.set_defaults(func=cmd_sweep)
