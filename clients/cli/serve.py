"""The commands that run the server: ``serve``, and the in-process server a client command without
``--target`` talks to. The only CLI module that imports the server (the solver, the pricebook, the
store): the parser and ``connection`` import it when one of those runs, so every other command —
and ``--help`` — starts without it."""

from __future__ import annotations

import argparse
import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from clients.cli.exits import EXIT_OK, CannotStart
from pricebook.errors import PricebookError
from service.interceptors import configure_logging
from service.server import serve, start_in_thread
from service.settings import ENVIRONMENT_ONLY, ServerSettings

SERVE_SETTINGS = tuple(name for name in ServerSettings.model_fields if name not in ENVIRONMENT_ONLY)
"""``serve`` flags that are server settings of the same name (unset ones keep the settings' default);
every setting is also a ``FLEETPLAN_*`` variable, secrets only the latter."""


def add_serve_flags(serve_parser: argparse.ArgumentParser) -> None:
    """One flag per server setting, and the command itself."""
    for name in SERVE_SETTINGS:
        field = ServerSettings.model_fields[name]
        flag = "--pricebook" if name == "pricebook_dir" else f"--{name.replace('_', '-')}"
        kind = bool if name == "log_json" or field.annotation is bool else _flag_type(field.annotation)
        default = "" if field.default is None or field.default_factory else f" (default {field.default})"
        options: dict[str, Any] = {"dest": name, "help": f"{field.description or name}{default}"}
        if kind is bool:
            options["action"] = argparse.BooleanOptionalAction
        else:
            options["type"] = kind
        serve_parser.add_argument(flag, **options)
    serve_parser.set_defaults(func=cmd_serve)


def _flag_type(annotation: Any) -> Any:
    """The parser type of a setting: its type without ``| None``."""
    for kind in (Path, float, int, str):
        if annotation is kind or kind in getattr(annotation, "__args__", ()):
            return kind
    return str


@contextlib.contextmanager
def _starting() -> Iterator[None]:
    """A pricebook that does not load: the server refuses to start half-configured."""
    try:
        yield
    except PricebookError as exc:
        msg = f"the pricebook does not load: {exc}"
        raise CannotStart(msg) from exc


def cmd_serve(args: argparse.Namespace, out: TextIO) -> int:
    overrides: dict[str, Any] = {}
    for key in SERVE_SETTINGS:
        value = getattr(args, key, None)
        if value is not None:
            overrides[key] = value
    settings = ServerSettings(**overrides)
    configure_logging(json=settings.log_json)
    with _starting():
        serve(settings)
    return EXIT_OK


def _uses_store(args: argparse.Namespace) -> bool:
    """``plans …``, ``plan --save`` and ``report --plan-id``: the commands that touch saved plans."""
    return args.command == "plans" or bool(getattr(args, "save", False) or getattr(args, "plan_id", None))


@contextlib.contextmanager
def in_process_server(args: argparse.Namespace, *, estimate_workers: bool = False) -> Iterator[str]:
    """The real server on a free loopback port for one client command; yields its address. Its
    estimates run in worker processes only with ``estimate_workers`` (their start costs seconds)."""
    configure_logging(level=logging.INFO if args.verbose else logging.WARNING)
    # One command's solve in the server's thread: starting solve workers would cost more than it saves.
    options: dict[str, Any] = {"solve_processes": 0}
    if not estimate_workers:
        options["estimate_processes"] = 0
    if getattr(args, "store", None):
        options["store"] = args.store
    elif not _uses_store(args):  # a command that saves or reads no plan opens none (nor SQLAlchemy)
        options["store"] = "none"
    # else $FLEETPLAN_STORE, or SQLite in the user's data directory
    settings = ServerSettings(
        address="127.0.0.1:0", pricebook_dir=args.pricebook, grace_period_s=1.0, **options
    )
    with _starting():
        server = start_in_thread(settings)
    try:
        yield server.address
    finally:
        server.stop(grace_s=0.5)
