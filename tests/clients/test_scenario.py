"""Scenario files: friendly YAML → request messages; errors name the file, the path and the reason;
every shipped example is a valid request."""

from __future__ import annotations

from pathlib import Path

import pytest

from api.fleetplan.v1 import common_pb2, scenario_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from bench.solver_scaling import seed_500m_krw_request
from clients.scenario import ScenarioError, load_scenario
from pricebook import load_default
from pricebook.catalog import resolve_gpu_id
from service.convert.scenario import plan_request_from_proto
from solver.domain import AcquisitionMode

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.yaml"))


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "scenario.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_friendly_enums_and_money_shorthand(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
workloads:
  - name: docs
    inference:
      model: {model_id: meta-llama/Llama-3.1-8B}
      precision: fp8
      serving_kind: batch
      input_tokens: 100
      output_tokens: 10
      daily_tokens: 1000000
constraints:
  currency_code: KRW
  capex_budget: "500,000,000 KRW"
  allowed_modes: [buy, on-demand]
""",
    )
    request = load_scenario(path, api.PlanFleetRequest)
    inference = request.workloads[0].inference
    assert inference.precision == common_pb2.PRECISION_FP8
    assert inference.serving_kind == scenario_pb2.SERVING_KIND_BATCH
    assert inference.daily_tokens == 1_000_000
    assert request.constraints.capex_budget == common_pb2.Money(amount="500000000", currency_code="KRW")
    assert list(request.constraints.allowed_modes) == [
        common_pb2.ACQUISITION_MODE_BUY,
        common_pb2.ACQUISITION_MODE_ON_DEMAND,
    ]


@pytest.mark.parametrize(
    ("text", "path", "reason"),
    [
        (
            "workloads:\n  - name: a\n    inference: {colour: red}\n",
            "workloads[0].inference.colour",
            "unknown field",
        ),
        (
            "workloads:\n  - name: a\n    inference: {precision: fp7}\n",
            "workloads[0].inference.precision",
            "unknown value 'fp7'",
        ),
        ("constraints: {capex_budget: lots}\n", "constraints.capex_budget", "money must look like"),
        ("workloads: {name: a}\n", "workloads", "expected a list"),
        ("constraints:\n  horizon_months:\n", "constraints.horizon_months", "has no value"),
    ],
)
def test_errors_name_file_path_and_reason(tmp_path: Path, text: str, path: str, reason: str) -> None:
    file = write(tmp_path, text)
    with pytest.raises(ScenarioError) as info:
        load_scenario(file, api.PlanFleetRequest)
    assert info.value.file == str(file)
    assert info.value.path == path
    assert reason in info.value.reason
    assert str(info.value).startswith(f"{file}: {path}: ")


def test_unparseable_yaml_names_the_line(tmp_path: Path) -> None:
    file = write(tmp_path, "workloads: [\n  - name: a\n")
    with pytest.raises(ScenarioError) as info:
        load_scenario(file, api.PlanFleetRequest)
    assert info.value.path.startswith("line ")
    assert "not valid YAML" in info.value.reason


def test_missing_file_is_a_scenario_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="cannot read"):
        load_scenario(tmp_path / "nope.yaml", api.PlanFleetRequest)


def test_the_five_seed_examples_are_shipped() -> None:
    assert {p.name for p in EXAMPLES} >= {
        "60m_krw_single_gpu.yaml",
        "14b_finetune.yaml",
        "100b_tp_serving.yaml",
        "500m_krw_portfolio.yaml",
        "rtx5090_cluster.yaml",
    }


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_every_example_is_a_valid_plan_request(example: Path) -> None:
    request = load_scenario(example, api.PlanFleetRequest)
    domain_request = plan_request_from_proto(request, load_default())
    assert domain_request.inference or domain_request.training


def test_the_500m_krw_example_is_the_optimizers_seed_portfolio() -> None:
    """`make demo` plans the same workloads the golden test and the solver benchmark use; the
    example prices whole systems (hosts included), may rent on demand and adds the VAT line, where
    the benchmark prices cards alone and buys only."""
    book = load_default()
    example = plan_request_from_proto(
        load_scenario(EXAMPLES[0].parent / "500m_krw_portfolio.yaml", api.PlanFleetRequest), book
    )
    reference = seed_500m_krw_request()
    resolved = tuple(resolve_gpu_id(book, g) for g in reference.constraints.allowed_gpus)
    as_quoted = {
        "allowed_gpus": resolved,
        "include_host_costs": True,
        "include_vat": True,
        "allowed_modes": (AcquisitionMode.BUY, AcquisitionMode.ON_DEMAND),
    }
    reference = reference.model_copy(
        update={"constraints": reference.constraints.model_copy(update=as_quoted)}
    )
    assert example == reference


def test_absolute_demand_per_year_reads_from_yaml(tmp_path: Path) -> None:
    path = tmp_path / "years.yaml"
    path.write_text(
        "workloads:\n"
        "  - name: chat\n"
        "    inference:\n"
        "      model: {model_id: meta-llama/Llama-3.1-8B}\n"
        "      input_tokens: 1000\n"
        "      output_tokens: 200\n"
        "      daily_tokens: 60000000\n"
        "      daily_tokens_by_year: [60000000, 90000000, 150000000]\n"
        "constraints: {horizon_months: 36}\n",
        encoding="utf-8",
    )
    request = plan_request_from_proto(load_scenario(path, api.PlanFleetRequest), load_default())
    assert request.inference[0].demand_factors() == pytest.approx((1.0, 1.5, 2.5))
