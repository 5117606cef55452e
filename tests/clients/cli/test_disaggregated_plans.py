"""A saved disaggregated plan (hand-built, tests/solver/planner/disagg_factories.py, stored as the
service stores answers) through ``fleetplan plans show|diff|reprice``: the roles and the comparison
are shown and printed in ``--json``, the diff names the unit, and re-pricing runs on its fleet."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import run

from api.fleetplan.v1 import common_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from pricebook import load_default
from service.convert.encode import plan_request_to_proto
from service.convert.plan import plan_to_proto
from store.location import store_url
from store.records import NewPlan
from store.sql import SqlPlanStore
from store.ulid import new_ulid
from tests.solver.planner.disagg_factories import disaggregated, small_plan
from tests.solver.planner.planner_factories import BARE, small_chat_request


def _saved(store: str, response: api.PlanFleetResponse) -> str:
    url = store_url(store)
    assert url is not None
    repository = SqlPlanStore(url)
    plan_id = new_ulid()
    response.plan_id = plan_id
    request = plan_request_to_proto(small_chat_request(BARE))
    repository.save(
        NewPlan(
            plan_id=plan_id,
            request=request.SerializeToString(deterministic=True),
            response=response.SerializeToString(deterministic=True),
        )
    )
    repository.close()
    return plan_id


def _response(disaggregate: bool) -> api.PlanFleetResponse:
    result = small_plan()
    result = disaggregated(result, prefill_gpu="h100-sxm") if disaggregate else result
    provenance = common_pb2.Provenance(
        pricebook_version=result.pricebook_version, pricebook_content_hash=result.pricebook_hash
    )
    return api.PlanFleetResponse(plan=plan_to_proto(result, load_default()), provenance=provenance)


def test_show_diff_and_reprice_a_saved_disaggregated_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(tmp_path / "plans.db")
    response = _response(disaggregate=True)
    plan_id = _saved(store, response)
    aggregated_id = _saved(store, _response(disaggregate=False))
    roles = response.plan.deployment_groups[0].disaggregation

    code, out, _ = run(capsys, "plans", "show", plan_id, "--store", store)
    assert code == 0 and "Disaggregated deployments" in out and "why disaggregated:" in out
    assert f"{roles.prefill.engines_per_unit}:{roles.decode.engines_per_unit}" in out
    code, out, _ = run(capsys, "plans", "show", plan_id, "--store", store, "--json")
    shown = json.loads(out)["response"]["plan"]
    assert shown["deployment_groups"][0]["disaggregation"]["prefill"]["gpu_id"] == roles.prefill.gpu_id
    assert shown["disaggregation"]["saving"]["amount"] == response.plan.disaggregation.saving.amount

    code, out, _ = run(capsys, "plans", "diff", aggregated_id, plan_id, "--store", store)
    assert code == 0 and f"(prefill {roles.prefill.engines_per_unit} × {roles.prefill.gpu_id}" in out

    code, out, _ = run(capsys, "plans", "reprice", plan_id, "--store", store, "--json")
    assert code == 0
    repriced = json.loads(out)
    assert repriced["saved"]["plan_id"] == plan_id and "current_horizon_tco" in repriced
