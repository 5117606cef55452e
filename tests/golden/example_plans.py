"""Plan JSON of the five examples, as the real gRPC server answers them, with volatile fields removed.

``python -m tests.golden.example_plans --write`` records ``tests/golden/plans/<example>.json``;
``tests/golden/test_example_plans.py`` asserts that today's answers are byte-identical to them.
A refactor must leave them unchanged; a deliberate behaviour change re-records them in the same
commit, so the diff of the JSON shows what the change did to the answers.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import structlog
from google.protobuf import json_format

from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients.client import FleetPlannerClient
from clients.scenario import load_scenario
from service.server import start_in_thread
from service.settings import ServerSettings

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = REPO_ROOT / "examples"
RECORDED = Path(__file__).resolve().parent / "plans"

VOLATILE_KEYS = frozenset(
    {
        "solve_seconds",  # wall-clock time of a solve
        "stages",  # wall-clock and CPU time of each stage of the call
        "time_limit_s",  # what was left of the caller's budget when the solve started
        "seconds",
        "elapsed_seconds",
        "request_id",
        "served_at",
    }
)
"""Fields that depend on the machine's speed or the moment, not on the request."""


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in VOLATILE_KEYS}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def example_names() -> list[str]:
    return sorted(p.stem for p in EXAMPLES.glob("*.yaml"))


def plans_json(
    target_utilization: float | None = None, discount_rate: float | None = None
) -> Iterator[tuple[str, str]]:
    """(example name, canonical JSON of its PlanFleet response) for each example; with
    ``target_utilization``, every inference workload's is set to it first; with ``discount_rate``,
    the request's ``constraints.discount_rate_annual``."""
    server = start_in_thread(ServerSettings(address="127.0.0.1:0", grace_period_s=1.0, plan_cache_entries=0))
    try:
        with FleetPlannerClient(server.address, timeout_s=120) as client:
            for name in example_names():
                request = load_scenario(EXAMPLES / f"{name}.yaml", api.PlanFleetRequest)
                if discount_rate is not None:
                    request.constraints.discount_rate_annual = discount_rate
                if target_utilization is not None:
                    for w in request.workloads:
                        if w.HasField("inference"):
                            w.inference.target_utilization = target_utilization
                response = client.plan_fleet(request)
                data = json_format.MessageToDict(response, preserving_proto_field_name=True)
                yield name, json.dumps(_strip(data), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    finally:
        server.stop(grace_s=0.5)


def main() -> None:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", action="store_true", help="record the answers as the new reference")
    args = parser.parse_args()
    changed = 0
    for name, text in plans_json():
        path = RECORDED / f"{name}.json"
        same = path.exists() and path.read_text(encoding="utf-8") == text
        changed += not same
        sys.stdout.write(f"{name}: {'same' if same else 'DIFFERENT'}\n")
        if args.write:
            path.write_text(text, encoding="utf-8")
    raise SystemExit(1 if changed and not args.write else 0)


if __name__ == "__main__":
    main()
