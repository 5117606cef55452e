"""A throwaway PostgreSQL server for tests and developers (``make pg``).

Debian's ``postgresql`` package (``.ci/run`` installs it) provides ``initdb`` and ``pg_ctl`` in
``/usr/lib/postgresql/<version>/bin``. The cluster lives in a temporary directory, listens on a
free loopback port (and a unix socket in that directory), trusts local connections, and is removed
when stopped. PostgreSQL refuses to run as root, so as root the cluster is created and run as the
``postgres`` user (``runuser``).

``python -m tests.pg`` starts one and prints its URL until Ctrl-C.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PG_USER = "fleetplan"


class PostgresUnavailable(RuntimeError):
    """PostgreSQL cannot be started here (not installed, no unprivileged user, start failed)."""


def _bin_dir() -> Path:
    candidates = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), reverse=True)
    if candidates:
        return candidates[0].parent
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    raise PostgresUnavailable("initdb not found (apt-get install postgresql)")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class PostgresCluster:
    data_dir: Path
    port: int
    bin_dir: Path
    run_as: str | None

    @property
    def admin_url(self) -> str:
        return f"postgresql://{PG_USER}@127.0.0.1:{self.port}/postgres"

    def url(self, database: str) -> str:
        return f"postgresql://{PG_USER}@127.0.0.1:{self.port}/{database}"

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        command = [str(self.bin_dir / args[0]), *args[1:]]
        if self.run_as:
            command = ["runuser", "-u", self.run_as, "--", *command]
        return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)

    def create_database(self) -> str:
        """A new empty database; its URL."""
        name = f"t_{uuid.uuid4().hex[:12]}"
        result = self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", PG_USER, name)
        if result.returncode != 0:
            raise PostgresUnavailable(f"createdb failed: {result.stderr.strip()}")
        return self.url(name)

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data_dir), "-m", "fast", "-w", "stop")
        shutil.rmtree(self.data_dir.parent, ignore_errors=True)


def start_cluster() -> PostgresCluster:
    bin_dir = _bin_dir()
    run_as = None
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            raise PostgresUnavailable("running as root and runuser is missing")
        try:
            import pwd  # noqa: PLC0415 - POSIX only, needed only as root

            pwd.getpwnam("postgres")
        except KeyError as exc:
            raise PostgresUnavailable("running as root and there is no 'postgres' user") from exc
        run_as = "postgres"
    root = Path(tempfile.mkdtemp(prefix="fleetplan-pg-"))
    data_dir = root / "data"
    if run_as:
        shutil.chown(root, user=run_as)
    os.chmod(root, 0o755)
    cluster = PostgresCluster(data_dir, _free_port(), bin_dir, run_as)
    init = cluster._run(
        "initdb", "-D", str(data_dir), "-U", PG_USER, "--auth=trust", "-E", "UTF8", "--no-sync", "--no-locale"
    )
    if init.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        raise PostgresUnavailable(f"initdb failed: {init.stderr.strip()[-500:]}")
    options = (
        f"-p {cluster.port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off "
        "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
    )
    log_file = str(root / "log")
    started = cluster._run("pg_ctl", "-D", str(data_dir), "-o", options, "-l", log_file, "-w", "start")
    if started.returncode != 0:
        log = (root / "log").read_text(errors="replace")[-800:] if (root / "log").exists() else ""
        shutil.rmtree(root, ignore_errors=True)
        raise PostgresUnavailable(f"pg_ctl start failed: {started.stderr.strip()} {log}")
    return cluster


@contextlib.contextmanager
def running_cluster() -> Iterator[PostgresCluster]:
    cluster = start_cluster()
    try:
        yield cluster
    finally:
        cluster.stop()


def main() -> None:
    with running_cluster() as cluster:
        url = cluster.create_database()
        print(f"PostgreSQL is running. Use:\n  FLEETPLAN_STORE={url}\nCtrl-C stops and removes it.")  # noqa: T201
        with contextlib.suppress(KeyboardInterrupt):
            signal.pause()


if __name__ == "__main__":
    main()
