"""Serving the album app with uvicorn: one place for the server's settings.

Keep-alive. uvicorn closes a connection that stays idle ``timeout_keep_alive`` seconds after a
response; its default is 5 s, exactly the idle expiry of httpx's pool (``keepalive_expiry``,
5 s). Clients check a pooled socket before reusing it, but when the server's close and the
client's next request cross on the wire, the request goes out on a socket the server is
closing and the client reads "Server disconnected without sending a response" (httpx
``RemoteProtocolError``; urllib3 "RemoteDisconnected"), so a reuse just at 5 s can fail. A
client that does not check the socket fails on every reuse after 5 s. ``benchmarks/album_web_load.py``
measures both with its idle probe (``--serve-arg=--keep-alive=5`` against the default; figures in
``docs/results/album.md``). HTTP/1.1 gives the server no way to warn the client, so the fix is the rule proxies follow:
the server keeps idle connections longer than clients do, so the client is always the side
that closes an idle connection. :data:`KEEP_ALIVE_S` is 75 s (nginx's default), longer than
httpx (5 s) and aiohttp (15 s) keep idle connections; browsers, which keep them longer,
retry a GET that fails on a reused connection. The page's few connections on loopback cost
nothing to hold.
"""

from __future__ import annotations

from typing import Any

from finegrain._lazy import require
from finegrain.errors import FinegrainError

KEEP_ALIVE_S = 75


def uvicorn_config(app: Any, host: str, port: int, *, keep_alive: int = KEEP_ALIVE_S,
                   log_level: str = "warning", **overrides: Any) -> Any:
    """The ``uvicorn.Config`` the album page is served with (see the module docstring)."""
    uvicorn = require("uvicorn", "web")
    if keep_alive <= 0:
        raise FinegrainError(f"keep-alive must be a positive number of seconds, got {keep_alive!r}",
                             f"use the default {KEEP_ALIVE_S} (longer than clients keep idle connections)")
    return uvicorn.Config(app, host=host, port=port, log_level=log_level, timeout_keep_alive=keep_alive,
                          access_log=False, server_header=False, **overrides)


def serve(app: Any, host: str, port: int, *, keep_alive: int = KEEP_ALIVE_S) -> None:
    """Run ``app`` on ``host:port`` until Ctrl-C."""
    uvicorn = require("uvicorn", "web")
    uvicorn.Server(uvicorn_config(app, host, port, keep_alive=keep_alive)).run()
