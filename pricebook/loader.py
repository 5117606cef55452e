"""Load a pricebook from YAML files, refuse a broken one, and fingerprint its content.

A pricebook is a directory of ``*.yaml`` files. Each file is a mapping whose top-level keys are
``version``, ``site`` (each exactly once across the directory) and the collections ``gpus``,
``servers``, ``offers``, ``api_prices``, ``models`` (lists, which may be split over several files).
How the data is spread over files does not matter: the content hash is computed from the parsed
content, so moving, reformatting or reordering entries keeps it, and changing any value changes it.

Every problem is raised as ``PricebookError(file, entry, field, reason)``: the service refuses to
start on a broken book rather than run half-configured.
"""

from __future__ import annotations

import datetime as dt
import enum
import functools
import hashlib
import json
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from decimal import Decimal
from importlib import resources
from pathlib import Path
from typing import Any

import structlog
import yaml
from pydantic import BaseModel, ValidationError

from pricebook.catalog import (
    AliasCollisionError,
    build_alias_index,
    gpu_keys,
    model_keys,
    normalize_gpu_key,
    normalize_key,
)
from pricebook.errors import PricebookError
from pricebook.schema import (
    ApiPrice,
    ColocationBasis,
    GpuClass,
    GpuSpec,
    ModelArch,
    Money,
    Offer,
    OfferKind,
    Pricebook,
    ServerSpec,
    SiteAssumptions,
    SiteModel,
    Sourced,
)

log = structlog.get_logger(__name__)

DATA_PACKAGE = "pricebook.data"
YAML_SUFFIXES = (".yaml", ".yml")
NO_ENTRY = "-"
"""Placeholder for ``PricebookError.entry``/``field`` when the problem is not inside an entry."""

_COLLECTIONS: dict[str, type[Sourced]] = {
    "gpus": GpuSpec,
    "servers": ServerSpec,
    "offers": Offer,
    "api_prices": ApiPrice,
    "models": ModelArch,
}
_TOP_LEVEL_KEYS = ("version", "site", *_COLLECTIONS)
_SITE_SETTINGS_HASHED_WHEN_SET: dict[str, Any] = {
    "site_model": SiteModel.COLOCATION,
    "own_site_space_price_month": None,
    "own_site_space_basis": ColocationBasis.PER_RACK_UNIT,
    "residual_value_credit": True,
}
"""Site settings that enter the content hash only when they differ from their default, so a book
that leaves them alone keeps the hash it had before they existed (answers quote the hash)."""
_GPU_FIELDS_HASHED_WHEN_SET: dict[str, Any] = {"rental_only": False}
"""The same for GPU fields."""
_META_FIELDS = frozenset({"source", "as_of", "field_sources", "estimated_fields", "notes"})


# --------------------------------------------------------------------------------------------
# Public entry points
# --------------------------------------------------------------------------------------------


@functools.cache
def load_default() -> Pricebook:
    """The pricebook embedded in the package (``pricebook/data``), loaded once per process."""
    root = resources.files(DATA_PACKAGE)
    files = sorted(
        (f"pricebook/data/{item.name}", item.read_text(encoding="utf-8"))
        for item in root.iterdir()
        if item.is_file() and item.name.endswith(YAML_SUFFIXES)
    )
    return load_texts(files)


def load_dir(path: str | Path) -> Pricebook:
    """Load every ``*.yaml`` file of a directory (not recursive) as one pricebook."""
    directory = Path(path)
    if not directory.is_dir():
        raise PricebookError(str(directory), NO_ENTRY, NO_ENTRY, "not a directory")
    files = sorted(
        (str(p), p.read_text(encoding="utf-8"))
        for p in directory.iterdir()
        if p.is_file() and p.suffix in YAML_SUFFIXES
    )
    if not files:
        raise PricebookError(str(directory), NO_ENTRY, NO_ENTRY, "no *.yaml files in the directory")
    return load_texts(files)


def load_texts(files: Sequence[tuple[str, str]]) -> Pricebook:
    """Build a pricebook from ``(file name, YAML text)`` pairs; names are used only in errors."""
    raw = _RawBook()
    for name, text in files:
        raw.add_file(name, _parse_yaml(name, text))
    book = raw.build()
    log.info(
        "pricebook.loaded",
        version=book.version,
        content_hash=book.content_hash,
        gpus=len(book.gpus),
        servers=len(book.servers),
        offers=len(book.offers),
        api_prices=len(book.api_prices),
        models=len(book.models),
    )
    return book


def content_hash(book: Pricebook) -> str:
    """sha256 of the canonical content of ``book`` (its own ``content_hash`` field excluded).

    Canonical: collections sorted by id, mapping keys sorted, Decimals normalised (``15000000`` and
    ``1.5E+7`` are one amount), dates in ISO form, compact JSON in UTF-8. Independent of the YAML
    layout and of the machine.
    """
    dumped = book.model_dump(mode="python", exclude={"content_hash"})
    site = dumped["site"]
    for name, default in _SITE_SETTINGS_HASHED_WHEN_SET.items():
        if site[name] == default:
            del site[name]
    for gpu in dumped["gpus"]:
        for name, default in _GPU_FIELDS_HASHED_WHEN_SET.items():
            if gpu[name] == default:
                del gpu[name]
    for name in _COLLECTIONS:
        dumped[name] = sorted(dumped[name], key=lambda entry: str(entry["id"]))
    canonical = json.dumps(_canonical(dumped), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def with_content_hash(book: Pricebook) -> Pricebook:
    """``book`` with its ``content_hash`` set to the hash of its content."""
    return book.model_copy(update={"content_hash": content_hash(book)})


# --------------------------------------------------------------------------------------------
# YAML parsing
# --------------------------------------------------------------------------------------------


_SafeLoaderBase: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's parser when available (about 10x faster); the same safe constructors either way."""


class _StrictLoader(_SafeLoaderBase):  # type: ignore[valid-type,misc]
    """SafeLoader that refuses duplicate keys (plain PyYAML silently keeps the last one)."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping",
                node.start_mark,
                f"found duplicate key {key!r}",
                key_node.start_mark,
            )
        seen.add(key)
    mapping: dict[Any, Any] = loader.construct_mapping(node, deep=deep)
    return mapping


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _parse_yaml(name: str, text: str) -> Mapping[str, Any]:
    try:
        data = yaml.load(text, Loader=_StrictLoader)  # _StrictLoader is a SafeLoader
    except yaml.YAMLError as exc:
        raise PricebookError(name, NO_ENTRY, NO_ENTRY, f"unparseable YAML: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise PricebookError(
            name, NO_ENTRY, NO_ENTRY, f"top level must be a mapping, got {type(data).__name__}"
        )
    return data


# --------------------------------------------------------------------------------------------
# Assembly and cross-checks
# --------------------------------------------------------------------------------------------


class _RawBook:
    """Entries validated one by one, remembering the file each came from (for error messages)."""

    def __init__(self) -> None:
        self.version: tuple[str, str] | None = None
        self.site: tuple[str, SiteAssumptions] | None = None
        self.entries: dict[str, list[tuple[str, Sourced]]] = {name: [] for name in _COLLECTIONS}

    def add_file(self, name: str, data: Mapping[str, Any]) -> None:
        for key, value in data.items():
            if key not in _TOP_LEVEL_KEYS:
                reason = f"unknown top-level key {key!r} (expected one of {', '.join(_TOP_LEVEL_KEYS)})"
                raise PricebookError(name, NO_ENTRY, str(key), reason)
            if key == "version":
                self._set_version(name, value)
            elif key == "site":
                self._set_site(name, value)
            else:
                self._add_collection(name, key, value)

    def _set_version(self, name: str, value: Any) -> None:
        if self.version is not None:
            raise PricebookError(name, "book", "version", f"version already set in {self.version[0]}")
        if not isinstance(value, str) or not value.strip():
            raise PricebookError(name, "book", "version", "version must be a non-empty string")
        self.version = (name, value)

    def _set_site(self, name: str, value: Any) -> None:
        if self.site is not None:
            raise PricebookError(name, "site", NO_ENTRY, f"site already set in {self.site[0]}")
        site = _validate(SiteAssumptions, name, "site", value)
        assert isinstance(site, SiteAssumptions)
        self.site = (name, site)

    def _add_collection(self, name: str, key: str, value: Any) -> None:
        if not isinstance(value, list):
            raise PricebookError(name, NO_ENTRY, key, f"{key} must be a list, got {type(value).__name__}")
        model_type = _COLLECTIONS[key]
        for position, item in enumerate(value):
            entry_name = item.get("id") if isinstance(item, dict) else None
            label = str(entry_name) if entry_name is not None else f"{key}[{position}]"
            if not isinstance(item, dict):
                raise PricebookError(name, label, NO_ENTRY, "entry must be a mapping")
            self.entries[key].append((name, _validate(model_type, name, label, item)))

    def build(self) -> Pricebook:
        if self.version is None:
            raise PricebookError("<pricebook>", "book", "version", "missing: no file sets 'version'")
        if self.site is None:
            raise PricebookError("<pricebook>", "site", NO_ENTRY, "missing: no file has a 'site' section")
        if not self.entries["gpus"]:
            raise PricebookError("<pricebook>", "gpus", NO_ENTRY, "missing: no file lists any GPU")
        for key, entries in self.entries.items():
            _check_unique_ids(key, entries)
            for file, entry in entries:
                _check_provenance_fields(file, _entry_id(entry), entry)
        site_file, site = self.site
        _check_provenance_fields(site_file, "site", site)
        _check_site(site_file, site)
        gpus = self._gpus_with_servers()
        _check_references(self.entries)
        _check_prices(self.entries)
        _check_aliases(self.entries)
        book = Pricebook(
            version=self.version[1],
            gpus=gpus,
            servers=tuple(e for _, e in self.entries["servers"] if isinstance(e, ServerSpec)),
            offers=tuple(e for _, e in self.entries["offers"] if isinstance(e, Offer)),
            api_prices=tuple(e for _, e in self.entries["api_prices"] if isinstance(e, ApiPrice)),
            site=site,
            models=tuple(e for _, e in self.entries["models"] if isinstance(e, ModelArch)),
        )
        return with_content_hash(book)

    def _gpus_with_servers(self) -> tuple[GpuSpec, ...]:
        """GPUs with ``servers`` filled from servers.yaml (an explicit list must agree with it)."""
        by_gpu: dict[str, list[str]] = {}
        for _, srv in self.entries["servers"]:
            assert isinstance(srv, ServerSpec)
            by_gpu.setdefault(srv.gpu, []).append(srv.id)
        result: list[GpuSpec] = []
        for file, spec in self.entries["gpus"]:
            assert isinstance(spec, GpuSpec)
            derived = tuple(sorted(by_gpu.get(spec.id, ())))
            if spec.servers and tuple(sorted(spec.servers)) != derived:
                reason = (
                    f"lists {sorted(spec.servers)} but the servers section has {list(derived)} for this GPU"
                )
                raise PricebookError(file, spec.id, "servers", reason)
            result.append(spec.model_copy(update={"servers": derived}))
        return tuple(result)


def _validate(model_type: type[BaseModel], file: str, entry: str, data: Any) -> Any:
    try:
        return model_type.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or NO_ENTRY
        more = f" (and {exc.error_count() - 1} more problems)" if exc.error_count() > 1 else ""
        reason = f"{first['msg']}{more}"
        if first["type"] == "missing":
            reason = f"missing required field{more}"
        raise PricebookError(file, entry, field, reason) from exc


def _entry_id(entry: Sourced) -> str:
    return str(getattr(entry, "id", NO_ENTRY))


def _check_unique_ids(key: str, entries: Sequence[tuple[str, Sourced]]) -> None:
    first_file: dict[str, str] = {}
    for file, entry in entries:
        entry_id = _entry_id(entry)
        if entry_id in first_file:
            raise PricebookError(
                file, entry_id, "id", f"duplicate id in {key} (first defined in {first_file[entry_id]})"
            )
        first_file[entry_id] = file


def _check_provenance_fields(file: str, entry_id: str, entry: Sourced) -> None:
    """``estimated_fields`` and ``field_sources`` must name real fields (typos hide estimates)."""
    known = set(type(entry).model_fields) - (_META_FIELDS - {"as_of"})
    for name in entry.estimated_fields:
        if name not in known:
            raise PricebookError(
                file, entry_id, "estimated_fields", f"{name!r} is not a field of {type(entry).__name__}"
            )
    for name in entry.field_sources:
        if name not in known:
            raise PricebookError(
                file, entry_id, "field_sources", f"{name!r} is not a field of {type(entry).__name__}"
            )


def _check_site(file: str, site: SiteAssumptions) -> None:
    if site.colocation_price_month.amount < 0:
        raise PricebookError(file, "site", "colocation_price_month", "must not be negative")
    classes = [curve.gpu_class for curve in site.residual_curves]
    if len(set(classes)) != len(classes):
        raise PricebookError(file, "site", "residual_curves", "one curve per GPU class")
    if GpuClass.DATACENTER not in classes:
        raise PricebookError(file, "site", "residual_curves", "a datacenter curve is required (the fallback)")
    kinds = [fabric.kind for fabric in site.network_fabrics]
    if len(set(kinds)) != len(kinds):
        raise PricebookError(file, "site", "network_fabrics", "one fabric per kind")
    for position, fabric in enumerate(site.network_fabrics):
        for part in (fabric.switch_port_per_gpu, fabric.optics_per_gpu, fabric.nic):
            if part.price.amount < 0:
                raise PricebookError(
                    file, "site", f"network_fabrics.{position}", "prices must not be negative"
                )
    pairs: set[tuple[str, str]] = set()
    for position, rate in enumerate(site.fx_rates):
        if rate.base == rate.quote:
            raise PricebookError(file, "site", f"fx_rates.{position}", "base and quote currency are the same")
        pair = (rate.base, rate.quote)
        if pair in pairs or pair[::-1] in pairs:
            raise PricebookError(
                file, "site", f"fx_rates.{position}", f"second rate for {rate.base}/{rate.quote}"
            )
        pairs.add(pair)


def _check_references(entries: Mapping[str, Sequence[tuple[str, Sourced]]]) -> None:
    gpu_ids = {_entry_id(e) for _, e in entries["gpus"]}
    servers: dict[str, ServerSpec] = {}
    for file, srv in entries["servers"]:
        assert isinstance(srv, ServerSpec)
        if srv.gpu not in gpu_ids:
            raise PricebookError(file, srv.id, "gpu", f"unknown GPU {srv.gpu!r}")
        if srv.scale_up_domain_size > srv.gpus_per_server:
            raise PricebookError(file, srv.id, "scale_up_domain_size", "larger than gpus_per_server")
        for group in srv.p2p_groups:
            bad = [slot for slot in group if not 0 <= slot < srv.gpus_per_server]
            if bad:
                raise PricebookError(
                    file, srv.id, "p2p_groups", f"slot(s) {bad} outside 0..{srv.gpus_per_server - 1}"
                )
        servers[srv.id] = srv
    rental_only = {_entry_id(e) for _, e in entries["gpus"] if isinstance(e, GpuSpec) and e.rental_only}
    for file, off in entries["offers"]:
        assert isinstance(off, Offer)
        error = functools.partial(PricebookError, file, off.id)
        check_offer_references(off, gpu_ids, servers, error, rental_only=rental_only)
    _check_rental_only(entries, rental_only)
    model_ids = {_entry_id(e) for _, e in entries["models"]}
    for file, api in entries["api_prices"]:
        assert isinstance(api, ApiPrice)
        if api.model not in model_ids:
            raise PricebookError(
                file, api.id, "model", f"unknown model {api.model!r} (use the Hugging Face id)"
            )


def check_offer_references(
    off: Offer,
    gpu_ids: Iterable[str],
    servers: Mapping[str, ServerSpec],
    error: Callable[[str, str], Exception],
    *,
    rental_only: Collection[str] = (),
) -> None:
    """Raise ``error(field, reason)`` if the offer names an unknown GPU/server or is inconsistent
    (a purchase or lease of a ``rental_only`` GPU among them).

    Shared by the loader and by request overrides (which add vendor quotes).
    """
    if off.gpu not in set(gpu_ids):
        raise error("gpu", f"unknown GPU {off.gpu!r}")
    if off.gpu in rental_only and off.kind in RENTAL_ONLY_REFUSED:
        raise error(
            "kind",
            f"{off.gpu} is rental_only (no server model to buy it in): only reserved or on_demand offers",
        )
    if off.kind == OfferKind.PURCHASE_SERVER and off.server is None:
        raise error("server", "a purchase_server offer must name its server")
    if off.server is not None:
        srv = servers.get(off.server)
        if srv is None:
            raise error("server", f"unknown server {off.server!r}")
        if srv.gpu != off.gpu:
            raise error("server", f"server {off.server!r} holds {srv.gpu!r}, not {off.gpu!r}")
    if off.kind == OfferKind.RESERVED and off.term_months <= 0:
        raise error("term_months", "a reserved offer needs its commitment term (months > 0)")
    if off.kind == OfferKind.LEASE:
        _check_lease(off, error)
    if off.price.amount <= 0:
        raise error("price", f"price must be positive, got {off.price.amount}")


RENTAL_ONLY_REFUSED = frozenset({OfferKind.PURCHASE_GPU, OfferKind.PURCHASE_SERVER, OfferKind.LEASE})
"""Offer kinds a ``rental_only`` GPU cannot have."""


def _check_rental_only(entries: Mapping[str, Sequence[tuple[str, Sourced]]], rental_only: set[str]) -> None:
    """A ``rental_only`` GPU lives in no server model and has at least one rental offer."""
    for file, srv in entries["servers"]:
        assert isinstance(srv, ServerSpec)
        if srv.gpu in rental_only:
            raise PricebookError(file, srv.id, "gpu", f"{srv.gpu} is rental_only: no server model holds it")
    rented = {
        o.gpu for _, o in entries["offers"] if isinstance(o, Offer) and o.kind not in RENTAL_ONLY_REFUSED
    }
    for file, gpu in entries["gpus"]:
        if isinstance(gpu, GpuSpec) and gpu.rental_only and gpu.id not in rented:
            raise PricebookError(
                file, gpu.id, "rental_only", "a rental_only GPU needs a reserved or on_demand offer"
            )


def _check_lease(off: Offer, error: Callable[[str, str], Exception]) -> None:
    """A lease names its server and term, and prices its buy-out and the hardware it finances."""
    if off.server is None:
        raise error("server", "a lease offer must name its server")
    if off.term_months <= 0:
        raise error("term_months", "a lease offer needs its term (months > 0)")
    if off.buyout_price is None or off.buyout_price.amount < 0:
        raise error("buyout_price", "a lease offer needs its buy-out price (0 or more)")
    if off.financed_price is None or off.financed_price.amount <= 0:
        raise error("financed_price", "a lease offer needs the cash price it finances (more than 0)")


def _check_prices(entries: Mapping[str, Sequence[tuple[str, Sourced]]]) -> None:
    for file, srv in entries["servers"]:
        assert isinstance(srv, ServerSpec)
        if srv.host_cost.amount < 0:
            raise PricebookError(file, srv.id, "host_cost", f"negative price {srv.host_cost.amount}")
    for file, api in entries["api_prices"]:
        assert isinstance(api, ApiPrice)
        for field in ("input_per_mtok", "output_per_mtok"):
            money: Money = getattr(api, field)
            if money.amount < 0:
                raise PricebookError(file, api.id, field, f"negative price {money.amount}")


def _check_aliases(entries: Mapping[str, Sequence[tuple[str, Sourced]]]) -> None:
    for key, keys_of, normalize in (
        ("gpus", gpu_keys, normalize_gpu_key),
        ("models", model_keys, normalize_key),
    ):
        files = {_entry_id(e): f for f, e in entries[key]}
        try:
            build_alias_index(((_entry_id(e), keys_of(e)) for _, e in entries[key]), normalize)  # type: ignore[arg-type]
        except AliasCollisionError as exc:
            raise PricebookError(files[exc.second], exc.second, "aliases", str(exc)) from exc


# --------------------------------------------------------------------------------------------
# Canonical form for hashing
# --------------------------------------------------------------------------------------------


def _canonical(value: Any) -> Any:
    if isinstance(value, Decimal):
        normalized = value.normalize()
        return "0" if normalized.is_zero() else format(normalized, "f")
    if isinstance(value, bool) or value is None or isinstance(value, str | int):
        return value
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, enum.Enum):
        return _canonical(value.value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    msg = f"cannot canonicalise {type(value).__name__}"
    raise TypeError(msg)
