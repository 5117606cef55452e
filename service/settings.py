"""Server settings: flags, environment (``FLEETPLAN_*``) and defaults, validated by pydantic."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

MIB = 1024 * 1024

ENVIRONMENT_ONLY = frozenset({"token"})
"""Settings that have no ``fleetplan serve`` flag (secrets)."""


def default_solve_slots() -> int:
    """Solves at once: one per core (OR-Tools releases the GIL), at least one."""
    return max(1, os.cpu_count() or 1)


class ServerSettings(BaseSettings):
    """Every knob of ``fleetplan serve``. Environment: ``FLEETPLAN_ADDRESS=0.0.0.0:50051`` etc."""

    model_config = SettingsConfigDict(
        env_prefix="FLEETPLAN_", frozen=True, extra="forbid", use_attribute_docstrings=True
    )

    address: str = "127.0.0.1:50051"
    """host:port to listen on (port 0 = any free port)."""
    pricebook_dir: Path | None = None
    """Directory of pricebook YAML files; None = the embedded default."""
    grace_period_s: float = Field(default=10.0, ge=0, le=600)
    """On SIGTERM/SIGINT: how long in-flight calls may run before they are cancelled."""
    max_message_bytes: int = Field(default=16 * MIB, ge=64 * 1024, le=256 * MIB)
    """Largest request and response message."""
    solve_slots: int = Field(default_factory=default_solve_slots, ge=1, le=64)
    """Solves that run at once (the rest wait)."""
    max_queued_solves: int = Field(default=64, ge=0, le=10_000)
    """Solves that may wait for a slot before new ones get RESOURCE_EXHAUSTED."""
    solve_processes: int = Field(default_factory=default_solve_slots, ge=0, le=64)
    """Worker processes that run solves (PlanFleet, EvaluateFleet, SweepPlans, AnalyzeBreakEven, a
    scenario's ExportPlan; started with the server, service.worker_pool), so cheap RPCs never wait
    for a solve's interpreter lock: one per core by default, 0 = the server's own threads. The CLI's
    in-process server uses 0."""
    solve_niceness: int = Field(default=5, ge=0, le=19)
    """How much nicer (lower CPU priority) solve threads run than the rest of the server, so health,
    catalogue and estimates stay fast while every core solves (0 = same priority)."""
    plan_cache_entries: int = Field(default=256, ge=0, le=100_000)
    """Complete plan answers kept for identical requests (0 = always solve; see service.plan_cache)."""
    default_deadline_s: float = Field(default=60.0, gt=0, le=3600)
    """Time limit of a solve when the caller sets no deadline."""
    deadline_margin_s: float = Field(default=0.25, ge=0, le=10)
    """Reserved from the caller's deadline for converting and sending the answer."""
    max_concurrent_rpcs: int = Field(default=256, ge=1, le=100_000)
    """Calls the server handles at once (the rest are refused by gRPC)."""
    estimate_processes: int = Field(default_factory=lambda: min(64, os.cpu_count() or 1), ge=0, le=64)
    """Worker processes that estimate large EstimatePerformance requests (≥ 200 cases; started by the
    first one): one per core by default, 0 = the server's own threads (service.estimate_pool). The
    CLI's in-process server uses 0 unless it estimates a batch file of 10,000 lines or more.
    bench/estimate_speed.py, 100,000 cases through the CLI on a quiet 2-core box: 47.0 s with 0,
    22.5 s with 2 (a loaded box shared with other jobs showed no gain)."""
    # TLS and tokens (issue #7): paths only; the server wires them when set.
    tls_cert_file: Path | None = None
    """Server certificate chain (PEM): TLS when set with tls_key_file."""
    tls_key_file: Path | None = None
    """Private key of tls_cert_file (PEM)."""
    tls_client_ca_file: Path | None = None
    """Set to require client certificates (mutual TLS)."""
    token_file: Path | None = None
    """File of accepted bearer tokens, one per line."""
    token: SecretStr | None = None
    """A single accepted bearer token (prefer token_file). Environment only (FLEETPLAN_TOKEN): a
    secret on the command line would show in the process list."""
    store: str | None = None
    """Plan store: a database URL (sqlite:///plans.db, postgresql://user@host/db), a file path, or
    'none'; unset = SQLite in the user's data directory ($XDG_DATA_HOME/fleetplan/plans.db)."""
    store_read_only: bool = False
    """Open the plan store read-only: saved plans can be read, compared and repriced, not saved."""
    log_json: bool | None = None
    """JSON log lines; None = JSON unless stderr is a terminal."""
