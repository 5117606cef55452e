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
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from tests.pg import PostgresCluster, PostgresUnavailable, start_cluster  # noqa: E402 - needs sys.path

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(scope="session", autouse=True)
def _private_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every server a test starts keeps its default plan store (SQLite under the user's data
    directory) in a temporary directory, never in the developer's own ``~/.local/share``."""
    previous = {key: os.environ.get(key) for key in ("XDG_DATA_HOME", "FLEETPLAN_STORE")}
    os.environ["XDG_DATA_HOME"] = str(tmp_path_factory.mktemp("xdg-data"))
    os.environ.pop("FLEETPLAN_STORE", None)
    yield
    for key, value in previous.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresCluster | None]:
    """A throwaway PostgreSQL server for the session (``tests.pg``), or None — with a loud warning
    — when it cannot be started here (tests that need it then skip, saying why)."""
    try:
        cluster = start_cluster()
    except PostgresUnavailable as exc:
        message = f"PostgreSQL tests SKIPPED: cannot start PostgreSQL: {exc}"
        warnings.warn(message, stacklevel=1)
        sys.stderr.write(f"\n*** {message} ***\n")
        yield None
        return
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def postgres_url(postgres: PostgresCluster | None) -> str:
    """A fresh, empty PostgreSQL database (skips, loudly, without PostgreSQL)."""
    if postgres is None:
        pytest.skip("PostgreSQL cannot be started here (see the warning): apt-get install postgresql")
    return postgres.create_database()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_spec(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A ``--store`` value naming an empty database: a SQLite file, then a real PostgreSQL one."""
    if request.param == "sqlite":
        return str(tmp_path / "plans.db")
    url: str = request.getfixturevalue("postgres_url")
    return url
