"""Error wording: each pydantic error type in the words the analyst reads (the wording is the
feature here, so these tests match sentences)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, Field, ValidationError

from service.convert.violations import Collector, reason, violations_from


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        ({"type": "missing"}, "is required"),
        ({"type": "greater_than", "ctx": {"gt": 0}, "input": -5}, "must be greater than 0 (got -5)"),
        ({"type": "greater_than", "ctx": {"gt": 0}, "input": 0}, "must be greater than 0 (got 0 or not set)"),
        ({"type": "greater_than_equal", "ctx": {"ge": 1}, "input": 0.5}, "must be at least 1 (got 0.5)"),
        ({"type": "less_than", "ctx": {"lt": 1}, "input": 2}, "must be less than 1 (got 2)"),
        ({"type": "less_than_equal", "ctx": {"le": 8}, "input": 9}, "must be at most 8 (got 9)"),
        (
            {"type": "literal_error", "ctx": {"expected": "'a' or 'b'"}, "input": "c"},
            "must be one of 'a' or 'b' (got 'c')",
        ),
        (
            {"type": "decimal_parsing", "input": "lots"},
            "must be a decimal number such as '500000000' or '3.99' (got 'lots')",
        ),
        ({"type": "too_short", "ctx": {"min_length": 1}}, "needs at least 1 item(s)"),
        ({"type": "too_long", "ctx": {"max_length": 3}}, "allows at most 3 item(s)"),
        ({"type": "string_too_short"}, "must not be empty"),
        ({"type": "string_too_long", "ctx": {"max_length": 128}}, "must be at most 128 characters"),
        ({"type": "finite_number"}, "must be a finite number"),
        ({"type": "extra_forbidden"}, "is not a known field"),
        ({"type": "value_error", "msg": "Value error, give exactly one"}, "give exactly one"),
        ({"type": "something_new", "msg": "as pydantic says"}, "as pydantic says"),
        ({}, "invalid value"),
    ],
)
def test_reasons_read_as_sentences(error: dict[str, Any], expected: str) -> None:
    assert reason(error) == expected


class _Items(BaseModel):
    items: tuple[int, ...] = Field(min_length=1)


def test_a_list_too_short_only_because_its_items_are_bad_names_the_items() -> None:
    with pytest.raises(ValidationError) as info:
        _Items.model_validate({"items": ("x",)})
    found = violations_from(info.value, lambda loc: ".".join(str(p) for p in loc))
    assert [v.field for v in found] == ["items.0"]


def test_the_collector_names_unknown_and_missing_enum_values() -> None:
    col = Collector()
    assert col.enum({1: "a"}, 1, "x") == "a"
    assert col.enum({1: "a"}, 0, "y", required=True) is None
    assert col.enum({1: "a"}, 7, "z") is None
    assert col.number(float("nan"), "w") == 0.0
    assert [(v.field, v.reason) for v in col.violations] == [
        ("y", "is required"),
        ("z", "unknown value 7"),
        ("w", "must be a finite number"),
    ]
