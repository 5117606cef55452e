"""Request-length mixes in scenario files: the short form and a CSV of request lengths, binned.

``length_mix`` of an inference workload may be written three ways:

- the message's own list: ``[{input_tokens: 512, output_tokens: 128, share: 0.8}, …]``;
- a short form: ``"512x128:0.8, 4000x300:0.2"`` (input × output tokens : share);
- a CSV of observed requests, binned: ``{csv: lengths.csv, bins: 4}`` — one request per row with
  ``input_tokens`` and ``output_tokens`` columns (a header row naming them), the path relative
  to the scenario file. Requests are cut into ``bins`` quantile ranges of input length and
  ``bins`` of output length (fewer where lengths repeat); each non-empty cell becomes one bucket
  at the cell's mean lengths (rounded up) with its share of the requests.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

DEFAULT_BINS = 4
MAX_BINS = 8
"""8 × 8 = 64 buckets: the domain's limit on one workload's mix."""


class LengthMixError(ValueError):
    """A length mix that cannot be read; the message says why."""


def parse_short_form(text: str) -> list[dict[str, Any]]:
    """``"512x128:0.8, 4000x300:0.2"`` → length buckets."""
    buckets = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        try:
            size, share = part.split(":")
            inp, out = size.lower().split("x")
            buckets.append({"input_tokens": int(inp), "output_tokens": int(out), "share": float(share)})
        except ValueError as exc:
            msg = f"expected 'INPUTxOUTPUT:SHARE' items separated by commas, got {part!r}"
            raise LengthMixError(msg) from exc
    if not buckets:
        raise LengthMixError("the length mix is empty")
    return buckets


def read_lengths(path: Path) -> list[tuple[int, int]]:
    """(input, output tokens) of every request in a CSV with those two columns."""
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
    except OSError as exc:
        raise LengthMixError(f"cannot read {path}: {exc.strerror or exc}") from exc
    lengths = []
    for i, row in enumerate(rows, start=2):
        try:
            lengths.append((int(row["input_tokens"]), int(row["output_tokens"])))
        except (KeyError, TypeError, ValueError) as exc:
            msg = f"{path} line {i}: needs integer input_tokens and output_tokens columns"
            raise LengthMixError(msg) from exc
    if not lengths:
        raise LengthMixError(f"{path} has no requests")
    return lengths


def _edges(values: Sequence[int], bins: int) -> list[int]:
    """Upper bounds of ``bins`` quantile ranges of ``values`` (duplicates merged)."""
    ordered = sorted(values)
    edges = sorted(
        {ordered[min(len(ordered) - 1, math.ceil(len(ordered) * (i + 1) / bins) - 1)] for i in range(bins)}
    )
    return edges


def _cell(value: int, edges: Sequence[int]) -> int:
    return next(i for i, edge in enumerate(edges) if value <= edge)


def bin_lengths(lengths: Sequence[tuple[int, int]], bins: int = DEFAULT_BINS) -> list[dict[str, Any]]:
    """Requests → a ``bins × bins`` histogram of buckets (mean lengths per cell, rounded up)."""
    if not 1 <= bins <= MAX_BINS:
        raise LengthMixError(f"bins must be 1 to {MAX_BINS}, got {bins}")
    in_edges = _edges([i for i, _ in lengths], bins)
    out_edges = _edges([o for _, o in lengths], bins)
    cells: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for inp, out in lengths:
        cells.setdefault((_cell(inp, in_edges), _cell(out, out_edges)), []).append((inp, out))
    return [
        {
            "input_tokens": max(1, math.ceil(sum(i for i, _ in members) / len(members))),
            "output_tokens": max(1, math.ceil(sum(o for _, o in members) / len(members))),
            "share": len(members) / len(lengths),
        }
        for _, members in sorted(cells.items())
    ]


def expand_length_mix(value: Any, scenario_file: str) -> Any:
    """The short form or a CSV reference → the list form; the list form unchanged."""
    if isinstance(value, str):
        return parse_short_form(value)
    if isinstance(value, Mapping):
        unknown = sorted(set(value) - {"csv", "bins"})
        if unknown or "csv" not in value:
            raise LengthMixError("give {csv: FILE, bins: N} (bins optional)")
        bins = value.get("bins", DEFAULT_BINS)
        if not isinstance(bins, int) or isinstance(bins, bool):
            raise LengthMixError(f"bins must be an integer, got {bins!r}")
        path = Path(str(value["csv"]))
        if not path.is_absolute():
            path = Path(scenario_file).parent / path
        return bin_lengths(read_lengths(path), bins)
    return value
