"""The HTML quote in a real browser: it loads with no console error, every chart is drawn (its
screenshot is not blank), and the numbers on the page are the plan's (read back from the page and
compared with the plan's JSON)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from browser import chromium
from PIL import Image
from report_support import amount, bid_example, exact_amount, example, expected_bom_lines
from selenium import webdriver
from selenium.webdriver.common.by import By

from report import Language
from report.html import render_html
from report.presentation import Audience

MIN_INK_FRACTION = 0.01
"""Share of a chart's pixels that must differ from the white page (a blank or missing chart has 0)."""


@pytest.fixture(scope="module")
def driver() -> Iterator[webdriver.Chrome]:
    yield from chromium()


def _open(driver: webdriver.Chrome, html: str, path: Path) -> None:
    path.write_text(html, encoding="utf-8")
    driver.get(path.as_uri())


def _ink(png: bytes) -> tuple[float, int]:
    """(share of non-white pixels, number of distinct colours) of a screenshot."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    pixels = list(image.get_flattened_data())
    inked = sum(1 for p in pixels if min(p) < 235)
    return inked / len(pixels), len(set(pixels))


def _field(driver: webdriver.Chrome, name: str) -> list[str]:
    return [e.text for e in driver.find_elements(By.CSS_SELECTOR, f'[data-field="{name}"]')]


@pytest.mark.parametrize("lang", list(Language))
def test_quote_page_loads_charts_show_and_numbers_are_the_plans(
    driver: webdriver.Chrome, tmp_path: Path, lang: Language
) -> None:
    planned = example("500m_krw_portfolio")
    _open(driver, render_html(planned.quote, lang), tmp_path / f"quote-{lang.value}.html")
    assert driver.find_element(By.TAG_NAME, "h1").text
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []
    # No resource outside the page: every src/href is inline.
    assert driver.execute_script("return performance.getEntriesByType('resource').length") == 0

    charts = driver.find_elements(By.CSS_SELECTOR, "figure.chart")
    ids = {c.get_attribute("id") for c in charts}
    gpus = {line["gpu_id"] for line in planned.plan_json["fleet"]}
    assert {"chart-cashflow", "chart-tco", "chart-latency"} | {f"chart-breakeven-{g}" for g in gpus} <= ids
    for chart in charts:
        size = chart.find_element(By.TAG_NAME, "svg").size
        assert size["width"] > 200 and size["height"] > 80, chart.get_attribute("id")
        ink, colours = _ink(chart.screenshot_as_png)
        assert ink > MIN_INK_FRACTION and colours > 3, chart.get_attribute("id")

    cost = planned.plan_json["cost"]
    assert [exact_amount(t) for t in _field(driver, "horizon-tco")] == [amount(cost["horizon_tco"])]
    assert [exact_amount(t) for t in _field(driver, "capex")] == [amount(cost["capex"])]
    assert [exact_amount(t) for t in _field(driver, "opex-monthly")] == [amount(cost["opex_monthly"])]
    assert [exact_amount(t) for t in _field(driver, "tco-total")] == [amount(cost["horizon_tco"])]
    assert [exact_amount(t) for t in _field(driver, "cashflow-total")] == [amount(cost["horizon_tco"])]
    assert [exact_amount(t) for t in _field(driver, "bom-amount")] == expected_bom_lines(planned)
    assert [exact_amount(t) for t in _field(driver, "bom-supply")] == [amount(cost["capex"])]
    assert [exact_amount(t) for t in _field(driver, "alt-tco-recommended")] == [amount(cost["horizon_tco"])]


def test_korean_page_reads_won_with_separators_and_eok_man(driver: webdriver.Chrome, tmp_path: Path) -> None:
    planned = example("500m_krw_portfolio")
    _open(driver, render_html(planned.quote, Language.KO), tmp_path / "quote-ko.html")
    tco = amount(planned.plan_json["cost"]["horizon_tco"])
    text = _field(driver, "horizon-tco")[0]
    eok, rest = divmod(int(tco), 10**8)
    man = (rest + 5_000) // 10**4
    assert text.startswith(f"{eok}억 {man:,}만 원")
    assert f"({int(tco):,}원)" in text
    assert driver.find_element(By.CSS_SELECTOR, "html").get_attribute("lang") == "ko"
    assert "견적 내역" in driver.find_element(By.ID, "bom").text


def test_the_korean_customer_bid_loads_and_every_chart_is_drawn(
    driver: webdriver.Chrome, tmp_path: Path
) -> None:
    """The public bid's Korean customer quote (issue 30): no console error, nothing fetched, the
    budget gauge and the hourly demand-vs-capacity chart drawn beside the others, and the headline
    제안 금액 the plan's capex with its VAT."""
    planned = bid_example("kr_public_rag_bid")
    quote = planned.quote.model_copy(update={"audience": Audience.CUSTOMER})
    _open(driver, render_html(quote, Language.KO), tmp_path / "bid-ko.html")
    assert [e for e in driver.get_log("browser") if e["level"] == "SEVERE"] == []
    assert driver.execute_script("return performance.getEntriesByType('resource').length") == 0
    charts = {c.get_attribute("id"): c for c in driver.find_elements(By.CSS_SELECTOR, "figure.chart")}
    assert {"chart-budget", "chart-hourly", "chart-cashflow", "chart-tco", "chart-latency"} <= set(charts)
    for name, chart in charts.items():
        ink, colours = _ink(chart.screenshot_as_png)
        assert ink > MIN_INK_FRACTION and colours > 3, name
    cost = planned.plan_json["cost"]
    headline = amount(cost["capex"]) + amount(cost["vat"]["capex_vat"])
    assert [exact_amount(t) for t in _field(driver, "proposed-amount")] == [headline]


def test_the_blank_chart_check_can_fail(driver: webdriver.Chrome, tmp_path: Path) -> None:
    """A chart whose SVG draws nothing is caught by the same measure."""
    blank = '<figure class="chart" id="chart-blank"><svg width="600" height="200"></svg></figure>'
    _open(driver, f"<!DOCTYPE html><html><body>{blank}</body></html>", tmp_path / "blank.html")
    ink, _ = _ink(driver.find_element(By.ID, "chart-blank").screenshot_as_png)
    assert ink <= MIN_INK_FRACTION


def test_the_five_year_korean_quote_shows_its_schedule_and_yearly_cash_flow(
    driver: webdriver.Chrome, tmp_path: Path
) -> None:
    """The five-year rollout's Korean quote (issue 32): it loads clean, the 연차별 도입 계획 table
    shows each year's capex and monthly opex as the plan's schedule has them, the yearly cash-flow
    chart is drawn, and the NPV shown is the plan's."""
    planned = example("korean_public_rollout_5yr")
    _open(driver, render_html(planned.quote, Language.KO), tmp_path / "rollout-ko.html")
    assert [e for e in driver.get_log("browser") if e["level"] == "SEVERE"] == []
    assert driver.execute_script("return performance.getEntriesByType('resource').length") == 0
    section = driver.find_element(By.ID, "schedule")
    assert section.find_element(By.TAG_NAME, "h2").text == "3. 연차별 도입 계획"
    assert section.find_element(By.ID, "schedule-table").is_displayed()
    for year in planned.plan_json["schedule"]["years"]:
        n = year["year"]
        assert [exact_amount(t) for t in _field(driver, f"schedule-capex-{n}")] == [amount(year["capex"])]
        assert [exact_amount(t) for t in _field(driver, f"schedule-opex-{n}")] == [
            amount(year["opex_monthly"])
        ]
    npv = amount(planned.plan_json["cost"]["npv"])
    assert [exact_amount(t) for t in _field(driver, "schedule-npv")] == [npv]
    chart = section.find_element(By.ID, "chart-present-value")
    ink, colours = _ink(chart.screenshot_as_png)
    assert ink > MIN_INK_FRACTION and colours > 3
    assert f"{int(npv):,}원" in chart.find_element(By.TAG_NAME, "figcaption").text
    # 제안 금액 is the NPV over the horizon; the BOM is each year's purchases; the cash by year is drawn
    assert [exact_amount(t) for t in _field(driver, "proposed-amount")] == [npv]
    years = planned.plan_json["schedule"]["years"]
    for year in years:
        n = year["year"]
        shown = [exact_amount(t) for t in _field(driver, f"bom-year-{n}")]
        assert shown == ([amount(year["capex"])] if amount(year["capex"]) else [])
    capex = sum((amount(y["capex"]) for y in years), Decimal(0))
    assert [exact_amount(t) for t in _field(driver, "bom-supply")] == [capex]
    flows = planned.plan_json["cost"]["cash_flows_by_year"]
    nominal = sum((amount(y["nominal"]) for y in flows), Decimal(0))
    assert [exact_amount(t) for t in _field(driver, "cashflow-total")] == [nominal]
    ink, colours = _ink(driver.find_element(By.ID, "chart-cashflow").screenshot_as_png)
    assert ink > MIN_INK_FRACTION and colours > 3


SPLIT_KOREAN_WORDS = """
const split = [], wrapped = [];
for (const th of document.querySelectorAll('th')) {
  const lines = new Set();
  const walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const words = /\\S*[\\uac00-\\ud7a3]\\S*/g;
    for (let m = words.exec(node.data); m; m = words.exec(node.data)) {
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
      tops.forEach(t => lines.add(t));
      if (tops.size > 1) split.push(m[0]);
    }
  }
  if (lines.size > 1) wrapped.push(th.textContent);
}
return [split, wrapped];
"""
"""Korean header words drawn over more than one line, and the headers that wrap at all."""


def test_korean_table_headers_wrap_between_words_only(driver: webdriver.Chrome, tmp_path: Path) -> None:
    """In a narrow window the five-year quote's headers wrap, but never inside a Korean word
    (WeasyPrint and browsers break Hangul between any two syllables unless told not to)."""
    planned = example("korean_public_rollout_5yr")
    driver.set_window_size(640, 900)
    try:
        _open(driver, render_html(planned.quote, Language.KO), tmp_path / "narrow-ko.html")
        split, wrapped = driver.execute_script(SPLIT_KOREAN_WORDS)
    finally:
        driver.set_window_size(1200, 900)
    assert len(wrapped) > 5, "the narrow page should wrap some headers"
    assert split == []
