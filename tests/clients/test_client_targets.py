"""Client-side balancing: several addresses become one gRPC target list, and every channel
carries the round_robin + UNAVAILABLE-retry service config; which failures the client itself
retries on another replica."""

from __future__ import annotations

import json

import grpc
import pytest

from clients.client import SERVICE_CONFIG, FleetPlanError, _channel_options, channel_target, retry_elsewhere


def test_one_address_or_resolver_uri_passes_through() -> None:
    assert channel_target("127.0.0.1:50051") == "127.0.0.1:50051"
    assert channel_target("dns:///fleetplan-headless:50051") == "dns:///fleetplan-headless:50051"
    assert channel_target(["localhost:1"]) == "localhost:1"


def test_several_ip_addresses_become_one_target_list() -> None:
    assert channel_target(["10.0.0.1:1", "10.0.0.2:2"]) == "ipv4:10.0.0.1:1,10.0.0.2:2"
    assert channel_target("10.0.0.1:1, 10.0.0.2:2,") == "ipv4:10.0.0.1:1,10.0.0.2:2"
    assert channel_target(["[::1]:1", "[::1]:2"]) == "ipv6:[::1]:1,[::1]:2"


@pytest.mark.parametrize(
    ("target", "words"),
    [
        (["a.example:1", "b.example:1"], "dns:///"),
        (["10.0.0.1:1", "[::1]:1"], "must all be IPv4"),
        ([], "no"),
    ],
)
def test_unusable_target_lists_are_refused(target: list[str], words: str) -> None:
    with pytest.raises(ValueError) as refused:
        channel_target(target)
    assert words in str(refused.value)


def test_every_channel_balances_and_retries_unavailable_only() -> None:
    options = dict(_channel_options(()))
    config = json.loads(options["grpc.service_config"])
    assert config == SERVICE_CONFIG
    assert config["loadBalancingConfig"] == [{"round_robin": {}}]
    (method,) = config["methodConfig"]
    assert {n["service"] for n in method["name"]} == {"fleetplan.v1.FleetPlanner", "fleetplan.v1.PlanStore"}
    assert method["retryPolicy"]["retryableStatusCodes"] == ["UNAVAILABLE"]
    assert options["grpc.enable_retries"] == 1 and options["grpc.service_config_disable_resolution"] == 1


@pytest.mark.parametrize(
    ("code", "reason", "retried"),
    [
        (grpc.StatusCode.UNAVAILABLE, "SHUTTING_DOWN", True),
        (grpc.StatusCode.CANCELLED, "", True),  # a stopping server's transport cancelled it
        (grpc.StatusCode.CANCELLED, "SOLVE_CANCELLED", False),
        (grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE", False),  # the database, not the replica
        (grpc.StatusCode.UNAVAILABLE, "", False),  # transport-level: gRPC's retry policy did it
        (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST", False),
        (grpc.StatusCode.DEADLINE_EXCEEDED, "", False),
    ],
)
def test_which_failures_the_client_retries_elsewhere(
    code: grpc.StatusCode, reason: str, retried: bool
) -> None:
    assert retry_elsewhere(FleetPlanError(code, "x", reason=reason)) is retried
