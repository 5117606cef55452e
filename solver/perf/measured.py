"""The user's own benchmark runs correct the deployments they measured (issue 29), apart from the
physics: the analytic model predicts, this module rescales.

For each deployment measured — (GPU, model, engine, weight and KV precision, TP) — the log of
measured ÷ predicted is fitted per metric (output throughput, TPOT, TTFT) as the posterior mean
of a normal prior centred on the analytic model (its calibrated band as spread) and the points
as observations with a few per cent of run-to-run noise (more if the points scatter more): one
point moves the estimate almost all the way, and points that disagree are averaged and shrunk
toward the model. Nothing is carried to another GPU, model, precision, engine or TP degree.

A corrected replica behaves like the modelled one on a rescaled clock: at request rate λ its
latencies are the model's at λ ÷ s (s the throughput factor) times the latency factors, so its
capacity at an SLA is s × the model's capacity at the targets divided by those factors. The
band narrows to what the points leave uncertain.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from pricebook import catalog
from pricebook.errors import UnknownEntryError
from pricebook.schema import ModelArch, Pricebook
from solver.domain import MeasuredPoint, ModelRef, Sla
from solver.errors import FieldViolation, InvalidRequest
from solver.perf.batch import estimate_inference_cached
from solver.perf.capacity import Capacity, capacity_at_sla
from solver.perf.inference import ClosedLoop, Deployment, InferenceEstimate, Load, OpenLoop, WorkloadShape
from solver.perf.models import resolve_model

__all__ = [
    "NO_CORRECTIONS",
    "Correction",
    "MeasuredCorrections",
    "corrected_capacity",
    "corrected_estimate",
    "fit_corrections",
    "fitted",
    "modelled_targets",
]

Z90 = 1.645
"""Half-width of a central 90 % interval in standard deviations (the band's convention)."""
RUN_NOISE = 0.03
"""Run-to-run spread of one benchmark point (log scale): repeated serving benchmarks of one
configuration typically agree within 2-4 %."""
PRIOR_SPREAD = {"throughput": 0.20, "tpot": 0.20, "ttft": 0.45}
"""The analytic model's error before any point (log scale, one standard deviation): the
calibrated band for throughput (at least this), and TTFT's larger held-out error (issue 29)."""
PLAUSIBLE_RATIO = 10.0
"""A measurement more than this factor from the model's prediction is refused (a unit, GPU or TP
mix-up, not a correction): the model's held-out errors stay well inside it."""
METRIC_FIELD = {"throughput": "measured_output_tok_s", "tpot": "measured_tpot_ms", "ttft": "measured_ttft_ms"}
DISAGREEMENT_LIMIT = 2.0
"""Two points of one deployment at the same conditions whose ratios differ by more than this factor
contradict each other: refused rather than averaged."""

DeploymentKey = tuple[str, str, str, str, int, str]
"""(GPU id, model id, engine, weight precision, TP, KV precision)."""


def deployment_key(model: ModelArch, deployment: Deployment) -> DeploymentKey:
    return (
        deployment.gpu.id,
        model.id,
        deployment.engine.value,
        deployment.precision.value,
        deployment.tp,
        deployment.effective_kv_precision.value,
    )


@dataclass(frozen=True, slots=True)
class MetricFit:
    factor: float
    """Measured ÷ predicted, the posterior mean of its log."""
    spread: float
    """What stays uncertain (log scale, one standard deviation): the posterior plus one run's noise."""
    points: int


@dataclass(frozen=True, slots=True)
class Correction:
    """Fitted factors of one measured deployment (1.0 and no points where a metric was not measured)."""

    labels: tuple[str, ...]
    throughput: MetricFit | None
    tpot: MetricFit | None
    ttft: MetricFit | None

    @property
    def throughput_factor(self) -> float:
        return self.throughput.factor if self.throughput else 1.0

    @property
    def tpot_factor(self) -> float:
        return self.tpot.factor if self.tpot else 1.0

    @property
    def ttft_factor(self) -> float:
        return self.ttft.factor if self.ttft else 1.0

    def band(self, low: float, high: float) -> tuple[float, float]:
        """The throughput band narrowed to the fit's remaining uncertainty (never widened)."""
        if self.throughput is None:
            return low, high
        half = Z90 * self.throughput.spread
        return max(low, math.exp(-half)), min(high, math.exp(half))

    def describe(self) -> str:
        parts = [
            f"{name} ×{fit.factor:.3f} ({fit.points} point{'s' if fit.points > 1 else ''})"
            for name, fit in (("throughput", self.throughput), ("TPOT", self.tpot), ("TTFT", self.ttft))
            if fit is not None
        ]
        return f"corrected by measured {', '.join(self.labels)}: {', '.join(parts)}"


@dataclass(frozen=True, slots=True)
class MeasuredCorrections:
    """Corrections by deployment; empty when no point was given."""

    by_deployment: tuple[tuple[DeploymentKey, Correction], ...] = ()

    def of(self, model: ModelArch, deployment: Deployment) -> Correction | None:
        if not self.by_deployment or deployment.mig_slice:
            return None
        key = deployment_key(model, deployment)
        return next((c for k, c in self.by_deployment if k == key), None)


NO_CORRECTIONS = MeasuredCorrections()


@dataclass(frozen=True, slots=True)
class _Observation:
    key: DeploymentKey
    label: str
    conditions: tuple[object, ...]
    ratios: dict[str, float]


def _label(point: MeasuredPoint, index: int) -> str:
    return point.label or f"measurements[{index}]"


def _load(point: MeasuredPoint) -> Load:
    replicas = point.replicas
    if point.request_rate_per_s is not None:
        return OpenLoop(point.request_rate_per_s / replicas)
    assert point.concurrency is not None
    return ClosedLoop(max(1, math.ceil(point.concurrency / replicas)), point.arrival)


def _ttft_of(estimate: InferenceEstimate, statistic: str) -> float:
    if statistic == "p95":
        return estimate.ttft_p95_ms
    if statistic == "median":
        return estimate.ttft_median_ms
    return estimate.ttft_ms


def _unfit_field(point: MeasuredPoint, model: ModelArch, deployment: Deployment) -> str:
    """Which field makes a measured point impossible in the model: the deployment itself (TP), its
    lengths (one short request fits), or its load."""
    if not estimate_inference_cached(model, deployment, WorkloadShape(1, 1), ClosedLoop(1)).fits:
        return "tp"
    shape = WorkloadShape(point.input_len, point.output_len)
    if not estimate_inference_cached(model, deployment, shape, ClosedLoop(1)).fits:
        return "input_len"
    return "concurrency" if point.concurrency is not None else "request_rate_per_s"


def _observe(point: MeasuredPoint, index: int, book: Pricebook) -> _Observation:
    path = f"measurements[{index}]"
    try:
        gpu = catalog.gpu(book, point.gpu)
    except UnknownEntryError as exc:
        raise InvalidRequest([FieldViolation(f"{path}.gpu", str(exc))]) from exc
    try:
        model = resolve_model(ModelRef(model_id=point.model), book)
    except UnknownEntryError as exc:
        raise InvalidRequest([FieldViolation(f"{path}.model", str(exc))]) from exc
    try:
        deployment = Deployment(
            gpu,
            point.tp,
            point.precision,
            point.kv_precision,
            point.engine,
            engine_version=point.engine_version,
        )
        shape = WorkloadShape(point.input_len, point.output_len)
    except ValueError as exc:
        raise InvalidRequest([FieldViolation(f"{path}.tp", str(exc))]) from exc
    estimate = estimate_inference_cached(model, deployment, shape, _load(point))
    if not estimate.fits:
        reason = f"the measured deployment does not run in the model: {estimate.reason}"
        raise InvalidRequest([FieldViolation(f"{path}.{_unfit_field(point, model, deployment)}", reason)])
    ratios: dict[str, float] = {}
    if point.measured_output_tok_s is not None:
        ratios["throughput"] = point.measured_output_tok_s / (estimate.output_tok_s * point.replicas)
    if point.measured_tpot_ms is not None:
        ratios["tpot"] = point.measured_tpot_ms / estimate.tpot_ms
    if point.measured_ttft_ms is not None:
        ratios["ttft"] = point.measured_ttft_ms / _ttft_of(estimate, point.ttft_statistic)
    for metric, ratio in ratios.items():
        if not 1 / PLAUSIBLE_RATIO <= ratio <= PLAUSIBLE_RATIO:
            reason = (
                f"{ratio:.3g}× the model's {metric} for this deployment and load: no serving run is that far"
                " from its physics (check the units, the GPU, TP and precision)"
            )
            raise InvalidRequest([FieldViolation(f"{path}.{METRIC_FIELD[metric]}", reason)])
    conditions = (
        point.input_len,
        point.output_len,
        point.concurrency,
        point.request_rate_per_s,
        point.arrival,
    )
    return _Observation(deployment_key(model, deployment), _label(point, index), conditions, ratios)


def _fit_metric(logs: Sequence[float], prior: float) -> MetricFit | None:
    if not logs:
        return None
    n = len(logs)
    mean = sum(logs) / n
    scatter = sum((y - mean) ** 2 for y in logs) / (n - 1) if n > 1 else 0.0
    noise = max(RUN_NOISE**2, scatter)
    precision = 1.0 / prior**2 + n / noise
    posterior = (sum(logs) / noise) / precision
    return MetricFit(math.exp(posterior), math.sqrt(1.0 / precision + noise), n)


def _check_agreement(observations: Sequence[_Observation], points: Sequence[MeasuredPoint]) -> None:
    """Points of one deployment at identical conditions must roughly agree."""
    seen: dict[tuple[object, ...], tuple[int, _Observation]] = {}
    for index, obs in enumerate(observations):
        first = seen.setdefault((obs.key, obs.conditions), (index, obs))
        other = first[1]
        for metric, ratio in obs.ratios.items():
            if (
                metric in other.ratios
                and max(ratio, other.ratios[metric]) / min(ratio, other.ratios[metric]) > DISAGREEMENT_LIMIT
            ):
                field = METRIC_FIELD[metric]
                reason = (
                    f"contradicts {_label(points[first[0]], first[0])} (same deployment and load, "
                    f"{metric} differs more than {DISAGREEMENT_LIMIT:g}×)"
                )
                raise InvalidRequest([FieldViolation(f"measurements[{index}].{field}", reason)])


def fit_corrections(points: Iterable[MeasuredPoint], book: Pricebook) -> MeasuredCorrections:
    """One correction per measured deployment; raises ``InvalidRequest`` naming a bad point's field."""
    points = tuple(points)
    if not points:
        return NO_CORRECTIONS
    observations = [_observe(p, i, book) for i, p in enumerate(points)]
    _check_agreement(observations, points)
    grouped: dict[DeploymentKey, list[_Observation]] = defaultdict(list)
    for obs in observations:
        grouped[obs.key].append(obs)
    fitted = []
    for key, group in grouped.items():
        fits = {
            metric: _fit_metric([math.log(o.ratios[metric]) for o in group if metric in o.ratios], prior)
            for metric, prior in PRIOR_SPREAD.items()
        }
        labels = tuple(dict.fromkeys(o.label for o in group))
        fitted.append((key, Correction(labels, fits["throughput"], fits["tpot"], fits["ttft"])))
    return MeasuredCorrections(tuple(fitted))


_FITTED: dict[tuple[str, tuple[MeasuredPoint, ...]], MeasuredCorrections] = {}
FITTED_CACHE_LIMIT = 64


def fitted(points: tuple[MeasuredPoint, ...], book: Pricebook) -> MeasuredCorrections:
    """``fit_corrections`` kept per pricebook and point set (a batch of cases shares one fit)."""
    key = (book.content_hash or str(id(book)), points)
    hit = _FITTED.get(key)
    if hit is None:
        if len(_FITTED) >= FITTED_CACHE_LIMIT:
            _FITTED.clear()
        hit = _FITTED[key] = fit_corrections(points, book)
    return hit


def corrected_estimate(
    model: ModelArch, deployment: Deployment, shape: WorkloadShape, load: Load, correction: Correction | None
) -> InferenceEstimate:
    """``estimate_inference`` of the deployment on the measured clock (unchanged without a correction)."""
    if correction is None:
        return estimate_inference_cached(model, deployment, shape, load)
    speed = correction.throughput_factor
    modelled = load
    if isinstance(load, OpenLoop):
        modelled = OpenLoop(load.request_rate_per_s / speed)
    est = estimate_inference_cached(model, deployment, shape, modelled)
    if not est.fits:
        return est
    ttft, tpot = correction.ttft_factor, correction.tpot_factor
    low, high = correction.band(
        est.output_tok_s_low / est.output_tok_s, est.output_tok_s_high / est.output_tok_s
    )
    output = est.output_tok_s * speed
    return replace(
        est,
        ttft_ms=est.ttft_ms * ttft,
        ttft_p95_ms=est.ttft_p95_ms * ttft,
        ttft_median_ms=est.ttft_median_ms * ttft,
        tpot_ms=est.tpot_ms * tpot,
        per_user_tok_s=est.per_user_tok_s / tpot,
        output_tok_s=output,
        total_tok_s=est.total_tok_s * speed,
        req_s=est.req_s * speed,
        output_tok_s_low=output * low,
        output_tok_s_high=output * high,
    )


def modelled_targets(sla: Sla, correction: Correction) -> Sla:
    """The targets the modelled replica must meet for the measured one to meet ``sla``."""
    ttft, tpot = correction.ttft_factor, correction.tpot_factor
    return Sla(
        ttft_p95_ms=None if sla.ttft_p95_ms is None else sla.ttft_p95_ms / ttft,
        tpot_p95_ms=None if sla.tpot_p95_ms is None else sla.tpot_p95_ms / tpot,
        min_per_user_tok_s=None if sla.min_per_user_tok_s is None else sla.min_per_user_tok_s * tpot,
    )


def corrected_capacity(
    model: ModelArch,
    deployment: Deployment,
    shape: WorkloadShape,
    sla: Sla,
    corrections: MeasuredCorrections,
    *,
    cached: bool = True,
) -> Capacity:
    """``capacity_at_sla`` of the deployment on the measured clock (unchanged where nothing was measured)."""
    correction = corrections.of(model, deployment)
    if correction is None:
        return capacity_at_sla(model, deployment, shape, sla, cached=cached)
    cap = capacity_at_sla(model, deployment, shape, modelled_targets(sla, correction), cached=cached)
    if not cap.feasible:
        return replace(cap, measured_by=correction.labels, measured_note=correction.describe())
    speed, ttft, tpot = correction.throughput_factor, correction.ttft_factor, correction.tpot_factor
    low, high = correction.band(cap.band_low, cap.band_high)
    return replace(
        cap,
        max_request_rate_per_s=cap.max_request_rate_per_s * speed,
        max_output_tok_s=cap.max_output_tok_s * speed,
        max_total_tok_s=cap.max_total_tok_s * speed,
        ttft_p95_ms=cap.ttft_p95_ms * ttft,
        tpot_ms=cap.tpot_ms * tpot,
        per_user_tok_s=cap.per_user_tok_s / tpot,
        band_low=low,
        band_high=high,
        measured_by=correction.labels,
        measured_note=correction.describe(),
    )
