"""A request's pricebook references, resolved once: ``resolve(request, book) -> ResolvedRequest``.

GPU aliases (``"H200 SXM"``) become catalogue ids, model ids are checked, and the request's
pricebook overrides are applied, so everything below (planner, optimizer, pricing) looks GPUs up
by id and never applies an override again. An unknown reference is user input: it is refused as
``InvalidRequest`` with the domain path of the field (``constraints.allowed_gpus[1]``,
``training[0].reference.gpu``, ``overrides.offers[0].gpu``, ``inference[0].model.model_id``) and
the closest ids as suggestions; the service maps those paths to proto paths.

Fleets (``resolve_fleet``) are resolved the same way: their items name catalogue ids afterwards.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pricebook import catalog
from pricebook.errors import UnknownEntryError
from pricebook.overrides import apply_overrides
from pricebook.schema import GpuId, GpuSegment, Pricebook
from solver.domain import Constraints, Fleet, MeasuredPoint, ModelRef, PlanRequest, TrainingWorkload
from solver.errors import FieldViolation, InvalidRequest
from solver.perf.measured import fit_corrections
from solver.periods import check_periods

__all__ = ["References", "ResolvedRequest", "resolve", "resolve_fleet", "unknown_entry_reason"]


def unknown_entry_reason(exc: UnknownEntryError) -> str:
    """What an analyst reads for a reference that is not in the pricebook."""
    kind = exc.kind.upper() if exc.kind == "gpu" else exc.kind
    hint = f"; did you mean {', '.join(exc.suggestions)}?" if exc.suggestions else ""
    return f"unknown {kind} {exc.key!r} (not in the pricebook{hint}); see `fleetplan catalog`"


@dataclass
class References:
    """Looks references up in ``book``, collecting one violation per unknown one (at ``path``,
    whatever path convention the caller uses)."""

    book: Pricebook
    violations: list[FieldViolation] = field(default_factory=list)

    def gpu(self, key: str, path: str) -> GpuId:
        """The catalogue id of GPU ``key`` (an id or an alias); ``key`` itself when unknown."""
        try:
            return catalog.gpu(self.book, key).id
        except UnknownEntryError as exc:
            self.violations.append(FieldViolation(path, unknown_entry_reason(exc)))
            return key

    def server(self, key: str, gpu: GpuId, path: str) -> None:
        """Checks a catalogue server model that holds GPU ``gpu``."""
        try:
            spec = catalog.server(self.book, key)
        except UnknownEntryError as exc:
            self.violations.append(FieldViolation(path, unknown_entry_reason(exc)))
            return
        if not catalog.server_holds(spec, catalog.gpu(self.book, gpu)):
            self.violations.append(FieldViolation(path, f"server {key!r} does not hold {gpu} GPUs"))

    def model(self, ref: ModelRef, path: str) -> None:
        """Checks a catalogue model id (an inline spec needs no lookup)."""
        if ref.model_id is not None:
            try:
                catalog.model(self.book, ref.model_id)
            except UnknownEntryError as exc:
                self.violations.append(FieldViolation(f"{path}.model_id", unknown_entry_reason(exc)))

    def raise_if_any(self) -> None:
        if self.violations:
            raise InvalidRequest(self.violations)


@dataclass(frozen=True, slots=True)
class ResolvedRequest:
    """A request ready to plan: references resolved and checked, overrides applied."""

    request: PlanRequest
    """Every GPU reference a catalogue id; every catalogue model id known."""
    book: Pricebook
    """The pricebook with the request's overrides applied (its own content hash)."""
    overrides_applied: tuple[str, ...]
    """What the overrides changed, in words (empty without overrides)."""
    allowed_gpus: tuple[GpuId, ...]
    """The GPU types the plan may use, as ids: the request's, or every catalogue GPU (sorted)."""

    def with_request(self, request: PlanRequest) -> ResolvedRequest:
        """The same book and overrides for a variant of the request (a sweep point, a single GPU
        type); ``request`` must name GPUs by catalogue id."""
        return ResolvedRequest(
            request, self.book, self.overrides_applied, _allowed_ids(request.constraints, self.book)
        )


def _allowed_ids(constraints: Constraints, book: Pricebook) -> tuple[GpuId, ...]:
    if not constraints.allowed_gpus:
        return tuple(sorted(g.id for g in catalog.plannable_gpus(book, constraints.allow_consumer_gpus)))
    return tuple(dict.fromkeys(constraints.allowed_gpus))


CONSUMER_GPU_REASON = (
    "is a consumer (GeForce) card: its driver licence excludes data-centre deployment and it has no "
    "ECC or enterprise support; set constraints.allow_consumer_gpus to plan with it"
)


def _check_consumer_gpus(constraints: Constraints, book: Pricebook) -> None:
    """Consumer cards named by the request need ``allow_consumer_gpus`` (``constraints`` has ids)."""
    if constraints.allow_consumer_gpus:
        return
    consumer = {g.id for g in book.gpus if g.segment is GpuSegment.CONSUMER}
    named = [(f"constraints.allowed_gpus[{i}]", g) for i, g in enumerate(constraints.allowed_gpus)]
    named += [(f"constraints.owned[{i}].gpu", o.gpu) for i, o in enumerate(constraints.owned)]
    violations = [
        FieldViolation(path, f"{gpu} {CONSUMER_GPU_REASON}") for path, gpu in named if gpu in consumer
    ]
    if violations:
        raise InvalidRequest(violations)


def _check_owned_rental_only(constraints: Constraints, book: Pricebook) -> None:
    """Owned GPUs need a server model (``constraints`` has ids)."""
    rental_only = catalog.rental_only_ids(book)
    violations = [
        FieldViolation(f"constraints.owned[{i}].gpu", f"{o.gpu} {catalog.OWNED_RENTAL_ONLY}")
        for i, o in enumerate(constraints.owned)
        if o.gpu in rental_only
    ]
    if violations:
        raise InvalidRequest(violations)


def _training(training: tuple[TrainingWorkload, ...], refs: References) -> tuple[TrainingWorkload, ...]:
    out = []
    for j, t in enumerate(training):
        refs.model(t.model, f"training[{j}].model")
        if t.reference is None:
            out.append(t)
            continue
        gpu = refs.gpu(t.reference.gpu, f"training[{j}].reference.gpu")
        out.append(t.model_copy(update={"reference": t.reference.model_copy(update={"gpu": gpu})}))
    return tuple(out)


def _constraints(c: Constraints, refs: References) -> Constraints:
    allowed = tuple(refs.gpu(g, f"constraints.allowed_gpus[{i}]") for i, g in enumerate(c.allowed_gpus))
    owned = tuple(
        o.model_copy(update={"gpu": refs.gpu(o.gpu, f"constraints.owned[{i}].gpu")})
        for i, o in enumerate(c.owned)
    )
    bounds = tuple(
        b.model_copy(update={"gpu": refs.gpu(b.gpu, f"constraints.count_bounds[{i}].gpu")})
        for i, b in enumerate(c.count_bounds)
    )
    paths = tuple(
        p
        if p.gpu is None
        else p.model_copy(update={"gpu": refs.gpu(p.gpu, f"constraints.price_by_year[{i}].gpu")})
        for i, p in enumerate(c.price_by_year)
    )
    available = tuple(
        a.model_copy(update={"gpu": refs.gpu(a.gpu, f"constraints.available_from_year[{i}].gpu")})
        for i, a in enumerate(c.available_from_year)
    )
    return c.model_copy(
        update={
            "allowed_gpus": allowed,
            "owned": owned,
            "count_bounds": bounds,
            "price_by_year": paths,
            "available_from_year": available,
        }
    )


def _with_ids(request: PlanRequest, refs: References) -> PlanRequest:
    """``request`` with every GPU alias replaced by its id; unknown references go to ``refs``."""
    for i, w in enumerate(request.inference):
        refs.model(w.model, f"inference[{i}].model")
    training = _training(request.training, refs)
    constraints = _constraints(request.constraints, refs)
    offers = tuple(
        o if o.gpu is None else o.model_copy(update={"gpu": refs.gpu(o.gpu, f"overrides.offers[{i}].gpu")})
        for i, o in enumerate(request.overrides.offers)
    )
    overrides = request.overrides.model_copy(update={"offers": offers})
    return request.model_copy(
        update={"training": training, "constraints": constraints, "overrides": overrides}
    )


def resolve(request: PlanRequest, book: Pricebook) -> ResolvedRequest:
    """``request`` resolved against ``book``: raises ``InvalidRequest`` (domain paths) for every
    unknown GPU or model, else for every override that cannot apply."""
    refs = References(book)
    resolved = _with_ids(request, refs)
    refs.raise_if_any()
    _check_consumer_gpus(resolved.constraints, book)
    _check_owned_rental_only(resolved.constraints, book)
    new_book, applied = apply_overrides(book, resolved.overrides)
    _check_pinned_offers(resolved.constraints, new_book)
    check_measurements(resolved.measurements, new_book)
    check_periods(resolved, new_book)
    return ResolvedRequest(resolved, new_book, tuple(applied), _allowed_ids(resolved.constraints, book))


def _check_pinned_offers(constraints: Constraints, book: Pricebook) -> None:
    """Pinned offers must exist in the book the plan uses (a request's added quote counts)."""
    refs = References(book)
    for i, offer_id in enumerate(constraints.pinned_offers):
        try:
            catalog.offer(book, offer_id)
        except UnknownEntryError as exc:
            refs.violations.append(
                FieldViolation(f"constraints.pinned_offers[{i}]", unknown_entry_reason(exc))
            )
    refs.raise_if_any()


def check_measurements(points: Sequence[MeasuredPoint], book: Pricebook) -> None:
    """Measured points name catalogue GPUs and models, and fit (``solver.perf.measured``)."""
    refs = References(book)
    for i, point in enumerate(points):
        refs.gpu(point.gpu, f"measurements[{i}].gpu")
        try:
            catalog.model(book, point.model)
        except UnknownEntryError as exc:
            refs.violations.append(FieldViolation(f"measurements[{i}].model", unknown_entry_reason(exc)))
    refs.raise_if_any()
    fit_corrections(points, book)


def resolve_fleet(fleet: Fleet, book: Pricebook) -> Fleet:
    """``fleet`` with its items' GPUs as catalogue ids; raises ``InvalidRequest`` (paths
    ``items[i].gpu``) for unknown ones."""
    refs = References(book)
    items = tuple(
        item.model_copy(update={"gpu": refs.gpu(item.gpu, f"items[{i}].gpu")})
        for i, item in enumerate(fleet.items)
    )
    refs.raise_if_any()
    for i, item in enumerate(items):
        if item.server is not None:
            refs.server(item.server, item.gpu, f"items[{i}].server")
    refs.raise_if_any()
    return fleet.model_copy(update={"items": items})
