"""The local Postgres (tests' fixture and ``finegrain album postgres``) starts wherever the checkout lives
and whoever runs it: under root from binaries inside a private (mode 700) folder, which the server's
user cannot reach; with a folder, its data survives a restart; the CLI verb prints a working URL and
stops cleanly on SIGINT."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from finegrain.album.engine.catalog import local_server
from finegrain.album.engine.catalog.local_server import LocalPostgres, ServerUnavailable, can_reach, server_user


def _bundled_or_skip() -> Path:
    try:
        return local_server.bundled_install()
    except ServerUnavailable as e:
        if os.environ.get("FINEGRAIN_TEST_POSTGRES") == "require":
            pytest.fail(str(e))
        pytest.skip(str(e))


def _private_copy(install: Path, parent: Path) -> Path:
    """``install`` as it lies in a venv of a checkout under a mode-700 folder (hard links: no space)."""
    private = parent / "home"
    copied = local_server.copy_install(install, private / "clone" / ".venv" / "site-packages")
    private.chmod(0o700)
    return copied


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="the server's user differs only under root")
def test_starts_as_root_from_binaries_under_a_private_folder(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    install = _private_copy(_bundled_or_skip(), tmp_path)
    user = server_user()
    assert user.name == "nobody" and not can_reach(install / "bin" / "initdb", user)  # the trap is real
    with LocalPostgres(install=install) as server:
        assert server.install != install and server.install.is_relative_to(server.root)  # ran from a copy
        import psycopg

        with psycopg.connect(server.new_database("priv")) as conn:
            assert conn.execute("SELECT extname FROM pg_extension WHERE extname = 'vector'").fetchone() == ("vector",)
        root = server.root
    assert not root.exists()  # a throw-away server leaves nothing behind


def test_a_folder_keeps_its_data_across_restarts(tmp_path: Path) -> None:
    _bundled_or_skip()
    folder = Path("/tmp") / f"fg-keep-{os.getpid()}"  # short: the socket lives in it
    try:
        with LocalPostgres(folder) as server:
            url = server.create_database("album")
            with server.connect("album") as conn:
                conn.execute("CREATE TABLE kept (x int)")
                conn.execute("INSERT INTO kept VALUES (42)")
        assert (folder / "data" / "PG_VERSION").is_file()
        with LocalPostgres(folder) as server:
            assert server.create_database("album") == url  # exists already: kept, not recreated
            with server.connect("album") as conn:
                assert conn.execute("SELECT x FROM kept").fetchall() == [(42,)]
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_folder_with_a_path_too_long_for_a_socket_is_refused(tmp_path: Path) -> None:
    _bundled_or_skip()
    with pytest.raises(ServerUnavailable, match="too long for the server's socket"):
        LocalPostgres(tmp_path / ("x" * 120))


def test_cli_prints_a_url_that_works_and_stops_on_sigint(tmp_path: Path) -> None:
    _bundled_or_skip()
    proc = subprocess.Popen([sys.executable, "-m", "finegrain", "album", "postgres", "--database", "photos"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        assert line.startswith("catalog URL: postgresql://postgres@/photos?host="), proc.stderr.read()  # type: ignore[union-attr]
        url = line.split(": ", 1)[1].strip()
        folder = Path(url.split("host=", 1)[1])
        import psycopg

        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT count(*) FROM pg_extension WHERE extname = 'vector'").fetchone() == (1,)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0
        assert not folder.exists()
    finally:
        if proc.poll() is None:
            proc.kill()


def test_cli_refuses_a_database_name_that_is_not_plain() -> None:
    r = subprocess.run([sys.executable, "-m", "finegrain", "album", "postgres", "--database", 'x"; DROP'],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.startswith("error: --database") and "Traceback" not in r.stderr
