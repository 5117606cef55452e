"""``python -m report.compile_catalogue [ko ...]``: compile each language's ``quote.po`` to its
``quote.mo`` (run after editing a translation; ``tests/report/test_catalogue.py`` checks they agree)."""

from __future__ import annotations

import sys

from report.catalogue import compile_catalogue, mo_path


def main(argv: list[str]) -> int:
    for language in argv or ["ko"]:
        mo_path(language).write_bytes(compile_catalogue(language))
        sys.stdout.write(f"wrote {mo_path(language)}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
