"""How the planner's rows read in a quote (and in the CLI's tables): a deployment's name, replica-
equivalents, the deployments serving a workload, a deployment group's cells. The language-free
parts are ``report.text`` (the CLI reads them too, without loading the report stack)."""

from __future__ import annotations

from report.data import DeploymentGroupRow, QuoteData, QuoteSite, WorkloadRow, WorkloadUseRow
from report.disaggregation import unit_name
from report.formatting import number, percent
from report.labels import Language, label
from report.text import deployment, replicas, uses_text
from solver.optimizer.instance import GUEST_SHARE_MAX, card_fraction
from solver.planner import notices


def deployment_name(
    gpu_id: str, tp: int, mig_slice: int, precision: str, *, card_share: float, lang: Language
) -> str:
    """A deployment's name in ``lang``: ``h100-nvl TP2 fp8``, or co-located, the guest
    ``l40s 1/16 of a card bf16`` and its host ``l40s TP2 fp8 15/16 of each card`` (the planner's
    ``deployment_label`` in English)."""
    if card_share >= 1:
        return deployment(gpu_id, tp, mig_slice, precision)
    fraction = card_fraction(card_share)
    if card_share <= GUEST_SHARE_MAX:
        return f"{gpu_id} {label('card_guest', lang).format(fraction=fraction)} {precision}"
    host = label("card_host", lang).format(fraction=fraction)
    return f"{deployment(gpu_id, tp, mig_slice, precision)} {host}"


def workload_deployments(w: WorkloadRow, lang: Language) -> str:
    """The groups serving a workload (``uses_text``), in ``lang``."""

    def name(u: WorkloadUseRow) -> str:
        shared = f" {label('shared', lang)}" if u.shared else ""
        if u.disaggregation is not None:
            return unit_name(u.disaggregation) + shared
        name = deployment_name(u.gpu_id, u.tp, u.mig_slice, u.precision, card_share=u.card_share, lang=lang)
        return name + shared

    return uses_text([(u.replicas, u.replicas_max, name(u)) for u in w.uses], label("other_hours", lang))


def group_cells(g: DeploymentGroupRow, lang: Language) -> list[str]:
    """A deployment group's row as text, in ``COLUMNS.groups`` order."""
    if g.disaggregation is not None:
        name, kind = unit_name(g.disaggregation), label("disagg.kind", lang)
    else:
        name = deployment_name(g.gpu_id, g.tp, g.mig_slice, g.precision, card_share=g.card_share, lang=lang)
        kind = label(
            "shared_pool" if g.shared else "co_located" if g.card_share < 1 else "own_replicas", lang
        )
    return [
        name,
        kind,
        str(g.replicas_peak),
        str(g.replicas_off_peak),
        replicas(g.gpus_peak),
        f"{g.peak_hour:02d}:00",
        ", ".join(f"{s.workload} {s.share * 100:.0f}%" for s in g.shares),
        number(g.output_tok_s),
        percent(g.utilization),
    ]


def quote_warnings(quote: QuoteData, lang: Language) -> tuple[str, ...]:
    """The plan's warnings in ``lang``: its notices worded from their catalogue in ``lang`` (their
    English words left out of the planner's warnings), then the other warnings as it wrote them."""
    worded = [notices.Notice(n.code, n.params) for n in quote.notices if n.code in notices.CATALOGUE]
    english = {n.text(notices.Language.EN) for n in worded}
    language = notices.Language.KO if lang.value == notices.Language.KO.value else notices.Language.EN
    return tuple(
        dict.fromkeys([*(n.text(language) for n in worded), *(w for w in quote.warnings if w not in english)])
    )


def cost_label(prefix: str, row: str, site: QuoteSite, lang: Language) -> str:
    """The label of a cash-flow (``prefix`` "cf") or TCO (``prefix`` "comp") row: the site's line
    is the buyer's own space (전산실 공간) or a colocation rack, with the power when its price
    includes it (IDC 상면(전력 포함)); a residual value not credited reads as disposed of (불용 처리)."""
    key = f"{prefix}.{row}"
    if row == "colocation" and site.site_model == "own_site":
        key += ".own_site"
    elif row == "colocation" and site.site_model == "colocation" and site.colocation_includes_power:
        key += ".with_power"
    elif row in ("residual", "residual_value") and not site.residual_value_credit:
        key += ".no_credit"
    return label(key, lang)


def shows_no_credit(quote: QuoteData) -> bool:
    """A plan that buys hardware whose resale value is not credited: its residual line is shown at
    0 saying so, rather than left out."""
    return (
        not quote.site.residual_value_credit
        and quote.economics is not None
        and quote.economics.capex.amount > 0
    )
