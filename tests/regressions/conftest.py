"""The real gRPC server and client the regression tests replay reproductions through."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from clients import FleetPlannerClient
from service.server import ThreadedServer, start_in_thread
from service.settings import ServerSettings


@pytest.fixture(scope="module")
def client() -> Iterator[FleetPlannerClient]:
    """A server on loopback without answer reuse (every call solves), and a client of it."""
    server: ThreadedServer = start_in_thread(
        ServerSettings(address="127.0.0.1:0", grace_period_s=1.0, plan_cache_entries=0)
    )
    with FleetPlannerClient(server.address, timeout_s=300) as c:
        yield c
    server.stop(grace_s=0.5)
