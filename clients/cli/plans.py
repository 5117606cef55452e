"""``fleetplan plans list|show|diff|reprice|delete``: saved plans (the PlanStore service)."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import TextIO

from google.protobuf import timestamp_pb2

from api.fleetplan.v1 import plan_store_pb2 as store_api
from clients.cli.connection import connect, connect_for
from clients.cli.exits import EXIT_NO_PLAN, EXIT_OK
from clients.cli.output import emit
from clients.render.plans import (
    render_comparison,
    render_plan_list,
    render_repricing,
    render_saved_plan,
)
from clients.scenario import ScenarioError


def _timestamp(flag: str, text: str) -> timestamp_pb2.Timestamp:
    """``2026-03-01`` or an ISO date-time (UTC unless it says otherwise)."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as exc:
        raise ScenarioError(flag, text, "expected a date (2026-03-01) or an ISO date-time") from exc
    stamp = timestamp_pb2.Timestamp()
    stamp.FromDatetime(moment if moment.tzinfo else moment.replace(tzinfo=UTC))
    return stamp


def list_request(args: argparse.Namespace) -> store_api.ListPlansRequest:
    request = store_api.ListPlansRequest(
        page_size=args.page_size or 0,
        page_token=args.page_token or "",
        label=args.label or "",
        tag=args.tag or "",
    )
    if args.since:
        request.created_after.CopyFrom(_timestamp("--since", args.since))
    if args.until:
        request.created_before.CopyFrom(_timestamp("--until", args.until))
    return request


def cmd_plans_list(args: argparse.Namespace, out: TextIO) -> int:
    with connect(args) as client:
        response = client.list_plans(list_request(args))
    emit(args, response, render_plan_list(response, markdown=args.markdown), out)
    return EXIT_OK


def cmd_plans_show(args: argparse.Namespace, out: TextIO) -> int:
    with connect(args) as client:
        plan = client.get_plan(args.plan_id)
    emit(args, plan, render_saved_plan(plan, markdown=args.markdown), out)
    return EXIT_OK


def cmd_plans_diff(args: argparse.Namespace, out: TextIO) -> int:
    with connect(args) as client:
        response = client.compare_plans(args.base_plan_id, args.other_plan_id)
    emit(args, response, render_comparison(response, markdown=args.markdown), out)
    return EXIT_OK


def cmd_plans_reprice(args: argparse.Namespace, out: TextIO) -> int:
    with connect_for(args, "re-pricing the saved fleet") as client:
        response = client.reprice_plan(args.plan_id)
    emit(args, response, render_repricing(response, markdown=args.markdown), out)
    return EXIT_OK if response.still_feasible else EXIT_NO_PLAN


def cmd_plans_delete(args: argparse.Namespace, out: TextIO) -> int:
    with connect(args) as client:
        client.delete_plan(args.plan_id)
    emit(args, store_api.DeletePlanResponse(), f"deleted plan {args.plan_id}", out)
    return EXIT_OK
