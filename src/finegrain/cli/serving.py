"""Serving a local page from the CLI: loopback by default, ``Host`` headers checked, one uvicorn call.

The album page and the judging page have no login; binding anything but a
loopback address needs ``--allow-remote``, and without it only requests naming
this machine are answered (a DNS-rebinding page cannot reach them).
"""

from __future__ import annotations

import ipaddress
from typing import Any

import typer

from finegrain._lazy import require
from finegrain.errors import FinegrainError

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


def is_loopback(host: str) -> bool:
    """Whether ``host`` names only this machine (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def allowed_hosts(host: str, allow_remote: bool, exposes: str) -> list[str] | None:
    """The ``Host`` headers the page may answer (None: any, with ``--allow-remote``); a
    non-loopback ``host`` without it is an error saying what the page ``exposes``."""
    if allow_remote:
        return None
    if not is_loopback(host):
        raise FinegrainError(
            f"--host {host!r} is not a loopback address; {exposes}",
            "use --host 127.0.0.1, or add --allow-remote if you really mean to expose it",
        )
    return [*LOOPBACK_NAMES, host]


def url(host: str, port: int) -> str:
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/"


def serve(app: Any, host: str, port: int, extra: str) -> None:
    """Run ``app`` with uvicorn on ``host:port`` until Ctrl-C (``extra``: the finegrain extra with uvicorn)."""
    uvicorn = require("uvicorn", extra)
    uvicorn.run(app, host=host, port=port, log_level="warning")


def echo_serving(what: str, host: str, port: int, note: str = "") -> None:
    typer.echo(f"serving {what} on {url(host, port)}  (Ctrl-C to stop{note})")
