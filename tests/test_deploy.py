"""The container image and Kubernetes manifests (which cannot be run here, docs/deployment.md)
agree with the code: every environment variable is a server setting, the probes ask the health
service for the service names the server registers, the Service is headless on the container's
port, the pod's grace outlasts the server's, and the image ships every runtime package."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from service.server import SERVICE_NAME
from service.settings import ServerSettings

REPO_ROOT = Path(__file__).resolve().parents[1]
K8S = REPO_ROOT / "deploy" / "k8s"


def _documents(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((K8S / name).read_text(encoding="utf-8")) if d]


def _container() -> dict[str, Any]:
    (deployment,) = _documents("deployment.yaml")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return container  # type: ignore[no-any-return]


def test_every_variable_is_a_server_setting() -> None:
    settings = {f"FLEETPLAN_{name.upper()}" for name in ServerSettings.model_fields}
    names = {e["name"] for e in _container()["env"]}
    assert names <= settings
    assert "FLEETPLAN_STORE" in names


def test_probes_use_the_health_service_on_the_grpc_port() -> None:
    container = _container()
    port = container["ports"][0]["containerPort"]
    assert container["readinessProbe"]["grpc"] == {"port": port, "service": SERVICE_NAME}
    assert container["livenessProbe"]["grpc"]["port"] == port
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["FLEETPLAN_ADDRESS"].endswith(f":{port}")


def test_the_pod_outlives_the_servers_grace_period() -> None:
    (deployment,) = _documents("deployment.yaml")
    env = {e["name"]: e.get("value") for e in _container()["env"]}
    grace = float(env["FLEETPLAN_GRACE_PERIOD_S"])
    assert deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] > grace + 1


def test_the_service_is_headless_and_selects_the_pods() -> None:
    (service,) = _documents("service.yaml")
    (deployment,) = _documents("deployment.yaml")
    assert service["spec"]["clusterIP"] == "None"
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
    assert service["spec"]["ports"][0]["port"] == _container()["ports"][0]["containerPort"]


def test_the_image_keeps_every_runtime_dependency() -> None:
    dockerfile = (REPO_ROOT / "Dockerfile").read_text(encoding="utf-8")
    dropped = re.search(r"grep -v -E '\^\(([^)]*)\)", dockerfile)
    assert dropped is not None
    excluded = set(dropped.group(1).split("|"))
    pyproject = (REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8")
    runtime = pyproject.split("dependencies = [", 1)[1].split("]", 1)[0]
    needed = {
        re.split(r"[<>=\[ ]", line.strip().strip('",'))[0] for line in runtime.splitlines() if '"' in line
    }
    assert needed and not {n.lower() for n in needed} & {e.lower() for e in excluded}
    for package in ("api", "pricebook", "solver", "store", "service", "clients"):
        assert f"COPY {package} ./{package}" in dockerfile
