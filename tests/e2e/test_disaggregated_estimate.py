"""End to end: a disaggregated EstimatePerformance case over the wire, and a bad role field as
INVALID_ARGUMENT naming it."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest

from api.fleetplan.v1 import common_pb2, performance_pb2
from clients import FleetPlanError, FleetPlannerClient
from service.server import ThreadedServer, start_in_thread
from service.settings import ServerSettings


@pytest.fixture(scope="module")
def client() -> Iterator[FleetPlannerClient]:
    running: ThreadedServer = start_in_thread(ServerSettings(address="127.0.0.1:0", grace_period_s=1.0))
    with FleetPlannerClient(running.address, timeout_s=60) as c:
        yield c
    running.stop(grace_s=0.5)


def _case(**roles: object) -> performance_pb2.PerformanceCase:
    return performance_pb2.PerformanceCase(
        model=common_pb2.ModelRef(model_id="deepseek-ai/DeepSeek-V3"),
        precision=common_pb2.PRECISION_FP8,
        input_len=4096,
        output_len=512,
        concurrency=32,
        **roles,  # type: ignore[arg-type]
    )


def test_a_disaggregated_case_comes_back_with_its_roles(client: FleetPlannerClient) -> None:
    case = _case(prefill_gpu="gb200", prefill_tp=4, decode_gpu="gb200", decode_tp=8, decode_workers=2)
    (result,) = client.estimate_performance([case]).results
    assert result.WhichOneof("outcome") == "inference"
    d = result.inference.disaggregated
    assert (d.prefill_gpus, d.decode_gpus, d.kv_link) == (4, 16, "nvlink")
    assert result.inference.output_tok_s_total == pytest.approx(d.output_tok_s_per_gpu * 20, rel=1e-6)
    assert result.inference.fits and result.inference.tpot_ms > 0


def test_a_bad_role_field_is_invalid_argument_naming_it(client: FleetPlannerClient) -> None:
    case = _case(prefill_gpu="gb200", prefill_tp=4, decode_gpu="gb200", decode_tp=8, decode_ep=3)
    with pytest.raises(FleetPlanError) as info:
        client.estimate_performance([case])
    assert info.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "cases[0].decode_ep" in {v.field for v in info.value.violations}
    with pytest.raises(FleetPlanError) as info:
        client.estimate_performance([_case(prefill_gpu="gb200", decode_gpu="gb200", decode_workers=-1)])
    assert "cases[0].decode_workers" in {v.field for v in info.value.violations}
