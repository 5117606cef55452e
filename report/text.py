"""The language-free words of the planner's rows, shared by the quote (``report.row_text``) and the
CLI's tables: a deployment's name, replica-equivalents, the deployments serving a workload. Only the
standard library, so that the CLI can use it without loading the report stack (issue 31)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["DASH", "deployment", "disaggregated", "ratio", "replicas", "role", "uses_text"]

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


def role(gpu_id: str, tp: int, ep: int, attention_dp: int, precision: str) -> str:
    """One role of a disaggregated deployment, e.g. ``h200-sxm TP2 fp8`` or ``gb200 TP1 EP8 DP8 fp4``
    (expert parallelism and attention data parallelism only when used)."""
    parallel = f"TP{tp}" + (f" EP{ep}" if ep > 1 else "") + (f" DP{attention_dp}" if attention_dp > 1 else "")
    return f"{gpu_id} {parallel} {precision}"


def ratio(prefill_engines: int, decode_engines: int) -> str:
    """The prefill:decode engines of one unit, e.g. ``1:3``."""
    return f"{prefill_engines}:{decode_engines}"


def disaggregated(prefill: str, prefill_engines: int, decode: str, decode_engines: int) -> str:
    """A disaggregated deployment's unit from its roles' names (``role``), e.g.
    ``(prefill 1 × h200-sxm TP2 fp8 + decode 3 × h100-sxm TP4 fp8)`` (in brackets, so that units of it
    read ``4 × (prefill … + decode …)``)."""
    return f"(prefill {prefill_engines} × {prefill} + decode {decode_engines} × {decode})"
