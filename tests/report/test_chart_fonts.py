"""Korean charts never draw □ boxes: with a fresh matplotlib font cache they draw Hangul without a
missing-glyph warning; a cache built before the CJK fonts were installed is rebuilt; with no CJK
font at all the renderer fails loudly (issue 30, item 9). Each case runs in its own process with
its own cache directory (MPLCONFIGDIR), as a freshly built virtualenv would."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from matplotlib.figure import Figure

from report.cashflow import ROWS
from report.charts import CJK_FAMILY, COMPONENT_COLORS, ROW_COLORS, _money_axis
from report.labels import Language

REPO = Path(__file__).resolve().parents[2]
CHART = """
import warnings
warnings.simplefilter("always")
from decimal import Decimal
from pricebook.schema import Money
from report.cashflow import CashFlow
from report.charts import cash_flow_chart
from report.data import QuoteSite
from report.labels import Language
won = lambda n: Money(amount=Decimal(n), currency="KRW")
rows = (("capex", (won(150000000), won(0))), ("residual", (won(0), won(-20000000))))
flow = CashFlow(
    years=(1, 2), months=(12, 12), rows=rows, totals=(won(150000000), won(-20000000)), total=won(130000000)
)
svg = cash_flow_chart(flow, QuoteSite(), Language.KO)
assert svg.startswith("<svg") and svg.count("<path") > 20
"""
STALE = """
from matplotlib import font_manager
manager = font_manager.fontManager
manager.ttflist = [f for f in manager.ttflist if "CJK" not in f.name]  # a cache from before the fonts
manager._findfont_cached.cache_clear()
from report import charts
assert charts._cjk_font_path() is None
"""


def _run(code: str, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MPLCONFIGDIR": str(cache), "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def has_cjk_fonts() -> None:
    listed = subprocess.run(["fc-list", ":lang=ko", "family"], capture_output=True, text=True, check=False)
    if CJK_FAMILY not in listed.stdout:
        if os.environ.get("CI"):
            pytest.fail(f"{CJK_FAMILY} is not installed (fonts-noto-cjk)")
        pytest.skip(f"{CJK_FAMILY} is not installed (fonts-noto-cjk)")


def test_a_fresh_font_cache_draws_hangul_without_missing_glyphs(tmp_path: Path, has_cjk_fonts: None) -> None:
    done = _run(CHART, tmp_path / "mpl")
    assert done.returncode == 0, done.stderr
    assert "missing from font" not in done.stderr and "Glyph" not in done.stderr, done.stderr


def test_a_cache_from_before_the_fonts_is_rebuilt(tmp_path: Path, has_cjk_fonts: None) -> None:
    cache = tmp_path / "mpl"
    done = _run(STALE + CHART + "\nprint(charts._cjk_font_path())", cache)
    assert done.returncode == 0, done.stderr
    assert "missing from font" not in done.stderr, done.stderr
    assert "NotoSansCJK" in done.stdout
    written = next(cache.glob("fontlist-v*.json")).read_text(encoding="utf-8")
    assert "Noto Sans CJK" in written  # the next process finds the fonts without rebuilding


def test_no_cjk_font_at_all_fails_loudly(tmp_path: Path) -> None:
    no_fonts = STALE + "font_manager.findSystemFonts = lambda *a, **k: []\n" + CHART
    done = _run(no_fonts, tmp_path / "mpl")
    assert done.returncode != 0
    assert "MissingGlyphsError" in done.stderr and "fonts-noto-cjk" in done.stderr


def test_every_cash_flow_row_and_component_has_its_own_colour() -> None:
    assert set(ROWS) <= set(ROW_COLORS) and len(set(ROW_COLORS.values())) == len(ROW_COLORS)
    assert len(set(COMPONENT_COLORS.values())) == len(COMPONENT_COLORS)
    assert ROW_COLORS["capex"] != ROW_COLORS["residual"]


@pytest.mark.parametrize(
    ("currency", "largest", "unit", "tick"),
    [
        ("KRW", 250_000_000, "억 원", "2.5"),
        ("KRW", 35_000_000, "백만 원", "35"),
        ("USD", 40_000, "천 USD", "40"),
    ],
)
def test_money_axes_read_in_eok_or_millions(currency: str, largest: float, unit: str, tick: str) -> None:
    ax = Figure().add_subplot()
    ax.set_ylim(0, largest)
    _money_axis(ax, currency, Language.KO)
    assert ax.get_ylabel() == unit
    assert ax.yaxis.get_major_formatter()(largest, 0) == tick
