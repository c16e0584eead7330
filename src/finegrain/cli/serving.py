"""Serving a local page from the CLI: loopback by default, ``Host`` headers checked, one uvicorn call.

The album page and the judging page have no login; binding anything but a
loopback address needs ``--allow-remote``, and without it only requests naming
this machine are answered (a DNS-rebinding page cannot reach them). The rules
(:func:`allowed_hosts`, :func:`is_loopback`) live in :mod:`finegrain.web_guard`,
beside the middleware that applies them.
"""

from __future__ import annotations

from typing import Any

import typer

from finegrain._lazy import require
from finegrain.web_guard import LOOPBACK_NAMES, allowed_hosts, is_loopback

__all__ = ["LOOPBACK_NAMES", "allowed_hosts", "echo_serving", "is_loopback", "serve", "url"]


def url(host: str, port: int) -> str:
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/"


def serve(app: Any, host: str, port: int, extra: str) -> None:
    """Run ``app`` with uvicorn on ``host:port`` until Ctrl-C (``extra``: the finegrain extra with uvicorn)."""
    uvicorn = require("uvicorn", extra)
    uvicorn.run(app, host=host, port=port, log_level="warning")


def echo_serving(what: str, host: str, port: int, note: str = "") -> None:
    typer.echo(f"serving {what} on {url(host, port)}  (Ctrl-C to stop{note})")
