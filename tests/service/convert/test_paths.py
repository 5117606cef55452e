"""Field paths: domain locations translated into the request's proto paths."""

from __future__ import annotations

from convert_support import chat

from api.fleetplan.v1 import scenario_pb2
from service.convert.paths import domain_violations_to_proto, join_path, parse_path, path_map
from solver.errors import FieldViolation, InvalidRequest


def test_domain_violations_are_reported_with_proto_paths() -> None:
    training = scenario_pb2.Workload(name="ft", training=scenario_pb2.TrainingWorkload())
    paths = path_map([chat("a"), training, chat("b")], prefix="base")
    error = InvalidRequest(
        [
            FieldViolation("inference[1].sla.ttft_p95_ms", "too tight"),
            FieldViolation("training[0].reference.gpu", "unknown"),
            FieldViolation("overrides.site.pue", "must be at least 1"),
            FieldViolation("cases[0].tp", "kept as is"),
        ]
    )
    translated = [v.field for v in domain_violations_to_proto(error, paths).violations]
    assert translated == [
        "base.workloads[2].inference.sla.ttft_p95_ms",
        "base.workloads[1].training.reference_gpu_hours.gpu_id",
        "base.pricebook_overrides.site_assumptions.pue",
        "cases[0].tp",
    ]


def test_join_and_parse_are_inverse() -> None:
    path = join_path("overrides", "offers", 0, "gpu")
    assert path == "overrides.offers[0].gpu"
    assert parse_path(path) == ["overrides", "offers", 0, "gpu"]
