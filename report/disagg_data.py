"""What a quote keeps of a disaggregated deployment (issue 33), as ``QuoteData`` parts: a group's two
roles (the planner's ``DisaggregatedRoles``) and why disaggregation won (its
``DisaggregationComparison``), copied as the planner wrote them."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from pricebook.schema import Money


class _Part(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RoleRow(_Part):
    """One role (prefill or decode)."""

    gpu_id: str
    tp: int
    ep: int
    attention_dp: int
    precision: str
    engines_per_unit: int
    """Engines of this role in one unit (the prefill:decode ratio)."""
    gpus_peak: int
    """GPUs of this role in the group's peak hour (all units)."""


class RolesRow(_Part):
    """A disaggregated group's roles; the group's replicas count units."""

    prefill: RoleRow
    decode: RoleRow
    kv_link: str
    """"nvlink", "network" or "pcie"."""
    kv_bytes_per_request: float
    network_cost: Money | None = None
    """The scale-out ports and optics priced for the KV transfer over the horizon (None: none)."""


class DisaggregationWhy(_Part):
    """The cheapest aggregated plan of the same request and the saving against it."""

    aggregated_tco: Money | None
    """None: no aggregated plan meets the SLAs (``reason`` says why)."""
    saving: Money | None
    reason: str = ""
