"""Serving a local page from the CLI: loopback by default, ``Host`` headers checked, one uvicorn call.

The album page and the judging page have no login; binding anything but a
loopback address needs ``--allow-remote``, and without it only requests naming
this machine are answered (a DNS-rebinding page cannot reach them). The rules
(:func:`allowed_hosts`, :func:`is_loopback`) live in :mod:`finegrain.web_guard`,
beside the middleware that applies them.
"""

from __future__ import annotations

import errno
import socket
from typing import Any

import typer

from finegrain._lazy import require
from finegrain.errors import FinegrainError
from finegrain.web_guard import LOOPBACK_NAMES, allowed_hosts, is_loopback

__all__ = ["LOOPBACK_NAMES", "allowed_hosts", "check_port", "echo_serving", "is_loopback", "serve", "url"]


def url(host: str, port: int) -> str:
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/"


def serve(app: Any, host: str, port: int, extra: str) -> None:
    """Run ``app`` with uvicorn on ``host:port`` until Ctrl-C (``extra``: the finegrain extra with uvicorn)."""
    uvicorn = require("uvicorn", extra)
    uvicorn.run(app, host=host, port=port, log_level="warning")


def echo_serving(what: str, host: str, port: int, note: str = "") -> None:
    typer.echo(f"serving {what} on {url(host, port)}  (Ctrl-C to stop{note})")


def check_port(host: str, port: int) -> None:
    """Bind ``host:port`` once and let it go, so that a port in use (or an address this machine lacks) is one
    ``error:`` line naming it and the fix, before anything says "serving" (uvicorn would log its own error
    and exit instead). Bound as uvicorn binds (``SO_REUSEADDR``): only a listening socket makes it busy."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                raise FinegrainError(f"port {port} on {host} is already in use",
                                     f"pass another --port, e.g. --port {port + 1 if port < 65535 else 8765}, "
                                     f"or stop the program listening on {port}") from None
            raise FinegrainError(f"cannot listen on {url(host, port)}: {e.strerror or e}",
                                 "pass a --host of this machine (127.0.0.1 by default) and a --port above 1023") from None
