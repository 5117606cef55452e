"""The API contract follows its style rules (buf STANDARD minus SERVICE_SUFFIX, plus COMMENTS; the
same rules as ``proto/buf.yaml``), checked here from protoc's descriptors so CI needs no buf binary:
every element documented, enums ``<ENUM>_UNSPECIFIED = 0`` and prefixed, one request/response
message per RPC named after it, lower_snake_case fields, package matching the directory."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2

from api import codegen

pytestmark = pytest.mark.slow  # one protoc run in a subprocess (several seconds on a loaded 2-core box)

FieldDescriptorProto = descriptor_pb2.FieldDescriptorProto
# SourceCodeInfo path tags (descriptor.proto field numbers).
FILE_MESSAGE, FILE_ENUM, FILE_SERVICE = 4, 5, 6
MESSAGE_FIELD, MESSAGE_NESTED, MESSAGE_ENUM, MESSAGE_ONEOF = 2, 3, 4, 8
ENUM_VALUE, SERVICE_METHOD = 2, 2


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> list[descriptor_pb2.FileDescriptorProto]:
    out = tmp_path_factory.mktemp("descriptors") / "api.pb"
    script = (
        "import sys, grpc_tools, pathlib\nfrom grpc_tools import protoc\n"
        "inc = str(pathlib.Path(grpc_tools.__file__).parent / '_proto')\n"
        "sys.exit(protoc.main(['protoc', '-I' + sys.argv[1], '-I' + inc, '--include_source_info',"
        " '--descriptor_set_out=' + sys.argv[2], *sys.argv[3:]]))\n"
    )
    protos = [str(p) for p in codegen.proto_files()]
    subprocess.run([sys.executable, "-c", script, str(codegen.PROTO_ROOT), str(out), *protos], check=True)
    return list(descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file)


def _documented(file: descriptor_pb2.FileDescriptorProto) -> set[tuple[int, ...]]:
    return {tuple(loc.path) for loc in file.source_code_info.location if loc.leading_comments.strip()}


def _elements(file: descriptor_pb2.FileDescriptorProto) -> list[tuple[str, tuple[int, ...]]]:
    """(name, source path) of every message, field, oneof, enum, enum value, service and method."""
    out: list[tuple[str, tuple[int, ...]]] = []

    def enum(e: descriptor_pb2.EnumDescriptorProto, path: tuple[int, ...], prefix: str) -> None:
        out.append((f"{prefix}{e.name}", path))
        out.extend((f"{prefix}{e.name}.{v.name}", (*path, ENUM_VALUE, i)) for i, v in enumerate(e.value))

    def message(m: descriptor_pb2.DescriptorProto, path: tuple[int, ...], prefix: str) -> None:
        name = f"{prefix}{m.name}"
        if m.options.map_entry:
            return
        out.append((name, path))
        out.extend((f"{name}.{f.name}", (*path, MESSAGE_FIELD, i)) for i, f in enumerate(m.field))
        out.extend(
            (f"{name}.{o.name}", (*path, MESSAGE_ONEOF, i))
            for i, o in enumerate(m.oneof_decl)
            if not o.name.startswith("_")  # synthetic oneofs of proto3 `optional`
        )
        for i, nested in enumerate(m.nested_type):
            message(nested, (*path, MESSAGE_NESTED, i), f"{name}.")
        for i, e in enumerate(m.enum_type):
            enum(e, (*path, MESSAGE_ENUM, i), f"{name}.")

    for i, m in enumerate(file.message_type):
        message(m, (FILE_MESSAGE, i), "")
    for i, e in enumerate(file.enum_type):
        enum(e, (FILE_ENUM, i), "")
    for i, s in enumerate(file.service):
        out.append((s.name, (FILE_SERVICE, i)))
        out.extend(
            (f"{s.name}.{m.name}", (FILE_SERVICE, i, SERVICE_METHOD, j)) for j, m in enumerate(s.method)
        )
    return out


def test_every_element_is_documented(files: list[descriptor_pb2.FileDescriptorProto]) -> None:
    missing = [
        f"{file.name}: {name}"
        for file in files
        for name, path in _elements(file)
        if path not in _documented(file)
    ]
    assert missing == []


def test_package_and_directory(files: list[descriptor_pb2.FileDescriptorProto]) -> None:
    for file in files:
        assert file.package == "fleetplan.v1"
        assert file.name.startswith("fleetplan/v1/") and re.fullmatch(r"[a-z0-9_/]+\.proto", file.name)


def _all_enums(files: list[descriptor_pb2.FileDescriptorProto]) -> list[descriptor_pb2.EnumDescriptorProto]:
    enums = [e for f in files for e in f.enum_type]
    stack = [m for f in files for m in f.message_type]
    while stack:
        m = stack.pop()
        enums.extend(m.enum_type)
        stack.extend(m.nested_type)
    return enums


def test_enums_have_unspecified_zero_and_prefixed_values(
    files: list[descriptor_pb2.FileDescriptorProto],
) -> None:
    for enum in _all_enums(files):
        prefix = re.sub(r"(?<!^)(?=[A-Z])", "_", enum.name).upper() + "_"
        zero = [v.name for v in enum.value if v.number == 0]
        assert zero == [f"{prefix}UNSPECIFIED"], enum.name
        assert all(v.name.startswith(prefix) for v in enum.value), enum.name


def test_fields_are_lower_snake_case(files: list[descriptor_pb2.FileDescriptorProto]) -> None:
    stack = [m for f in files for m in f.message_type]
    while stack:
        m = stack.pop()
        stack.extend(m.nested_type)
        for field in m.field:
            assert re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)*", field.name), f"{m.name}.{field.name}"


def test_one_request_and_response_per_rpc_named_after_it(
    files: list[descriptor_pb2.FileDescriptorProto],
) -> None:
    methods = [m for f in files for s in f.service for m in s.method]
    assert {m.name for m in methods} == {
        "PlanFleet",
        "EvaluateFleet",
        "EstimatePerformance",
        "AnalyzeBreakEven",
        "ListCatalog",
        "SweepPlans",
        "GetPlan",
        "ListPlans",
        "DeletePlan",
        "ComparePlans",
        "RepricePlan",
    }
    for method in methods:
        assert method.input_type == f".fleetplan.v1.{method.name}Request"
        assert method.output_type == f".fleetplan.v1.{method.name}Response"
    types = [m.input_type for m in methods] + [m.output_type for m in methods]
    assert len(types) == len(set(types))


def test_money_fields_use_the_money_message(files: list[descriptor_pb2.FileDescriptorProto]) -> None:
    """No float money: a number named like a price or cost must be a ratio (``_fraction``)."""
    money_words = re.compile(r"(price|cost|tco|capex|budget|saving|opex)")
    numeric = {
        FieldDescriptorProto.TYPE_DOUBLE,
        FieldDescriptorProto.TYPE_FLOAT,
        FieldDescriptorProto.TYPE_INT32,
        FieldDescriptorProto.TYPE_INT64,
        FieldDescriptorProto.TYPE_UINT64,
    }
    stack = [m for f in files for m in f.message_type]
    checked = 0
    while stack:
        m = stack.pop()
        stack.extend(m.nested_type)
        for field in m.field:
            if not money_words.search(field.name):
                continue
            checked += 1
            if field.type in numeric:
                assert field.name.endswith("_fraction"), f"{m.name}.{field.name} is a number, not Money"
    assert checked > 20


def test_buf_config_matches_these_rules() -> None:
    text = (Path(codegen.PROTO_ROOT) / "buf.yaml").read_text(encoding="utf-8")
    assert "STANDARD" in text and "COMMENTS" in text and "SERVICE_SUFFIX" in text
