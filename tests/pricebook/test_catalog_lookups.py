"""Lookups by id or alias, suggestions for typos, and the catalogue listing."""

from __future__ import annotations

import pytest

from pricebook import catalog
from pricebook.errors import UnknownEntryError
from pricebook.loader import load_default
from pricebook.schema import OfferKind, Pricebook


@pytest.fixture(scope="module")
def book() -> Pricebook:
    return load_default()


# Spellings from the issue text and from ../shared/calibration/*.csv (gpu column), as written there.
GPU_SPELLINGS = (
    ("H100 SXM", "h100-sxm"),
    ("h100-sxm5-80gb", "h100-sxm"),
    ("H100 SXM 80GB", "h100-sxm"),
    ("H100-SXM-80GB", "h100-sxm"),
    ("H100 80GB", "h100-sxm"),
    ("H100", "h100-sxm"),
    ("H200", "h200-sxm"),
    ("H200-SXM-141GB", "h200-sxm"),
    ("H200 141GB", "h200-sxm"),
    ("A100", "a100-sxm-80gb"),
    ("A100-SXM4-80GB", "a100-sxm-80gb"),
    ("B200", "b200"),
    ("L40S-48GB", "l40s"),
    ("MI300X-192GB", "mi300x"),
    ("RTX PRO 6000", "rtx-pro-6000-ws"),
    ("RTX PRO 6000 Blackwell Workstation 96GB", "rtx-pro-6000-ws"),
    ("RTX PRO 6000 Blackwell Server", "rtx-pro-6000-server"),
    ("RTX 5090", "rtx-5090"),
    ("RTX 4090", "rtx-4090"),
    # Case, spaces, underscores and vendor words do not matter.
    ("h100_sxm", "h100-sxm"),
    ("  H100   SXM ", "h100-sxm"),
    ("NVIDIA GeForce RTX 4090", "rtx-4090"),
    ("AMD Instinct MI325X", "mi325x"),
    ("NVIDIA H200 NVL", "h200-nvl"),
)


@pytest.mark.parametrize(("spelling", "gpu_id"), GPU_SPELLINGS)
def test_gpu_spellings_resolve(book: Pricebook, spelling: str, gpu_id: str) -> None:
    assert catalog.gpu(book, spelling).id == gpu_id
    assert catalog.resolve_gpu_id(book, spelling) == gpu_id


MODEL_SPELLINGS = (
    ("llama-3.1-70b", "meta-llama/Llama-3.1-70B"),
    ("meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B"),  # seed 002's name
    ("Llama-3.1-405B", "meta-llama/Llama-3.1-405B"),  # public_calibration.csv
    ("Mixtral-8x7B", "mistralai/Mixtral-8x7B-v0.1"),
    ("qwen3-32b", "Qwen/Qwen3-32B"),
    ("QWEN/QWEN3-32B", "Qwen/Qwen3-32B"),
    ("ministral-3-14b", "mistralai/Ministral-3-14B-Instruct-2512"),
    ("mistralai/Ministral-3-14B-Instruct-2512", "mistralai/Ministral-3-14B-Instruct-2512"),
    ("gemma-4-31b", "google/gemma-4-31B-it"),
    ("google/gemma-4-E2B-it", "google/gemma-4-E2B-it"),
    ("deepseek-r1", "deepseek-ai/DeepSeek-R1"),
    ("gpt-oss-120b", "openai/gpt-oss-120b"),
    ("gpt_oss_20b", "openai/gpt-oss-20b"),
)


@pytest.mark.parametrize(("spelling", "model_id"), MODEL_SPELLINGS)
def test_model_spellings_resolve(book: Pricebook, spelling: str, model_id: str) -> None:
    assert catalog.model(book, spelling).id == model_id


def test_unknown_gpu_suggests_close_ids(book: Pricebook) -> None:
    with pytest.raises(UnknownEntryError) as caught:
        catalog.gpu(book, "H201")
    error = caught.value
    assert (error.kind, error.key) == ("gpu", "H201")
    assert "h200-sxm" in error.suggestions
    assert "did you mean" in str(error)


def test_unknown_model_suggests_hugging_face_ids(book: Pricebook) -> None:
    with pytest.raises(UnknownEntryError) as caught:
        catalog.model(book, "llama-3.1-7b")
    assert "meta-llama/Llama-3.1-70B" in caught.value.suggestions


def test_servers_for_a_gpu(book: Pricebook) -> None:
    ids = {s.id for s in catalog.servers_for(book, "H100")}
    assert ids == {"hgx-h100-8gpu"}
    pcie = catalog.servers_for(book, "rtx-pro-6000-server")
    assert {s.gpus_per_server for s in pcie} == {4, 8}
    assert catalog.server(book, "hgx-h100-8gpu").nics[0].kind == "infiniband"


def test_pcie_p2p_groups_match_seed_004(book: Pricebook) -> None:
    # Seed 004: on a 4 x RTX PRO 6000 Server node GPU 0-1 and 2-3 are PIX pairs.
    four = catalog.server(book, "pcie-rtx-pro-6000-server-4gpu")
    assert four.p2p_groups == ((0, 1), (2, 3))
    # ...and the 8 x RTX 5090 node has 4 GPUs per CPU socket, P2P blocked on the card.
    rig = catalog.server(book, "rig-rtx-5090-8gpu")
    assert rig.p2p_groups == ((0, 1, 2, 3), (4, 5, 6, 7))
    assert catalog.gpu(book, "rtx-5090").p2p_over_pcie is False


def test_offers_for_filters_by_kind(book: Pricebook) -> None:
    everything = catalog.offers_for(book, "h200")
    on_demand = catalog.offers_for(book, "h200", OfferKind.ON_DEMAND)
    assert {o.id for o in on_demand} < {o.id for o in everything}
    assert {o.kind for o in on_demand} == {OfferKind.ON_DEMAND}
    assert {o.gpu for o in everything} == {"h200-sxm"}


def test_api_prices_for_a_model_alias(book: Pricebook) -> None:
    providers = {p.provider for p in catalog.api_prices_for(book, "llama-3.1-8b")}
    assert {"Together", "Groq", "Fireworks", "DeepInfra", "OpenRouter"} <= providers
    assert catalog.api_prices_for(book, "phi-4") == ()


def test_unknown_server_and_offer(book: Pricebook) -> None:
    with pytest.raises(UnknownEntryError, match="server"):
        catalog.server(book, "hgx-h300-8gpu")
    with pytest.raises(UnknownEntryError, match="offer"):
        catalog.offer(book, "h300.od.aws")


def test_catalog_entries_filter_by_kind(book: Pricebook) -> None:
    everything = catalog.catalog_entries(book)
    assert len(everything) == (
        len(book.gpus) + len(book.servers) + len(book.offers) + len(book.api_prices) + len(book.models) + 1
    )
    gpus_and_site = catalog.catalog_entries(book, ["gpu", "site"])
    assert {row.kind for row in gpus_and_site} == {"gpu", "site"}
    assert len(gpus_and_site) == len(book.gpus) + 1
    assert all(row.source and row.as_of for row in gpus_and_site)


def test_catalog_entries_reject_an_unknown_kind(book: Pricebook) -> None:
    with pytest.raises(UnknownEntryError) as caught:
        catalog.catalog_entries(book, ["gpus"])
    assert "gpu" in caught.value.suggestions


def test_normalisation() -> None:
    assert catalog.normalize_key("  Qwen/Qwen3__32B ") == "qwen/qwen3-32b"
    assert catalog.normalize_gpu_key("NVIDIA GeForce RTX-4090") == "rtx-4090"


def test_lookups_follow_a_copied_book_even_with_a_stale_hash(book: Pricebook) -> None:
    # Callers re-price by model_copy; the copy keeps the old content_hash but must not see old entries.
    cheaper = catalog.offer(book, "l4.od.runpod-secure").model_copy(
        update={"price": book.site.colocation_price_month}
    )
    copy = book.model_copy(update={"offers": (cheaper, *(o for o in book.offers if o.id != cheaper.id))})
    assert copy.content_hash == book.content_hash
    assert catalog.offer(copy, cheaper.id).price.amount == book.site.colocation_price_month.amount
    assert catalog.offer(book, cheaper.id).price.amount != cheaper.price.amount
