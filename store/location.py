"""Where the store is: ``--store`` / ``FLEETPLAN_STORE`` text → a SQLAlchemy URL.

- unset or ``default``: SQLite in the user's data directory (``$XDG_DATA_HOME/fleetplan/plans.db``,
  else ``~/.local/share/fleetplan/plans.db``);
- ``none``: no store (saving and the plan RPCs answer FAILED_PRECONDITION);
- ``sqlite:///path.db`` or a plain file path: SQLite in that file;
- ``postgresql://…`` (or ``postgres://…``): PostgreSQL through psycopg 3 (``postgresql+psycopg://``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

DISABLED = "none"
DEFAULT = "default"


def default_sqlite_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    base = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "fleetplan" / "plans.db"


def store_url(spec: str | None, env: Mapping[str, str] | None = None) -> str | None:
    """The SQLAlchemy URL of ``spec``; None = no store."""
    text = (spec or DEFAULT).strip()
    if text.lower() == DISABLED:
        return None
    if text.lower() == DEFAULT:
        return f"sqlite:///{default_sqlite_path(env)}"
    for prefix in ("postgresql://", "postgres://"):
        if text.startswith(prefix):
            return "postgresql+psycopg://" + text[len(prefix) :]
    if "://" in text:
        return text
    return f"sqlite:///{Path(text).expanduser().resolve()}"


def redacted(url: str) -> str:
    """``url`` without its password (for logs and errors)."""
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return url
    credentials, _, host = rest.rpartition("@")
    user = credentials.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}" if ":" in credentials else url
