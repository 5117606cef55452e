"""The quote's message catalogue (``report.catalogue``): the checked-in ``.mo`` is the ``.po``
compiled, GNU ``msgfmt`` reads the ``.po`` to the same translations, and every label has one."""

from __future__ import annotations

import gettext
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from report.catalogue import compile_catalogue, mo_path, parse_po, po_path
from report.labels import LABELS, Language, label

PLACEHOLDER = re.compile(r"\{[a-z_]+\}")


def _entries() -> dict[tuple[str, str], str]:
    return parse_po(po_path("ko").read_text(encoding="utf-8"))


def test_the_checked_in_mo_is_the_po_compiled() -> None:
    assert mo_path("ko").read_bytes() == compile_catalogue("ko"), "run python -m report.compile_catalogue"


def test_gnu_msgfmt_reads_the_po_to_the_same_translations(tmp_path: Path) -> None:
    msgfmt = shutil.which("msgfmt")
    if msgfmt is None:
        pytest.skip("GNU gettext's msgfmt is not installed")
    out = tmp_path / "quote.mo"
    subprocess.run([msgfmt, "--check", "-o", str(out), str(po_path("ko"))], check=True, capture_output=True)
    with out.open("rb") as handle:
        gnu = gettext.GNUTranslations(handle)
    for (context, msgid), msgstr in _entries().items():
        assert gnu.pgettext(context, msgid) == msgstr == label(context, Language.KO)


def test_every_label_has_a_korean_translation_and_no_entry_is_orphaned() -> None:
    entries = _entries()
    assert {context for context, _ in entries} == set(LABELS)
    for (context, msgid), msgstr in entries.items():
        assert msgid == LABELS[context], context  # the .po was made from today's English
        assert msgstr.strip(), context
        assert sorted(PLACEHOLDER.findall(msgstr)) == sorted(PLACEHOLDER.findall(msgid)), context


def test_english_is_the_message_id() -> None:
    assert all(label(key, Language.EN) == text for key, text in LABELS.items())
