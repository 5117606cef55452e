"""The checked-in stubs are exactly what ``make stubs`` generates, and import from anywhere."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from api import codegen


def test_checked_in_stubs_match_a_fresh_generation(tmp_path: Path) -> None:
    fresh = tmp_path / "api"
    # A separate interpreter, as `make stubs` runs it: protoc's C++ runtime must not share a
    # process with the already-loaded upb protobuf runtime of the test session.
    subprocess.run(
        [sys.executable, "-m", "api.codegen", "--out", str(fresh)],
        check=True,
        capture_output=True,
        cwd=codegen.REPO_ROOT,
    )
    generated = codegen.PROTO_PACKAGE_DIR.parts[0]  # api/fleetplan/: all of it is generated
    checked_in = codegen.DEFAULT_OUT / generated
    fresh_files = {
        p.relative_to(fresh / generated): p.read_text() for p in (fresh / generated).rglob("*") if p.is_file()
    }
    current = {
        p.relative_to(checked_in): p.read_text()
        for p in checked_in.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert sorted(fresh_files) == sorted(current), "stub file set differs: run `make stubs`"
    stale = [str(name) for name, text in fresh_files.items() if current[name] != text]
    assert stale == [], f"stale stubs (run `make stubs`): {stale}"


def test_every_proto_has_generated_messages_and_stubs() -> None:
    names = {p.stem for p in codegen.proto_files()}
    assert {"common", "scenario", "plan", "performance", "catalog", "fleet_planner"} <= names
    for name in names:
        for suffix in ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py", "_pb2_grpc.pyi"):
            assert (codegen.DEFAULT_OUT / "fleetplan" / "v1" / f"{name}{suffix}").is_file()


def test_generated_code_imports_in_a_fresh_interpreter_outside_the_repo(tmp_path: Path) -> None:
    script = (
        "from api.fleetplan.v1 import fleet_planner_pb2 as pb, fleet_planner_pb2_grpc as rpc\n"
        "service = pb.DESCRIPTOR.services_by_name['FleetPlanner']\n"
        "print(sorted(m.name for m in service.methods))\n"
        "print(hasattr(rpc, 'FleetPlannerStub'), pb.PlanFleetRequest.DESCRIPTOR.full_name)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[0] == str(
        sorted(
            [
                "AnalyzeBreakEven",
                "EstimatePerformance",
                "EvaluateFleet",
                "ExportPlan",
                "ListCatalog",
                "PlanFleet",
                "SweepPlans",
            ]
        )
    )
    assert out[1] == "True fleetplan.v1.PlanFleetRequest"


def test_no_generated_file_keeps_a_bare_absolute_import() -> None:
    for path in (codegen.DEFAULT_OUT / "fleetplan").rglob("*.py*"):
        text = path.read_text()
        assert "\nfrom fleetplan.v1 import" not in text, path
        assert "\nimport fleetplan.v1" not in text, path
