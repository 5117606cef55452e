"""Every label of the quote, in one translation table (English and Korean), and the report language."""

from __future__ import annotations

from enum import StrEnum


class Language(StrEnum):
    EN = "en"
    KO = "ko"


LABELS: dict[str, tuple[str, str]] = {
    # Headings
    "title": ("GPU fleet quote", "GPU 인프라 견적서"),
    "summary": ("1. Summary", "1. 요약"),
    "alternatives": ("2. Alternatives side by side", "2. 대안 비교"),
    "bom": ("3. Bill of materials", "3. 자재 명세서"),
    "rentals": ("Rentals (monthly)", "임차 (월별)"),
    "cashflow": ("4. Cash flow by year", "4. 연도별 현금 흐름"),
    "tco_breakdown": ("TCO breakdown", "TCO 구성"),
    "buy_vs_rent": ("5. Buy vs rent", "5. 구매 대 임차"),
    "api_vs_self": ("Self-hosting vs per-token API", "자체 운영 대 토큰 과금 API"),
    "workloads": ("6. Workloads", "6. 워크로드"),
    "training": ("Training runs", "학습 작업"),
    "sensitivity": ("7. Sensitivity", "7. 민감도"),
    "frontier": ("Sweep frontier", "스윕 프론티어"),
    "assumptions": ("8. Assumptions", "8. 가정"),
    "provenance": ("9. Provenance", "9. 출처 및 재현 정보"),
    "diagnosis": ("Why there is no plan", "계획이 없는 이유"),
    "warnings": ("Warnings", "경고"),
    # Summary
    "recommended_fleet": ("Recommended fleet", "권장 구성"),
    "horizon_tco": ("Horizon TCO", "총소유비용(TCO)"),
    "capex": ("Capex", "초기 투자비(CAPEX)"),
    "opex_monthly": ("Monthly opex", "월 운영비(OPEX)"),
    "horizon": ("Horizon", "기간"),
    "months": ("months", "개월"),
    "saving": ("Saving against the best single-GPU fleet", "단일 GPU 구성 최선안 대비 절감액"),
    "status": ("Plan status", "계획 상태"),
    "quoted_on": ("Quoted on", "견적일"),
    "gpus": ("GPUs", "GPU 수"),
    "no_plan": (
        "No plan: the request cannot be met as stated.",
        "계획 없음: 요청 조건을 충족할 수 없습니다.",
    ),
    "vat_included": (
        "Amounts exclude VAT; the VAT line shows what the bid pays with it",
        "금액은 부가세 별도이며, 부가세 포함 금액은 부가세 내역에 표시",
    ),
    "vat_excluded": ("Amounts exclude VAT", "금액은 부가세 별도"),
    "tco_with_vat": ("Horizon TCO incl. VAT", "부가세 포함 총소유비용"),
    "vat_line": ("VAT on every payment over the horizon", "기간 중 전체 지급액에 대한 부가세"),
    "vat_supply": ("Supply: capex + opex × months", "공급가액: CAPEX + 월 OPEX × 개월"),
    "book_depreciation": (
        "Book depreciation (straight line; accounting only, the TCO uses market value)",
        "장부상 감가상각 (정액법; 회계용, TCO는 시장 가치 기준)",
    ),
    "book_value_end": ("Book value at year end", "연말 장부가액"),
    "depreciation_amount": ("Depreciation", "감가상각비"),
    # Alternatives
    "alternative": ("Alternative", "대안"),
    "feasible": ("Feasible", "실현 가능"),
    "fleet": ("Fleet", "구성"),
    "why": ("Why it loses", "열위 사유"),
    "kind.recommended": ("Recommended mix", "권장 혼합 구성"),
    "kind.single_gpu": ("Single GPU type", "단일 GPU 구성"),
    "kind.rent_only": ("Rent only", "임차 전용"),
    "kind.api": ("Per-token API", "토큰 과금 API"),
    "yes": ("yes", "예"),
    "no": ("no", "아니오"),
    "this_plan": ("this plan", "본 계획"),
    "costs_more": ("costs {amount} ({fraction}) more", "{amount} ({fraction}) 더 비쌈"),
    "costs_less": (
        "costs {amount} less (plan stopped at its time limit)",
        "{amount} 더 저렴 (계획이 시간 제한으로 중단됨)",
    ),
    "costs_same": ("costs the same", "비용 동일"),
    "infeasible_because": ("infeasible: {reason}", "실현 불가: {reason}"),
    "not_comparable": ("not comparable: {reason}", "비교 불가: {reason}"),
    "no_rent_only": ("Rent-only fleet not computed", "임차 전용 구성은 계산되지 않음"),
    "outside_requirement": (
        "does not meet the request (it allows {modes} only); ",
        "요구 조건 미충족 (허용 방식: {modes}); ",
    ),
    "rentals_not_allowed": (
        "The request allows buying only: renting and per-token APIs are not compared.",
        "요청 조건이 구매만 허용하므로 임차 및 토큰 과금 API와는 비교하지 않습니다.",
    ),
    "mode.buy": ("buy", "구매"),
    "mode.reserved": ("reserved", "예약 임차"),
    "mode.on_demand": ("on demand", "온디맨드 임차"),
    "no_api_price": (
        "no per-token API price in the pricebook for these workloads",
        "이 워크로드에 대한 토큰 과금 API 가격 없음",
    ),
    # BOM
    "item": ("Item", "품목"),
    "model": ("Model", "모델"),
    "offer": ("Offer", "오퍼"),
    "provider": ("Provider", "공급자"),
    "price_label": ("Price label", "가격 구분"),
    "unit_price": ("Unit price", "단가"),
    "quantity": ("Qty", "수량"),
    "amount": ("Amount", "금액"),
    "supply_amount": ("Supply amount", "공급가액"),
    "vat": ("VAT", "부가세"),
    "total": ("Total", "합계"),
    "kind.gpu": ("GPU", "GPU"),
    "kind.host": ("Server (host)", "서버(호스트)"),
    "kind.networking": ("Networking (scale-out fabric)", "네트워킹 (스케일아웃 패브릭)"),
    "kind.installation": ("Installation / integration", "설치·통합"),
    "kind.storage": ("Storage", "스토리지"),
    "kind.rounding": ("Rounding adjustment", "단수 조정"),
    "owned": ("owned", "보유"),
    "mode": ("Mode", "방식"),
    "price_per_gpu_hour": ("Price per GPU-hour", "GPU 시간당 가격"),
    "gpu_hours_month": ("GPU-hours / month", "월 GPU 시간"),
    "monthly_amount": ("Monthly amount", "월 금액"),
    "no_purchases": ("Nothing is bought in this plan.", "이 계획에는 구매 항목이 없습니다."),
    "no_bom": ("No bill of materials: there is no plan.", "계획이 없어 자재 명세서가 없습니다."),
    # Cash flow
    "year": ("Year", "연도"),
    "cf.capex": ("Capex (purchase)", "구매 (CAPEX)"),
    "cf.support": ("Support", "유지보수"),
    "cf.power": ("Power", "전력"),
    "cf.colocation": ("Colocation", "코로케이션"),
    "cf.software": ("Software licences", "소프트웨어 라이선스"),
    "cf.storage": ("Storage (rented)", "스토리지 (임차)"),
    "cf.reserved": ("Reserved rental", "예약 임차"),
    "cf.on_demand": ("On-demand rental", "온디맨드 임차"),
    "cf.residual": ("Residual value", "잔존 가치"),
    "cf.total": ("Net cash out", "순 현금 유출"),
    "component": ("Component", "구성 항목"),
    "monthly": ("Per month", "월 평균"),
    "comp.gpu_purchase": ("GPU purchase", "GPU 구매"),
    "comp.host_purchase": ("Host purchase", "호스트 구매"),
    "comp.residual_value": ("Residual value", "잔존 가치"),
    "comp.support": ("Support", "유지보수"),
    "comp.power": ("Power", "전력"),
    "comp.colocation": ("Colocation", "코로케이션"),
    "comp.reserved_rental": ("Reserved rental", "예약 임차"),
    "comp.on_demand_rental": ("On-demand rental", "온디맨드 임차"),
    "comp.networking": ("Networking", "네트워킹"),
    "comp.installation": ("Installation", "설치·통합"),
    "comp.storage": ("Storage", "스토리지"),
    "comp.software": ("Software licences", "소프트웨어 라이선스"),
    "comp.vat": ("VAT", "부가세"),
    # Buy vs rent
    "gpu": ("GPU", "GPU"),
    "utilization": ("Utilisation", "가동률"),
    "cost_per_gpu_month": ("Cost per GPU-month", "GPU당 월 비용"),
    "owned_line": ("Buy", "구매"),
    "on_demand_line": ("On-demand", "온디맨드"),
    "reserved_line": ("Reserved", "예약"),
    "break_even": ("Break-even", "손익분기"),
    "break_even_od": ("Break-even vs on-demand", "온디맨드 대비 손익분기"),
    "break_even_res": ("Break-even vs reserved", "예약 대비 손익분기"),
    "plan_utilization": ("Plan utilisation", "계획 가동률"),
    "payback": ("Payback (months)", "회수 기간 (개월)"),
    "verdict": ("Verdict", "판정"),
    "no_buy_vs_rent": (
        "No buy-vs-rent comparison (no GPU in the plan).",
        "구매 대 임차 비교 없음 (계획에 GPU 없음).",
    ),
    "workload": ("Workload", "워크로드"),
    "api_price": ("API price / 1M tokens", "API 가격 / 100만 토큰"),
    "self_hosted_price": ("Self-hosted / 1M tokens", "자체 운영 / 100만 토큰"),
    "daily_tokens": ("Daily tokens", "일일 토큰"),
    "break_even_tokens": ("Break-even daily tokens", "손익분기 일일 토큰"),
    "no_api_rows": (
        "No inference workloads to compare with an API.",
        "API와 비교할 추론 워크로드가 없습니다.",
    ),
    # Workloads
    "tp_slice": ("TP/slice", "TP/슬라이스"),
    "precision": ("Precision", "정밀도"),
    "replicas": ("Replicas", "복제본"),
    "ttft": ("p95 TTFT ms (target)", "p95 TTFT ms (목표)"),
    "tpot": ("p95 TPOT ms (target)", "p95 TPOT ms (목표)"),
    "per_user": ("tok/s per user", "사용자당 tok/s"),
    "aggregate": ("Aggregate tok/s", "총 tok/s"),
    "not_served": ("not served", "미배치"),
    "latency_chart": ("Latency against target (share of the SLA)", "목표 대비 지연 시간 (SLA 대비 비율)"),
    "share_of_target": ("share of target", "목표 대비 비율"),
    "batch": ("batch (no latency target)", "배치 (지연 목표 없음)"),
    "hours_per_run": ("Hours per run", "작업당 시간"),
    "runs_per_month": ("Runs / month", "월 작업 수"),
    "deadline": ("Deadline (h)", "마감 (시간)"),
    "cost_per_run": ("Cost per run", "작업당 비용"),
    "no_training": ("This request has no training runs.", "이 요청에는 학습 작업이 없습니다."),
    "no_inference": ("This request has no inference workloads.", "이 요청에는 추론 워크로드가 없습니다."),
    # Sensitivity
    "subject": ("Subject", "대상"),
    "parameter": ("Parameter", "변수"),
    "change_down": ("Mix changes at (down)", "구성 변경 지점 (하락)"),
    "change_up": ("Mix changes at (up)", "구성 변경 지점 (상승)"),
    "explanation": ("Explanation", "설명"),
    "not_in_range": ("not within the range searched", "탐색 범위 내 없음"),
    "no_sensitivity": ("Sensitivity was not computed.", "민감도가 계산되지 않았습니다."),
    "value": ("Value", "값"),
    "pareto": ("Pareto-optimal", "파레토 최적"),
    # Assumptions and provenance
    "kind": ("Kind", "종류"),
    "key": ("Entry", "항목"),
    "source": ("Source", "출처"),
    "as_of": ("As of", "기준일"),
    "label": ("Label", "구분"),
    "fx_rate": ("FX rate", "환율"),
    "vat_rate": ("VAT rate", "부가세율"),
    "depreciation": ("Depreciation and residual", "감가상각 및 잔존 가치"),
    "uncertainty": ("Performance model uncertainty band", "성능 모델 불확실성 범위"),
    "fleetplan_version": ("fleetplan version", "fleetplan 버전"),
    "pricebook_version": ("Pricebook version", "가격표 버전"),
    "pricebook_hash": ("Pricebook hash", "가격표 해시"),
    "calibration_date": ("Calibration date", "보정 일자"),
    "solver_status": ("Solver status", "솔버 상태"),
    "solver_gap": ("Solver gap", "솔버 갭"),
    "solver_backend": ("Solver", "솔버"),
    "overrides": ("Overrides applied", "적용된 재정의"),
    "none": ("none", "없음"),
    "request": ("The request (reproduces this quote)", "요청 원문 (이 견적 재현용)"),
    "status.optimal": ("optimal", "최적"),
    "status.feasible": ("feasible (time limit)", "실현 가능 (시간 제한)"),
    "status.infeasible": ("infeasible", "실현 불가"),
    "status.no_solution": ("no solution", "해 없음"),
    "status.cancelled": ("cancelled", "취소됨"),
}
"""label key → (English, Korean)."""


class Columns:
    """The label keys of the tables both the page and the workbook show, in column order."""

    alternatives = ("alternative", "feasible", "horizon_tco", "capex", "gpus", "fleet", "why")
    bom = ("item", "model", "offer", "provider", "price_label", "unit_price", "quantity", "amount")
    rentals = (
        "gpu",
        "mode",
        "offer",
        "provider",
        "gpus",
        "price_per_gpu_hour",
        "gpu_hours_month",
        "monthly_amount",
    )
    training = ("workload", "gpu", "gpus", "hours_per_run", "runs_per_month", "deadline", "cost_per_run")
    sensitivity = ("subject", "parameter", "change_down", "change_up", "explanation")
    frontier = ("value", "status", "horizon_tco", "fleet", "pareto")
    assumptions = ("kind", "key", "value", "source", "as_of", "label")


COLUMNS = Columns()


def label(key: str, lang: Language) -> str:
    en, ko = LABELS[key]
    return ko if lang is Language.KO else en
