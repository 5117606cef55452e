"""Helpers: copies of the default pricebook data in a temp dir, edited as parsed YAML."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import yaml

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
DATA_FILES = (
    "api_prices.yaml",
    "book.yaml",
    "gpus.yaml",
    "models.yaml",
    "offers.yaml",
    "servers.yaml",
    "site.yaml",
)


def copy_default_data(target: Path) -> Path:
    source = resources.files("pricebook.data")
    target.mkdir(parents=True, exist_ok=True)
    for name in DATA_FILES:
        (target / name).write_text(source.joinpath(name).read_text(encoding="utf-8"), encoding="utf-8")
    return target


def edit_yaml(path: Path, change: Callable[[Any], None]) -> None:
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)
    change(data)
    path.write_text(yaml.dump(data, Dumper=_DUMPER, allow_unicode=True, sort_keys=False), encoding="utf-8")


def entry(data: dict[str, Any], section: str, entry_id: str) -> dict[str, Any]:
    found: dict[str, Any] = next(e for e in data[section] if e["id"] == entry_id)
    return found


EntryEditor = Callable[[str, str, str, Callable[[dict[str, Any]], Any]], None]


@pytest.fixture
def edit_entry(book_dir: Path) -> EntryEditor:
    """``edit_entry(file, section, entry_id, change)`` edits one entry of the copied book in place."""

    def edit(file: str, section: str, entry_id: str, change: Callable[[dict[str, Any]], Any]) -> None:
        edit_yaml(book_dir / file, lambda data: change(entry(data, section, entry_id)))

    return edit


@pytest.fixture
def book_dir(tmp_path: Path) -> Path:
    """A fresh copy of the default data that a test may break."""
    directory = copy_default_data(tmp_path / "book")
    assert sorted(p.name for p in directory.iterdir()) == sorted(DATA_FILES)
    return directory
