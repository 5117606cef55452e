"""Provenance of an answer: which pricebook (after the request's overrides), performance model and
server produced it."""

from __future__ import annotations

from collections.abc import Sequence

from api.fleetplan.v1 import common_pb2
from pricebook.schema import Pricebook
from solver import planner
from solver.planner.summary import fx_note


def _provenance(
    version: str,
    content_hash: str,
    *,
    overrides_applied: Sequence[str],
    performance_model_version: str,
    server_version: str,
    fx_rate_note: str,
) -> common_pb2.Provenance:
    return common_pb2.Provenance(
        pricebook_version=version,
        pricebook_content_hash=content_hash,
        performance_model_version=performance_model_version,
        server_version=server_version,
        overrides_applied=list(overrides_applied),
        fx_rate_note=fx_rate_note,
    )


def provenance_to_proto(
    book: Pricebook,
    *,
    overrides_applied: Sequence[str] = (),
    performance_model_version: str = "",
    server_version: str = "",
) -> common_pb2.Provenance:
    return _provenance(
        book.version,
        book.content_hash,
        overrides_applied=overrides_applied,
        performance_model_version=performance_model_version,
        server_version=server_version,
        fx_rate_note=fx_note(book),
    )


def plan_provenance(
    result: planner.PlanResult, *, performance_model_version: str = "", server_version: str = ""
) -> common_pb2.Provenance:
    """Provenance of a plan: the pricebook *after* the request's overrides (version + hash)."""
    return _provenance(
        result.pricebook_version,
        result.pricebook_hash,
        overrides_applied=result.overrides_applied,
        performance_model_version=performance_model_version,
        server_version=server_version,
        fx_rate_note=result.fx_rate_note,
    )
