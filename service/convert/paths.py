"""Field paths: where a domain field came from in the proto request.

Violations always name the *proto* path (``workloads[2].inference.sla.ttft_p95_ms``), so the analyst
sees the name they wrote in their request, never an internal one. ``PathMap`` translates a domain
location (a pydantic ``loc`` or a dotted domain path such as ``inference[1].sla``) into it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from api.fleetplan.v1 import scenario_pb2
from solver.errors import FieldViolation, InvalidRequest

PROTO_NAME: dict[str, str] = {
    "gpu": "gpu_id",
    "server": "server_id",
    "offer": "offer_id",
    "currency": "currency_code",
    "allowed_gpus": "allowed_gpu_ids",
    "owned": "owned_gpus",
    "site": "site_assumptions",
    "reference": "reference_gpu_hours",
    "interactive": "serving_kind",
    "overrides": "pricebook_overrides",
    "options": "solver_options",
    "pinned_offers": "pinned_offer_ids",
}
"""Domain field name → proto field name, where they differ (names are unique enough to rename
without context; everything else is spelled the same on both sides)."""

MEASURED_NAME = {"gpu": "gpu_id", "model": "model_id"}
"""Domain field → proto field of a measured point, where they differ."""

_DOMAIN_ROOTS = ("inference", "training", "constraints", "overrides", "options", "measurements")
"""First parts of a ``PlanRequest`` field path; other paths are already proto paths."""


def join_path(*parts: str | int) -> str:
    """``("workloads", 2, "sla")`` → ``workloads[2].sla``."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part:
            out += f".{part}" if out else part
    return out


def parse_path(path: str) -> list[str | int]:
    """``overrides.offers[0].gpu`` → ``["overrides", "offers", 0, "gpu"]``."""
    loc: list[str | int] = []
    for part in path.split("."):
        name, *indexes = part.split("[")
        if name:
            loc.append(name)
        loc.extend(int(i.rstrip("]")) for i in indexes)
    return loc


def renamed(loc: Iterable[str | int]) -> list[str | int]:
    """A domain location with the proto field names."""
    return [part if isinstance(part, int) else PROTO_NAME.get(part, part) for part in loc]


@dataclass(frozen=True, slots=True)
class PathMap:
    """Where the domain objects of one request came from in the proto request.

    ``inference_at[i]`` / ``training_at[j]`` are the indexes in the proto ``workloads`` list of
    the i-th inference and j-th training domain workload; ``prefix`` is prepended to every path
    (``base`` for a sweep's embedded plan request).
    """

    inference_at: tuple[int, ...] = ()
    training_at: tuple[int, ...] = ()
    prefix: str = ""

    def workload(self, kind: str, index: int) -> str:
        positions = self.inference_at if kind == "inference" else self.training_at
        proto_index = positions[index] if index < len(positions) else index
        return join_path(self.prefix, "workloads", proto_index)

    def to_proto(self, loc: Sequence[str | int]) -> str:
        """Translate a pydantic ``loc`` of a ``PlanRequest`` into a proto field path."""
        if not loc:
            return join_path(self.prefix, "workloads")
        head, rest = loc[0], list(loc[1:])
        if head in ("inference", "training") and rest and isinstance(rest[0], int):
            base = self.workload(str(head), rest[0])
            rest = rest[1:]
            if rest[:1] == ["name"]:
                return join_path(base, "name")
            return join_path(base, str(head), *renamed(rest))
        if head in ("inference", "training"):
            return join_path(self.prefix, "workloads", *renamed(rest))
        if head == "measurements":
            return join_path(
                self.prefix, head, *(MEASURED_NAME.get(p, p) if isinstance(p, str) else p for p in rest)
            )
        return join_path(self.prefix, *renamed([head, *rest]))


def path_map(workloads: Sequence[scenario_pb2.Workload], prefix: str = "") -> PathMap:
    """Where each domain workload of a request sits in its proto ``workloads`` list."""
    kinds = [w.WhichOneof("kind") for w in workloads]
    return PathMap(
        tuple(i for i, k in enumerate(kinds) if k == "inference"),
        tuple(i for i, k in enumerate(kinds) if k == "training"),
        prefix,
    )


def domain_violations_to_proto(error: InvalidRequest, paths: PathMap) -> InvalidRequest:
    """An ``InvalidRequest`` raised inside the domain (paths like ``overrides.site.pue`` or
    ``inference[1].sla``) with the request's proto paths instead."""
    return InvalidRequest(
        [
            FieldViolation(
                paths.to_proto(parse_path(v.field)) if v.field.startswith(_DOMAIN_ROOTS) else v.field,
                v.reason,
            )
            for v in error.violations
        ]
    )
