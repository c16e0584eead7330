"""``finegrain album plan "QUERY"`` and ``finegrain album eval-routing``: the query planner.

``plan`` prints the plan of one query (the rules that fired, the constraints, the
source type) or its JSON; ``eval-routing`` reports how often the predicted source
type matches the ``Source`` label of every PhotoBench query, with the confusion
matrix. Importing this module adds both commands to ``finegrain album``.
"""

from __future__ import annotations

import json
import os
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from finegrain.cli import options as opt
from finegrain.cli.album_search_cmd import holiday_option
from finegrain.errors import FinegrainError

if TYPE_CHECKING:
    from finegrain.album.bench.routing import RoutingReport
    from finegrain.album.engine.plan.records import Plan
    from finegrain.album.engine.plan.vocabulary import AlbumVocabulary

LLM_URL_ENV = "FINEGRAIN_LLM_URL"
LLM_MODEL_ENV = "FINEGRAIN_LLM_MODEL"
LLM_KEY_ENV = "FINEGRAIN_LLM_API_KEY"


def _vocabulary(photobench: Path | None, lang: str, today: str | None) -> AlbumVocabulary:
    from finegrain.album.engine.plan.records import PlaceKey
    from finegrain.album.engine.plan.vocabulary import AlbumVocabulary, builtin_gazetteer
    from finegrain.album.engine.plan_catalog import parse_today

    if photobench is not None:
        from finegrain.io.photobench import read_album

        return AlbumVocabulary.from_photobench(read_album(photobench), lang)
    latest = parse_today(today) or date.today()
    known = {a: PlaceKey(g.level, g.name_zh) for g in builtin_gazetteer() for a in g.aliases()}
    return AlbumVocabulary.build(people={}, places={}, latest_date=latest, known_places=known)


def plan_command(
    query: str = typer.Argument(..., help="The search query, in Chinese or English."),
    photobench: Path | None = typer.Option(
        None, "--photobench", "-p", help="A PhotoBench album folder whose people, places and dates the plan uses."
    ),
    lang: str | None = opt.lang_option("Query language (default: detected):", None),
    today: str | None = typer.Option(
        None, "--today", metavar="YYYY-MM-DD",
        help="Without --photobench: the 'now' of relative dates (default: today's date)."),
    as_json: bool = typer.Option(False, "--json", help="Print the plan as JSON."),
    llm_url: str | None = typer.Option(
        None, "--llm-url", help=f"OpenAI-compatible base URL (…/v1) of an LLM planner; default ${LLM_URL_ENV}; rules when unset."
    ),
    llm_model: str | None = typer.Option(None, "--llm-model", help=f"Model name for --llm-url (default ${LLM_MODEL_ENV})."),
    holiday: str = holiday_option(),
    now: str | None = opt.retired_option("--now", "--today"),
) -> None:
    """Print the plan of QUERY: time ranges, places, people, event words, visual text, source type."""
    from finegrain.album.engine.plan import LLMConfig, plan_query, plan_query_llm

    vocab = _vocabulary(photobench, lang or "en", opt.either(today, now, "--today", "--now"))
    url = llm_url or os.environ.get(LLM_URL_ENV)
    if url:
        model = llm_model or os.environ.get(LLM_MODEL_ENV)
        if not model:
            raise FinegrainError("an LLM planner needs a model name", f"give --llm-model or set {LLM_MODEL_ENV}")
        plan = plan_query_llm(query, vocab, LLMConfig(url, model, os.environ.get(LLM_KEY_ENV)), lang=lang)
    else:
        plan = plan_query(query, vocab, lang=lang, holiday=holiday)
    if as_json:
        typer.echo(plan.to_json())
        return
    _print_plan(plan)


def _print_plan(plan: Plan) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.print(f"[bold]{plan.query}[/bold]  ({plan.lang}, planner: {plan.planner})  source: [bold]{plan.source}[/bold]")
    if plan.fallback_reason:
        console.print(f"[yellow]{plan.fallback_reason}[/yellow]")
    table = Table("rule", "matched text")
    for rule, text in plan.explain():
        table.add_row(rule, text)
    console.print(table)
    for r in plan.time_ranges:
        span = f"{r.start:%m-%d}..{r.end:%m-%d} every year" if r.every_year else f"{r.start}..{r.end}"
        extra = "".join(
            [f", hours {r.hours[0]}-{r.hours[1]}" if r.hours else "", f", weekdays {list(r.weekdays)}" if r.weekdays else ""]
        )
        console.print(f"time:   {span}{extra}  ({r.text})")
    for place in plan.places:
        console.print(f"place:  {place.place.level} {place.place.name}  ({place.text}{'' if place.in_album else ', no photo there'})")
    for person in plan.people:
        console.print(f"person: {person.person_id}  ({person.text})")
    for role in plan.roles:
        console.print(f"role:   {role}")
    for u in plan.unknown:
        hint = f", did you mean {u.suggestion!r}?" if u.suggestion else ""
        console.print(f"[yellow]{u.kind}: {u.text!r} is not in the album{hint}[/yellow]")
    if plan.event_words:
        console.print(f"events: {', '.join(plan.event_words)}")
    console.print(f"visual: {plan.visual_text or '-'}")


def eval_routing_command(
    photobench: Path = typer.Option(..., "--photobench", "-p", help="A PhotoBench album folder (its *_query.json have Source labels)."),
    lang: str = opt.lang_option("Query language:"),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON (with every query)."),
    errors: int = typer.Option(0, "--errors", help="Also list up to this many misrouted queries."),
) -> None:
    """Accuracy of the predicted source type (V, M, F, VM, VF, MF, VMF) against the labels."""
    from finegrain.album.bench.routing import evaluate_routing
    from finegrain.io.photobench import read_album

    report = evaluate_routing(read_album(photobench), lang)
    if as_json:
        typer.echo(json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
        return
    _print_routing(report, errors)


def _print_routing(report: RoutingReport, errors: int) -> None:
    from rich.console import Console
    from rich.table import Table

    from finegrain.album.engine.plan.records import SOURCE_TYPES

    console = Console()
    console.print(
        f"routing accuracy, {report.album} ({report.lang}): [bold]{report.accuracy:.3f}[/bold] "
        f"({report.correct}/{report.n} queries)"
    )
    for half in ("even", "odd"):
        c, n = report.halves[half]
        what = "design half" if half == "even" else "held-out half"
        console.print(f"  {half}-indexed queries ({what}): {c / n if n else 0:.3f} ({c}/{n})")
    table = Table(title="confusion matrix (rows: label, columns: predicted)")
    table.add_column("label")
    for label in SOURCE_TYPES:
        table.add_column(label, justify="right")
    table.add_column("total", justify="right")
    for gold in SOURCE_TYPES:
        row = report.confusion[gold]
        cells = [f"[bold]{row[p]}[/bold]" if p == gold else (str(row[p]) if row[p] else ".") for p in SOURCE_TYPES]
        table.add_row(gold, *cells, str(sum(row.values())))
    console.print(table)
    scores = Table("label", "precision", "recall", "predicted", "support", title="per label")
    for s in report.per_label:
        scores.add_row(s.label, _fmt(s.precision), _fmt(s.recall), str(s.predicted), str(s.support))
    console.print(scores)
    if report.by_class:
        parts = [f"{tag} {c / n:.3f} ({c}/{n})" for tag, (c, n) in report.by_class.items()]
        console.print(f"by query class ({report.class_origin}): " + "; ".join(parts))
    if errors:
        wrong = [r for r in report.per_query if r[2] != r[3]][:errors]
        for qid, text, gold, pred in wrong:
            console.print(f"{qid}  label {gold:<3} predicted {pred:<3} {text}")


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"
