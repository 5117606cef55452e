"""The default book contains every id the issue (#3) requires, and every number is sourced and dated."""

from __future__ import annotations

import datetime as dt

import pytest

from pricebook import catalog
from pricebook.loader import load_default
from pricebook.schema import Pricebook

REQUIRED_GPU_IDS = (
    "a100-sxm-80gb",
    "a100-pcie-80gb",
    "h100-sxm",
    "h100-pcie",
    "h100-nvl",
    "h200-sxm",
    "h200-nvl",
    "b200",
    "b300",
    "l40s",
    "l4",
    "rtx-pro-6000-ws",
    "rtx-pro-6000-server",
    "rtx-6000-ada",
    "rtx-5090",
    "rtx-4090",
    "mi300x",
    "mi325x",
    "mi355x",
)

# The model list, written as a person would type it (short aliases resolve to HF ids).
REQUIRED_MODELS = (
    "llama-3.1-8b",
    "llama-3.1-70b",
    "llama-3.1-405b",
    "llama-3.3-70b",
    "llama-2-7b",
    "llama-2-70b",
    "qwen2.5-7b",
    "qwen2.5-14b",
    "qwen2.5-32b",
    "qwen2.5-72b",
    "qwen3-8b",
    "qwen3-14b",
    "qwen3-32b",
    "qwen3-30b-a3b",
    "qwen3-235b-a22b",
    "mistral-7b",
    "mistral-small-24b",
    "ministral-3-14b",
    "mixtral-8x7b",
    "mixtral-8x22b",
    "gemma-3-12b",
    "gemma-3-27b",
    "gemma-4-e2b",
    "gemma-4-e4b",
    "gemma-4-26b-a4b",
    "gemma-4-31b",
    "deepseek-v3",
    "deepseek-r1",
    "gpt-oss-20b",
    "gpt-oss-120b",
    "phi-4",
)


@pytest.fixture(scope="module")
def book() -> Pricebook:
    return load_default()


def test_every_required_gpu_id_is_in_the_book(book: Pricebook) -> None:
    ids = {g.id for g in book.gpus}
    missing = [gpu_id for gpu_id in REQUIRED_GPU_IDS if gpu_id not in ids]
    assert missing == []


@pytest.mark.parametrize("key", REQUIRED_MODELS)
def test_every_required_model_resolves(book: Pricebook, key: str) -> None:
    arch = catalog.model(book, key)
    assert arch.id in {m.id for m in book.models}


def test_the_book_has_embedding_models(book: Pricebook) -> None:
    assert len([m for m in book.models if m.kind == "embedding"]) >= 1


def test_version_and_hash_are_set(book: Pricebook) -> None:
    assert book.version
    assert len(book.content_hash) == 64
    int(book.content_hash, 16)


def test_as_of_dates_are_not_in_the_future(book: Pricebook) -> None:
    # A date after the book's own edition would mean a typo (e.g. 2062 for 2026).
    latest_allowed = dt.date(2026, 12, 31)
    for row in catalog.catalog_entries(book):
        assert row.entry.as_of <= latest_allowed, row.id
