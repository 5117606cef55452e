"""The pricebook: GPUs, servers, offers, API prices, site assumptions and model architectures.

Load with ``load_default()`` (embedded data) or ``load_dir(path)``; look entries up with the
functions of ``pricebook.catalog``; convert money with ``pricebook.money``; apply per-request
overrides with ``pricebook.overrides.apply_overrides``.
"""

from pricebook.catalog import (
    api_prices_for,
    catalog_entries,
    gpu,
    model,
    offer,
    offers_for,
    server,
    servers_for,
)
from pricebook.errors import PricebookError, UnknownEntryError
from pricebook.loader import content_hash, load_default, load_dir
from pricebook.money import convert

__all__ = [
    "PricebookError",
    "UnknownEntryError",
    "api_prices_for",
    "catalog_entries",
    "content_hash",
    "convert",
    "gpu",
    "load_default",
    "load_dir",
    "model",
    "offer",
    "offers_for",
    "server",
    "servers_for",
]
