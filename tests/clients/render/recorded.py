"""Rendered text and Markdown of recorded responses, compared byte for byte with tests/clients/rendered/.

The responses are the five examples' plans (tests/golden/plans/) and a few answers of the other RPCs
recorded once in tests/clients/rendered/responses/ (an infeasible plan, a disaggregated plan hand-built
by ``tests/solver/planner/disagg_factories.py``, the catalogue cut to four entries per kind,
estimates, a break-even analysis, an evaluation and a sweep frontier), so the
rendering is checked without a server and independently of today's solver.

``python -m tests.clients.render.recorded --write`` records the outputs; a refactor must leave them
unchanged, a deliberate change of the output re-records them in the same commit.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from google.protobuf import json_format
from google.protobuf.message import Message

from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients import render

TESTS = Path(__file__).resolve().parents[2]
GOLDEN_PLANS = TESTS / "golden" / "plans"
RENDERED = TESTS / "clients" / "rendered"
RESPONSES = RENDERED / "responses"

M = TypeVar("M", bound=Message)


def _load(path: Path, message_type: type[M]) -> M:
    return json_format.ParseDict(json.loads(path.read_text(encoding="utf-8")), message_type())


def _plan(path: Path) -> Callable[[bool], str]:
    response = _load(path, api.PlanFleetResponse)
    return lambda markdown: render.render_plan(response.plan, response.provenance, markdown=markdown)


def _break_even(markdown: bool) -> str:
    response = _load(RESPONSES / "breakeven.json", api.AnalyzeBreakEvenResponse)
    # As the CLI prints it: the answer, then the provenance.
    text = render.render_break_even_answer(response, markdown=markdown)
    return text + render.render_provenance(response.provenance)


def _frontier(markdown: bool) -> str:
    frontier = _load(RESPONSES / "frontier.json", api.SweepFrontier)
    return render.render_frontier(frontier, "demand_multiplier", markdown=markdown)


def renderers() -> Iterator[tuple[str, Callable[[bool], str]]]:
    """(output name, markdown → rendered text) for every recorded response."""
    for path in sorted(GOLDEN_PLANS.glob("*.json")):
        yield f"plan_{path.stem}", _plan(path)
    yield "plan_infeasible", _plan(RESPONSES / "infeasible_plan.json")
    yield "plan_disaggregated", _plan(RESPONSES / "disaggregated_plan.json")
    catalog = _load(RESPONSES / "catalog.json", api.ListCatalogResponse)
    yield "catalog", lambda markdown: render.render_catalog(catalog, markdown=markdown)
    estimates = _load(RESPONSES / "estimates.json", api.EstimatePerformanceResponse)
    yield "estimates", lambda markdown: render.render_estimates(estimates, markdown=markdown)
    evaluation = _load(RESPONSES / "evaluate.json", api.EvaluateFleetResponse)
    yield "evaluation", lambda markdown: render.render_evaluation(evaluation, markdown=markdown)
    yield "break_even", _break_even
    yield "frontier", _frontier


def outputs() -> Iterator[tuple[Path, str]]:
    """(recorded output file, what the renderer gives today), text and Markdown of each response."""
    for name, render_fn in renderers():
        yield RENDERED / f"{name}.txt", render_fn(False) + "\n"
        yield RENDERED / f"{name}.md", render_fn(True) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", action="store_true", help="record the outputs as the new reference")
    args = parser.parse_args()
    changed = 0
    for path, text in outputs():
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        changed += 1
        if args.write:
            path.write_text(text, encoding="utf-8")
        sys.stdout.write(f"{'wrote' if args.write else 'differs'}: {path.relative_to(TESTS.parent)}\n")
    if changed and not args.write:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
