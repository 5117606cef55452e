"""The client a command talks through: to ``--target``, or to the real server started in-process on a
free loopback port (the one place the CLI starts a server for a client command)."""

from __future__ import annotations

import argparse
import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path

import grpc

from clients.client import FleetPlannerClient
from service.interceptors import configure_logging
from service.security import channel_credentials, read_token
from service.server import start_in_thread
from service.settings import ServerSettings


def _credentials(args: argparse.Namespace) -> grpc.ChannelCredentials | None:
    """TLS when any of --ca-file/--cert-file/--key-file is given (never silently plaintext)."""
    if not (args.ca_file or args.cert_file or args.key_file):
        return None

    def path(value: str | None) -> Path | None:
        return Path(value) if value else None

    return channel_credentials(path(args.ca_file), path(args.cert_file), path(args.key_file))


@contextlib.contextmanager
def connect(args: argparse.Namespace) -> Iterator[FleetPlannerClient]:
    # --token-file, else $FLEETPLAN_TOKEN; never echoed anywhere.
    token = read_token(Path(args.token_file) if args.token_file else None)
    if args.target:
        with FleetPlannerClient(
            args.target, credentials=_credentials(args), timeout_s=args.timeout_s, bearer_token=token
        ) as client:
            yield client
        return

    configure_logging(level=logging.INFO if args.verbose else logging.WARNING)
    store = {"store": args.store} if getattr(args, "store", None) else {}  # else $FLEETPLAN_STORE / default
    settings = ServerSettings(
        address="127.0.0.1:0", pricebook_dir=args.pricebook, grace_period_s=1.0, **store
    )
    server = start_in_thread(settings)
    try:
        with FleetPlannerClient(server.address, timeout_s=args.timeout_s) as client:
            yield client
    finally:
        server.stop(grace_s=0.5)
