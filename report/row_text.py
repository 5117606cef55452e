"""How the planner's rows read in a quote (and in the CLI's tables): a deployment's name, replica-
equivalents, the deployments serving a workload, a deployment group's cells."""

from __future__ import annotations

from collections.abc import Sequence

from report.data import DeploymentGroupRow, WorkloadRow, WorkloadUseRow
from report.formatting import DASH, number, percent
from report.labels import Language, label


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


def workload_deployments(w: WorkloadRow, lang: Language) -> str:
    """The groups serving a workload (``uses_text``), in ``lang``."""

    def name(u: WorkloadUseRow) -> str:
        shared = f" {label('shared', lang)}" if u.shared else ""
        return deployment(u.gpu_id, u.tp, u.mig_slice, u.precision) + shared

    return uses_text([(u.replicas, u.replicas_max, name(u)) for u in w.uses], label("other_hours", lang))


def group_cells(g: DeploymentGroupRow, lang: Language) -> list[str]:
    """A deployment group's row as text, in ``COLUMNS.groups`` order."""
    return [
        deployment(g.gpu_id, g.tp, g.mig_slice, g.precision),
        label("shared_pool" if g.shared else "own_replicas", lang),
        str(g.replicas_peak),
        str(g.replicas_off_peak),
        replicas(g.gpus_peak),
        f"{g.peak_hour:02d}:00",
        ", ".join(f"{s.workload} {s.share * 100:.0f}%" for s in g.shares),
        number(g.output_tok_s),
        percent(g.utilization),
    ]
