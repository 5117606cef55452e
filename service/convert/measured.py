"""Measured points (issue 29): ``fleetplan.v1.MeasuredPoint`` ↔ the dicts ``domain.MeasuredPoint``
validates. Fields are copied; the domain checks them, ``solver.perf.measured`` fits them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict

from api.fleetplan.v1 import performance_pb2
from pricebook.schema import Pricebook
from service.convert.enums import (
    ARRIVAL_FROM_PROTO,
    ENGINE_FROM_PROTO,
    PRECISION_FROM_PROTO,
    by_name,
)
from service.convert.fields import optional, put
from service.convert.paths import PathMap, domain_violations_to_proto, join_path
from service.convert.violations import Collector, raise_if, validate
from solver import domain
from solver.errors import InvalidRequest
from solver.resolve import check_measurements

TTFT_STATISTIC_FROM_PROTO: dict[int, str] = by_name(
    performance_pb2.TtftStatistic, "TTFT_STATISTIC", ("mean", "median", "p95")
)

_COPIED = ("engine_version", "input_len", "output_len", "label")
_OPTIONAL = ("tp", "num_gpus", "measured_ttft_ms", "measured_tpot_ms", "measured_output_tok_s")


def measured_point(msg: performance_pb2.MeasuredPoint, col: Collector, path: str) -> dict[str, Any]:
    """One point as the dict ``domain.MeasuredPoint`` validates (unset fields left out)."""
    out: dict[str, Any] = {"gpu": msg.gpu_id, "model": msg.model_id}
    for name in _COPIED:
        out[name] = getattr(msg, name)
    for name in _OPTIONAL:
        value = optional(msg, name)
        put(out, name, value if not isinstance(value, float) else col.number(value, join_path(path, name)))
    for name, table in (("engine", ENGINE_FROM_PROTO), ("precision", PRECISION_FROM_PROTO)):
        put(out, name, col.enum(table, getattr(msg, name), join_path(path, name)))
    put(
        out, "kv_precision", col.enum(PRECISION_FROM_PROTO, msg.kv_precision, join_path(path, "kv_precision"))
    )
    put(out, "arrival", col.enum(ARRIVAL_FROM_PROTO, msg.arrival, join_path(path, "arrival")))
    put(
        out,
        "ttft_statistic",
        col.enum(TTFT_STATISTIC_FROM_PROTO, msg.ttft_statistic, join_path(path, "ttft_statistic")),
    )
    load = msg.WhichOneof("load")
    if load == "concurrency":
        out["concurrency"] = msg.concurrency
    elif load == "request_rate_per_s":
        out["request_rate_per_s"] = col.number(msg.request_rate_per_s, join_path(path, "request_rate_per_s"))
    return out


def measured_points(
    messages: Iterable[performance_pb2.MeasuredPoint], col: Collector, prefix: str = ""
) -> tuple[dict[str, Any], ...]:
    return tuple(measured_point(m, col, join_path(prefix, "measurements", i)) for i, m in enumerate(messages))


class _Points(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    measurements: tuple[domain.MeasuredPoint, ...]


def measured_points_from_proto(
    messages: Iterable[performance_pb2.MeasuredPoint], book: Pricebook
) -> tuple[domain.MeasuredPoint, ...]:
    """The points validated and checked against ``book`` (requests without a scenario: estimates);
    raises ``InvalidRequest`` naming ``measurements[i].<field>``."""
    col = Collector()
    data = measured_points(messages, col)
    violations = list(col.violations)
    paths = PathMap((), (), "")
    points = validate(_Points, {"measurements": data}, paths.to_proto, violations)
    raise_if(violations)
    assert points is not None
    try:
        check_measurements(points.measurements, book)
    except InvalidRequest as exc:
        raise domain_violations_to_proto(exc, paths) from exc
    return points.measurements
