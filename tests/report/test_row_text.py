"""A co-located deployment's name reads in the quote's language (the planner's English label is the
English reading): the guest on its part of a card, the host on the rest of each of its cards."""

from __future__ import annotations

import pytest

from report.labels import Language
from report.row_text import deployment_name
from solver.domain import Precision
from solver.optimizer.instance import deployment_label


@pytest.mark.parametrize(
    ("tp", "mig_slice", "share"), [(1, 0, 1 / 16), (2, 0, 15 / 16), (1, 0, 3 / 4), (4, 0, 1.0)]
)
def test_the_english_name_is_the_planners_label(tp: int, mig_slice: int, share: float) -> None:
    expected = deployment_label("l40s", tp, Precision.FP8, mig_slice, share)
    assert deployment_name("l40s", tp, mig_slice, "fp8", card_share=share, lang=Language.EN) == expected


def test_the_korean_name_has_no_english_words() -> None:
    guest = deployment_name("h100-nvl", 1, 0, "fp8", card_share=1 / 16, lang=Language.KO)
    host = deployment_name("h100-nvl", 1, 0, "fp8", card_share=15 / 16, lang=Language.KO)
    assert guest == "h100-nvl 카드 1/16 공유 fp8"
    assert host == "h100-nvl TP1 fp8 카드마다 15/16"
    for name in (guest, host):
        assert not {"of", "a", "each", "card"} & set(name.split())
