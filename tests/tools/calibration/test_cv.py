"""tools.calibration.cv: every fold is a full refit that never sees its held-out group, from the
final fit's own start; the out-of-fold table and band are computed as stated."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pricebook.loader import load_default
from tools.calibration import cv
from tools.calibration.points import AIC_SOURCE, CalibrationPoint, PointResult, load_points, pair_of

POINTS, _ = load_points(load_default())


def test_folds_hold_each_group_out_of_its_own_fit_and_cover_every_group() -> None:
    folds = cv.cv_folds(POINTS)
    groups = {cv.group_of(p) for p in POINTS}
    assert {f.group for f in folds} <= groups
    held_ids: list[str] = []
    for fold in folds:
        assert {cv.group_of(p) for p in fold.held} == {fold.group}
        assert all(cv.group_of(p) != fold.group for p in fold.rest)
        held_ids.extend(p.id for p in fold.held)
    assert len(held_ids) == len(set(held_ids))  # one out-of-fold prediction per point
    # AIConfigurator pairs and the other sources are the groups (not points, not metrics)
    aic_pairs = {pair_of(p) for p in POINTS if p.source == AIC_SOURCE}
    assert {f.group for f in folds if f.group.startswith("pair:")} == {f"pair:{x}" for x in aic_pairs}
    # the only group left out has nothing of its kind to be fitted on without it (training)
    left_out = groups - {f.group for f in folds}
    for group in left_out:
        mode = next(p.mode for p in POINTS if cv.group_of(p) == group)
        assert not any(p.fit_target and p.mode is mode for p in POINTS if cv.group_of(p) != group)


def test_each_fold_is_a_cold_refit_on_the_rest_only() -> None:
    seen: list[tuple[int, frozenset[str]]] = []

    def fake_fit(points: Sequence[CalibrationPoint], **kwargs: Any) -> dict[str, Any]:
        # the final fit's call: no warm start, no budget of its own
        assert kwargs == {}
        seen.append((len(points), frozenset(cv.group_of(p) for p in points)))
        return {"base": {}}

    sample = [p for p in POINTS if p.source != AIC_SOURCE][:60] + [
        p for p in POINTS if p.source == AIC_SOURCE
    ][::200]
    results = cv.cross_validate(sample, fake_fit)
    folds = cv.cv_folds(sample)
    assert len(seen) == len(folds)
    for (n, groups), fold in zip(seen, folds, strict=True):
        assert fold.group not in groups
        assert n == len(fold.rest)
    assert {r.point.id for r in results} == {p.id for f in folds for p in f.held}


def _result(point: CalibrationPoint, ratio: float) -> PointResult:
    predicted = point.value / ratio
    return PointResult(point, predicted, predicted, predicted)


def test_summary_errors_and_band_are_the_stated_statistics() -> None:
    tpots = [p for p in POINTS if p.metric == "tpot_ms" and p.kind.value == "measured"][:41]
    ratios = [0.5 + i / 40 for i in range(41)]  # 0.5 .. 1.5
    results = [_result(p, r) for p, r in zip(tpots, ratios, strict=True)]
    summary = cv.summarize(results)
    errors = sorted(abs(1.0 / r - 1.0) for r in ratios)  # predicted / measured − 1
    assert summary["metrics"]["tpot"]["n"] == 41
    assert summary["metrics"]["tpot"]["median_ape"] == pytest.approx(statistics.median(errors), abs=1e-4)
    low, high = summary["bands"]["tpot"]
    # the central 90 % of 41 ratios: from the 3rd smallest (index 2) to the 3rd largest, outwards
    assert low == pytest.approx(ratios[2], abs=1e-4)
    assert high == pytest.approx(ratios[38], abs=1e-4)
    assert summary["metrics"]["tpot"]["band_coverage"] == pytest.approx(37 / 41, abs=1e-4)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0.2, 5.0), min_size=1, max_size=80))
def test_band_covers_at_least_its_share(ratios: list[float]) -> None:
    low, high = cv.central_band(ratios)
    assert sum(low <= r <= high for r in ratios) / len(ratios) >= cv.BAND_COVERAGE
