"""The album web app answers only requests naming it (``Host``, IPv6 literals included) and changes
state only for its own pages (``Origin``): a DNS-rebinding page gets 400, another site's page 403,
and no hostile header gets a 5xx.

The catalog is real: one JPEG indexed by ``index_folder`` and one named person, whose names a
refused POST must leave as they were.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
from fastapi.testclient import TestClient  # noqa: E402

from album_photo_fixtures import good_fields, jpeg_with  # noqa: E402
from finegrain.album.engine.catalog import open_catalog  # noqa: E402
from finegrain.album.engine.indexer import index_folder  # noqa: E402
from finegrain.album.engine.records import FaceOccurrence, Person  # noqa: E402
from finegrain.album.engine.web import server
from finegrain.album.engine.web.app import create_app  # noqa: E402
from finegrain.cli.main import main
from finegrain.web_guard import LOOPBACK_NAMES  # noqa: E402

PORT = 8765
ALLOWED = [*LOOPBACK_NAMES]


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("guard")
    (base / "photos").mkdir()
    (base / "photos" / "a.jpg").write_bytes(jpeg_with(good_fields()))
    path = base / "catalog.sqlite"
    with open_catalog(path) as store:
        index_folder(base / "photos", store, faces=False, show_progress=False)
        store.put_person(Person("p1", ("Anna",)))
        store.set_faces("a.jpg", [FaceOccurrence("a.jpg", "p1", None, 0)])
    return path


@pytest.fixture(autouse=True)
def _thumbs_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FINEGRAIN_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def app(catalog: Path) -> Any:
    return create_app(catalog, engine=lambda *a, **k: None, allowed_hosts=ALLOWED, thumb_cache=False)


def names_of(c: TestClient) -> list[str]:
    return c.get("/api/people/p1").json()["person"]["names"]


@pytest.mark.parametrize("base", [f"http://[::1]:{PORT}", f"http://127.0.0.1:{PORT}", f"http://LocalHost:{PORT}",
                                  f"http://[0:0:0:0:0:0:0:1]:{PORT}", "http://localhost"])
def test_every_loopback_spelling_with_the_server_s_port_is_answered(app: Any, base: str) -> None:
    with TestClient(app, base_url=base) as c:
        r = c.get("/api/people")
        assert r.status_code == 200, (base, r.text)
        assert [p["id"] for p in r.json()["people"]] == ["p1"]


@pytest.mark.parametrize("host", [
    "evil.example", f"evil.example:{PORT}", f"127.0.0.1:{PORT + 1}", f"[::1]:{PORT + 1}", "[::1]", "::1",
    f"::1:{PORT}", "", " ", "[::1", f"[::1]:{PORT}x", "[::1]:99999", f"user@127.0.0.1:{PORT}", f"127.0.0.1:{PORT}/x",
    f"[127.0.0.1]:{PORT}", f"localhost.:{PORT}", f"localhost:+{PORT}", "é".encode(), f"[::2]:{PORT}", "x" * 5000,
])
def test_a_host_that_does_not_name_this_server_is_400(app: Any, host: str | bytes) -> None:
    with TestClient(app, base_url=f"http://127.0.0.1:{PORT}") as c:
        for method, path in [("GET", "/"), ("GET", "/photo/a.jpg"), ("POST", "/api/people/p1")]:
            r = c.request(method, path, headers={"host": host}, json={"add_names": ["Eve"]})
            assert r.status_code == 400, (host, method, path, r.status_code)
            assert r.json()["detail"], host
        assert names_of(c) == ["Anna"]


def _asgi(app: Any, headers: list[tuple[bytes, bytes]], method: str = "GET", path: str = "/api/people") -> int:
    """The status ``app`` answers a request with exactly ``headers`` (a client library always adds a Host)."""
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "", "headers": headers,
             "server": ("127.0.0.1", PORT), "client": ("127.0.0.1", 50000)}
    asyncio.run(app(scope, receive, send))
    return next(m["status"] for m in sent if m["type"] == "http.response.start")


def test_a_missing_or_doubled_host_is_400(app: Any) -> None:
    here = (b"host", f"127.0.0.1:{PORT}".encode())
    assert _asgi(app, [here]) == 200
    assert _asgi(app, []) == 400
    assert _asgi(app, [here, (b"host", b"evil.example")]) == 400
    assert _asgi(app, [(b"host", b"\xff\xfe")]) == 400


def test_the_cli_s_host_rule_answers_an_ipv6_server(catalog: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``album serve --host ::1``: the app it builds answers a client that says ``Host: [::1]:PORT``."""
    served: dict[str, Any] = {}
    monkeypatch.setattr(server, "serve", lambda app, host, port, keep_alive: served.update(app=app, host=host))
    assert main(["album", "serve", "-c", str(catalog), "--host", "::1", "--port", str(PORT), "--search-processes", "0"]) == 0
    assert served["host"] == "::1"
    with TestClient(served["app"], base_url=f"http://[::1]:{PORT}") as c:
        assert c.get("/").status_code == 200
        assert c.get("/", headers={"host": f"evil.example:{PORT}"}).status_code == 400


def test_a_real_server_on_the_ipv6_loopback_answers(app: Any) -> None:
    """uvicorn bound to ``::1`` (as ``album serve --host ::1`` does), asked by an HTTP client over the socket."""
    import httpx

    with serve_on(app, "::1") as (base, port):
        assert httpx.get(f"{base}/api/people").status_code == 200
        assert httpx.get(f"{base}/api/people", headers={"host": f"[::1]:{port + 1}"}).status_code == 400


@pytest.mark.parametrize("headers", [
    {"origin": "http://evil.example"},
    {"origin": f"http://evil.example:{PORT}"},
    {"origin": f"http://127.0.0.1:{PORT + 1}"},  # another local app's page
    {"origin": f"http://localhost:{PORT}"},  # another origin, though the same machine
    {"origin": "null"},  # a sandboxed frame, a file:// page
    {"origin": f"http://127.0.0.1:{PORT}/path"},
    [("origin", f"http://127.0.0.1:{PORT}"), ("origin", "http://evil.example")],  # two origins: not one's own
    {"sec-fetch-site": "cross-site"},
    {"sec-fetch-site": "same-site"},
])
@pytest.mark.parametrize("content_type", ["application/json", "text/plain", "application/x-www-form-urlencoded"])
def test_a_state_change_from_another_origin_is_403(app: Any, headers: Any, content_type: str) -> None:
    with TestClient(app, base_url=f"http://127.0.0.1:{PORT}") as c:
        r = c.post("/api/people/p1", content=b'{"add_names": ["Eve"]}',
                   headers=[("content-type", content_type), *dict(headers).items()] if isinstance(headers, dict)
                   else [("content-type", content_type), *headers])
        assert r.status_code == 403, (headers, content_type, r.status_code, r.text)
        assert "cannot change" in r.json()["detail"]
        assert names_of(c) == ["Anna"]


@pytest.mark.parametrize("base,headers", [
    (f"http://127.0.0.1:{PORT}", {}),  # no browser page: curl, a script
    (f"http://127.0.0.1:{PORT}", {"origin": f"http://127.0.0.1:{PORT}"}),
    (f"http://127.0.0.1:{PORT}", {"origin": f"HTTP://127.0.0.1:{PORT}", "sec-fetch-site": "same-origin"}),
    (f"http://127.0.0.1:{PORT}", {"sec-fetch-site": "same-origin"}),
    (f"http://[::1]:{PORT}", {"origin": f"http://[::1]:{PORT}"}),
    (f"http://LOCALHOST:{PORT}", {"origin": f"http://localhost:{PORT}"}),
    ("http://localhost", {"origin": "http://localhost:80"}),
])
def test_the_page_s_own_state_changes_are_answered(catalog: Path, base: str, headers: dict[str, str]) -> None:
    app = create_app(catalog, engine=lambda *a, **k: None, allowed_hosts=ALLOWED, thumb_cache=False)
    with TestClient(app, base_url=base) as c:
        r = c.post("/api/people/p1", json={"add_names": ["Bo"]}, headers=headers)
        assert r.status_code == 200, (base, headers, r.text)
        assert "Bo" in names_of(c)
        c.post("/api/people/p1", json={"rename": ["Anna"]})  # the module's catalog as it was


def test_reads_and_a_remote_server_follow_the_same_origin_rule(catalog: Path) -> None:
    """A GET changes nothing, so another origin may send it (the Host rule guards reads); without
    ``allowed_hosts`` (``--allow-remote``) any Host is answered, but a POST from another origin still is not."""
    remote = create_app(catalog, engine=lambda *a, **k: None, thumb_cache=False)
    with TestClient(remote, base_url="http://photos.example:8080") as c:
        assert c.get("/api/people", headers={"origin": "http://evil.example"}).status_code == 200
        assert c.post("/api/people/p1", json={"add_names": ["Eve"]},
                      headers={"origin": "http://evil.example"}).status_code == 403
        assert c.post("/api/people/p1", json={"add_names": ["Eve"]},
                      headers={"origin": "http://photos.example:8080"}).status_code == 200
        c.post("/api/people/p1", json={"rename": ["Anna"]})


# ---------------------------------------------------------------------- a server on a real socket


@contextmanager
def serve_on(app: Any, host: str) -> Iterator[tuple[str, int]]:
    """uvicorn serving ``app`` on a free port of ``host`` in a thread: ``(base URL, port)``; skipped
    when the address cannot be bound here."""
    import socket
    import threading
    import time

    uvicorn = pytest.importorskip("uvicorn")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.bind((host, 0))
    except OSError as e:
        sock.close()
        pytest.skip(f"cannot bind {host} here ({e})")
    port = sock.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    try:
        while not srv.started:
            assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.05)
        yield (f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"), port
    finally:
        srv.should_exit = True
        thread.join(timeout=10)
        sock.close()
