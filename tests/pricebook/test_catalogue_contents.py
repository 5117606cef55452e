"""The default book contains every id the issue (#3) requires, and every number is sourced and dated."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from pricebook import catalog
from pricebook.loader import load_default
from pricebook.schema import OfferKind, Pricebook
from solver.perf.rack_gpus import rack_gpu

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


# --------------------------------------------------------------------------------------------
# Provenance: every number has a source and a date; every estimate says why
# --------------------------------------------------------------------------------------------


def _numbers_without_provenance(value: object, path: str, has_provenance: bool) -> list[str]:
    """Paths of numeric leaves that sit in no object carrying a non-empty source and a date."""
    if isinstance(value, dict):
        here = has_provenance or (
            isinstance(value.get("source"), str)
            and len(value["source"].strip()) >= 3
            and isinstance(value.get("as_of"), dt.date)
        )
        found: list[str] = []
        for key, item in value.items():
            found += _numbers_without_provenance(item, f"{path}.{key}", here)
        return found
    if isinstance(value, list | tuple):
        found = []
        for position, item in enumerate(value):
            found += _numbers_without_provenance(item, f"{path}[{position}]", has_provenance)
        return found
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    is_number = is_number or type(value).__name__ == "Decimal"
    return [path] if is_number and not has_provenance else []


def test_every_number_in_the_catalogue_has_a_source_and_a_date(book: Pricebook) -> None:
    rows = catalog.catalog_entries(book)
    assert {row.kind for row in rows} == set(catalog.CATALOG_KINDS)
    unsourced: list[str] = []
    for row in rows:
        unsourced += _numbers_without_provenance(row.entry.model_dump(), f"{row.kind}:{row.id}", False)
    assert unsourced == []


def test_the_provenance_walk_catches_an_unsourced_number() -> None:
    # The walk itself must be able to fail: a number whose only source is blank.
    unsourced = _numbers_without_provenance(
        {"source": " ", "as_of": dt.date(2026, 1, 1), "x": 1.5}, "e", False
    )
    assert unsourced == ["e.x"]


def test_every_estimate_is_explained(book: Pricebook) -> None:
    unexplained = [
        f"{row.kind}:{row.id}"
        for row in catalog.catalog_entries(book)
        if row.entry.estimated_fields
        and not row.entry.notes.strip()
        and not set(row.entry.estimated_fields) <= set(row.entry.field_sources)
    ]
    assert unexplained == []


def test_estimated_offers_are_labelled_as_such(book: Pricebook) -> None:
    mislabelled = [o.id for o in book.offers if "price" in o.estimated_fields and o.label.value != "estimate"]
    assert mislabelled == []


# --------------------------------------------------------------------------------------------
# Coverage the issue asks for
# --------------------------------------------------------------------------------------------


def test_every_gpu_can_be_bought_and_lives_in_a_server_unless_rental_only(book: Pricebook) -> None:
    for spec in book.gpus:
        if spec.rental_only:
            continue
        assert catalog.servers_for(book, spec.id), spec.id
        assert spec.servers == tuple(sorted(s.id for s in catalog.servers_for(book, spec.id)))
        assert catalog.offers_for(book, spec.id, OfferKind.PURCHASE_GPU), spec.id


def test_the_nvl72_rack_gpus_are_rented_whole_racks_only(book: Pricebook) -> None:
    """GB200/GB300 (issue 33): no NVL72 rack price is sourced, so they are rental_only, rented 72
    GPUs at a time; GB200 at AWS's u-p6e-gb200x72 Capacity Block ($761.904/h for 72 GPUs), GB300
    at a labelled estimate."""
    racks = {g.id: g for g in book.gpus if g.rental_only}
    assert set(racks) == {"gb200", "gb300"}
    for gpu_id, spec in racks.items():
        assert spec.scale_up_domain_size == 72 and not catalog.servers_for(book, gpu_id)
        offers = [o for o in book.offers if o.gpu == gpu_id]
        assert offers and all(o.kind in (OfferKind.RESERVED, OfferKind.ON_DEMAND) for o in offers)
        assert all(o.gpus_per_instance == 72 for o in offers)
    (aws,) = [o for o in book.offers if o.gpu == "gb200"]
    assert aws.price.amount * 72 == Decimal("761.904") and aws.label.value == "list"
    (estimate,) = [o for o in book.offers if o.gpu == "gb300"]
    assert estimate.label.value == "estimate" and "price" in estimate.estimated_fields


def test_the_rack_gpus_of_the_catalogue_and_the_performance_model_agree(book: Pricebook) -> None:
    """solver/perf/rack_gpus.yaml (the disaggregated model's NVL72 GPUs) states the same specs."""
    for gpu_id in ("gb200", "gb300"):
        rack = rack_gpu(gpu_id)
        assert rack is not None
        ours = catalog.gpu(book, gpu_id).model_dump(exclude=PROVENANCE | {"rental_only"})
        assert ours == rack.model_dump(exclude=PROVENANCE | {"rental_only"}), gpu_id


PROVENANCE = {"source", "as_of", "field_sources", "estimated_fields", "notes"}


def test_rentals_come_from_at_least_three_providers(book: Pricebook) -> None:
    on_demand = {o.provider for o in book.offers if o.kind == OfferKind.ON_DEMAND}
    reserved = {o.provider for o in book.offers if o.kind == OfferKind.RESERVED}
    assert {"AWS", "GCP", "Azure", "Lambda", "RunPod"} <= on_demand
    assert len(reserved) >= 3


def test_hgx_boards_have_whole_server_purchase_offers(book: Pricebook) -> None:
    servers_with_offers = {o.server for o in book.offers if o.kind == OfferKind.PURCHASE_SERVER}
    assert {"hgx-h100-8gpu", "hgx-h200-8gpu", "hgx-b200-8gpu", "hgx-a100-8gpu"} <= servers_with_offers


# The seeds' prices, as written in the articles (000: 만 원 = 10,000 KRW; 001: USD).
SEED_PRICES = (
    ("rtx-pro-6000-ws", OfferKind.PURCHASE_GPU, Decimal(1_500) * 10_000, "KRW"),
    ("h100-sxm", OfferKind.PURCHASE_GPU, Decimal(4_200) * 10_000, "KRW"),
    ("h200-sxm", OfferKind.PURCHASE_GPU, Decimal(5_000) * 10_000, "KRW"),
    ("h200-sxm", OfferKind.PURCHASE_GPU, Decimal(30_000), "USD"),
    ("h200-sxm", OfferKind.PURCHASE_GPU, Decimal(40_000), "USD"),
    ("h200-sxm", OfferKind.ON_DEMAND, Decimal("3.5"), "USD"),
    ("h200-sxm", OfferKind.ON_DEMAND, Decimal(13), "USD"),
)


@pytest.mark.parametrize(("gpu_id", "kind", "amount", "currency"), SEED_PRICES)
def test_the_seeds_prices_are_offers_citing_their_seed(
    book: Pricebook, gpu_id: str, kind: OfferKind, amount: Decimal, currency: str
) -> None:
    matching = [
        o
        for o in catalog.offers_for(book, gpu_id, kind)
        if o.price.amount == amount and o.price.currency == currency and "seed" in o.source
    ]
    assert len(matching) == 1


def test_site_has_both_currencies_and_a_dated_usd_krw_rate(book: Pricebook) -> None:
    site = book.site
    assert site.electricity_krw_per_kwh == pytest.approx(182.7)  # KEPCO industrial (eul) from 2024-10-24
    assert 0.05 < site.electricity_usd_per_kwh < 0.15
    assert site.vat_rate == pytest.approx(0.10)
    pairs = {(r.base, r.quote) for r in site.fx_rates}
    assert ("USD", "KRW") in pairs or ("KRW", "USD") in pairs


def test_derived_int8_follows_the_documented_rule(book: Pricebook) -> None:
    # Rule (issue #3): INT8 = dense FP8 on Hopper/Ada/Blackwell/CDNA, = 2 x dense BF16 on Ampere;
    # Blackwell Ultra (GB300) takes B300's sourced figure (it trades INT8 for FP4).
    ultra = catalog.gpu(book, "b300").int8_tops
    for spec in book.gpus:
        if "int8_tops" not in spec.estimated_fields:
            continue
        expected = 2 * spec.bf16_tflops if spec.architecture.value == "ampere" else spec.fp8_tflops
        expected = ultra if "Blackwell Ultra" in spec.name else expected
        assert spec.int8_tops == pytest.approx(expected), spec.id


def test_mla_and_sliding_window_fields_come_through(book: Pricebook) -> None:
    deepseek = catalog.model(book, "deepseek-r1")
    assert (deepseek.attention.value, deepseek.kv_lora_rank, deepseek.qk_rope_head_dim) == ("mla", 512, 64)
    assert (deepseek.experts, deepseek.experts_per_token, deepseek.shared_experts) == (256, 8, 1)
    gpt_oss = catalog.model(book, "gpt-oss-120b")
    assert (gpt_oss.sliding_window, gpt_oss.full_attention_layers, gpt_oss.layers) == (128, 18, 36)
    qwen_hybrid = catalog.model(book, "Qwen/Qwen3.5-27B")
    assert (qwen_hybrid.full_attention_layers, qwen_hybrid.linear_attention_layers) == (16, 48)


def test_layer_kinds_add_up(book: Pricebook) -> None:
    # Full-attention + linear-attention + sliding-window layers = all layers; without a window
    # there are no window layers.
    for arch in book.models:
        window_layers = arch.layers - arch.full_attention_layers - arch.linear_attention_layers
        assert window_layers >= 0, arch.id
        if arch.sliding_window == 0:
            assert window_layers == 0, arch.id


def test_published_kv_bytes_match_the_formula_where_it_applies(book: Pricebook) -> None:
    bf16_bytes = 2
    checked = 0
    for arch in book.models:
        if arch.kind != "decoder" or arch.kv_bytes_per_token_bf16_full_layers is None:
            continue
        if arch.attention.value in ("gqa", "mha"):
            # K and V, kv_heads x head_dim each, per full-attention layer (model_architectures.md).
            expected = 2 * arch.kv_heads * arch.head_dim * bf16_bytes * arch.full_attention_layers
        elif arch.attention.value == "mla":
            # The compressed latent plus the decoupled RoPE key, per layer.
            expected = (arch.kv_lora_rank + arch.qk_rope_head_dim) * bf16_bytes * arch.full_attention_layers
        else:
            continue  # hybrids (Gemma 4 global head dims, KV sharing, linear layers) keep the table's value
        assert arch.kv_bytes_per_token_bf16_full_layers == expected, arch.id
        checked += 1
    assert checked >= 25


def test_server_domains_agree_with_their_gpu(book: Pricebook) -> None:
    # A server's TP domain is the GPU's scale-up domain, capped by the slots in the box.
    for srv in book.servers:
        spec = catalog.gpu(book, srv.gpu)
        assert srv.scale_up_domain_size == min(spec.scale_up_domain_size, srv.gpus_per_server), srv.id
        assert max((slot for group in srv.p2p_groups for slot in group), default=0) < srv.gpus_per_server


def test_every_network_price_is_sourced_dated_and_labelled(book: Pricebook) -> None:
    """Issue 15: switch ports, optics and NICs per fabric, each with its own source, date and label;
    the numbers the research could not find (a NIC's unit price, any RoCE price) are estimates."""
    fabrics = {f.kind: f for f in book.site.network_fabrics}
    assert set(fabrics) == {"infiniband", "ethernet"}
    ndr = fabrics["infiniband"]
    # pricebook_facts B6: $540–730 switch and $1,170–1,560 optics per GPU (derived) → midpoints.
    assert ndr.switch_port_per_gpu.price.amount == Decimal((540 + 730) / 2)
    assert ndr.optics_per_gpu.price.amount == Decimal((1_170 + 1_560) / 2)
    assert (ndr.switch_port_per_gpu.label.value, ndr.optics_per_gpu.label.value) == ("derived", "derived")
    assert ndr.nic.label.value == "estimate"  # ConnectX-7 unit price NOT FOUND
    for part in (p for f in fabrics.values() for p in (f.switch_port_per_gpu, f.optics_per_gpu, f.nic)):
        assert len(part.source) > 20 and part.as_of >= dt.date(2024, 1, 1)
        assert "price" in part.estimated_fields  # derived or estimated, never a list price
    assert {p.label.value for p in (fabrics["ethernet"].switch_port_per_gpu, fabrics["ethernet"].nic)} == {
        "estimate"
    }


def test_korean_region_offers_are_the_aws_seoul_ones(book: Pricebook) -> None:
    """Korean GPU clouds have no sourced list price: the Korean region offers are AWS Seoul's."""
    seoul = {o.gpu for o in book.offers if o.region == "ap-northeast-2"}
    assert seoul == {"h100-sxm", "h200-sxm", "l40s", "l4"}
    providers = {o.provider.casefold() for o in book.offers}
    assert not providers & {"nhn cloud", "kt cloud", "naver cloud", "elice"}
