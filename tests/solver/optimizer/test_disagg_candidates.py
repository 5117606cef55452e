"""Disaggregated candidates (``solver.optimizer.disagg_candidates``) with the performance model."""

from __future__ import annotations

from pricebook.schema import Pricebook
from solver.domain import AcquisitionMode, Constraints, InferenceWorkload, ModelRef, PlanRequest, Sla
from solver.optimizer.candidates import build_instance


def _request(gpus: tuple[str, ...], *, allow: bool | None) -> PlanRequest:
    chat = InferenceWorkload(
        name="qwen-32b",
        model=ModelRef(model_id="Qwen/Qwen3-32B"),
        input_tokens=2000,
        output_tokens=500,
        peak_request_rate_per_s=2.0,
        sla=Sla(ttft_p95_ms=3000, tpot_p95_ms=60),
        allow_disaggregation=allow,
    )
    constraints = Constraints(
        allowed_gpus=gpus, allowed_modes=(AcquisitionMode.BUY,), allow_consumer_gpus=True
    )
    return PlanRequest(inference=(chat,), constraints=constraints)


def test_gpus_without_a_scale_out_nic_get_units_inside_one_server_only(book: Pricebook) -> None:
    # RTX 5090 workstations have no per-GPU NIC: a unit is built only where its KV stays on the
    # server's PCIe, as one power-of-two group the server holds (no unit needs no link at all).
    units = [c for c in build_instance(_request(("rtx-5090",), allow=True), book).candidates if c.unit]
    assert units
    for c in units:
        assert c.unit is not None and c.unit.kv_link == "pcie"
        ((gpu, size, groups),) = c.tp_groups()
        assert (gpu, groups) == ("rtx-5090", 1) and size & (size - 1) == 0


def test_no_units_when_the_workload_says_no(book: Pricebook) -> None:
    instance = build_instance(_request(("h200-sxm", "h100-sxm"), allow=False), book)
    assert instance.candidates and all(c.unit is None for c in instance.candidates)


def test_units_are_pruned_to_a_few_per_workload_each_with_its_roles_gpus(book: Pricebook) -> None:
    instance = build_instance(_request(("h200-sxm", "h100-sxm"), allow=True), book)
    units = [c for c in instance.candidates if c.unit is not None]
    assert 0 < len(units) <= 8
    for c in units:
        assert c.unit is not None
        by_type: dict[str, float] = {}
        for role in (c.unit.prefill, c.unit.decode):
            by_type[role.gpu] = by_type.get(role.gpu, 0.0) + role.engines * role.tp * role.attention_dp
        assert dict(c.gpus_by_type()) == by_type
        assert c.gpu == c.unit.decode.gpu and c.capacity_req_s > 0
