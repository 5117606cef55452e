"""Headless Chromium (Debian's ``chromium`` + ``chromium-driver``, installed by ``.ci/run``) driven by
selenium. Where it cannot start the tests skip, loudly; on CI (``CI`` set) they fail instead."""

from __future__ import annotations

import os
import shutil
import warnings
from collections.abc import Iterator

import pytest
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


def chromium() -> Iterator[webdriver.Chrome]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1200,900",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    except (WebDriverException, OSError) as exc:
        reason = f"headless Chromium cannot start ({CHROMIUM}, {CHROMEDRIVER}): {exc}"
        if os.environ.get("CI"):
            pytest.fail(reason + " — .ci/run installs chromium and chromium-driver; on CI this must run")
        warnings.warn(reason, stacklevel=1)
        pytest.skip("SKIPPED LOUDLY: " + reason)
    try:
        yield driver
    finally:
        driver.quit()
