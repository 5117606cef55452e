"""The content hash depends on the content only: not on file layout, formatting, order or machine."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from pricebook.loader import load_default, load_dir

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _read(path: Path) -> Any:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)


def _write(path: Path, data: Any, **style: Any) -> None:
    path.write_text(yaml.dump(data, Dumper=_DUMPER, allow_unicode=True, **style), encoding="utf-8")


def test_a_copy_of_the_default_data_has_the_default_hash(book_dir: Path) -> None:
    assert load_dir(book_dir).content_hash == load_default().content_hash


def test_the_hash_is_a_sha256_hex_digest(book_dir: Path) -> None:
    digest = load_dir(book_dir).content_hash
    assert len(digest) == hashlib.sha256().digest_size * 2
    assert set(digest) <= set("0123456789abcdef")


def test_reformatting_and_reordering_keys_keeps_the_hash(book_dir: Path) -> None:
    before = load_dir(book_dir).content_hash
    for path in book_dir.iterdir():
        # Sorted keys and flow style: every line of every file changes, the content does not.
        _write(path, _read(path), sort_keys=True, default_flow_style=True, width=60)
    assert load_dir(book_dir).content_hash == before


def test_reordering_entries_and_moving_them_between_files_keeps_the_hash(book_dir: Path) -> None:
    before = load_dir(book_dir).content_hash
    offers = _read(book_dir / "offers.yaml")["offers"]
    half = len(offers) // 2
    _write(book_dir / "offers.yaml", {"offers": list(reversed(offers[:half]))}, sort_keys=False)
    _write(book_dir / "zz_more_offers.yaml", {"offers": offers[half:]}, sort_keys=False)
    gpus = _read(book_dir / "gpus.yaml")["gpus"]
    _write(book_dir / "gpus.yaml", {"gpus": sorted(gpus, key=lambda g: g["tdp_w"])}, sort_keys=False)
    assert load_dir(book_dir).content_hash == before


def test_writing_an_amount_differently_keeps_the_hash(book_dir: Path) -> None:
    before = load_dir(book_dir).content_hash
    path = book_dir / "offers.yaml"
    text = path.read_text(encoding="utf-8")
    assert "price: 15000000 KRW" in text
    path.write_text(text.replace("price: 15000000 KRW", "price: 15,000,000.00 KRW"), encoding="utf-8")
    assert load_dir(book_dir).content_hash == before


def test_changing_one_price_changes_the_hash(book_dir: Path) -> None:
    before = load_dir(book_dir).content_hash
    path = book_dir / "offers.yaml"
    data = _read(path)
    data["offers"][0]["price"] = data["offers"][0]["price"].replace("USD", "KRW")
    _write(path, data, sort_keys=False)
    after_currency = load_dir(book_dir).content_hash
    data["offers"][1]["price"] = "1 USD"
    _write(path, data, sort_keys=False)
    after_amount = load_dir(book_dir).content_hash
    assert len({before, after_currency, after_amount}) == 3


def test_changing_a_note_or_source_changes_the_hash(book_dir: Path) -> None:
    # Provenance is content too: a quote that cites a different source is a different book.
    before = load_dir(book_dir).content_hash
    path = book_dir / "site.yaml"
    data = _read(path)
    data["site"]["notes"] += " Edited."
    _write(path, data, sort_keys=False)
    assert load_dir(book_dir).content_hash != before


def test_the_hash_does_not_depend_on_the_process(book_dir: Path) -> None:
    # Python's string hashing is randomised per process; the content hash must not notice.
    program = "import sys; from pricebook.loader import load_dir; print(load_dir(sys.argv[1]).content_hash)"
    digests = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        run = subprocess.run(
            [sys.executable, "-c", program, str(book_dir)],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        digests.add(run.stdout.strip().splitlines()[-1])
    assert digests == {load_dir(book_dir).content_hash}
