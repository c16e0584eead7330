"""``finegrain album serve -c CATALOG``: the search page of a catalog (a SQLite file or a
``postgresql://`` URL) on a local port.

Binds to the loopback interface by default; another host needs ``--allow-remote``
(the page serves personal photos and has no login). Importing this module registers
nothing: the CLI root registers the command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from finegrain.cli import options as opt
from finegrain.cli import serving
from finegrain.errors import FinegrainError


def serve_command(
    catalog: str | None = opt.catalog_option(
        "Catalog file (e.g. PHOTO_DIR/.finegrain/catalog.sqlite) or Postgres URL postgresql://USER@HOST/DB."),
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to bind (loopback unless --allow-remote)."),
    port: int = typer.Option(8765, "--port", min=1, max=65535, help="TCP port."),
    allow_remote: bool = typer.Option(
        False, "--allow-remote", help="Allow a non-loopback --host (anyone who reaches it sees your photos)."
    ),
    encoder: str | None = typer.Option(
        None, "--encoder", "-e",
        help="Encoder for the visual part of queries: the one of the catalog's caption (e.g. e5) or image (clip:PATH) embeddings.",
    ),
    today: str | None = opt.today_option(),
    keep_alive: int = typer.Option(
        75, "--keep-alive", min=1, max=3600,
        help="Seconds an idle connection stays open; keep it longer than clients keep theirs (httpx: 5) "
             "or a reused connection can be closed under the client's request.",
    ),
    search_processes: int = typer.Option(
        1, "--search-processes", min=0, max=16,
        help="Worker processes for searches that are not cached (0: a thread of the server; they then "
             "compete with every other request for one interpreter).",
    ),
    legacy_catalog: str | None = opt.retired_argument("album serve -c CATALOG"),
) -> None:
    """Serve the album page over the catalog: timeline, search with removable chips, people, places, a map, photo detail."""
    from finegrain.album.engine.plan_catalog import parse_today

    catalog = opt.require_catalog(catalog, legacy_catalog)
    now = parse_today(today)
    allowed = serving.allowed_hosts(host, allow_remote, "the page has no login and serves your photos")
    from finegrain.album.engine.catalog import catalog_target, describe, is_postgres_url

    target = catalog_target(catalog)
    if not is_postgres_url(catalog) and not Path(target).is_file():
        raise FinegrainError(
            f"no catalog at {str(target)!r}", "build one with `finegrain album index PHOTO_DIR` first"
        )
    serving.check_port(host, port)
    from finegrain.album.engine.web.app import create_app

    options: dict[str, Any] = {} if now is None else {"today": now}
    if encoder and not search_processes:  # a search process builds the encoder itself
        from finegrain.retrieve.dense.encoders.registry import get_encoder

        options["encoder"] = get_encoder(encoder)
    app = create_app(target, allowed_hosts=allowed, engine_options=options, search_processes=search_processes,
                     encoder_name=encoder or None)
    from finegrain.album.engine.web.server import serve

    serving.echo_serving(describe(target), host, port)
    serve(app, host, port, keep_alive=keep_alive)
