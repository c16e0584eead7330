"""Which requests a local page's server answers: the ``Host`` rule and the ``Origin`` rule.

Both pages finegrain serves (the album, :mod:`finegrain.album.engine.web`; the judging page,
:mod:`finegrain.build.judge`) have no login and listen on loopback by default. A web page the user
opens elsewhere can still reach such a server through the browser, in two ways:

* DNS rebinding: ``evil.example`` re-points its own name at 127.0.0.1, so its script reads the
  local server's answers as same-origin. Its requests say ``Host: evil.example:PORT``, so with a
  list of allowed names the server answers only a ``Host`` that names one of them and the port
  the request arrived on (:func:`host_refusal`); anything else, a missing or malformed ``Host``
  included, is 400. ``[::1]:8765`` is the IPv6 loopback with its port; names compare
  case-insensitively, IP literals by address.
* Cross-site request forgery: any page can send a POST to ``http://127.0.0.1:PORT`` (a
  ``text/plain`` form or ``fetch`` needs no CORS preflight). Browsers name the sending page's
  origin in ``Origin`` (and describe it in ``Sec-Fetch-Site``), so a request of a method that may
  change state (anything but GET, HEAD, OPTIONS) whose ``Origin`` is not the server's own, or
  that has no ``Origin`` but a ``Sec-Fetch-Site`` other than ``same-origin`` or ``none``, is 403
  (:func:`origin_refusal`). The check reads headers only, before any body is parsed. A request
  with neither header comes from no web page (curl, a script, the tests) and is allowed. The
  server's own origin is the one its ``Host`` names, so a reverse proxy in front of it must pass
  the browser's ``Host`` on (nginx: ``proxy_set_header Host $host``).

:class:`RequestGuard` applies both to every HTTP and WebSocket request as ASGI middleware; it needs
only the standard library. :func:`allowed_hosts` is the CLI's rule for which names a server bound
to ``--host`` answers.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Awaitable, Callable, Iterable, MutableMapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from finegrain.errors import FinegrainError

__all__ = [
    "LOOPBACK_NAMES", "RequestGuard", "allowed_hosts", "host_refusal", "is_loopback", "origin_refusal",
    "parse_authority",
]

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
#: Methods that never change state; every other method must come from the server's own origin.
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
#: ``Sec-Fetch-Site`` values of a request the page itself (or the user, typing a URL) made.
SAME_ORIGIN_SITES = frozenset({"same-origin", "none"})
DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def is_loopback(host: str) -> bool:
    """Whether ``host`` names only this machine (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


def allowed_hosts(host: str, allow_remote: bool, exposes: str) -> list[str] | None:
    """The ``Host`` names a page bound to ``host`` answers (None: any, with ``--allow-remote``); a
    non-loopback ``host`` without it is an error saying what the page ``exposes``."""
    if allow_remote:
        return None
    if not is_loopback(host):
        raise FinegrainError(
            f"--host {host!r} is not a loopback address; {exposes}",
            "use --host 127.0.0.1, or add --allow-remote if you really mean to expose it",
        )
    return [*LOOPBACK_NAMES, host]


def _host_name(name: str) -> str:
    """A host name as compared: lower-case, without IPv6 brackets, an IP literal in its short form."""
    bare = name.strip().lower()
    if bare.startswith("[") and bare.endswith("]"):
        bare = bare[1:-1]
    try:
        return str(ipaddress.ip_address(bare))
    except ValueError:
        return bare


def parse_authority(value: str, scheme: str = "http") -> tuple[str, int] | None:
    """``host[:port]`` (a ``Host`` header; an IPv6 literal in brackets, ``[::1]:8765``) as
    ``(host, port)``: the host lower-case, without brackets, an IP literal in its short form; the
    port defaulting to ``scheme``'s. None when it is not one host and port (user info, a path,
    a bad port, an IPv6 address without brackets)."""
    if not value or any(c in value for c in "/?#@\\ \t") or not value.isprintable():
        return None
    try:
        parts = urlsplit(f"//{value}")
        port = parts.port if parts.port is not None else DEFAULT_PORTS.get(scheme.lower())
    except ValueError:
        return None
    host = parts.hostname
    if not host or port is None or parts.netloc != value:
        return None
    if value.startswith("["):
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            return None
    elif ":" in host:
        return None
    return _host_name(host), port


def _origin(value: str) -> tuple[str, int] | None:
    """An ``Origin`` header (``scheme://host[:port]``) as ``(host, port)``; None for ``null`` or a bad one."""
    try:
        parts = urlsplit(value)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or parts.path or parts.query or parts.fragment:
        return None
    return parse_authority(parts.netloc, parts.scheme)


def _shown(value: str, width: int = 100) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 4] + "...'"


def _headers(scope: Scope, name: bytes) -> list[str]:
    return [v.decode("latin-1") for k, v in scope.get("headers", ()) if k.lower() == name]


def _server_port(scope: Scope) -> int | None:
    server = scope.get("server")
    if server and len(server) > 1 and isinstance(server[1], int):
        return server[1]
    return None


def host_refusal(scope: Scope, allowed: Iterable[str]) -> str | None:
    """Why the request of ``scope`` (an ASGI HTTP or WebSocket scope) is refused by the ``Host``
    rule for the names ``allowed``, or None when its ``Host`` names one of them and the port it
    came in on."""
    values = _headers(scope, b"host")
    names = sorted({_host_name(a) for a in allowed})
    where = f"{', '.join(names)} on port {_server_port(scope)}" if _server_port(scope) else ", ".join(names)
    if len(values) != 1:
        return (f"the request has {len(values)} Host headers; this server answers one Host header naming "
                f"{where}")
    found = parse_authority(values[0], scope.get("scheme", "http"))
    if found is None:
        return f"the Host header {_shown(values[0])} is not a host and port; this server answers {where}"
    host, port = found
    port_here = _server_port(scope)
    if host not in names or (port_here is not None and port != port_here):
        return (f"the Host header {_shown(values[0])} does not name this server; open the page by one of "
                f"{where} (a page that re-points its own name at this machine is refused so)")
    return None


def origin_refusal(scope: Scope) -> str | None:
    """Why the request of ``scope`` is refused by the ``Origin`` rule, or None: a method that may
    change state (a WebSocket counts as one) must come from the server's own origin, said by
    ``Origin``, or, without it, by ``Sec-Fetch-Site``; a request with neither is allowed."""
    websocket = scope.get("type") == "websocket"
    method = "WebSocket" if websocket else str(scope.get("method", "GET")).upper()
    if not websocket and method in SAFE_METHODS:
        return None
    origins = _headers(scope, b"origin")
    if not origins:
        sites = {s.strip().lower() for s in _headers(scope, b"sec-fetch-site")}
        if sites - SAME_ORIGIN_SITES:
            return (f"a {method} request sent by another site's page (Sec-Fetch-Site: "
                    f"{', '.join(sorted(sites))}) cannot change this server's data; use the page this server serves")
        return None
    scheme = "https" if scope.get("scheme") in ("https", "wss") else "http"
    hosts = _headers(scope, b"host")
    own = parse_authority(hosts[0], scheme) if len(hosts) == 1 else None
    if len(origins) != 1 or own is None or _origin(origins[0]) != own:
        here = f"{scheme}://{hosts[0]}" if own is not None else "this server"
        return (f"a {method} request from the page at {_shown(', '.join(origins))} cannot change this server's "
                f"data; only pages of {_shown(here)} can (open the page this server serves)")
    return None


async def _refuse(scope: Scope, send: Send, status: int, detail: str) -> None:
    """Answer ``status`` with ``{"detail": ...}`` (a WebSocket is closed before it opens)."""
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008, "reason": detail[:120]})
        return
    body = json.dumps({"detail": detail}, ensure_ascii=False).encode("utf-8")
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode("ascii")),
        (b"cache-control", b"no-store"),
    ]})
    await send({"type": "http.response.body", "body": body})


class RequestGuard:
    """ASGI middleware: the ``Host`` rule (400) when ``allowed_hosts`` is given (None: any host),
    then the ``Origin`` rule (403), before the app sees the request (see the module docstring)."""

    def __init__(self, app: ASGIApp, allowed_hosts: Sequence[str] | None = None) -> None:
        self.app = app
        self.allowed_hosts = None if allowed_hosts is None else tuple(allowed_hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            if self.allowed_hosts is not None:
                why = host_refusal(scope, self.allowed_hosts)
                if why is not None:
                    await _refuse(scope, send, 400, why)
                    return
            why = origin_refusal(scope)
            if why is not None:
                await _refuse(scope, send, 403, why)
                return
        await self.app(scope, receive, send)
