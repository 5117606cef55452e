"""``--measurements FILE`` / ``--measured-as`` on the commands (issue 29): points sent with the
request, corrections reported, bad files refused naming the file and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import run

from clients.cli.parser import build_parser
from clients.cli.report import export_request, report_formats
from clients.cli.sweep import sweep_request

CASE = ("--gpu", "h100-sxm", "--model", "meta-llama/Llama-3.1-8B", "--precision", "fp8", "--tp", "1")
LENGTHS = ("--input-len", "1000", "--output-len", "200")


def _estimate(capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, object]:
    code, out, err = run(capsys, "estimate", *CASE, *LENGTHS, "--concurrency", "16", "--json", *extra)
    assert code == 0, err
    result: dict[str, object] = json.loads(out)["results"][0]["inference"]
    return result


def _estimate_measured(
    capsys: pytest.CaptureFixture[str], path: Path, measured_as: str
) -> tuple[int, str, str]:
    """``fleetplan estimate`` of the test case at concurrency 16 with ``path``'s points."""
    args = ("--concurrency", "16", "--measurements", str(path), "--measured-as", measured_as)
    return run(capsys, "estimate", *CASE, *LENGTHS, *args)


def _points(tmp_path: Path, **measured: float) -> Path:
    path = tmp_path / "runs.jsonl"
    row = {"input_len": 1000, "output_len": 200, "concurrency": 16, "id": "demo box"} | measured
    path.write_text(json.dumps(row) + "\n")
    return path


def test_estimate_is_corrected_by_the_measured_point(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = _estimate(capsys)
    measured_tok_s = float(plain["output_tok_s_total"]) * 1.25  # type: ignore[arg-type]
    path = _points(tmp_path, measured_output_tok_s=measured_tok_s)
    as_ = "gpu=h100-sxm,model=meta-llama/Llama-3.1-8B,precision=fp8,tp=1"
    corrected = _estimate(capsys, "--measurements", str(path), "--measured-as", as_)
    assert float(corrected["output_tok_s_total"]) == pytest.approx(measured_tok_s, rel=0.03)  # type: ignore[arg-type]
    assert corrected["measured_by"] == ["demo box"] and "demo box" in str(corrected["measured_note"])
    code, out, _ = _estimate_measured(capsys, path, as_)
    assert code == 0 and "corrected by measured demo box" in out


def test_bad_file_names_file_and_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _points(tmp_path, measured_tpot_ms=10.0)
    code, _, err = run(
        capsys, "estimate", *CASE, *LENGTHS, "--concurrency", "16", "--measurements", str(path)
    )
    assert code == 2 and f"{path}: gpu: not in the file; give --measured-as gpu=" in err


def test_server_refusal_names_the_measurements_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _points(tmp_path, measured_tpot_ms=10.0)
    as_ = "gpu=h999,model=meta-llama/Llama-3.1-8B"
    code, _, err = _estimate_measured(capsys, path, as_)
    assert code == 2 and f"{path}: measurements[0].gpu_id: unknown GPU 'h999'" in err


def test_measured_as_without_files_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(
        capsys, "estimate", *CASE, *LENGTHS, "--concurrency", "16", "--measured-as", "gpu=h100-sxm"
    )
    assert code == 2 and "--measured-as" in err


SCENARIO = """
workloads:
  - name: chat
    inference:
      model: {model_id: meta-llama/Llama-3.1-8B}
      precision: fp8
      allowed_tp: [1]
      allow_mig: false
      input_tokens: 1000
      output_tokens: 200
      peak_request_rate_per_s: 300
      sla: {ttft_p95_ms: 1500, tpot_p95_ms: 30}
constraints:
  currency_code: USD
  allowed_gpu_ids: [h100-sxm]
solver_options: {compute_baselines: false, compute_sensitivity: false}
"""


def test_plan_deployment_says_it_was_measured(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "chat.yaml"
    scenario.write_text(SCENARIO)
    code, out, err = run(capsys, "plan", str(scenario), "--json")
    assert code == 0, err
    plain = json.loads(out)["plan"]["deployments"][0]
    assert not plain.get("measured_by")
    at_16_users = _estimate(capsys)
    path = _points(tmp_path, measured_tpot_ms=float(at_16_users["tpot_ms"]) / 1.25)  # type: ignore[arg-type]
    as_ = "gpu=h100-sxm,model=meta-llama/Llama-3.1-8B,precision=fp8"
    code, out, err = run(
        capsys, "plan", str(scenario), "--json", "--measurements", str(path), "--measured-as", as_
    )
    assert code == 0, err
    deployment = json.loads(out)["plan"]["deployments"][0]
    assert deployment["measured_by"] == ["demo box"] and "TPOT ×0.8" in deployment["measured_note"]
    code, out, _ = run(capsys, "plan", str(scenario), "--measurements", str(path), "--measured-as", as_)
    assert code == 0 and "chat: corrected by measured demo box" in out


def test_sweep_evaluate_and_report_carry_the_points(tmp_path: Path) -> None:
    scenario = tmp_path / "chat.yaml"
    scenario.write_text(SCENARIO)
    path = _points(tmp_path, measured_tpot_ms=9.0)
    flags = ["--measurements", str(path), "--measured-as", "gpu=h100-sxm,model=meta-llama/Llama-3.1-8B"]
    parser = build_parser()
    args = parser.parse_args(
        ["sweep", str(scenario), "--dimension", "demand_multiplier", "--values", "1", *flags]
    )
    assert [p.label for p in sweep_request(args).base.measurements] == ["demo box"]
    args = parser.parse_args(["report", str(scenario), "--output", str(tmp_path / "q.html"), *flags])
    request = export_request(args, report_formats([tmp_path / "q.html"]))
    assert [p.gpu_id for p in request.request.measurements] == ["h100-sxm"]
    args = parser.parse_args(["report", "--plan-id", "p1", "--output", str(tmp_path / "q.html"), *flags])
    with pytest.raises(ValueError, match="not planned again"):
        export_request(args, report_formats([tmp_path / "q.html"]))
