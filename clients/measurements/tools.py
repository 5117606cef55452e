"""Benchmark tools' native result files → measured points in fleetplan's JSONL field names.

Each reader takes the parsed JSON and returns one dict per run it holds (GuideLLM: one per
benchmark of a sweep), with only what the file says: the served model name, lengths, load and the
measured TTFT (mean), TPOT (mean time per output token after the first) and output tok/s. GPU,
TP, precision and engine are never in these files: ``--measured-as`` supplies them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

Point = dict[str, Any]


class FormatError(ValueError):
    """A known format with a missing or unusable field (the field's path in the file)."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


def _number(data: Mapping[str, Any], key: str, where: str = "") -> float:
    value = data.get(key)
    path = f"{where}.{key}" if where else key
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise FormatError(path, f"missing or not a finite number ({value!r})")
    return float(value)


def _stat(data: Mapping[str, Any], key: str, stat: str = "avg") -> float:
    block = data.get(key)
    if not isinstance(block, Mapping):
        raise FormatError(key, "missing")
    return _number(block, stat, key)


# vLLM ``vllm bench serve --save-result``: flat keys (vllm/benchmarks/serve.py).
VLLM_KEYS = ("mean_ttft_ms", "mean_tpot_ms", "output_throughput", "completed", "total_input_tokens")


def read_vllm(data: Mapping[str, Any]) -> list[Point]:
    completed = _number(data, "completed")
    if completed <= 0:
        raise FormatError("completed", "no request completed")
    point: Point = {
        "input_len": round(_number(data, "total_input_tokens") / completed),
        "output_len": round(_number(data, "total_output_tokens") / completed),
        "measured_ttft_ms": _number(data, "mean_ttft_ms"),
        "measured_tpot_ms": _number(data, "mean_tpot_ms"),
        "measured_output_tok_s": _number(data, "output_throughput"),
    }
    if isinstance(data.get("model_id"), str):
        point["model"] = data["model_id"]
    rate = data.get("request_rate")
    concurrency = data.get("max_concurrency")
    open_loop = isinstance(rate, int | float) and not isinstance(rate, bool) and math.isfinite(rate)
    if open_loop and concurrency is not None and rate is not None:
        raise FormatError(
            "max_concurrency",
            "a finite request_rate with max_concurrency is neither an open nor a closed loop",
        )
    if open_loop and isinstance(rate, int | float):
        point["request_rate"] = float(rate)
    elif isinstance(concurrency, int) and concurrency > 0:
        point["concurrency"] = concurrency
    else:
        raise FormatError(
            "max_concurrency", "request_rate is inf: the run needs --max-concurrency N to be a closed loop"
        )
    return [point]


# AIPerf ``profile_export_aiperf.json``: metrics as {"unit", "avg", "p50", "p95", ...}.
AIPERF_KEYS = ("time_to_first_token", "inter_token_latency", "output_token_throughput", "input_config")


def _aiperf_load(config: Mapping[str, Any]) -> Point:
    phases = [
        p for p in config.get("phases") or () if isinstance(p, Mapping) and p.get("kind") == "profiling"
    ]
    if len(phases) != 1:
        raise FormatError("input_config.phases", f"expected one profiling phase, found {len(phases)}")
    phase = phases[0]
    if phase.get("type") == "concurrency":
        return {"concurrency": int(_number(phase, "concurrency", "input_config.phases[profiling]"))}
    for key in ("request_rate", "rate"):
        if key in phase:
            return {"request_rate": _number(phase, key, "input_config.phases[profiling]")}
    raise FormatError(
        "input_config.phases[profiling].type", f"load type {phase.get('type')!r} is not supported"
    )


def read_aiperf(data: Mapping[str, Any]) -> list[Point]:
    config = data.get("input_config")
    if not isinstance(config, Mapping):
        raise FormatError("input_config", "missing")
    point: Point = {
        "input_len": round(_stat(data, "input_sequence_length")),
        "output_len": round(_stat(data, "output_sequence_length")),
        "measured_ttft_ms": _stat(data, "time_to_first_token"),
        "measured_tpot_ms": _stat(data, "inter_token_latency"),
        "measured_output_tok_s": _stat(data, "output_token_throughput"),
    } | _aiperf_load(config)
    models = (config.get("models") or {}).get("items") or []
    if models and isinstance(models[0], Mapping) and isinstance(models[0].get("name"), str):
        point["model"] = models[0]["name"]
    return [point]


# GuideLLM ``benchmarks.json``: {"benchmarks": [{"config": {"strategy": ...}, "metrics": ...}]}.
GUIDELLM_KEYS = ("benchmarks",)


def _guidellm_mean(metrics: Mapping[str, Any], key: str, index: int) -> float:
    where = f"benchmarks[{index}].metrics.{key}"
    block = metrics.get(key)
    if not isinstance(block, Mapping) or not isinstance(block.get("successful"), Mapping):
        raise FormatError(where, "missing")
    return _number(block["successful"], "mean", f"{where}.successful")


def _guidellm_load(strategy: Mapping[str, Any], index: int) -> Point:
    kind = strategy.get("type_")
    where = f"benchmarks[{index}].config.strategy"
    if kind == "synchronous":
        return {"concurrency": 1}
    if kind == "concurrent":
        return {"concurrency": int(_number(strategy, "streams", where))}
    if kind == "poisson":
        return {"request_rate": _number(strategy, "rate", where)}
    raise FormatError(f"{where}.type_", f"strategy {kind!r} is neither a closed loop nor Poisson arrivals")


def read_guidellm(data: Mapping[str, Any]) -> list[Point]:
    benchmarks = data.get("benchmarks")
    if not isinstance(benchmarks, list) or not benchmarks:
        raise FormatError("benchmarks", "no benchmark in the file")
    points = []
    for i, bench in enumerate(benchmarks):
        metrics = bench.get("metrics") or {}
        config = bench.get("config") or {}
        point: Point = {
            "input_len": round(_guidellm_mean(metrics, "prompt_token_count", i)),
            "output_len": round(_guidellm_mean(metrics, "output_token_count", i)),
            "measured_ttft_ms": _guidellm_mean(metrics, "time_to_first_token_ms", i),
            "measured_tpot_ms": _guidellm_mean(metrics, "inter_token_latency_ms", i),
            "measured_output_tok_s": _guidellm_mean(metrics, "output_tokens_per_second", i),
        } | _guidellm_load(config.get("strategy") or {}, i)
        model = (config.get("backend") or {}).get("model")
        if isinstance(model, str) and model:
            point["model"] = model
        points.append(point)
    return points


READERS: tuple[tuple[str, tuple[str, ...], Callable[[Mapping[str, Any]], list[Point]]], ...] = (
    ("vLLM bench serve", VLLM_KEYS, read_vllm),
    ("AIPerf profile export", AIPERF_KEYS, read_aiperf),
    ("GuideLLM benchmarks", GUIDELLM_KEYS, read_guidellm),
)
"""(format name, top-level keys that identify it, reader)."""
