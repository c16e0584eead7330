"""``finegrain album search``: the album engine from the command line.

``search`` prints the plan (the planner's ``explain()`` rows), the size of the
predicted set and the top results — rank, local date and time, place and people in
the query's language, file name (the visual score only when the list is ranked by
one) — or "no matching photos", the reason and any "did you mean …?" when the
engine abstains; ``--json`` prints the whole result. ``album eval`` lives in
:mod:`finegrain.cli.album_eval_cmd` and reuses ``_POLICY_HELP``, ``_encoder`` and ``holiday_option``
(``--holiday span|day``, also on ``album plan``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import PurePath
from typing import Any

import typer

from finegrain.cli import options as opt

DEFAULT_TOP_K = 10
_POLICY_HELP = (
    "When the visual part of a query cannot be checked (no caption/image embeddings): "
    "'abstain' (default), 'candidates' (return the photos meeting the time/place/people constraints) "
    "or 'one_day' (candidates when the query names a single day, else abstain)."
)


_HOLIDAY_HELP = (
    "How a statutory holiday with a year reads ('National Day 2021', '2023年劳动节'): 'span' (default: its "
    "official days off, the weekend joined) or 'day' (the holiday's own day)."
)


def holiday_option() -> Any:
    """``--holiday span|day``, checked when parsed (one ``error:`` line for another value)."""
    return typer.Option("span", "--holiday", help=_HOLIDAY_HELP, callback=_holiday, metavar="span|day")


def _holiday(value: str) -> str:
    from finegrain.album.engine.plan.holidays import check_holiday_reading

    return check_holiday_reading(value.strip().lower())


def _encoder(name: str | None) -> Any:  # an Encoder, or None
    if not name:
        return None
    from finegrain.retrieve.dense.encoders import get_encoder

    return get_encoder(name)


def search_command(
    query: str = typer.Argument(..., help="The search query, in Chinese or English."),
    legacy_query: str | None = opt.retired_argument("album search -c CATALOG QUERY"),
    catalog: str | None = opt.catalog_option(
        "The catalog (from 'album index' or 'album import-photobench'): a file or a postgresql://USER@HOST/DB URL."),
    lang: str | None = opt.lang_option("Query language (default: detected):", None),
    as_json: bool = typer.Option(False, "--json", help="Print the result (plan, set, ranked list, reason) as JSON."),
    top_k: int | None = opt.top_k_option("How many ranked results to print (default 10)."),
    encoder: str | None = typer.Option(None, "--encoder", "-e", help="Encoder of the catalog's caption embeddings (e.g. e5) or image embeddings (clip:PATH)."),
    threshold: float | None = typer.Option(None, "--threshold", help="Visual score threshold (default: calibrated on the catalog)."),
    unverified_visual: str = typer.Option("abstain", "--unverified-visual", help=_POLICY_HELP),
    today: str | None = opt.today_option(),
    holiday: str = holiday_option(),
    top: int | None = opt.retired_option("--top", "-k/--top-k", min=1),
) -> None:
    """Search the catalog for QUERY: the photo set, a ranked list and the plan; nothing when it abstains."""
    from finegrain.album.engine.catalog import catalog_target, open_catalog
    from finegrain.album.engine.plan_catalog import parse_today
    from finegrain.album.engine.search import search

    if legacy_query is not None:  # album search CATALOG QUERY, the retired form
        query, legacy_catalog = legacy_query, query
    else:
        legacy_catalog = None
    catalog = opt.require_catalog(catalog, legacy_catalog)
    top = opt.either(top_k, top, "-k/--top-k", "--top") or DEFAULT_TOP_K
    now = parse_today(today)

    plan_lang = lang  # zh | en | None, checked by --lang
    store = open_catalog(catalog_target(catalog), create=False)
    try:
        result = search(store, query, lang=plan_lang, encoder=_encoder(encoder), visual_threshold=threshold,
                        unverified_visual=unverified_visual, today=now, holiday=holiday)
        _ = result.ranked  # built on demand, from the open catalog
        hits = [] if as_json or result.abstained else hit_rows(store, result.ranked[:top], result.plan.lang,
                                                                scored=result.best_visual is not None)
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
        for line in _suggestions(plan, result.reason):
            typer.echo(line)
        return
    typer.echo(f"{len(result.photo_ids)} photos  ({result.reason})")
    for line in hits:
        typer.echo(line)


def _suggestions(plan: Any, reason: str) -> list[str]:
    """"did you mean …?" lines for the people and places of the query the album lacks (the plan's
    ``unknown`` mentions), unless the reason already says it."""
    out = []
    for u in getattr(plan, "unknown", ()):
        if u.suggestion and u.suggestion not in reason:
            out.append(f"no {u.kind} {u.text!r} in the album; did you mean {u.suggestion!r}?")
    return out


def hit_rows(store: Any, ranked: Sequence[tuple[str, float]], lang: str, *, scored: bool) -> list[str]:
    """One line per hit: rank, local date and time, place and people in the query language
    (``lang``: "zh" or "en"), file name; the visual score only when the ranking is by one
    (``scored``), since a list ordered by time has no score worth reading."""
    names = {p.id: p for p in store.people()}
    rows = []
    for rank, (pid, score) in enumerate(ranked, 1):
        photo = store.get_photo(pid)
        when = photo.taken_at.strftime("%Y-%m-%d %H:%M") if photo is not None and photo.taken_at else "(no date)"
        where = place_label(store.get_place(pid), lang) or "(no place)"
        people = [person_label(names[f.person_id], lang) for f in store.faces(pid)
                  if f.person_id is not None and f.person_id in names]
        who = ", ".join(dict.fromkeys(people)) or "-"
        file = PurePath(photo.path).name if photo is not None and photo.path else pid
        score_col = f"  {score:.3f}" if scored else ""
        rows.append(f"{rank:>4}{score_col}  {when:<16}  {where}  |  {who}  |  {file}")
    return rows


def place_label(place: Any, lang: str) -> str:
    """A photo's place in ``lang``: "深圳市盐田区" / "Yantian District, Shenzhen"; the country
    too outside China; the other language's names where this one has none."""
    if place is None:
        return ""
    first, second = ("zh", "en") if lang == "zh" else ("en", "zh")

    def name(level: str) -> str:
        return getattr(place, f"{level}_{first}") or getattr(place, f"{level}_{second}") or ""

    parts = [name("district"), name("city")]
    if not parts[0] and not parts[1]:
        parts.append(name("province"))
    if (place.country_code or "").upper() not in ("CN", ""):
        parts.append(name("country"))
    parts = [p for p in dict.fromkeys(parts) if p]
    if lang == "zh":
        return "".join(reversed(parts)) if all(_has_cjk(p) for p in parts) else ", ".join(parts)
    return ", ".join(parts)


def person_label(person: Any, lang: str) -> str:
    """A person's first name in the script of ``lang`` (Chinese for "zh"), else the display name
    ("我" for the owner in Chinese when the owner has no Chinese name)."""
    for n in person.names:
        if _has_cjk(n) == (lang == "zh"):
            return str(n)
    if person.is_me and lang == "zh":
        return "我"
    return str(person.display_name)


def _has_cjk(text: str) -> bool:
    from finegrain.text.lang import has_cjk

    return has_cjk(text)
