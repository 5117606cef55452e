"""Lookups in a loaded pricebook: GPUs and models by id or alias, servers, offers, API prices.

Aliases are matched after normalisation (case, spaces, ``_`` and repeated ``-`` folded; for GPUs a
leading vendor word such as "NVIDIA" or "GeForce" is dropped), so "H100 SXM", "h100_sxm" and
"NVIDIA H100 SXM" all find ``h100-sxm``. A key that matches nothing raises ``UnknownEntryError``
with the closest ids (difflib) as suggestions.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from pricebook.errors import UnknownEntryError
from pricebook.schema import (
    ApiPrice,
    GpuClass,
    GpuSegment,
    GpuSpec,
    ModelArch,
    NetworkFabric,
    NetworkPrice,
    Offer,
    OfferKind,
    Pricebook,
    ResidualCurve,
    ServerSpec,
    SiteAssumptions,
    Sourced,
)

_GPU_VENDOR_WORDS = ("nvidia-", "amd-", "geforce-", "instinct-")
_MAX_SUGGESTIONS = 3
_INDEX_CACHE_SIZE = 64

CatalogKind = Literal["gpu", "server", "offer", "api_price", "model", "site"]
CATALOG_KINDS: tuple[CatalogKind, ...] = ("gpu", "server", "offer", "api_price", "model", "site")


def normalize_key(key: str) -> str:
    """Fold case, whitespace, ``_`` and repeated ``-`` so that spellings of one name compare equal."""
    folded = re.sub(r"[\s_]+", "-", key.strip().lower())
    return re.sub(r"-{2,}", "-", folded).strip("-")


def normalize_gpu_key(key: str) -> str:
    """``normalize_key`` plus dropping leading vendor words ("NVIDIA GeForce RTX 4090" → "rtx-4090")."""
    folded = normalize_key(key)
    stripped = True
    while stripped:
        stripped = False
        for word in _GPU_VENDOR_WORDS:
            if folded.startswith(word):
                folded = folded[len(word) :]
                stripped = True
    return folded


def gpu_keys(spec: GpuSpec) -> tuple[str, ...]:
    """Every spelling that resolves to this GPU: id, display name and aliases."""
    return (spec.id, spec.name, *spec.aliases)


def model_keys(arch: ModelArch) -> tuple[str, ...]:
    """Every spelling that resolves to this model: HF id, the repo name without the org, aliases."""
    return (arch.id, arch.id.rsplit("/", 1)[-1], *arch.aliases)


class AliasCollisionError(ValueError):
    """Two entries claim the same (normalised) name."""

    def __init__(self, key: str, first: str, second: str) -> None:
        self.key = key
        self.first = first
        self.second = second
        super().__init__(f"name {key!r} of {second!r} already names {first!r}")


def build_alias_index(
    entries: Iterable[tuple[str, Sequence[str]]], normalize: Callable[[str], str]
) -> dict[str, str]:
    """Map every normalised key to its entry id; raise ``AliasCollisionError`` on a clash."""
    index: dict[str, str] = {}
    for entry_id, keys in entries:
        for key in keys:
            folded = normalize(key)
            owner = index.get(folded)
            if owner is not None and owner != entry_id:
                raise AliasCollisionError(key, owner, entry_id)
            index[folded] = entry_id
    return index


@dataclass(frozen=True, slots=True)
class _Index:
    gpus: dict[str, GpuSpec]
    gpu_aliases: dict[str, str]
    models: dict[str, ModelArch]
    model_aliases: dict[str, str]
    servers: dict[str, ServerSpec]
    offers: dict[str, Offer]


_index_cache: dict[int, tuple[Pricebook, _Index]] = {}
"""Indexes of recently used books, by object identity. The book is kept alongside so that an id is
never reused while cached, and a ``model_copy``'d book (even with a stale ``content_hash``) gets its
own index."""


def _index(book: Pricebook) -> _Index:
    cached = _index_cache.get(id(book))
    if cached is not None and cached[0] is book:
        return cached[1]
    built = _Index(
        gpus={g.id: g for g in book.gpus},
        gpu_aliases=build_alias_index(((g.id, gpu_keys(g)) for g in book.gpus), normalize_gpu_key),
        models={m.id: m for m in book.models},
        model_aliases=build_alias_index(((m.id, model_keys(m)) for m in book.models), normalize_key),
        servers={s.id: s for s in book.servers},
        offers={o.id: o for o in book.offers},
    )
    if len(_index_cache) >= _INDEX_CACHE_SIZE:
        _index_cache.pop(next(iter(_index_cache)))
    _index_cache[id(book)] = (book, built)
    return built


def _suggest(key: str, candidates: Iterable[str]) -> tuple[str, ...]:
    return tuple(difflib.get_close_matches(key, list(candidates), n=_MAX_SUGGESTIONS, cutoff=0.5))


def gpu(book: Pricebook, key: str) -> GpuSpec:
    """The GPU with this id or alias (case/spacing-insensitive)."""
    idx = _index(book)
    gpu_id = idx.gpu_aliases.get(normalize_gpu_key(key))
    if gpu_id is None:
        raise UnknownEntryError("gpu", key, _suggest(normalize_gpu_key(key), idx.gpus))
    return idx.gpus[gpu_id]


def plannable_gpus(book: Pricebook, allow_consumer: bool) -> tuple[GpuSpec, ...]:
    """The GPUs a request that names none may plan with: every one, but consumer cards only when
    allowed (``GpuSegment.CONSUMER``)."""
    return tuple(g for g in book.gpus if allow_consumer or g.segment is not GpuSegment.CONSUMER)


def resolve_gpu_id(book: Pricebook, key: str) -> str:
    return gpu(book, key).id


def model(book: Pricebook, key: str) -> ModelArch:
    """The model with this Hugging Face id, repo name or short alias (case-insensitive)."""
    idx = _index(book)
    model_id = idx.model_aliases.get(normalize_key(key))
    if model_id is None:
        close = _suggest(normalize_key(key), idx.model_aliases)
        raise UnknownEntryError("model", key, tuple(dict.fromkeys(idx.model_aliases[c] for c in close)))
    return idx.models[model_id]


def server(book: Pricebook, server_id: str) -> ServerSpec:
    idx = _index(book)
    found = idx.servers.get(server_id) or idx.servers.get(normalize_key(server_id))
    if found is None:
        raise UnknownEntryError("server", server_id, _suggest(server_id, idx.servers))
    return found


def server_holds(server: ServerSpec, gpu: GpuSpec) -> bool:
    """Whether ``server`` takes ``gpu`` (its own GPU, or one the GPU lists among its servers)."""
    return server.gpu == gpu.id or server.id in gpu.servers


def gpu_class(spec: GpuSpec) -> GpuClass:
    """The resale market of a GPU: HBM parts are datacentre hardware, GDDR cards workstation/consumer."""
    return GpuClass.DATACENTER if spec.memory_type.upper().startswith("HBM") else GpuClass.WORKSTATION


def residual_curve(site: SiteAssumptions, spec: GpuSpec) -> ResidualCurve:
    """The market-value curve of ``spec``'s class (the datacentre curve when its class has none)."""
    curves = {c.gpu_class: c for c in site.residual_curves}
    return curves.get(gpu_class(spec)) or curves[GpuClass.DATACENTER]


def network_fabric(site: SiteAssumptions, server: ServerSpec) -> NetworkFabric | None:
    """The priced scale-out fabric ``server`` joins (by its NIC's kind); None for a box without one
    NIC per GPU or a fabric kind the book does not price."""
    nics = server.scale_out_nics
    if nics is None:
        return None
    return next((f for f in site.network_fabrics if f.kind == nics.kind), None)


def network_parts(fabric: NetworkFabric, server: ServerSpec) -> tuple[NetworkPrice, ...]:
    """The fabric components a server of ``server`` pays: switch port and optics, and the NIC
    unless its host price includes it."""
    parts = (fabric.switch_port_per_gpu, fabric.optics_per_gpu)
    return parts if server.host_includes_nics else (*parts, fabric.nic)


def offer(book: Pricebook, offer_id: str) -> Offer:
    idx = _index(book)
    found = idx.offers.get(offer_id)
    if found is None:
        raise UnknownEntryError("offer", offer_id, _suggest(offer_id, idx.offers))
    return found


OWNED_RENTAL_ONLY = (
    "is rental_only in the pricebook: no server model holds it, so the power and space of owned ones "
    "are unknown; plan it rented (reserved or on demand)"
)
"""Why a rental-only GPU cannot be owned (after its id)."""


def rental_only_ids(book: Pricebook) -> frozenset[str]:
    """GPUs only rented, never bought (``GpuSpec.rental_only``)."""
    return frozenset(g.id for g in book.gpus if g.rental_only)


def servers_for(book: Pricebook, gpu_key: str) -> tuple[ServerSpec, ...]:
    """Servers that hold this GPU (by id or alias), in book order."""
    gpu_id = gpu(book, gpu_key).id
    return tuple(s for s in book.servers if s.gpu == gpu_id)


def offers_for(book: Pricebook, gpu_key: str, kind: OfferKind | None = None) -> tuple[Offer, ...]:
    """Offers for this GPU (by id or alias), optionally of one kind, in book order."""
    gpu_id = gpu(book, gpu_key).id
    return tuple(o for o in book.offers if o.gpu == gpu_id and (kind is None or o.kind == kind))


def api_prices_for(book: Pricebook, model_key: str) -> tuple[ApiPrice, ...]:
    """Per-token API prices for this model (by id or alias); empty if no provider is listed."""
    model_id = model(book, model_key).id
    return tuple(p for p in book.api_prices if p.model == model_id)


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    """One row of ``ListCatalog`` / ``fleetplan catalog``: the entry itself plus its kind and key."""

    kind: CatalogKind
    id: str
    entry: Sourced

    @property
    def source(self) -> str:
        return self.entry.source

    @property
    def as_of(self) -> str:
        return self.entry.as_of.isoformat()


def catalog_entries(book: Pricebook, kinds: Iterable[str] = ()) -> tuple[CatalogEntry, ...]:
    """Every entry of the requested kinds (all kinds when empty), for listing with provenance.

    Unknown kinds raise ``UnknownEntryError`` naming the valid ones. The site appears as one entry
    with id ``site``; each FX rate is part of it.
    """
    wanted = tuple(dict.fromkeys(kinds)) or CATALOG_KINDS
    for kind in wanted:
        if kind not in CATALOG_KINDS:
            raise UnknownEntryError("catalog kind", kind, _suggest(kind, CATALOG_KINDS) or CATALOG_KINDS)
    rows: list[CatalogEntry] = []
    for kind in CATALOG_KINDS:
        if kind not in wanted:
            continue
        rows.extend(CatalogEntry(kind, entry_id, entry) for entry_id, entry in _entries_of(book, kind))
    return tuple(rows)


def _entries_of(book: Pricebook, kind: CatalogKind) -> Iterable[tuple[str, Sourced]]:
    site: SiteAssumptions = book.site
    match kind:
        case "gpu":
            return ((g.id, g) for g in book.gpus)
        case "server":
            return ((s.id, s) for s in book.servers)
        case "offer":
            return ((o.id, o) for o in book.offers)
        case "api_price":
            return ((p.id, p) for p in book.api_prices)
        case "model":
            return ((m.id, m) for m in book.models)
        case "site":
            return (("site", site),)
