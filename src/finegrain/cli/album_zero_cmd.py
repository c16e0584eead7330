"""``finegrain album zero-answer``: queries no photo of a PhotoBench album answers, with proofs.

Thin over :func:`finegrain.album.bench.zero_answer.make_zero_answer`: imports the album
into a temporary catalog per language (people's names differ by language),
writes ``{"queries": [...], "provenance": {...}}`` to ``--out`` and prints how
many queries of each kind it made. ``finegrain album eval --queries FILE`` scores
the engine on them. Registered by the CLI root, :mod:`finegrain.cli.app`.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import typer

from finegrain.cli import options as opt


def zero_answer_command(
    photobench: Path = typer.Option(..., "--photobench", "-p", help="A PhotoBench album folder."),
    n: int = typer.Option(100, "--n", help="How many zero-answer queries per language."),
    seed: int = typer.Option(0, "--seed", help="Seed of the draw; the same seed gives the same queries."),
    out: Path = typer.Option(..., "--out", "-o", help="JSON file to write (parent folders are created)."),
    lang: str | None = opt.lang_option(
        "Language of the queries; left out, both (one query per language and injection).", default=None),
) -> None:
    """Turn answerable metadata/face queries of a PhotoBench album into queries no photo answers."""
    import tempfile

    from finegrain.album.bench.zero_answer import check_count, make_zero_answer, parse_langs, write_zero_answer
    from finegrain.album.engine.catalog import open_catalog
    from finegrain.album.engine.photobench import import_photobench
    from finegrain.io.photobench import read_album
    from finegrain.version import __version__

    codes = parse_langs(lang or "both")
    check_count(n)
    album = read_album(photobench)
    with tempfile.TemporaryDirectory(prefix="finegrain-zero-") as tmp:
        stores = {code: open_catalog(Path(tmp) / f"{album.name}-{code}.sqlite") for code in codes}
        try:
            for code, store in stores.items():
                import_photobench(photobench, store, lang=code)
            queries = make_zero_answer(stores, album.queries, n=n, seed=seed, langs=codes)
        finally:
            for store in stores.values():
                store.close()
    provenance = {
        "generator": "finegrain album zero-answer",
        "finegrain_version": __version__,
        "method": "constraint injection (PhotoBench App. A.4/A.5 M2), each answer proven empty on the album's catalog",
        "album": album.name,
        "album_path": str(photobench.resolve()),
        "seed": seed,
        "n": n,
        "langs": list(codes),
    }
    write_zero_answer(out, queries, provenance)
    kinds = Counter(q.injected.kind for q in queries if q.lang == codes[0])
    sources = len({q.source_id for q in queries})
    typer.echo(f"{len(queries)} zero-answer queries ({n} per language: {', '.join(codes)}) from {sources} "
               f"source queries of {album.name}, seed {seed}")
    typer.echo("  " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    typer.echo(f"wrote {out}")
