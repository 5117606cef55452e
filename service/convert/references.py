"""Pricebook references of a request: unknown ids become field violations (with the closest ids as
suggestions), GPU aliases become catalogue ids, and the request's pricebook overrides are tried once
so a bad one is refused with its proto path before any solve.

Kept apart from the field mapping so it can move below the service (a resolved request built once
in the solver) without touching the converters.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pricebook import catalog as pb_catalog
from pricebook.errors import UnknownEntryError
from pricebook.overrides import PricebookOverrides, apply_overrides
from pricebook.schema import Pricebook
from service.convert.paths import PathMap, join_path, parse_path
from solver import domain
from solver.errors import FieldViolation, InvalidRequest


def _unknown(exc: UnknownEntryError) -> str:
    kind = exc.kind.upper() if exc.kind == "gpu" else exc.kind
    hint = f"; did you mean {', '.join(exc.suggestions)}?" if exc.suggestions else ""
    return f"unknown {kind} {exc.key!r} (not in the pricebook{hint}); see `fleetplan catalog`"


@dataclass
class Refs:
    """Looks references up in ``book``, collecting a violation per unknown one."""

    book: Pricebook
    violations: list[FieldViolation] = field(default_factory=list)

    def gpu(self, key: str, path: str) -> str:
        """The catalogue id of GPU ``key`` (an id or an alias); ``key`` itself when unknown."""
        try:
            return pb_catalog.gpu(self.book, key).id
        except UnknownEntryError as exc:
            self.violations.append(FieldViolation(path, _unknown(exc)))
            return key

    def model(self, ref: domain.ModelRef, path: str) -> None:
        if ref.model_id is not None:
            try:
                pb_catalog.model(self.book, ref.model_id)
            except UnknownEntryError as exc:
                self.violations.append(FieldViolation(join_path(path, "model_id"), _unknown(exc)))


def _training(request: domain.PlanRequest, paths: PathMap, refs: Refs) -> tuple[domain.TrainingWorkload, ...]:
    training = []
    for j, t in enumerate(request.training):
        base = join_path(paths.workload("training", j), "training")
        refs.model(t.model, join_path(base, "model"))
        if t.reference is not None:
            gpu = refs.gpu(t.reference.gpu, join_path(base, "reference_gpu_hours", "gpu_id"))
            training.append(t.model_copy(update={"reference": t.reference.model_copy(update={"gpu": gpu})}))
        else:
            training.append(t)
    return tuple(training)


def _constraints(c: domain.Constraints, paths: PathMap, refs: Refs) -> domain.Constraints:
    cpath = join_path(paths.prefix, "constraints")
    return c.model_copy(
        update={
            "allowed_gpus": tuple(
                refs.gpu(g, join_path(cpath, "allowed_gpu_ids", i)) for i, g in enumerate(c.allowed_gpus)
            ),
            "owned": tuple(
                o.model_copy(update={"gpu": refs.gpu(o.gpu, join_path(cpath, "owned_gpus", i, "gpu_id"))})
                for i, o in enumerate(c.owned)
            ),
            "count_bounds": tuple(
                b.model_copy(update={"gpu": refs.gpu(b.gpu, join_path(cpath, "count_bounds", i, "gpu_id"))})
                for i, b in enumerate(c.count_bounds)
            ),
        }
    )


def _overrides(overrides: PricebookOverrides, paths: PathMap, refs: Refs) -> PricebookOverrides:
    opath = join_path(paths.prefix, "pricebook_overrides", "offers")
    offers = []
    for i, offer in enumerate(overrides.offers):
        if offer.gpu is not None:
            offers.append(
                offer.model_copy(update={"gpu": refs.gpu(offer.gpu, join_path(opath, i, "gpu_id"))})
            )
        else:
            offers.append(offer)
    return overrides.model_copy(update={"offers": tuple(offers)})


def resolve_references(
    request: domain.PlanRequest, paths: PathMap, book: Pricebook, violations: list[FieldViolation]
) -> domain.PlanRequest:
    """``request`` with every GPU alias replaced by its id; unknown GPUs and models are appended to
    ``violations``."""
    refs = Refs(book)
    for i, w in enumerate(request.inference):
        refs.model(w.model, join_path(paths.workload("inference", i), "inference", "model"))
    training = _training(request, paths, refs)
    constraints = _constraints(request.constraints, paths, refs)
    overrides = _overrides(request.overrides, paths, refs)
    violations.extend(refs.violations)
    return request.model_copy(
        update={"training": training, "constraints": constraints, "overrides": overrides}
    )


def override_violations(request: domain.PlanRequest, paths: PathMap, book: Pricebook) -> list[FieldViolation]:
    """Apply the request's pricebook overrides once here, so a bad one (unknown offer, a site field
    that does not exist, a negative price) is refused with its proto path before any solve."""
    if request.overrides == PricebookOverrides():
        return []
    try:
        apply_overrides(book, request.overrides)
    except InvalidRequest as exc:
        return [FieldViolation(paths.to_proto(parse_path(v.field)), v.reason) for v in exc.violations]
    return []
