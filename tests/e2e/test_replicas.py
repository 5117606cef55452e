"""Three replicas on loopback sharing one PostgreSQL, 32 client threads planning and saving through
one round-robin channel for a bounded time, one replica stopped mid-run: every call answered
(retried on the others), every saved plan readable from every surviving replica, none saved
twice, none lost."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path

import pytest

from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import plan_store_pb2 as store_api
from clients import FleetPlanError, FleetPlannerClient
from clients.scenario import load_scenario
from service.server import ThreadedServer
from service.settings import ServerSettings

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "60m_krw_single_gpu.yaml"
THREADS = 32
LOAD_S = 14.0
STOP_AFTER_S = 5.0
TAG = "replicas-e2e"


def _all_plans(client: FleetPlannerClient) -> list[store_api.SavedPlan]:
    plans: list[store_api.SavedPlan] = []
    token = ""
    while True:
        page = client.list_plans(store_api.ListPlansRequest(tag=TAG, page_size=200, page_token=token))
        plans += page.plans
        token = page.next_page_token
        if not token:
            return plans


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_three_replicas_one_database_one_stopped_mid_run(postgres_url: str) -> None:
    servers = [
        ThreadedServer(ServerSettings(address="127.0.0.1:0", store=postgres_url, grace_period_s=15)).start()
        for _ in range(3)
    ]
    base = load_scenario(EXAMPLE, api.PlanFleetRequest)
    answered: dict[str, api.PlanFleetResponse] = {}
    failures: list[tuple[str, FleetPlanError]] = []
    lock = threading.Lock()
    deadline = time.monotonic() + LOAD_S

    def work(thread: int, client: FleetPlannerClient) -> None:
        call = 0
        while time.monotonic() < deadline:
            request_id = f"t{thread}-c{call}"
            call += 1
            request = api.PlanFleetRequest()
            request.CopyFrom(base)
            request.save, request.label = True, f"thread-{thread}"
            request.tags.append(TAG)
            try:
                response = client.plan_fleet(request, request_id=request_id)
            except FleetPlanError as error:
                with lock:
                    failures.append((request_id, error))
                continue
            with lock:
                answered[request_id] = response

    try:
        with FleetPlannerClient([s.address for s in servers], timeout_s=60) as client:
            threads = [threading.Thread(target=work, args=(i, client)) for i in range(THREADS)]
            for t in threads:
                t.start()
            time.sleep(STOP_AFTER_S)
            stopped_while = len(answered)
            servers[1].stop(grace_s=15)  # graceful: NOT_SERVING, refuse new calls, finish in-flight
            for t in threads:
                t.join()
        survivors = [servers[0], servers[2]]

        assert failures == []
        assert stopped_while > 0 and len(answered) > stopped_while  # calls went on after the stop
        plan_ids = {r.plan_id for r in answered.values()}
        assert len(plan_ids) == len(answered)  # one plan per call: none saved twice
        # Each replica solved the (identical) request once and reused it after: more than one
        # non-reused answer means the calls were spread over the replicas.
        assert sum(not r.provenance.reused_identical_request for r in answered.values()) >= 2

        for server in survivors:
            with FleetPlannerClient(server.address, timeout_s=60) as direct:
                stored = _all_plans(direct)
                assert len(stored) == len({p.plan_id for p in stored})
                assert {p.plan_id for p in stored} == plan_ids  # nothing lost, nothing extra
                assert {p.request_id for p in stored} == set(answered)
                for request_id in random.Random(7).sample(sorted(answered), min(100, len(answered))):
                    saved = direct.get_plan(answered[request_id].plan_id)
                    assert saved.response == answered[request_id]
                    assert saved.request_id == request_id
    finally:
        for server in servers:
            server.stop(grace_s=0.5)
