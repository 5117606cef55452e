"""Mutations of valid requests, for the mutation fuzzer (``test_mutation_fuzz.py``).

Unlike the descriptor fuzzer (``test_fuzz.py``: random messages, mostly refused at the first
field), every request here starts as a valid one — the examples in ``examples/`` and small requests
of every RPC — and one to three of its fields are changed: numbers to NaN, ±inf, negative, zero,
tiny or huge; strings to blank, whitespace, huge or odd unicode; enums to unknown numbers or
UNSPECIFIED; repeated fields emptied or an element duplicated; sub-messages cleared. Most such
requests are still close enough to valid to reach the solver, the converters and the answer
assembly — where the INTERNAL errors of issue 19 were found.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from api.fleetplan.v1 import catalog_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients.scenario import load_scenario

REPO = Path(__file__).resolve().parents[2]

DOUBLES = (math.nan, math.inf, -math.inf, -1.0, 0.0, -0.0, 1e-300, 1e-9, 1e9, 1e15, 1e300, -1e300, 2.5)
INTS = (-1, 0, 1, 3, 2**31 - 1, -(2**31), 10**6)
INT64S = (*INTS, 10**13, 2**63 - 1, -(2**63))
TEXTS = ("", " ", "   ", "\t\n", "x" * 100_000, "日本語🚀", "é\u0000\ud7ff", "NaN", "-5", "1e400", "h100-sxm")

_INT32 = (FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_SINT32, FieldDescriptor.TYPE_SFIXED32)
_INT64 = (FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_SINT64, FieldDescriptor.TYPE_SFIXED64)
_UINT = (
    FieldDescriptor.TYPE_UINT32,
    FieldDescriptor.TYPE_FIXED32,
    FieldDescriptor.TYPE_UINT64,
    FieldDescriptor.TYPE_FIXED64,
)
FAST_OPTIONS = {"timeLimitS": 3, "computeBaselines": False, "computeSensitivity": False}
"""Most seeds skip baselines and sensitivity so that 2,000 mutations fit in a bounded test (one
mutation may switch them back on; the small-plan seed keeps them)."""


@dataclass(frozen=True)
class Seed:
    name: str
    method: str
    """RPC name (``/fleetplan.v1.FleetPlanner/<method>``)."""
    request: Message
    weight: float


SMALL_WORKLOAD = {
    "name": "chat",
    "inference": {
        "model": {"modelId": "Qwen/Qwen3-14B"},
        "inputTokens": 2000,
        "outputTokens": 500,
        "dailyTokens": "2000000000",
        "sla": {"ttftP95Ms": 2000, "tpotP95Ms": 50},
    },
}
SMALL_CONSTRAINTS = {"allowedGpuIds": ["h100-sxm", "l40s"]}
SITE_AND_TRAINING = {
    "workloads": [
        SMALL_WORKLOAD,
        {
            "name": "ft",
            "training": {
                "model": {"modelId": "Qwen/Qwen3-14B"},
                "method": "TRAINING_METHOD_LORA",
                "tokensPerRun": 1000,
                "runsPerMonth": 4,
                "deadlineHours": 48,
            },
        },
    ],
    "constraints": {
        "allowedGpuIds": ["h100-sxm", "l40s"],
        "allowedModes": ["ACQUISITION_MODE_BUY", "ACQUISITION_MODE_ON_DEMAND"],
        "countBounds": [{"gpuId": "l40s", "minCount": 1}],
    },
    "pricebookOverrides": {"siteAssumptions": {"pue": 1.3, "colocation_includes_power": False}},
    "solverOptions": FAST_OPTIONS,
}
"""Reaches the struct overrides, training beside serving on bought and rented GPUs, and count
bounds (issue 28's INTERNALs: NaN site values, repeated modes, tiny runs)."""
ESTIMATE_CASE = {
    "mode": "ESTIMATE_MODE_INFER",
    "gpuId": "h100-sxm",
    "model": {"modelId": "Qwen/Qwen3-14B"},
    "precision": "PRECISION_FP8",
    "inputLen": "7000",
    "outputLen": "1024",
    "concurrency": 50,
}


def _parse(data: dict[str, Any], message: Message) -> Message:
    return json_format.ParseDict(data, message)


def seeds() -> list[Seed]:
    """Valid requests of every RPC (each checked valid by the fuzzer before mutating it)."""
    out: list[Seed] = []
    for path in sorted((REPO / "examples").glob("*.yaml")):
        request = load_scenario(path, api.PlanFleetRequest)
        _parse(FAST_OPTIONS, request.solver_options)
        out.append(Seed(f"plan:{path.stem}", "PlanFleet", request, 1.0))
    small = {"workloads": [SMALL_WORKLOAD], "constraints": SMALL_CONSTRAINTS}
    out.append(Seed("plan:small", "PlanFleet", _parse(small, api.PlanFleetRequest()), 3.0))
    out.append(
        Seed("plan:small-site-training", "PlanFleet", _parse(SITE_AND_TRAINING, api.PlanFleetRequest()), 2.0)
    )
    fleet = {"items": [{"gpuId": "h100-sxm", "mode": "ACQUISITION_MODE_BUY", "count": 8}]}
    evaluate = {**small, "fleet": fleet, "compareWithOptimal": True, "solverOptions": FAST_OPTIONS}
    out.append(Seed("evaluate:small", "EvaluateFleet", _parse(evaluate, api.EvaluateFleetRequest()), 2.0))
    portfolio = load_scenario(REPO / "examples" / "500m_krw_portfolio.yaml", api.EvaluateFleetRequest)
    _parse({"fleet": fleet, "solverOptions": FAST_OPTIONS}, portfolio)
    out.append(Seed("evaluate:500m", "EvaluateFleet", portfolio, 0.5))
    for name, subject, weight in (
        ("gpu", {"gpuId": "h100-sxm", "utilization": 0.6}, 2.0),
        ("fleet", {"fleet": fleet}, 1.0),
    ):
        analysis = _parse({**small, **subject}, api.AnalyzeBreakEvenRequest())
        out.append(Seed(f"break_even:{name}", "AnalyzeBreakEven", analysis, weight))
    cases = {"cases": [ESTIMATE_CASE, {**ESTIMATE_CASE, "gpuId": "l40s", "precision": "PRECISION_BF16"}]}
    out.append(Seed("estimate", "EstimatePerformance", _parse(cases, api.EstimatePerformanceRequest()), 3.0))
    catalog = api.ListCatalogRequest(kinds=[catalog_pb2.CATALOG_KIND_GPU])
    out.append(Seed("catalog", "ListCatalog", catalog, 1.0))
    sweep = {
        "base": small,
        "dimension": "SWEEP_DIMENSION_DEMAND_MULTIPLIER",
        "values": [0.5, 1.0],
    }
    out.append(Seed("sweep", "SweepPlans", _parse(sweep, api.SweepPlansRequest()), 0.5))
    return out


@dataclass(frozen=True)
class Site:
    """One place a mutation can land: a field of a (sub-)message."""

    message: Message
    field: FieldDescriptor
    path: str


def _sites(message: Message, path: str = "") -> list[Site]:
    """Every field of every set sub-message (set or not: a mutation may also set a field)."""
    out: list[Site] = []
    for field in message.DESCRIPTOR.fields:
        name = f"{path}.{field.name}" if path else field.name
        out.append(Site(message, field, name))
        if field.message_type is None or field.message_type.GetOptions().map_entry:
            continue
        if field.message_type.full_name == "google.protobuf.Struct":
            continue  # mutated as a whole (``_mutate_struct``)
        if field.is_repeated:
            for i, item in enumerate(getattr(message, field.name)):
                out += _sites(item, f"{name}[{i}]")
        elif message.HasField(field.name):
            out += _sites(getattr(message, field.name), name)
    return out


def _scalar_value(field: FieldDescriptor, rng: random.Random) -> Any:
    t = field.type
    if t == FieldDescriptor.TYPE_DOUBLE:
        return rng.choice(DOUBLES)
    if t == FieldDescriptor.TYPE_FLOAT:
        return rng.choice((math.nan, math.inf, -1.0, 0.0, 3.0e38))
    if t in _INT32:
        return rng.choice(INTS)
    if t in _INT64:
        return rng.choice(INT64S)
    if t in _UINT:
        return rng.choice((0, 1, 2**32 - 1))
    if t == FieldDescriptor.TYPE_BOOL:
        return rng.random() < 0.5
    if t == FieldDescriptor.TYPE_STRING:
        return rng.choice(TEXTS)
    if t == FieldDescriptor.TYPE_ENUM:
        return rng.choice((0, 999, -1, *(v.number for v in field.enum_type.values)))
    return b"\xff"


def _mutate_repeated(site: Site, rng: random.Random) -> str:
    items: Any = getattr(site.message, site.field.name)
    if not items or rng.random() < 0.4:
        site.message.ClearField(site.field.name)
        return f"{site.path} emptied"
    i = rng.randrange(len(items))
    if site.field.message_type is not None:
        if rng.random() < 0.6:
            items.add().CopyFrom(items[i])
            return f"{site.path}[{i}] duplicated"
        del items[i]
        return f"{site.path}[{i}] removed"
    if rng.random() < 0.5:
        items.append(items[i])
        return f"{site.path}[{i}] duplicated"
    value = _scalar_value(site.field, rng)
    items[i] = value
    return f"{site.path}[{i}] = {value!r:.40}"


def _mutate_struct(site: Site, rng: random.Random) -> str:
    """A JSON-like ``Struct`` (e.g. ``pricebook_overrides.site_assumptions``): one key set to an
    odd number or text (NaN and ±inf cannot be JSON: issue 28's INTERNAL), or the struct emptied."""
    struct: Any = getattr(site.message, site.field.name)
    keys = sorted(struct.fields) or ["pue"]
    if rng.random() < 0.2:
        site.message.ClearField(site.field.name)
        return f"{site.path} cleared"
    key = rng.choice(keys)
    value: Any = rng.choice(DOUBLES) if rng.random() < 0.8 else rng.choice(TEXTS[:6])
    struct[key] = value
    return f"{site.path}.{key} = {value!r:.40}"


def mutate_once(message: Message, rng: random.Random) -> str:
    """Change one field of ``message`` in place; returns what was done (for the failure report)."""
    site = rng.choice(_sites(message))
    field = site.field
    if field.message_type is not None and field.message_type.full_name == "google.protobuf.Struct":
        return _mutate_struct(site, rng)
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        site.message.ClearField(field.name)
        return f"{site.path} emptied"
    if field.is_repeated:
        return _mutate_repeated(site, rng)
    if field.message_type is not None:
        site.message.ClearField(field.name)
        return f"{site.path} cleared"
    value = _scalar_value(field, rng)
    try:
        setattr(site.message, field.name, value)
    except (TypeError, ValueError):  # e.g. an invalid UTF-8 surrogate: not sendable
        return f"{site.path} unchanged"
    return f"{site.path} = {value!r:.40}"


def mutated(seed: Seed, rng: random.Random) -> tuple[Message, list[str]]:
    """A copy of ``seed``'s request with 1–3 mutations, and what they were."""
    request = type(seed.request)()
    request.CopyFrom(seed.request)
    done = [mutate_once(request, rng) for _ in range(rng.choice((1, 1, 2, 3)))]
    return request, done


def picker(all_seeds: list[Seed], rng: random.Random) -> Callable[[], Seed]:
    weights = [s.weight for s in all_seeds]
    return lambda: rng.choices(all_seeds, weights)[0]


# --------------------------------------------------------------------------------------------
# Running mutations against a server (the test and ``bench.independent_checks`` share it)
# --------------------------------------------------------------------------------------------

SERVICE = "/fleetplan.v1.FleetPlanner/"
CALL_TIMEOUT_S = 8.0
"""Bounds the run: a mutation to a huge demand may solve until its deadline (DEADLINE_EXCEEDED is a
documented answer)."""
CALLERS = 3
"""Concurrent callers: two solve slots busy and one call converting or being refused."""
RESPONSES: dict[str, type[Message]] = {
    "PlanFleet": api.PlanFleetResponse,
    "EvaluateFleet": api.EvaluateFleetResponse,
    "AnalyzeBreakEven": api.AnalyzeBreakEvenResponse,
    "EstimatePerformance": api.EstimatePerformanceResponse,
    "ListCatalog": api.ListCatalogResponse,
    "SweepPlans": api.SweepPlansResponse,
}


@dataclass(frozen=True)
class Outcome:
    seed: str
    mutations: tuple[str, ...]
    code: grpc.StatusCode
    problem: str
    """Empty when the answer is acceptable."""
    seconds: float = 0.0


def _call(channel: grpc.Channel, method: str, request: Message) -> None:
    serializer = type(request).SerializeToString
    deserializer = RESPONSES[method].FromString
    if method == "SweepPlans":
        stream = channel.unary_stream(SERVICE + method, serializer, deserializer)
        for _ in stream(request, timeout=CALL_TIMEOUT_S):
            pass
        return
    channel.unary_unary(SERVICE + method, serializer, deserializer)(request, timeout=CALL_TIMEOUT_S)


def problem(error: grpc.RpcError) -> str:
    """What is wrong with a refusal ('' = nothing): INTERNAL or UNKNOWN, or an INVALID_ARGUMENT
    without BadRequest field violations naming a field and the reason."""
    code = error.code()
    if code in (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN):
        return f"{code.name}: {error.details()}"
    if code != grpc.StatusCode.INVALID_ARGUMENT:
        return ""
    status = rpc_status.from_call(error)
    if status is None:
        return f"INVALID_ARGUMENT without rich details: {error.details()}"
    for detail in status.details:
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            if bad.field_violations and all(v.field and v.description for v in bad.field_violations):
                return ""
    return f"INVALID_ARGUMENT without BadRequest field violations: {error.details()}"


def run_one(channel: grpc.Channel, seed: Seed, request: Message, done: list[str]) -> Outcome:
    """``request`` (``seed`` changed by ``done``) sent, and how it was answered."""
    started = time.perf_counter()
    try:
        _call(channel, seed.method, request)
    except grpc.RpcError as error:
        return Outcome(seed.name, tuple(done), error.code(), problem(error), time.perf_counter() - started)
    return Outcome(seed.name, tuple(done), grpc.StatusCode.OK, "", time.perf_counter() - started)


def fuzz(address: str, fuzz_seed: int, mutations: int, callers: int = CALLERS) -> list[Outcome]:
    """``mutations`` mutated requests (drawn from ``fuzz_seed``) sent to the server at ``address``."""
    rng = random.Random(fuzz_seed)
    pick = picker(seeds(), rng)
    jobs = []
    for _ in range(mutations):
        seed = pick()
        request, done = mutated(seed, rng)
        jobs.append((seed, request, done))
    with grpc.insecure_channel(address) as channel, ThreadPoolExecutor(callers) as pool:
        return list(pool.map(lambda job: run_one(channel, *job), jobs))


__all__ = ["Outcome", "Seed", "fuzz", "mutated", "picker", "problem", "run_one", "seeds"]
