"""Counting the words of a Korean quote: which are Hangul or numbers, which are not, outside its
annexes (the sections whose heading starts with 부록) and outside product and model names."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from html.parser import HTMLParser

HANGUL = re.compile(r"[\uac00-\ud7a3\u3131-\u318e]")
NUMBER = re.compile(r"^[\d.,:%+\-−×~…()/원$₩≥≤<>·]*\d[\d.,:%+\-−×~…()/원$₩≥≤<>·]*$")
PUNCTUATION = re.compile(r"^[\W_]+$")


class _Text(HTMLParser):
    """The page's visible text outside annexes (a section whose h2 starts with 부록), charts
    (SVG: the glyphs are paths) and the head."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.words: list[str] = []
        self._skip = 0
        self._in_h2 = False
        self._h2 = ""
        self._section_depth = 0
        self._annex = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in {"svg", "style", "title", "head"}:
            self._skip += 1
        elif tag == "section":
            self._section_depth += 1
            self._annex = False
        elif tag == "h2":
            self._in_h2, self._h2 = True, ""

    def handle_endtag(self, tag: str) -> None:
        if tag in {"svg", "style", "title", "head"}:
            self._skip -= 1
        elif tag == "section":
            self._section_depth -= 1
            self._annex = False
        elif tag == "h2":
            self._in_h2 = False
            if self._h2.strip().startswith("부록"):
                self._annex = True
                self.words = self.words[: len(self.words) - len(self._h2.split())]

    def handle_data(self, data: str) -> None:
        if self._in_h2:
            self._h2 += data
        if self._skip or self._annex:
            return
        self.words.extend(data.split())


def visible_words(html: str) -> list[str]:
    parser = _Text()
    parser.feed(html)
    return parser.words


@dataclass(frozen=True)
class WordCount:
    hangul_or_number: int
    other: tuple[str, ...]

    @property
    def share(self) -> float:
        total = self.hangul_or_number + len(self.other)
        return self.hangul_or_number / total if total else 1.0


def count_words(words: Iterable[str], names: Iterable[str]) -> WordCount:
    """Words with Hangul or that are numbers (amounts, percentages, dates) against the rest;
    punctuation alone is no word, and a product or model name (``names``: GPU ids and names,
    server names, model ids) is left out."""
    name_words = {w for n in names for w in n.split()}
    good, other = 0, []
    for word in words:
        if PUNCTUATION.match(word) or word.strip("(),:;") in name_words or word in name_words:
            continue
        if HANGUL.search(word) or NUMBER.match(word):
            good += 1
        else:
            other.append(word)
    return WordCount(good, tuple(other))
