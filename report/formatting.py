"""How numbers read in a quote: money with thousands separators (KRW as won, and 억/만 원 in Korean
summaries), percentages, plain numbers. Dates are ISO (``date.isoformat()``) everywhere."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import ROUND_HALF_EVEN, Decimal

from pricebook.schema import Money
from report.data import DeploymentGroupRow, WorkloadRow, WorkloadUseRow
from report.labels import Language, label

MAN = 10_000
EOK = 100_000_000
DASH = "–"


def _grouped(amount: Decimal, places: int) -> str:
    return f"{amount:,.{places}f}"


def money(value: Money | None, lang: Language) -> str:
    """``247,591,848원`` / ``KRW 247,591,848`` / ``$46,807.56`` (``–`` when absent)."""
    if value is None:
        return DASH
    amount = value.amount
    if value.currency == "KRW":
        text = _grouped(amount, 0 if amount == amount.to_integral_value() else 2)
        return f"{text}원" if lang is Language.KO else f"KRW {text}"
    text = _grouped(amount, max(2, -min(0, int(amount.as_tuple().exponent))))
    if lang is Language.KO:
        return f"{text} USD"
    return f"-${text[1:]}" if text.startswith("-") else f"${text}"


def korean_units(amount: Decimal) -> str:
    """Won in 억 and 만: 247,591,848 → ``2억 4,759만 원`` (to the nearest 만 원)."""
    sign = "-" if amount < 0 else ""
    whole = int(abs(amount).quantize(Decimal(1), rounding=ROUND_HALF_EVEN))
    if whole < MAN:
        return f"{sign}{whole:,}원"
    man_total = (whole + MAN // 2) // MAN
    eok, man = divmod(man_total, EOK // MAN)
    parts = ([f"{eok:,}억"] if eok else []) + ([f"{man:,}만"] if man else [])
    return f"{sign}{' '.join(parts)} 원"


def money_summary(value: Money | None, lang: Language) -> str:
    """A summary figure: in Korean, KRW as 억/만 원 with the exact amount beside it."""
    if value is not None and lang is Language.KO and value.currency == "KRW":
        return f"{korean_units(value.amount)} ({money(value, lang)})"
    return money(value, lang)


def percent(value: float | None, places: int = 1) -> str:
    return DASH if value is None else f"{value * 100:.{places}f}%"


def signed_percent(value: float | None, places: int = 1) -> str:
    return DASH if value is None else f"{value * 100:+.{places}f}%"


def number(value: float | None, places: int = 0) -> str:
    return DASH if value is None else f"{value:,.{places}f}"


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
