"""``solver.resolve``: aliases become catalogue ids, unknown references are refused with their domain
paths and suggestions, and the request's overrides are applied once."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import pytest

from pricebook.loader import load_default
from pricebook.overrides import OfferOverride, PricebookOverrides
from pricebook.schema import Money, Pricebook
from solver.domain import (
    AcquisitionMode,
    Constraints,
    CountBound,
    Fleet,
    FleetItem,
    InferenceWorkload,
    ModelRef,
    ModelSpec,
    OwnedGpus,
    PlanRequest,
    ReferenceGpuHours,
    TrainingMethod,
    TrainingWorkload,
)
from solver.errors import InvalidRequest
from solver.pricing.costs import acquisition_options
from solver.resolve import resolve, resolve_fleet

BookFactory = Callable[..., Pricebook]


@pytest.fixture(scope="module")
def book() -> Pricebook:
    return load_default()


def chat(model_id: str = "meta-llama/Llama-3.1-8B") -> InferenceWorkload:
    return InferenceWorkload(
        name="chat",
        model=ModelRef(model_id=model_id),
        input_tokens=1000,
        output_tokens=200,
        daily_tokens=10**8,
    )


def tuning(gpu: str) -> TrainingWorkload:
    return TrainingWorkload(
        name="tune",
        model=ModelRef(model_id="Qwen/Qwen3-14B"),
        method=TrainingMethod.LORA,
        reference=ReferenceGpuHours(gpu=gpu, gpu_hours_per_month=300),
    )


def refused(request: PlanRequest, book: Pricebook) -> dict[str, str]:
    with pytest.raises(InvalidRequest) as info:
        resolve(request, book)
    return {v.field: v.reason for v in info.value.violations}


def test_every_gpu_reference_becomes_its_catalogue_id(book: Pricebook) -> None:
    constraints = Constraints(
        allowed_gpus=("H200 SXM", "h100-sxm", "H200"),
        owned=(OwnedGpus(gpu="RTX PRO 6000", count=2),),
        count_bounds=(CountBound(gpu="L40S", max_count=4),),
    )
    overrides = PricebookOverrides(
        offers=(
            OfferOverride(
                offer_id="quote.h100",
                kind="purchase_gpu",
                gpu="H100",
                price=Money(amount=Decimal("20000"), currency="USD"),
            ),
        )
    )
    request = PlanRequest(
        inference=(chat(),), training=(tuning("H100"),), constraints=constraints, overrides=overrides
    )
    resolved = resolve(request, book)
    c = resolved.request.constraints
    assert c.allowed_gpus == ("h200-sxm", "h100-sxm", "h200-sxm")  # as given, each an id
    assert [o.gpu for o in c.owned] == ["rtx-pro-6000-ws"]
    assert [b.gpu for b in c.count_bounds] == ["l40s"]
    reference = resolved.request.training[0].reference
    assert reference is not None and reference.gpu == "h100-sxm"
    assert resolved.request.overrides.offers[0].gpu == "h100-sxm"
    assert resolved.allowed_gpus == ("h200-sxm", "h100-sxm")  # each GPU type once


def test_no_allowed_gpus_means_every_catalogue_gpu_but_consumer_cards(book: Pricebook) -> None:
    resolved = resolve(PlanRequest(inference=(chat(),)), book)
    consumer = {"rtx-5090", "rtx-4090"}  # GeForce (gpus.yaml: segment consumer)
    assert resolved.allowed_gpus == tuple(sorted(g.id for g in book.gpus if g.id not in consumer))
    assert resolved.request.constraints.allowed_gpus == ()
    assert resolved.book is book and resolved.overrides_applied == ()
    allowed = resolve(
        PlanRequest(inference=(chat(),), constraints=Constraints(allow_consumer_gpus=True)), book
    )
    assert allowed.allowed_gpus == tuple(sorted(g.id for g in book.gpus))


def test_a_named_consumer_gpu_needs_allow_consumer_gpus(book: Pricebook) -> None:
    constraints = Constraints(
        allowed_gpus=("h100-sxm", "RTX 5090"), owned=(OwnedGpus(gpu="rtx-4090", count=2),)
    )
    with pytest.raises(InvalidRequest) as caught:
        resolve(PlanRequest(inference=(chat(),), constraints=constraints), book)
    paths = [v.field for v in caught.value.violations]
    assert paths == ["constraints.allowed_gpus[1]", "constraints.owned[0].gpu"]
    assert all("allow_consumer_gpus" in v.reason for v in caught.value.violations)
    allowed = constraints.model_copy(update={"allow_consumer_gpus": True})
    assert resolve(PlanRequest(inference=(chat(),), constraints=allowed), book).allowed_gpus == (
        "h100-sxm",
        "rtx-5090",
    )


def test_unknown_references_are_refused_with_domain_paths_and_suggestions(book: Pricebook) -> None:
    request = PlanRequest(
        inference=(chat("no-such/model-1b"),),
        training=(tuning("h100x"),),
        constraints=Constraints(allowed_gpus=("h200-sxm", "h100x"), owned=(OwnedGpus(gpu="b9000", count=1),)),
    )
    found = refused(request, book)
    assert list(found) == [
        "inference[0].model.model_id",
        "training[0].reference.gpu",
        "constraints.allowed_gpus[1]",
        "constraints.owned[0].gpu",
    ]
    # The wording is the feature here: what an analyst reads, with the closest ids.
    assert found["constraints.allowed_gpus[1]"].startswith(
        "unknown GPU 'h100x' (not in the pricebook; did you mean "
    )
    assert found["constraints.allowed_gpus[1]"].endswith("?); see `fleetplan catalog`")
    assert found["inference[0].model.model_id"].startswith("unknown model 'no-such/model-1b'")


def test_overrides_are_applied_once_with_a_new_content_hash(book: Pricebook) -> None:
    offer = next(o for o in book.offers if o.gpu == "h200-sxm")
    doubled = Money(amount=offer.price.amount * 2, currency=offer.price.currency)
    overrides = PricebookOverrides(offers=(OfferOverride(offer_id=offer.id, price=doubled),))
    resolved = resolve(PlanRequest(inference=(chat(),), overrides=overrides), book)
    assert next(o for o in resolved.book.offers if o.id == offer.id).price == doubled
    assert resolved.book.content_hash != book.content_hash
    assert len(resolved.overrides_applied) == 1 and offer.id in resolved.overrides_applied[0]


def test_a_bad_override_is_refused_with_its_domain_path(book: Pricebook) -> None:
    overrides = PricebookOverrides(
        offers=(OfferOverride(offer_id="no-such-offer", price=Money(amount=Decimal(1), currency="USD")),)
    )
    assert list(refused(PlanRequest(inference=(chat(),), overrides=overrides), book)) == [
        "overrides.offers[0].offer_id"
    ]


def test_an_unknown_override_gpu_is_refused_before_the_overrides_apply(book: Pricebook) -> None:
    overrides = PricebookOverrides(
        offers=(
            OfferOverride(
                offer_id="quote.x",
                kind="purchase_gpu",
                gpu="h100x",
                price=Money(amount=Decimal(1), currency="USD"),
            ),
        )
    )
    assert list(refused(PlanRequest(inference=(chat(),), overrides=overrides), book)) == [
        "overrides.offers[0].gpu"
    ]


def test_a_variant_keeps_the_book_and_recomputes_the_allowed_gpus(book: Pricebook) -> None:
    resolved = resolve(PlanRequest(inference=(chat(),)), book)
    request = resolved.request
    only = request.model_copy(update={"constraints": Constraints(allowed_gpus=("l40s",))})
    variant = resolved.with_request(only)
    assert variant.allowed_gpus == ("l40s",) and variant.book is resolved.book


def test_fleet_items_become_catalogue_ids(book: Pricebook) -> None:
    fleet = Fleet(items=(FleetItem(gpu="H200", mode=AcquisitionMode.BUY, count=8),))
    assert [i.gpu for i in resolve_fleet(fleet, book).items] == ["h200-sxm"]
    with pytest.raises(InvalidRequest) as info:
        resolve_fleet(Fleet(items=(FleetItem(gpu="h999", mode=AcquisitionMode.BUY, count=1),)), book)
    assert [v.field for v in info.value.violations] == ["items[0].gpu"]


def test_resolved_aliases_reach_the_pricing(make_book: BookFactory) -> None:
    # Moved from tests/solver/pricing/test_costs.py: the test GPUs are named after their ids in upper
    # case ("H200-SXM"), an alias the catalogue accepts; resolved here, priced by id there.
    test_book = make_book()
    constraints = Constraints(allowed_gpus=("H200-SXM",), owned=(OwnedGpus(gpu="RTX-PRO-6000", count=1),))
    sized = chat().model_copy(update={"model": ModelRef(spec=ModelSpec(params_b=8))})  # no catalogue model
    resolved = resolve(PlanRequest(inference=(sized,), constraints=constraints), test_book)
    options = acquisition_options(resolved.book, resolved.request.constraints)
    assert {(o.gpu, o.owned) for o in options} == {("h200-sxm", False), ("rtx-pro-6000", True)}
