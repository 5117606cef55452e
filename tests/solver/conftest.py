"""Fixtures of the solver tests; economics helpers live in econ_factories.py (importable by tests)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

# Lets tests import econ_factories (importlib import mode puts no test dir on sys.path).
sys.path.insert(0, str(Path(__file__).parent))

from econ_factories import book

from pricebook.schema import Pricebook


@pytest.fixture
def make_book() -> Callable[..., Pricebook]:
    return book
