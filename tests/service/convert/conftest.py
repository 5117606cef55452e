"""Shared fixtures of the converter tests; ``convert_support`` holds the request builders."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pricebook import load_default
from pricebook.schema import Pricebook

# Lets the tests import convert_support: importlib import mode does not put this directory on sys.path.
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="module")
def book() -> Pricebook:
    return load_default()
