"""The ``fleetplan`` entry point: parse the command line, run the command, turn errors into a message
on stderr and an exit status (see ``clients.cli`` for the commands)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO

import grpc

from api.credentials import SecurityConfigError
from clients.cli.estimate import flag_name
from clients.cli.exits import EXIT_ERROR, EXIT_INVALID, CannotStart
from clients.cli.parser import build_parser
from clients.client import FleetPlanError
from clients.scenario import ScenarioError


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    args = build_parser().parse_args(argv)
    stream = out or sys.stdout
    try:
        return int(args.func(args, stream))
    except ScenarioError as exc:
        sys.stderr.write(f"fleetplan: invalid input: {exc}\n")
        return EXIT_INVALID
    except FleetPlanError as exc:
        sys.stderr.write(rpc_error_message(args, exc))
        return EXIT_INVALID if exc.code == grpc.StatusCode.INVALID_ARGUMENT else EXIT_ERROR
    except CannotStart as exc:  # e.g. a pricebook that does not load: never half-configured
        sys.stderr.write(f"fleetplan: cannot start: {exc}\n")
        return EXIT_ERROR
    except OSError as exc:
        sys.stderr.write(f"fleetplan: {exc}\n")
        return EXIT_ERROR
    except SecurityConfigError as exc:  # TLS/token files that cannot be used as given
        sys.stderr.write(f"fleetplan: {exc}\n")
        return EXIT_ERROR


def _where(field: str, from_flags: bool, prefix: str, inside: str, args: argparse.Namespace) -> str:
    """A violated field as the user wrote it; a measured point's with its ``--measurements`` file(s)."""
    files = getattr(args, "measurements", None)
    if files and "measurements[" in field:
        return f"{', '.join(map(str, files))}: {field[field.index('measurements[') :]}"
    return flag_name(field) if from_flags else prefix + field.removeprefix(inside)


def rpc_error_message(args: argparse.Namespace, exc: FleetPlanError) -> str:
    """The server's refusal; each violated field named as the user wrote it: the scenario file's
    path, or the flag of a case given by flags."""
    if not exc.violations:
        return f"fleetplan: {exc.code.name}: {exc.message}\n"
    scenario = getattr(args, "scenario", None)
    prefix = f"{scenario}: " if scenario else ""
    from_flags = args.command == "estimate" and not args.cases
    # ExportPlan carries the scenario as its ``request`` field: name the field as the file has it.
    inside = "request." if args.command == "report" else ""
    lines = [f"fleetplan: {exc.code.name}: the request is invalid"]
    lines += [
        f"  {_where(v.field, from_flags, prefix, inside, args)}: {v.description}" for v in exc.violations
    ]
    return "\n".join(lines) + "\n"
