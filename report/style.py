"""The quote page's style sheet (``quote.css`` beside this module: screen and print rules)."""

from importlib.resources import files

CSS = files("report").joinpath("quote.css").read_text(encoding="utf-8")
