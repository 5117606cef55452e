"""Measured points (fleetplan JSONL field names) → ``fleetplan.v1.MeasuredPoint``: fields copied."""

from __future__ import annotations

from typing import Any

from api.fleetplan.v1 import common_pb2, performance_pb2

_COPIED: tuple[str, ...] = (
    "engine_version",
    "tp",
    "num_gpus",
    "input_len",
    "output_len",
    "concurrency",
    "label",
)
_COPIED += ("measured_ttft_ms", "measured_tpot_ms", "measured_output_tok_s")


def point_message(point: dict[str, Any]) -> performance_pb2.MeasuredPoint:
    msg = performance_pb2.MeasuredPoint(gpu_id=point["gpu"], model_id=point["model"])
    for key in _COPIED:
        if key in point:
            setattr(msg, key, point[key])
    if "request_rate" in point:
        msg.request_rate_per_s = float(point["request_rate"])
    if "precision" in point:
        msg.precision = common_pb2.Precision.Value(f"PRECISION_{point['precision'].upper()}")
    if "kv_precision" in point:
        msg.kv_precision = common_pb2.Precision.Value(f"PRECISION_{point['kv_precision'].upper()}")
    if "engine" in point:
        msg.engine = common_pb2.Engine.Value(f"ENGINE_{point['engine'].upper()}")
    if "arrival" in point:
        msg.arrival = performance_pb2.Arrival.Value(f"ARRIVAL_{point['arrival'].upper()}")
    if "ttft_statistic" in point:
        msg.ttft_statistic = performance_pb2.TtftStatistic.Value(
            f"TTFT_STATISTIC_{point['ttft_statistic'].upper()}"
        )
    return msg
