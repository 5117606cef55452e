"""The client a command talks through: to ``--target``, or to the real server started in-process on a
free loopback port (``clients.cli.serve``: imported only then, so that a command with ``--target``
never loads the server, the solver or the report stack)."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc

from api.credentials import channel_credentials, read_token
from clients.cli.progress import StatusLine, status_line
from clients.client import FleetPlannerClient

STARTING_STAGE = "starting the planner in-process"
"""The stage before a command's call when it runs the server itself (no ``--target``)."""


def _credentials(args: argparse.Namespace) -> grpc.ChannelCredentials | None:
    """TLS when any of --ca-file/--cert-file/--key-file is given (never silently plaintext)."""
    if not (args.ca_file or args.cert_file or args.key_file):
        return None

    def path(value: str | None) -> Path | None:
        return Path(value) if value else None

    return channel_credentials(path(args.ca_file), path(args.cert_file), path(args.key_file))


@contextlib.contextmanager
def connect(
    args: argparse.Namespace, *, estimate_workers: bool = False, status: StatusLine | None = None
) -> Iterator[FleetPlannerClient]:
    """``estimate_workers``: the in-process server estimates large requests in worker processes
    (a long batch file); else in its own threads (``service.estimate_pool``). ``status``: where
    starting the in-process server shows as a stage."""
    # --token-file, else $FLEETPLAN_TOKEN; never echoed anywhere.
    token = read_token(Path(args.token_file) if args.token_file else None)
    if args.target:
        with FleetPlannerClient(
            args.target, credentials=_credentials(args), timeout_s=args.timeout_s, bearer_token=token
        ) as client:
            yield client
        return
    if status is not None:
        status.show(STARTING_STAGE)
    from clients.cli.serve import in_process_server  # noqa: PLC0415 - see the module docstring

    with (
        in_process_server(args, estimate_workers=estimate_workers) as address,
        FleetPlannerClient(address, timeout_s=args.timeout_s) as client,
    ):
        yield client


@contextlib.contextmanager
def connect_for(args: argparse.Namespace, stage: str) -> Iterator[FleetPlannerClient]:
    """``connect`` for a long call, its progress on stderr (``clients.cli.progress``): starting the
    in-process server if any, then ``stage`` (the call); the status line ends with the block."""
    verbose = bool(getattr(args, "verbose", False))
    with status_line(sys.stderr, lines=verbose) as status, connect(args, status=status) as client:
        status.show(stage)
        yield client
