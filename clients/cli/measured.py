"""``--measurements FILE`` (repeatable) and ``--measured-as KEY=VALUE,…`` on ``estimate``, ``plan``,
``evaluate``, ``report`` and ``sweep``: the user's own benchmark runs, sent as the request's
``measurements`` (issue 29)."""

from __future__ import annotations

import argparse
from collections.abc import MutableSequence
from pathlib import Path
from typing import Any

from clients.measurements import load_measurements
from clients.scenario import ScenarioError


def add_measurement_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--measurements",
        action="append",
        type=Path,
        metavar="FILE",
        help="your own benchmark runs: fleetplan JSONL of measured points, a vLLM bench serve result,"
        " an AIPerf profile_export_aiperf.json or a GuideLLM benchmarks.json (repeatable); they"
        " correct the deployments they measured",
    )
    parser.add_argument(
        "--measured-as",
        metavar="KEY=VALUE,…",
        help="what the measurement files do not say: gpu=…,tp=…,precision=…,engine=… (also model,"
        " num_gpus, kv_precision, engine_version)",
    )


def attach_measurements(args: argparse.Namespace, measurements: MutableSequence[Any]) -> None:
    """Append the points of every ``--measurements`` file to a request's ``measurements``."""
    files: list[Path] = getattr(args, "measurements", None) or []
    if not files:
        if getattr(args, "measured_as", None):
            raise ScenarioError("--measured-as", "", "describes measurement files: give --measurements FILE")
        return
    for path in files:
        measurements.extend(load_measurements(path, args.measured_as))
