"""Fixtures of the planner tests: the default pricebook and one full plan, computed once for every
test file here (the plan takes up to 30 s); request helpers live in planner_factories.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# Lets tests import planner_factories (importlib import mode puts no test dir on sys.path).
sys.path.insert(0, str(Path(__file__).parent))

from planner_factories import request

from pricebook.loader import load_default
from pricebook.schema import Pricebook
from solver.planner import PlanResult, plan
from solver.resolve import resolve


@pytest.fixture(scope="session")
def book() -> Pricebook:
    return load_default()


@pytest.fixture(scope="session")
def full_plan(book: Pricebook) -> PlanResult:
    return plan(resolve(request(), book), time_limit_s=30)
