"""GPUs of NVL72 racks (GB200, GB300) known to the performance model but not sold by the catalogue yet
(``rack_gpus.yaml``: sourced per-GPU specs, estimates labelled). The disaggregated model and its
calibration resolve them after the catalogue."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from pricebook.schema import GpuSpec

RACK_GPUS_PATH = Path(__file__).with_name("rack_gpus.yaml")


@lru_cache(maxsize=1)
def _entries() -> tuple[tuple[GpuSpec, float], ...]:
    raw: list[dict[str, Any]] = yaml.safe_load(RACK_GPUS_PATH.read_text())
    out = []
    for entry in raw:
        nic = float(entry.pop("scale_out_gbps"))
        out.append((GpuSpec.model_validate(entry), nic))
    return tuple(out)


def _key(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def rack_gpu(key: str) -> GpuSpec | None:
    """The rack GPU with this id or alias (case, spaces and dashes ignored), else None."""
    wanted = _key(key)
    for spec, _ in _entries():
        if wanted in {_key(spec.id), *(_key(a) for a in spec.aliases)}:
            return spec
    return None


def rack_scale_out_gbps(gpu_id: str) -> float | None:
    """The per-GPU NIC of a rack GPU (Gb/s), None for any other GPU."""
    return next((nic for spec, nic in _entries() if spec.id == gpu_id), None)
