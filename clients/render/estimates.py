"""Performance estimates: one table of serving cases, one of training cases, then the cases in error."""

from __future__ import annotations

from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import performance_pb2
from clients.render.tables import Cell, table
from clients.render.values import precision_name, render_provenance

INFERENCE_HEADERS = [
    "#",
    "GPU",
    "model",
    "TP",
    "prec",
    "out tok/s",
    "total tok/s",
    "TTFT ms",
    "TPOT ms",
    "tok/s/user",
    "max conc",
    "fits",
    "bottleneck",
    "band out tok/s",
]
TRAINING_HEADERS = [
    "#",
    "GPU",
    "model",
    "train tok/s",
    "per GPU",
    "MFU",
    "hours",
    "GPU-hours",
    "fits",
    "min GPUs",
]


def render_estimates(r: api.EstimatePerformanceResponse, *, markdown: bool = False) -> str:
    infer_rows = [_inference_row(res) for res in r.results if res.WhichOneof("outcome") == "inference"]
    train_rows = [_training_row(res) for res in r.results if res.WhichOneof("outcome") == "training"]
    out = []
    if infer_rows:
        out.append(table(INFERENCE_HEADERS, infer_rows, markdown=markdown))
    if train_rows:
        out.append(table(TRAINING_HEADERS, train_rows, markdown=markdown))
    out += [
        _at_sla(res)
        for res in r.results
        if res.WhichOneof("outcome") == "inference" and res.inference.HasField("capacity_at_sla")
    ]
    out += [
        _disaggregated(res)
        for res in r.results
        if res.WhichOneof("outcome") == "inference" and res.inference.HasField("disaggregated")
    ]
    out += [
        f"case {res.case_index}: {res.inference.measured_note}"
        for res in r.results
        if res.WhichOneof("outcome") == "inference" and res.inference.measured_note
    ]
    out += [
        f"case {res.case_index}: {res.error.field}: {res.error.reason}"
        for res in r.results
        if res.WhichOneof("outcome") == "error"
    ]
    out.append(render_provenance(r.provenance))
    return "\n".join(out)


def _at_sla(res: performance_pb2.PerformanceResult) -> str:
    """One replica's capacity at the case's SLA, in words."""
    cap = res.inference.capacity_at_sla
    if not cap.feasible:
        return f"case {res.case_index} at the SLA: no load meets it ({cap.reason})"
    return (
        f"case {res.case_index} at the SLA: one replica sustains {cap.req_s_per_replica:,.3g} req/s "
        f"({cap.output_tok_s_per_replica:,.0f} output tok/s, {cap.total_tok_s_per_replica:,.0f} total), "
        f"p95 TTFT {cap.ttft_p95_ms:,.0f} ms, TPOT {cap.tpot_ms:.1f} ms; binds: {cap.binding} "
        f"({cap.bottleneck})"
    )


def _disaggregated(res: performance_pb2.PerformanceResult) -> str:
    """The two roles of a disaggregated case and what passes between them, in words."""
    d = res.inference.disaggregated
    return (
        f"case {res.case_index} disaggregated: prefill {d.prefill} ({d.prefill_gpus} GPUs, "
        f"{d.prefill_utilization:.0%} busy, {d.prefill_ms:,.0f} ms a prompt + "
        f"{d.prefill_wait_ms:,.0f} ms waiting); decode {d.decode} ({d.decode_gpus} GPUs, "
        f"{d.decode_batch_per_worker:,.0f} sequences each); KV {d.kv_bytes_per_request / 1e6:,.0f} MB "
        f"a request over {d.kv_link} in {d.kv_transfer_ms:,.1f} ms; "
        f"{d.output_tok_s_per_gpu:,.0f} output tok/s per GPU"
    )


def _model(case: performance_pb2.PerformanceCase) -> str:
    return case.model.model_id or f"{case.model.spec.params_b:g}B spec"


def _inference_row(res: performance_pb2.PerformanceResult) -> list[Cell]:
    c, e = res.case, res.inference
    return [
        res.case_index,
        c.gpu_id or f"{c.prefill_gpu or c.gpu_id}→{c.decode_gpu or c.gpu_id}",
        _model(c),
        e.tp,
        precision_name(c.precision),
        e.output_tok_s_total,
        e.total_tok_s,
        e.ttft_ms,
        e.tpot_ms,
        e.per_user_tok_s,
        e.max_concurrency,
        "yes" if e.fits else "no",
        e.bottleneck,
        f"{e.output_tok_s_low:,.0f}–{e.output_tok_s_high:,.0f}",
    ]


def _training_row(res: performance_pb2.PerformanceResult) -> list[Cell]:
    c, t = res.case, res.training
    return [
        res.case_index,
        c.gpu_id,
        _model(c),
        t.train_tok_s,
        t.train_tok_s_per_gpu,
        t.mfu,
        t.hours,
        t.gpu_hours,
        "yes" if t.fits else "no",
        t.min_gpus,
    ]
