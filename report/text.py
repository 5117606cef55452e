"""The language-free words of the planner's rows, shared by the quote (``report.row_text``) and the
CLI's tables: a deployment's name, replica-equivalents, the deployments serving a workload. Only the
standard library, so that the CLI can use it without loading the report stack (issue 31)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["DASH", "deployment", "replicas", "uses_text"]

DASH = "–"
"""What an empty cell shows."""


def replicas(value: float) -> str:
    """Replica-equivalents: whole numbers as such, a share of a pool to two decimals."""
    rounded = round(value, 2)
    return f"{rounded:.0f}" if rounded == int(rounded) else f"{rounded:.2f}"


def deployment(gpu_id: str, tp: int, mig_slice: int, precision: str) -> str:
    """E.g. ``h100-nvl TP2 fp8`` or ``h100-nvl MIG 1/7 fp8``."""
    size = f"MIG 1/{mig_slice}" if mig_slice else f"TP{tp}"
    return f"{gpu_id} {size} {precision}"


def uses_text(uses: Sequence[tuple[float, float, str]], other_hours: str) -> str:
    """(replicas at peak, most replicas in any hour, deployment name) of each group serving a
    workload as ``1.46 × h100-nvl TP1 fp8 shared + 1 × h100-nvl TP2 fp8``, then those serving it
    only in other hours with their most replicas (``; other hours: ≤1 × l40s TP1 fp8``)."""
    at_peak = [f"{replicas(r)} × {name}" for r, _, name in uses if round(r, 2) > 0]
    other = [f"≤{replicas(most)} × {name}" for r, most, name in uses if round(r, 2) <= 0]
    text = " + ".join(at_peak) or DASH
    return text + (f"; {other_hours}: {' + '.join(other)}" if other else "")
