"""The ``fleetplan`` argument parser (``clients.cli.parser``)."""

from __future__ import annotations

import argparse

from clients.cli.parser import CommandParser, build_parser
from service.settings import ENVIRONMENT_ONLY, ServerSettings


def _serve_parser() -> argparse.ArgumentParser:
    for action in build_parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            parser = action.choices["serve"]
            assert isinstance(parser, CommandParser)
            parser.add_deferred_arguments()  # its flags are added when it is first used
            return parser
    raise AssertionError("no serve command")


def test_every_server_setting_is_a_serve_flag_except_secrets() -> None:
    dests = {action.dest for action in _serve_parser()._actions}
    assert set(ServerSettings.model_fields) - ENVIRONMENT_ONLY <= dests
    assert not ENVIRONMENT_ONLY & dests


def test_serve_flags_parse_to_their_settings_types() -> None:
    args = build_parser().parse_args(
        ["serve", "--max-message-bytes", "1048576", "--default-deadline-s", "5", "--no-log-json"]
    )
    assert (args.max_message_bytes, args.default_deadline_s, args.log_json) == (1048576, 5.0, False)
    assert args.address is None  # unset: the environment or the default decides
