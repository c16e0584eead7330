"""``finegrain album serve CATALOG``: the search page of a catalog on a local port.

Binds to the loopback interface by default; another host needs ``--allow-remote``
(the page serves personal photos and has no login). Importing this module adds
the command to ``finegrain album``.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path

import typer

from finegrain.errors import FinegrainError, MissingDependencyError

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


def is_loopback(host: str) -> bool:
    """Whether ``host`` names only this machine (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def serve_command(
    catalog: Path = typer.Argument(..., help="Catalog file (e.g. PHOTO_DIR/.finegrain/catalog.sqlite)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to bind (loopback unless --allow-remote)."),
    port: int = typer.Option(8765, "--port", min=1, max=65535, help="TCP port."),
    allow_remote: bool = typer.Option(
        False, "--allow-remote", help="Allow a non-loopback --host (anyone who reaches it sees your photos)."
    ),
    encoder: str | None = typer.Option(
        None, "--encoder", "-e",
        help="Encoder for the visual part of queries: the one of the catalog's caption (e.g. e5) or image (clip:PATH) embeddings.",
    ),
    today: str | None = typer.Option(None, "--today", help="The 'now' of relative dates (YYYY-MM-DD); default: the newest photo's date, or today's when no photo is dated."),
) -> None:
    """Serve a search page over CATALOG: a search box, the plan as chips, a grid of thumbnails."""
    from finegrain.album.plan_catalog import parse_today

    now = parse_today(today)
    if not is_loopback(host) and not allow_remote:
        raise FinegrainError(
            f"--host {host!r} is not a loopback address; the page has no login and serves your photos",
            "use --host 127.0.0.1, or add --allow-remote if you really mean to expose it",
        )
    if not catalog.is_file():
        raise FinegrainError(
            f"no catalog at {str(catalog)!r}", "build one with `finegrain album index PHOTO_DIR` first"
        )
    try:
        import uvicorn
    except ImportError as e:
        raise MissingDependencyError("uvicorn", "web") from e
    from finegrain.album.web.app import create_app

    options: dict = {} if now is None else {"today": now}
    if encoder:
        from finegrain.retrieve.encoders.registry import get_encoder

        options["encoder"] = get_encoder(encoder)
    allowed = None if allow_remote else [*LOOPBACK_NAMES, host]
    app = create_app(catalog, allowed_hosts=allowed, engine_options=options)
    shown = f"[{host}]" if ":" in host else host
    typer.echo(f"serving {catalog} on http://{shown}:{port}/  (Ctrl-C to stop)")
    uvicorn.run(app, host=host, port=port, log_level="warning")
