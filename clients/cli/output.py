"""What a client command prints: protobuf JSON with ``--json``, else the rendered text."""

from __future__ import annotations

import argparse
from typing import TextIO

from google.protobuf import json_format
from google.protobuf.message import Message


def to_json(message: Message, indent: int | None = 2) -> str:
    """Protobuf's JSON mapping with proto field names; zeros, false and empty lists are printed
    too, so a consumer never has to know proto3's defaults (a missing ``relative_gap`` is 0)."""
    return json_format.MessageToJson(
        message, preserving_proto_field_name=True, indent=indent, always_print_fields_with_no_presence=True
    )


def emit(args: argparse.Namespace, message: Message, text: str, out: TextIO) -> None:
    out.write((to_json(message) if args.json else text) + "\n")
