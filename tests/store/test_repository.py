"""The repository contract on SQLite and PostgreSQL: save/get/list/delete, tags and filters, pages,
idempotent saves (also from racing threads), read-only mode, an unreachable database."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

from store.errors import (
    IdempotencyConflict,
    InvalidPageToken,
    PlanNotFound,
    StoreReadOnly,
    StoreUnavailable,
)
from store.location import store_url
from store.records import NewPlan, PlanFilter
from store.sql import SqlPlanStore
from store.ulid import new_ulid


def _plan(**fields: object) -> NewPlan:
    values: dict[str, object] = {"plan_id": new_ulid(), "request": b"\x00req", "response": b"\x01resp\xff"}
    values.update(fields)
    return NewPlan(**values)  # type: ignore[arg-type]


def test_a_saved_plan_reads_back_field_for_field(repository: SqlPlanStore) -> None:
    plan = _plan(
        label="March bid",
        tags=("bid", "h200"),
        pricebook_version="2026.11",
        pricebook_hash="ab" * 32,
        calibration_date="2026-11-20",
        fleetplan_version="0.1.0",
        requester="alice",
        idempotency_key="k-1",
        document='{"quote": 1}',
    )
    before = datetime.now(UTC)
    outcome = repository.save(plan)
    assert outcome.created
    got = repository.get(plan.plan_id)
    for name in NewPlan.__dataclass_fields__:
        assert getattr(got, name) == getattr(plan, name), name
    assert before - timedelta(seconds=1) <= got.created_at <= datetime.now(UTC) + timedelta(seconds=1)
    assert got.created_at.tzinfo is not None


def test_unknown_ids_are_not_found(repository: SqlPlanStore) -> None:
    with pytest.raises(PlanNotFound):
        repository.get(new_ulid())
    with pytest.raises(PlanNotFound):
        repository.delete(new_ulid())


def test_delete_removes_the_plan_and_its_tags(repository: SqlPlanStore) -> None:
    plan = _plan(tags=("a",))
    repository.save(plan)
    repository.delete(plan.plan_id)
    with pytest.raises(PlanNotFound):
        repository.get(plan.plan_id)
    assert repository.list(PlanFilter(tag="a"), 10).plans == ()


def test_the_document_can_be_attached_later(repository: SqlPlanStore) -> None:
    plan = _plan()
    repository.save(plan)
    assert repository.get(plan.plan_id).document is None
    repository.set_document(plan.plan_id, '{"quote": {"total": "1 KRW"}}')
    assert repository.get(plan.plan_id).document == '{"quote": {"total": "1 KRW"}}'
    assert repository.get(plan.plan_id).response == plan.response  # nothing else changes
    with pytest.raises(PlanNotFound):
        repository.set_document(new_ulid(), "{}")


def test_one_key_saves_one_plan(repository: SqlPlanStore) -> None:
    first = repository.save(_plan(idempotency_key="retry-me"))
    again = repository.save(_plan(idempotency_key="retry-me"))
    assert not again.created and again.plan.plan_id == first.plan.plan_id
    assert len(repository.list(PlanFilter(), 100).plans) == 1


def test_a_key_reused_for_another_request_is_refused(repository: SqlPlanStore) -> None:
    repository.save(_plan(idempotency_key="k"))
    with pytest.raises(IdempotencyConflict):
        repository.save(_plan(idempotency_key="k", request=b"something else"))


def test_racing_saves_with_one_key_store_one_plan(repository: SqlPlanStore) -> None:
    outcomes = []
    barrier = threading.Barrier(8)

    def save() -> None:
        barrier.wait()
        outcomes.append(repository.save(_plan(idempotency_key="race")))

    threads = [threading.Thread(target=save) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(outcomes) == 8
    assert len({o.plan.plan_id for o in outcomes}) == 1
    assert sum(o.created for o in outcomes) == 1
    assert len(repository.list(PlanFilter(), 100).plans) == 1


def test_pages_walk_every_plan_newest_first_once(repository: SqlPlanStore) -> None:
    saved = [repository.save(_plan(label="p")).plan.plan_id for _ in range(7)]
    seen: list[str] = []
    token = ""
    pages = 0
    while True:
        page = repository.list(PlanFilter(label="p"), 3, token)
        seen += [p.plan_id for p in page.plans]
        pages += 1
        token = page.next_page_token
        if not token:
            break
    assert pages == 3
    assert seen == list(reversed(saved))  # ULIDs of one process increase: newest first
    assert all(p.request == b"" for p in page.plans)  # a page leaves the request out


def test_filters_by_label_tag_and_time(repository: SqlPlanStore) -> None:
    a = repository.save(_plan(label="x", tags=("t1", "t2"))).plan
    b = repository.save(_plan(label="y", tags=("t2",))).plan
    ids = lambda where: {p.plan_id for p in repository.list(where, 50).plans}  # noqa: E731
    assert ids(PlanFilter(label="x")) == {a.plan_id}
    assert ids(PlanFilter(tag="t2")) == {a.plan_id, b.plan_id}
    assert ids(PlanFilter(tag="t1", label="y")) == set()
    assert ids(PlanFilter(created_after=b.created_at)) == {b.plan_id}
    assert ids(PlanFilter(created_before=b.created_at)) == {a.plan_id}
    future = datetime.now(UTC) + timedelta(days=1)
    assert ids(PlanFilter(created_after=future)) == set()


@pytest.mark.parametrize("token", ["garbage", "eyJ2IjogOX0", "e30"])
def test_foreign_page_tokens_are_refused(repository: SqlPlanStore, token: str) -> None:
    with pytest.raises(InvalidPageToken):
        repository.list(PlanFilter(), 10, token)


def test_a_token_only_continues_its_own_filter(repository: SqlPlanStore) -> None:
    for _ in range(3):
        repository.save(_plan(label="q"))
    token = repository.list(PlanFilter(label="q"), 1).next_page_token
    assert token
    with pytest.raises(InvalidPageToken):
        repository.list(PlanFilter(label="other"), 1, token)


def test_read_only_store_reads_but_does_not_write(store_spec: str, repository: SqlPlanStore) -> None:
    plan = _plan()
    repository.save(plan)
    url = store_url(store_spec)
    assert url is not None
    reader = SqlPlanStore(url, read_only=True)
    try:
        assert reader.get(plan.plan_id).response == plan.response
        with pytest.raises(StoreReadOnly):
            reader.save(_plan())
        with pytest.raises(StoreReadOnly):
            reader.delete(plan.plan_id)
        assert "read-only" in reader.description
    finally:
        reader.close()


def test_an_unreachable_database_is_unavailable_not_a_crash() -> None:
    # A port nothing listens on: the store still opens (the server still plans), every use says
    # UNAVAILABLE. The password never shows in the description.
    store = SqlPlanStore("postgresql+psycopg://u:secret@127.0.0.1:9/none")
    try:
        assert "secret" not in store.description
        with pytest.raises(StoreUnavailable):
            store.save(_plan())
        with pytest.raises(StoreUnavailable):
            store.get(new_ulid())
    finally:
        store.close()
