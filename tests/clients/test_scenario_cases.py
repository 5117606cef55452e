"""A batch case's fast path (``clients.scenario._case_fast``: fields set one by one) builds the same
PerformanceCase as the general parser (``parse_scenario``: ``json_format.ParseDict``) whenever it
builds one, and leaves every line it cannot take (wrong types, unknown enum names, two load fields,
out-of-range numbers, model specs) to the general parser, which names the problem. The benchmark's
lines all take the fast path."""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from api.fleetplan.v1 import performance_pb2
from bench.estimate_speed import build_cases
from clients.scenario import CASE_KEYS, ScenarioError, _case_fast, case_fields, case_from_json, parse_scenario
from pricebook.loader import load_default

VALUES = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, 1, 8, 2048, 2**31, 2**63, -1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.5, 8.0, math.nan, math.inf]),
    st.booleans(),
    st.none(),
    st.sampled_from(["max", "infer", "train", "bf16", "FP8", "PRECISION_FP8", "lora", "vllm", "burst", "x"]),
    st.text(max_size=6),
    st.just({"params_b": 7}),
    st.just([1, 2]),
)


def _general(line: dict[str, Any]) -> performance_pb2.PerformanceCase | None:
    try:
        return parse_scenario(case_fields(line, "t"), performance_pb2.PerformanceCase, "t")
    except (ScenarioError, ValueError, TypeError):
        return None


def _check(line: dict[str, Any]) -> bool:
    """True when the fast path built the case (and it is the general parser's)."""
    try:
        fast = _case_fast(case_fields(line, "t"))
    except ScenarioError:
        return False
    if fast is None:
        return False
    general = _general(line)
    assert general is not None, line
    assert fast.SerializeToString(deterministic=True) == general.SerializeToString(deterministic=True), line
    assert fast == general
    return True


@settings(max_examples=400, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(sorted(CASE_KEYS - {"label"})),
        VALUES,
        max_size=8,
    )
)
def test_the_fast_path_builds_what_the_general_parser_builds(line: dict[str, Any]) -> None:
    _check(line)


def test_every_benchmark_line_takes_the_fast_path() -> None:
    book = load_default()
    models = [m.id for m in book.models if m.kind == "decoder"]
    lines = build_cases(models, [g.id for g in book.gpus], 500, seed=16)
    cases = [{**json.loads(text), "id": f"case-{i}", "sla_ttft_p95_ms": 500} for i, text in enumerate(lines)]
    assert all(_check(case) for case in cases)
    assert case_from_json(cases[0], "t") == _general(cases[0])


def test_lines_the_fast_path_leaves_are_refused_as_before() -> None:
    base = {"gpu": "h100", "model": "m", "input_len": 10, "output_len": 5}
    for bad in ({"concurrency": 8.5}, {"precision": "fp9"}, {"input_len": 2**70}, {"concurrency": "lots"}):
        line = {**base, **bad}
        assert _case_fast(case_fields(line, "t")) is None
        assert _general(line) is None
