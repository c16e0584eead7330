"""The Host and Origin rules of the local pages (finegrain.web_guard) on raw ASGI scopes, without
FastAPI: how a Host header is read, which requests reach the app, and what a refused one gets
(the app-level tests are tests/album/engine/test_album_web_guard.py and tests/build/test_build_judge_guard.py)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from finegrain.errors import FinegrainError
from finegrain.web_guard import LOOPBACK_NAMES, RequestGuard, allowed_hosts, parse_authority

PORT = 8765


@pytest.mark.parametrize("value,scheme,expect", [
    ("[::1]:8080", "http", ("::1", 8080)),
    ("[0:0:0:0:0:0:0:1]", "http", ("::1", 80)),
    ("LocalHost:8765", "http", ("localhost", 8765)),
    ("127.0.0.1", "https", ("127.0.0.1", 443)),
    ("localhost:", "http", ("localhost", 80)),
    ("::1", "http", None), ("::1:8080", "http", None), ("[::1", "http", None), ("[::g]:80", "http", None),
    ("[127.0.0.1]:80", "http", None), ("a@localhost", "http", None), ("localhost:80/x", "http", None),
    ("localhost:99999", "http", None), ("localhost:+80", "http", None), ("", "http", None), (" localhost", "http", None),
    ("localhost", "gopher", None),
])
def test_parse_authority(value: str, scheme: str, expect: tuple[str, int] | None) -> None:
    assert parse_authority(value, scheme) == expect


def test_the_cli_answers_loopback_names_only_unless_told() -> None:
    assert allowed_hosts("::1", False, "x") == [*LOOPBACK_NAMES, "::1"]
    assert allowed_hosts("0.0.0.0", True, "x") is None
    with pytest.raises(FinegrainError, match="not a loopback address; the page shows photos"):
        allowed_hosts("0.0.0.0", False, "the page shows photos")


def _run(scope_type: str, headers: list[tuple[bytes, bytes]], method: str = "GET") -> tuple[bool, list[dict[str, Any]]]:
    """Whether the guarded app was reached, and what was sent back."""
    reached: list[bool] = []
    sent: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append(True)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": scope_type, "method": method, "scheme": "ws" if scope_type == "websocket" else "http",
             "path": "/", "headers": headers, "server": ("127.0.0.1", PORT)}
    asyncio.run(RequestGuard(app, allowed_hosts=LOOPBACK_NAMES)(scope, receive, send))
    return bool(reached), sent


HOST = (b"host", f"127.0.0.1:{PORT}".encode())


def test_refusals_are_json_4xx_and_the_app_never_sees_them() -> None:
    assert _run("http", [HOST], "POST") == (True, [])
    assert _run("http", [HOST, (b"origin", f"http://127.0.0.1:{PORT}".encode())], "DELETE") == (True, [])
    for headers, method, status in [([(b"host", b"evil.example")], "GET", 400), ([], "GET", 400),
                                    ([HOST, (b"origin", b"http://evil.example")], "PUT", 403),
                                    ([HOST, (b"sec-fetch-site", b"cross-site")], "PATCH", 403)]:
        reached, sent = _run("http", headers, method)
        assert not reached and sent[0]["status"] == status, (headers, method)
        assert dict(sent[0]["headers"])[b"content-type"] == b"application/json"
        assert json.loads(sent[1]["body"])["detail"]


def test_a_websocket_from_another_origin_is_closed_before_it_opens() -> None:
    assert _run("websocket", [HOST, (b"origin", f"http://127.0.0.1:{PORT}".encode())]) == (True, [])
    reached, sent = _run("websocket", [HOST, (b"origin", b"http://evil.example")])
    assert not reached and sent[0]["type"] == "websocket.close" and sent[0]["code"] == 1008
