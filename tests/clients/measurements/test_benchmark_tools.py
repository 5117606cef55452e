"""The real AIPerf and GuideLLM clients measure a stand-in server that streams at the model's
predicted speed × 1.25; their native result files, read by ``clients.measurements`` and fitted by
``solver.perf.measured``, must give that factor back within 5 % (issue 29)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import benchclients
from standin_server import StandinServer, Timing

from clients.measurements import load_measurements
from pricebook import catalog, load_default
from pricebook.schema import Pricebook
from service.convert.measured import measured_points_from_proto
from solver.domain import ModelRef, Precision
from solver.perf import ClosedLoop, Deployment, WorkloadShape, estimate_inference, resolve_model
from solver.perf.measured import fit_corrections

MODEL = "meta-llama/Llama-3.1-70B"
GPU = "h100-sxm"
FACTOR = 1.25
"""The stand-in is this much faster than the model predicts: latencies ÷ 1.25, throughput × 1.25."""
USERS, REQUESTS, ISL, OSL = 4, 16, 2000, 32
TOLERANCE = 0.05


@pytest.fixture(scope="module")
def book() -> Pricebook:
    return load_default()


@pytest.fixture(scope="module")
def clients_venv() -> None:
    why = benchclients.ensure_venv()
    if why:
        pytest.skip(why)


def _deployment(book: Pricebook) -> Deployment:
    return Deployment(catalog.gpu(book, GPU), 1, Precision.FP8)


@pytest.fixture(scope="module")
def server(book: Pricebook) -> Iterator[StandinServer]:
    model = resolve_model(ModelRef(model_id=MODEL), book)
    predicted = estimate_inference(model, _deployment(book), WorkloadShape(ISL, OSL), ClosedLoop(USERS))
    timing = Timing(predicted.ttft_ms / 1e3 / FACTOR, predicted.tpot_ms / 1e3 / FACTOR)
    with StandinServer(timing, MODEL) as running:
        yield running


@pytest.fixture(scope="module")
def tokenizer(clients_venv: None, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return benchclients.write_tokenizer(tmp_path_factory.mktemp("tokenizer"))


Runner = Callable[[benchclients.Run, Path], Path]


@pytest.mark.parametrize(
    "run", [benchclients.run_aiperf, benchclients.run_guidellm], ids=["aiperf", "guidellm"]
)
def test_fitted_correction_recovers_the_factor(
    run: Runner, book: Pricebook, server: StandinServer, tokenizer: Path, tmp_path: Path
) -> None:
    result = run(benchclients.Run(server.url, MODEL, tokenizer, USERS, REQUESTS, ISL, OSL), tmp_path / "out")
    messages = load_measurements(result, f"gpu={GPU},tp=1,precision=fp8,engine=vllm")
    (point,) = measured_points_from_proto(messages, book)
    assert (point.model, point.concurrency, point.input_len, point.output_len) == (MODEL, USERS, ISL, OSL)
    model = resolve_model(ModelRef(model_id=MODEL), book)
    correction = fit_corrections([point], book).of(model, _deployment(book))
    assert correction is not None
    assert correction.throughput_factor == pytest.approx(FACTOR, rel=TOLERANCE)
    assert correction.tpot_factor == pytest.approx(1 / FACTOR, rel=TOLERANCE)
    assert correction.ttft_factor == pytest.approx(1 / FACTOR, rel=TOLERANCE)
