"""Serving a page from the CLI: a port already in use is one ``error:`` line, before anything says "serving"."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from finegrain.album.engine.web import server
from finegrain.cli import serving
from finegrain.cli.main import main
from finegrain.errors import FinegrainError


def test_album_serve_on_a_busy_port_is_one_error_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[int] = []
    monkeypatch.setattr(server, "serve", lambda app, host, port, keep_alive: started.append(port))
    catalog = tmp_path / "catalog.sqlite"
    catalog.write_bytes(b"")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["album", "serve", "-c", str(catalog), "--port", str(port)]) == 2
    out, err = capsys.readouterr()
    assert "serving" not in out and not started
    assert err.splitlines() == [f"error: port {port} on 127.0.0.1 is already in use (pass another --port, e.g. "
                                f"--port {port + 1}, or stop the program listening on {port})"]


def test_check_port_passes_a_free_port_and_names_an_address_this_machine_lacks() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    serving.check_port("127.0.0.1", port)  # free again: no error
    with pytest.raises(FinegrainError, match=r"cannot listen on http://192\.0\.2\.1:"):
        serving.check_port("192.0.2.1", port)  # TEST-NET-1: never this machine's
