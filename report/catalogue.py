"""The quote's message catalogue: GNU gettext, English message ids with a context per label, the
Korean translations in ``report/locale/ko/LC_MESSAGES/quote.po`` compiled to ``quote.mo`` (stdlib
``gettext`` reads it). ``python -m report.compile_catalogue`` compiles the ``.po`` (a small writer
of the ``.mo`` format here, so no tool outside Python is needed); a test keeps the two in step.
"""

from __future__ import annotations

import ast
import functools
import gettext
import struct
from pathlib import Path

LOCALE_DIR = Path(__file__).parent / "locale"
DOMAIN = "quote"
CONTEXT_SEPARATOR = "\x04"
"""Between a message's context and its id in a compiled catalogue (GNU gettext's convention)."""


def po_path(language: str) -> Path:
    return LOCALE_DIR / language / "LC_MESSAGES" / f"{DOMAIN}.po"


def mo_path(language: str) -> Path:
    return po_path(language).with_suffix(".mo")


@functools.cache
def translations(language: str) -> gettext.NullTranslations:
    """The compiled catalogue of ``language`` (English: the message ids themselves)."""
    if language == "en":
        return gettext.NullTranslations()
    with mo_path(language).open("rb") as handle:
        return gettext.GNUTranslations(handle)


def parse_po(text: str) -> dict[tuple[str, str], str]:
    """``(msgctxt, msgid) → msgstr`` of a ``.po`` file (comments and the header entry skipped)."""
    entries: dict[tuple[str, str], str] = {}
    fields: dict[str, str] = {}
    current = ""

    def close() -> None:
        if fields.get("msgid"):
            entries[(fields.get("msgctxt", ""), fields["msgid"])] = fields.get("msgstr", "")
        fields.clear()

    for raw in [*text.splitlines(), ""]:
        line = raw.strip()
        if not line or line.startswith("#"):
            if not line and fields.get("msgstr") is not None:
                close()
            continue
        keyword, _, rest = line.partition(" ")
        if keyword in {"msgctxt", "msgid", "msgstr"}:
            if keyword != "msgstr" and "msgstr" in fields:
                close()
            current = keyword
            fields[current] = ast.literal_eval(rest)
        else:  # a continued string
            fields[current] += ast.literal_eval(line)
    return entries


def mo_bytes(entries: dict[tuple[str, str], str], header: str) -> bytes:
    """A GNU ``.mo`` file of ``entries`` (ids sorted, no hash table), ``header`` as the empty id's
    translation (it names the charset)."""
    keyed = {"": header} | {
        (f"{ctxt}{CONTEXT_SEPARATOR}{msgid}" if ctxt else msgid): msgstr
        for (ctxt, msgid), msgstr in entries.items()
        if msgstr
    }
    ids = sorted(keyed)
    originals = [i.encode("utf-8") for i in ids]
    translated = [keyed[i].encode("utf-8") for i in ids]
    count = len(ids)
    table_start = 7 * 4
    data_start = table_start + 16 * count
    tables: list[int] = []
    data = b""
    for strings in (originals, translated):
        for s in strings:
            tables += [len(s), data_start + len(data)]
            data += s + b"\0"
    head = struct.pack("<7I", 0x950412DE, 0, count, table_start, table_start + 8 * count, 0, 0)
    return head + struct.pack(f"<{len(tables)}I", *tables) + data


PO_HEADER = "Content-Type: text/plain; charset=UTF-8\nLanguage: {language}\n"


def compile_catalogue(language: str) -> bytes:
    entries = parse_po(po_path(language).read_text(encoding="utf-8"))
    return mo_bytes(entries, PO_HEADER.format(language=language))
