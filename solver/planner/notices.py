"""Structured notices of a plan: a code, its parameters, and their words in English and Korean
from one catalogue (``CATALOGUE``), so every surface (CLI, JSON, quotes) words the same notice in
the reader's language. A plan's English texts also join its ``warnings``.

- ``interactive_without_sla``: an interactive workload has no SLA, so it was sized as
  throughput-only work (users may wait seconds for a first token). The request is answered, not
  refused: a throughput-only interactive service is a legitimate choice (an internal tool), and
  refusing would break requests that were valid; the notice makes the choice visible.
- ``consumer_gpus``: the plan uses consumer (GeForce) cards, which the request allowed
  (``constraints.allow_consumer_gpus``).
- ``offers_withdrawn``: a re-priced saved plan named offers today's pricebook no longer has; those
  lines are priced at today's cheapest valid offer mix instead (``fleetplan plans reprice``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from pricebook.schema import GpuSegment, Pricebook
from solver.domain import PlanRequest
from solver.optimizer.results import FleetSolution

if TYPE_CHECKING:  # results imports Notice from here
    from solver.planner.results import PlanResult


class Language(StrEnum):
    EN = "en"
    KO = "ko"


CATALOGUE: dict[str, tuple[str, str]] = {
    "interactive_without_sla": (
        "{workload}: serving_kind is interactive but no SLA is set (no TTFT, TPOT or per-user "
        "tok/s target), so it is sized as throughput-only work and users may wait seconds for a "
        "first token; set sla (e.g. ttft_p95_ms) to size it for users, or serving_kind batch",
        "{workload}: 대화형(interactive) 워크로드이지만 SLA(TTFT, TPOT, 사용자당 tok/s 목표)가 "
        "없어 처리량 기준으로만 산정되었으며, 사용자가 첫 토큰까지 수 초를 기다릴 수 있습니다. "
        "사용자 기준으로 산정하려면 sla(예: ttft_p95_ms)를 지정하거나 serving_kind를 batch로 "
        "지정하십시오",
    ),
    "consumer_gpus": (
        "the plan uses consumer GPUs ({gpus}), as the request allows (allow_consumer_gpus): "
        "NVIDIA's GeForce driver licence excludes data-centre deployment, and these cards have no "
        "ECC memory and no enterprise vendor support",
        "요청에서 허용(allow_consumer_gpus)하여 소비자용 GPU({gpus})가 포함되었습니다. NVIDIA "
        "GeForce 드라이버 라이선스는 데이터센터 배치를 허용하지 않으며, 이 카드들은 ECC "
        "메모리와 기업용 벤더 지원이 없습니다",
    ),
    "offers_withdrawn": (
        "the saved plan's offers {offers} are no longer in today's pricebook: the {gpus} lines are "
        "priced at today's cheapest valid offer mix instead",
        "저장된 계획의 공급 조건({offers})이 현재 가격표에 더 이상 없어, {gpus} 항목은 현재 "
        "유효한 가장 저렴한 공급 조건 조합으로 다시 산정되었습니다",
    ),
}
"""Every notice's words: (English, Korean), with ``{name}`` parameters."""


@dataclass(frozen=True, slots=True)
class Notice:
    code: str
    """A key of ``CATALOGUE``."""
    params: tuple[tuple[str, str], ...] = ()

    def text(self, language: Language = Language.EN) -> str:
        english, korean = CATALOGUE[self.code]
        template = korean if language is Language.KO else english
        return template.format(**dict(self.params))


def interactive_without_sla(request: PlanRequest) -> list[Notice]:
    """One notice per interactive inference workload without any SLA target."""
    return [
        Notice("interactive_without_sla", (("workload", w.name),))
        for w in request.inference
        if w.interactive and w.sla.is_batch
    ]


def consumer_gpus(book: Pricebook, solution: FleetSolution) -> list[Notice]:
    """A notice when the plan holds or rents consumer cards."""
    segments = {g.id: g.segment for g in book.gpus}
    used = sorted({o.gpu for o in solution.options if segments.get(o.gpu) is GpuSegment.CONSUMER})
    return [Notice("consumer_gpus", (("gpus", ", ".join(used)),))] if used else []


def plan_notices(request: PlanRequest, book: Pricebook, solution: FleetSolution) -> tuple[Notice, ...]:
    """Every notice of a plan for ``request``."""
    return tuple([*interactive_without_sla(request), *consumer_gpus(book, solution)])


def with_notices(result: PlanResult, request: PlanRequest, book: Pricebook) -> PlanResult:
    """``result`` with its notices, their English words among its warnings."""
    notices = plan_notices(request, book, result.solution)
    if not notices:
        return result
    warnings = tuple(dict.fromkeys([*result.warnings, *(n.text() for n in notices)]))
    return dataclasses.replace(result, notices=notices, warnings=warnings)


def offers_withdrawn(offers: tuple[str, ...], gpus: tuple[str, ...]) -> list[Notice]:
    """A notice when a re-priced saved plan's offers are gone from today's pricebook."""
    if not offers:
        return []
    return [Notice("offers_withdrawn", (("offers", ", ".join(offers)), ("gpus", ", ".join(gpus))))]
