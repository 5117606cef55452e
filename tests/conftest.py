"""Session-wide test setup.

The repository root is importable so that tests can use ``bench`` (the seed portfolio of
``bench/solver_scaling.py`` is shared by the golden tests, the benchmark and the example checks);
with ``--import-mode=importlib`` pytest does not put it on ``sys.path`` by itself.

CI (``CI`` set, as ``.ci/run`` does) runs the property tests with a fixed seed so a run is
reproducible — a failure seen in CI is seen again locally with ``CI=true`` — while local runs keep
exploring new examples.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from hypothesis import settings

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
