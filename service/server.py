"""Composition of the gRPC server: servicer, health, reflection, limits, signals, shutdown.

``serve(settings)`` runs until SIGTERM/SIGINT: health flips to NOT_SERVING, the server stops
accepting calls, in-flight calls get ``grace_period_s`` to finish, then the process exits 0.
``start_in_thread(settings)`` runs the same server on a background event loop (the CLI's
in-process mode and the end-to-end tests).

The pricebook is loaded before the socket opens; a broken pricebook raises ``PricebookError``
(naming file, entry and field) and the server never starts half-configured.
"""

from __future__ import annotations

import asyncio
import errno
import signal
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass

import grpc
import structlog
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import fleet_planner_pb2_grpc as rpc
from api.fleetplan.v1 import plan_store_pb2 as store_api
from api.fleetplan.v1 import plan_store_pb2_grpc as store_rpc
from pricebook import load_default, load_dir
from pricebook.schema import Pricebook
from service.interceptors import RequestLoggingInterceptor
from service.plan_store import PlanStoreServicer
from service.request_limits import LimitsInterceptor, wire_ceiling_bytes
from service.security import auth_interceptors, server_credentials
from service.servicers import FleetPlannerServicer, ServiceState
from service.settings import ServerSettings
from service.shutdown import graceful_stop
from store import describe, open_store

log = structlog.get_logger("fleetplan.server")

SERVICE_NAME = api.DESCRIPTOR.services_by_name["FleetPlanner"].full_name
"""``fleetplan.v1.FleetPlanner``."""
PLAN_STORE_SERVICE_NAME = store_api.DESCRIPTOR.services_by_name["PlanStore"].full_name
GIL_SWITCH_INTERVAL_S = 0.0005
"""The served process's GIL switch interval (Python's default is 5 ms): solve threads run Python
between SCIP calls, and the event loop answering cheap RPCs waits up to one interval per hand-over.
bench/overload.py, quiet 2-core box: cheap-call p99 48-56 ms → 25-33 ms, the same solves answered."""
"""``fleetplan.v1.PlanStore``."""
WORKERS_START_S = 60.0
"""How long the server waits for its solve workers before it opens anyway (solves then run in its
own threads until they are up)."""


def load_pricebook(settings: ServerSettings) -> Pricebook:
    return load_dir(settings.pricebook_dir) if settings.pricebook_dir is not None else load_default()


@dataclass
class BuiltServer:
    server: grpc.aio.Server
    port: int
    health: health.aio.HealthServicer
    servicer: FleetPlannerServicer

    async def set_serving(self, serving: bool) -> None:
        status = (
            health_pb2.HealthCheckResponse.SERVING if serving else health_pb2.HealthCheckResponse.NOT_SERVING
        )
        await self.health.set("", status)
        await self.health.set(SERVICE_NAME, status)
        await self.health.set(PLAN_STORE_SERVICE_NAME, status)

    async def stop(self, grace_s: float) -> None:
        """NOT_SERVING, stop accepting, wrap up solves near the end of ``grace_s`` (service.shutdown)."""
        await graceful_stop(self.server, self.set_serving, self.servicer.gate, grace_s)
        self.servicer.archive.close()
        self.servicer.close()


async def build_server(settings: ServerSettings, book: Pricebook) -> BuiltServer:
    """A started server bound to ``settings.address`` (health SERVING)."""
    options: Sequence[tuple[str, int]] = (
        # Requests over max_message_bytes (up to a ceiling) reach LimitsInterceptor, which refuses
        # them naming the limit and its setting; gRPC would answer a bare RESOURCE_EXHAUSTED.
        ("grpc.max_receive_message_length", wire_ceiling_bytes(settings.max_message_bytes)),
        ("grpc.max_send_message_length", settings.max_message_bytes),
        # Two servers on one port must fail loudly, never share it silently.
        ("grpc.so_reuseport", 0),
    )
    server = grpc.aio.server(
        # Logging outermost (refused calls are logged too), then tokens, then request size caps.
        interceptors=[
            RequestLoggingInterceptor(),
            *auth_interceptors(settings),
            LimitsInterceptor(max_message_bytes=settings.max_message_bytes),
        ],
        options=options,
        maximum_concurrent_rpcs=settings.max_concurrent_rpcs,
    )
    store = open_store(settings.store, read_only=settings.store_read_only)
    state = ServiceState(book=book, settings=settings, store=store)
    servicer = FleetPlannerServicer(state)
    rpc.add_FleetPlannerServicer_to_server(servicer, server)
    plan_store = PlanStoreServicer(servicer.archive, servicer.EvaluateFleet, lambda: state.book)
    store_rpc.add_PlanStoreServicer_to_server(plan_store, server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (
            SERVICE_NAME,
            PLAN_STORE_SERVICE_NAME,
            health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
            reflection.SERVICE_NAME,
        ),
        server,
    )
    # Open for calls once the solve workers are up (seconds of imports on a busy box): a solve that
    # came earlier would run in this process, beside their start-up.
    if settings.solve_processes and not await asyncio.to_thread(servicer.wait_for_workers, WORKERS_START_S):
        log.warning("server.solve_workers_not_ready", waited_s=WORKERS_START_S)
    credentials = server_credentials(settings)
    try:
        if credentials is None:
            port = server.add_insecure_port(settings.address)
        else:
            port = server.add_secure_port(settings.address, credentials)
    except RuntimeError as exc:
        msg = f"cannot listen on {settings.address}: {exc}"
        raise OSError(msg) from exc
    if port == 0:
        msg = f"cannot listen on {settings.address} (address in use or invalid)"
        raise OSError(msg)
    await server.start()
    built = BuiltServer(server, port, health_servicer, servicer)
    await built.set_serving(True)
    log.info(
        "server.started",
        address=settings.address,
        port=port,
        pricebook_version=book.version,
        pricebook_hash=book.content_hash,
        tls=credentials is not None,
        solve_slots=settings.solve_slots,
        store=describe(store),
    )
    return built


async def serve_async(settings: ServerSettings, book: Pricebook | None = None) -> None:
    book = book if book is not None else load_pricebook(settings)
    built = await build_server(settings, book)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    log.info("server.stopping", grace_period_s=settings.grace_period_s)
    await built.stop(settings.grace_period_s)
    log.info("server.stopped")


def serve(settings: ServerSettings) -> None:
    """Run until SIGTERM/SIGINT (the ``fleetplan serve`` command)."""
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
    asyncio.run(serve_async(settings))


class ThreadedServer:
    """The real server on its own event loop in a daemon thread; ``address`` is host:port."""

    def __init__(self, settings: ServerSettings, book: Pricebook | None = None) -> None:
        self._settings = settings
        self._book = book if book is not None else load_pricebook(settings)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="fleetplan-server", daemon=True)
        self._built: BuiltServer | None = None
        self._stopped = False
        self._loop.set_exception_handler(self._loop_exception)

    def _loop_exception(self, loop: asyncio.AbstractEventLoop, context: dict[str, object]) -> None:
        # Once stop() has begun, grpc's aio poller may wake once more on a descriptor the process is
        # closing (EBADF, during the stop or at interpreter exit): harmless, so not reported.
        # Everything else is.
        error = context.get("exception")
        if self._stopped and isinstance(error, OSError) and error.errno == errno.EBADF:
            return
        loop.default_exception_handler(context)

    def start(self) -> ThreadedServer:
        self._thread.start()
        future: Future[BuiltServer] = asyncio.run_coroutine_threadsafe(
            build_server(self._settings, self._book), self._loop
        )
        self._built = future.result(timeout=30 + WORKERS_START_S)
        return self

    @property
    def port(self) -> int:
        assert self._built is not None, "server not started"
        return self._built.port

    @property
    def address(self) -> str:
        host = self._settings.address.rsplit(":", 1)[0]
        return f"{host}:{self.port}"

    @property
    def built(self) -> BuiltServer:
        assert self._built is not None, "server not started"
        return self._built

    def run(self, coro: object, timeout_s: float = 30.0) -> object:
        """Run a coroutine on the server's loop (tests: flip health, inspect the gate)."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout_s)  # type: ignore[arg-type]

    def stop(self, grace_s: float | None = None) -> None:
        # Set first: the poller's EBADF wake-up can come while the server is still stopping (seen
        # once in seven CLI runs as a traceback after the answer).
        self._stopped = True
        if self._built is not None:
            grace = self._settings.grace_period_s if grace_s is None else grace_s
            asyncio.run_coroutine_threadsafe(self._built.stop(grace), self._loop).result(grace + 30)
            self._built = None
        # The loop (a daemon thread) keeps running: grpc's aio poller stays registered on it until
        # the process exits, and stopping it early turns the poller's last wake-up into a spurious
        # "Bad file descriptor" traceback.

    def __enter__(self) -> ThreadedServer:
        return self.start() if self._built is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop(grace_s=0.5)


def start_in_thread(settings: ServerSettings | None = None, book: Pricebook | None = None) -> ThreadedServer:
    settings = settings or ServerSettings(address="127.0.0.1:0")
    return ThreadedServer(settings, book).start()
