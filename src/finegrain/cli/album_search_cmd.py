"""``finegrain album search``: the album engine from the command line.

``search`` prints the plan (the planner's ``explain()`` rows), the size of the
predicted set and the top results, or "no matching photos" and the reason when
the engine abstains; ``--json`` prints the whole result. ``album eval`` lives in
:mod:`finegrain.cli.album_eval_cmd` and reuses ``_POLICY_HELP`` and ``_encoder``.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from finegrain.cli.options import lang_option
from finegrain.errors import FinegrainError

_POLICY_HELP = (
    "When the visual part of a query cannot be checked (no caption/image embeddings): "
    "'abstain' (default), 'candidates' (return the photos meeting the time/place/people constraints) "
    "or 'one_day' (candidates when the query names a single day, else abstain)."
)


def _encoder(name: str | None):  # noqa: ANN202
    if not name:
        return None
    from finegrain.retrieve.encoders import get_encoder

    return get_encoder(name)


def search_command(
    catalog: Path = typer.Argument(..., help="A catalog file (from 'album index' or 'album import-photobench')."),
    query: str = typer.Argument(..., help="The search query, in Chinese or English."),
    lang: str | None = lang_option("Query language (default: detected):", None),
    as_json: bool = typer.Option(False, "--json", help="Print the result (plan, set, ranked list, reason) as JSON."),
    top: int = typer.Option(10, "--top", "--top-k", "-k", min=1, help="How many ranked results to print."),
    encoder: str | None = typer.Option(None, "--encoder", "-e", help="Encoder of the catalog's caption embeddings (e.g. e5) or image embeddings (clip:PATH)."),
    threshold: float | None = typer.Option(None, "--threshold", help="Visual score threshold (default: calibrated on the catalog)."),
    unverified_visual: str = typer.Option("abstain", "--unverified-visual", help=_POLICY_HELP),
    today: str | None = typer.Option(None, "--today", help="The 'now' of relative dates (YYYY-MM-DD); default: the newest photo's date, or today's when no photo is dated."),
) -> None:
    """Search CATALOG for QUERY: the photo set, a ranked list and the plan; nothing when it abstains."""
    from finegrain.album.catalog.sqlite import SqliteCatalog
    from finegrain.album.engine import search
    from finegrain.album.plan_catalog import parse_today

    now = parse_today(today)

    if not catalog.is_file():
        raise FinegrainError(f"no catalog file {catalog}", "build one with 'finegrain album index' or 'album import-photobench'")
    plan_lang = lang  # zh | en | None, checked by --lang
    store = SqliteCatalog(catalog, create=False)
    try:
        result = search(store, query, lang=plan_lang, encoder=_encoder(encoder), visual_threshold=threshold,
                        unverified_visual=unverified_visual, today=now)
        _ = result.ranked  # built on demand, from the open catalog
    finally:
        store.close()
    if as_json:
        typer.echo(json.dumps(result.to_dict(top=top), ensure_ascii=False, indent=2))
        return
    plan = result.plan
    typer.echo(f"{plan.query}  ({plan.lang})  source: {plan.source}")
    for rule, text in plan.explain():
        typer.echo(f"  {rule}: {text}")
    if result.abstained:
        typer.echo("no matching photos")
        typer.echo(f"reason: {result.reason}")
        return
    typer.echo(f"{len(result.photo_ids)} photos  ({result.reason})")
    for rank, (pid, score) in enumerate(result.ranked[:top], 1):
        typer.echo(f"{rank:>4}  {score:.3f}  {pid}")
