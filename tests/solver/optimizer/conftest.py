import logging
import sys
from pathlib import Path

import pytest
import structlog

from pricebook.loader import load_default
from pricebook.schema import Pricebook

# Lets tests import the hand-built instance helpers in opt_factories.py and the benchmark's
# portfolio generator (importlib import mode does not put these directories on sys.path).
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[3]))


@pytest.fixture(scope="module")
def book() -> Pricebook:
    """The default pricebook, with the solver's info logs quietened."""
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    return load_default()
