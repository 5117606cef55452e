"""The layers import one way: api and pricebook at the bottom, then solver, then report, then service,
then clients.

```
api (generated stubs)    pricebook (data, loader, overrides)
          │                   │            │
          │                 solver        store (saved plans: SQLAlchemy + Alembic; opaque
          │                   │            │      bytes, no protobuf; only pricebook's error types)
          │                 report (quotes: QuoteData → HTML, PDF, XLSX; no protobuf, no grpc)
          │                   │            │
          └──────────────► service (proto ↔ domain, gRPC server) ◄┘
                              │
                            clients (client, scenarios, rendering, the CLI)
```

``tools/`` holds developer tools (the calibration fit, which needs scipy); they may use the solver
and the pricebook, and nothing imports them.

Checked on the source (every import statement, at module level or inside a function), so a
cycle cannot hide behind a function-level import. Imports inside a function are refused for the
project's own packages (with the layers above there is no cycle to dodge), except the few in
``DEFERRED_IMPORTS``: heavy modules loaded only by the call that uses them, so that the CLI starts
at once (issue 31). Those still run one way.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("api", "pricebook", "solver", "report", "store", "service", "clients", "tools")
GENERATED = REPO_ROOT / "api" / "fleetplan"

FORBIDDEN: dict[str, frozenset[str]] = {
    "api": frozenset({"pricebook", "solver", "report", "store", "service", "clients", "bench", "tools"}),
    "pricebook": frozenset(
        {"api", "solver", "report", "store", "service", "clients", "bench", "tools", "grpc"}
    ),
    "solver": frozenset(
        {
            "api",
            "report",
            "store",
            "service",
            "clients",
            "bench",
            "tools",
            "grpc",
            "grpc_status",
            "google.rpc",
        }
    ),
    "report": frozenset(
        {
            "api",
            "store",
            "service",
            "clients",
            "bench",
            "tools",
            "grpc",
            "grpc_status",
            "google.rpc",
            "google.protobuf",
        }
    ),
    "store": frozenset(
        {
            "api",
            "solver",
            "report",
            "service",
            "clients",
            "bench",
            "tools",
            "grpc",
            "google.protobuf",
            "google.rpc",
        }
    ),
    "service": frozenset({"clients", "bench", "tools"}),
    "clients": frozenset({"bench", "tools"}),
    "tools": frozenset({"report", "service", "clients", "api", "grpc", "store"}),
}
"""Top-level modules each package must not import."""

DEFERRED_IMPORTS: dict[str, frozenset[str]] = {
    # The cross-validation's fingerprint reads the fit's definition, and the fit's ``--cv`` runs the
    # cross-validation: one of the two imports the other when called (a developer tool, not a layer).
    "tools/calibration/cv.py": frozenset({"tools.calibration"}),  # from tools.calibration import fit
    # The domain → proto conversion (the solver): only calls given solver.domain objects need it.
    "clients/client.py": frozenset({"service.convert.encode"}),
    # The server: only ``serve`` and commands without --target run it.
    "clients/cli/connection.py": frozenset({"clients.cli.serve"}),
    "clients/cli/parser.py": frozenset({"clients.cli.serve"}),
    # SQLAlchemy: only a server with a plan store needs it.
    "store/__init__.py": frozenset({"store.sql"}),
    # matplotlib, WeasyPrint, XlsxWriter: only a quote in that format needs them.
    "report/document.py": frozenset({"report.html", "report.pdf", "report.xlsx"}),
}
"""Module → the project modules it may import inside a function."""


def _modules(package: str) -> Iterator[Path]:
    for path in sorted((REPO_ROOT / package).rglob("*.py")):
        if GENERATED not in path.parents:
            yield path


def _imports(tree: ast.Module) -> Iterator[tuple[ast.stmt, str, bool]]:
    """(statement, imported module, at module level?) for every import in ``tree``."""

    def walk(node: ast.AST, in_function: bool) -> Iterator[tuple[ast.stmt, str, bool]]:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            if isinstance(child, ast.Import):
                for alias in child.names:
                    yield child, alias.name, not in_function
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                yield child, child.module, not in_function
            yield from walk(child, inside)

    yield from walk(tree, False)


def _violations(package: str) -> list[str]:
    found = []
    for path in _modules(package):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node, module, at_module_level in _imports(tree):
            where = f"{path.relative_to(REPO_ROOT)}:{node.lineno}"
            root_parts = module.split(".")
            for forbidden in FORBIDDEN[package]:
                if root_parts[: len(forbidden.split("."))] == forbidden.split("."):
                    found.append(f"{where} imports {module} ({package} must not import {forbidden})")
            deferred = DEFERRED_IMPORTS.get(str(path.relative_to(REPO_ROOT)), frozenset())
            if not at_module_level and root_parts[0] in PACKAGES and module not in deferred:
                found.append(f"{where} imports {module} inside a function")
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_imports_run_one_way(package: str) -> None:
    assert _violations(package) == []


def test_every_deferred_import_is_still_there() -> None:
    """The allowance lapses with the import it was made for."""
    for name, modules in DEFERRED_IMPORTS.items():
        tree = ast.parse((REPO_ROOT / name).read_text(encoding="utf-8"))
        in_functions = {module for _, module, at_module_level in _imports(tree) if not at_module_level}
        assert modules <= in_functions, name


def test_generated_code_lives_in_api_only() -> None:
    generated = [
        str(p.relative_to(REPO_ROOT))
        for package in PACKAGES
        if package != "api"
        for p in (REPO_ROOT / package).rglob("*_pb2*.py*")
    ]
    assert generated == []
    assert any(GENERATED.rglob("*_pb2.py"))


def test_the_checker_sees_function_level_and_forbidden_imports() -> None:
    tree = ast.parse("import os\ndef f():\n    from service import server\n")
    assert [(m, top) for _, m, top in _imports(tree)] == [("os", True), ("service", False)]
