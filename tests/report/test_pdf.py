"""The PDF quote: laid out by WeasyPrint, turned into PNG pages by pdftoppm (Debian poppler-utils),
Korean headings and an embedded Noto CJK font with --lang ko, the same page count every time."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image
from report_support import amount, exact_amount, example

from report import Language
from report.pdf import render_pdf

POPPLER = ("pdftoppm", "pdftotext", "pdffonts", "pdfinfo")


@pytest.fixture(scope="module")
def korean_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    missing = [tool for tool in POPPLER if shutil.which(tool) is None]
    assert not missing, f"poppler-utils missing ({missing}); .ci/run installs it"
    path = tmp_path_factory.mktemp("pdf") / "quote-ko.pdf"
    path.write_bytes(render_pdf(example("500m_krw_portfolio").quote, Language.KO))
    return path


def _run(*argv: str) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


def _pages(path: Path) -> int:
    line = next(x for x in _run("pdfinfo", str(path)).splitlines() if x.startswith("Pages:"))
    return int(line.split()[1])


def test_pdf_pages_render_to_png(korean_pdf: Path, tmp_path: Path) -> None:
    assert korean_pdf.read_bytes()[:5] == b"%PDF-"
    _run("pdftoppm", "-r", "40", "-png", "-f", "1", "-l", "2", str(korean_pdf), str(tmp_path / "page"))
    pages = sorted(tmp_path.glob("page-*.png"))
    assert len(pages) == 2
    for page in pages:
        image = Image.open(page).convert("L")
        width, height = image.size
        assert height > width  # A4 portrait
        dark = sum(1 for v in image.get_flattened_data() if v < 128)
        assert dark > 0.005 * width * height, page.name  # text and tables, not a blank page


def test_korean_glyphs_and_embedded_cjk_font(korean_pdf: Path) -> None:
    text = _run("pdftotext", "-layout", str(korean_pdf), "-")
    for heading in ("1. 요약", "2. 견적 내역", "3. 대안 비교", "공급가액", "부가세", "합계", "부록 2. 출처"):
        assert heading in text, heading
    fonts = _run("pdffonts", str(korean_pdf))
    cjk = [line for line in fonts.splitlines() if "Noto-Sans-CJK" in line or "NotoSansCJK" in line]
    assert cjk, fonts
    assert all(" yes " in line for line in cjk)  # embedded
    tco = amount(example("500m_krw_portfolio").plan_json["cost"]["horizon_tco"])
    assert f"{int(tco):,}원" in text


def test_page_count_is_stable_across_renders(korean_pdf: Path, tmp_path: Path) -> None:
    again = tmp_path / "again.pdf"
    again.write_bytes(render_pdf(example("500m_krw_portfolio").quote, Language.KO))
    assert _pages(again) == _pages(korean_pdf) >= 3


def test_english_pdf_has_the_plans_capex() -> None:
    planned = example("rtx5090_cluster")
    text = subprocess.run(
        ["pdftotext", "-", "-"], input=render_pdf(planned.quote, Language.EN), capture_output=True, check=True
    ).stdout.decode("utf-8")
    assert "1. Summary" in text and "2. Quotation details" in text
    capex = amount(planned.plan_json["cost"]["capex"])
    assert any(exact_amount(x) == capex for x in text.splitlines() if "$" in x)
