"""Hand-written modules stay readable: under 900 lines each, every function under 120 lines
(ruff's C901 checks complexity per function; this checks length, which ruff does not)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("api", "pricebook", "solver", "store", "service", "clients", "tools", "bench")
GENERATED = REPO_ROOT / "api" / "fleetplan"
MAX_MODULE_LINES = 900
MAX_FUNCTION_LINES = 120


def _modules() -> list[Path]:
    return [
        path
        for package in PACKAGES
        for path in sorted((REPO_ROOT / package).rglob("*.py"))
        if GENERATED not in path.parents
    ]


def test_modules_stay_under_the_line_limit() -> None:
    long = {
        str(p.relative_to(REPO_ROOT)): n
        for p in _modules()
        if (n := p.read_text(encoding="utf-8").count("\n")) > MAX_MODULE_LINES
    }
    assert long == {}


def test_functions_stay_under_the_line_limit() -> None:
    long = {}
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(REPO_ROOT)}:{node.lineno} {node.name}"] = length
    assert long == {}
