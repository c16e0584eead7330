"""``finegrain judge ...``: judge a pool on a local page, export the grades as qrels, measure agreement.

* ``finegrain judge POOL --db DB --serve`` (short for ``finegrain judge open ...``): the judging
  page; without ``--serve``, each annotator's progress;
* ``finegrain judge export --db DB --out qrels.trec [--method majority|adjudicate]`` (``--out qrels.tsv``:
  BEIR qrels, whose ids may hold spaces);
* ``finegrain judge agreement --db DB``.

The ``judge`` group (:class:`JudgeGroup`) and its verbs are registered by the CLI root,
:mod:`finegrain.cli.app`. The work is done by :mod:`finegrain.build.judge`.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperGroup

from finegrain.cli import serving
from finegrain.cli.options import out_option
from finegrain.errors import FinegrainError

DEFAULT_COMMAND = "open"
DEFAULT_PORT = 8766


class JudgeGroup(TyperGroup):
    """The ``judge`` group: a first word that is not a sub-command is the pool of ``open``.

    So ``finegrain judge POOL --db DB --serve`` and ``finegrain judge export --db DB ...`` both work.
    """

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = [DEFAULT_COMMAND, *args]
        return super().parse_args(ctx, args)


def _db_option(help: str = "The judgments database (SQLite), one per pool.") -> Any:
    return typer.Option(..., "--db", help=help, dir_okay=False)


def _pool(path: Path, commands: tuple[str, ...] = ("export", "agreement", "open")) -> Any:
    from finegrain.build.pool_file import read_pool

    if not path.exists():
        close = difflib.get_close_matches(str(path), commands, n=1, cutoff=0.6)
        if close:
            raise FinegrainError(f"no pool file {str(path)!r}", f"did you mean `finegrain judge {close[0]}`?")
    return read_pool(path)


def open_command(
    pool: Path = typer.Argument(..., help="The pool file (finegrain.pool/1) to judge.", dir_okay=False),
    db: Path = _db_option("The judgments database (SQLite; created on the first --serve), one per pool."),
    serve: bool = typer.Option(False, "--serve", help="Start the judging page (else: print each annotator's progress)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to bind (loopback unless --allow-remote)."),
    port: int = typer.Option(DEFAULT_PORT, "--port", min=1, max=65535, help="TCP port."),
    grades: str | None = typer.Option(
        None, "--grades",
        help="The grading scale, e.g. 0,1,2 or 0=irrelevant,1=partial,2=relevant (default: the pool's; "
             "fixed when the database is made)."),
    include_judged: bool = typer.Option(
        False, "--all", help="Show items the qrels already graded too (hidden by default)."),
    allow_remote: bool = typer.Option(
        False, "--allow-remote", help="Allow a non-loopback --host (anyone who reaches it can judge, by any name)."),
) -> None:
    """Judge POOL on a local page (--serve): annotators log in by name and grade one passage at a time."""
    from finegrain.build.judge.app import shown_items
    from finegrain.build.judge.scale import Scale
    from finegrain.build.judge.store import JudgmentStore

    scale = Scale.parse(grades) if grades is not None else None
    the_pool = _pool(pool)
    shown = shown_items(the_pool, include_judged)
    hidden = len(the_pool.items) - len(shown)
    if not serve:
        if not db.is_file():
            typer.echo(f"{pool}: {len(shown)} item(s) to judge ({hidden} with a qrels grade hidden); no judgments "
                       f"yet in {db}. Add --serve to start the judging page.")
            return
        with JudgmentStore.open(db, the_pool, scale=scale, create=False) as store:
            _print_progress(store, [(it.qid, it.doc_id) for it in shown], hidden)
        typer.echo("Add --serve to start the judging page.")
        return
    allowed = serving.allowed_hosts(host, allow_remote, "the judging page has no password")
    serving.check_port(host, port)
    from finegrain.build.judge.app import create_app

    app = create_app(the_pool, db, scale=scale, include_judged=include_judged, allowed_hosts=allowed,
                     title=pool.name)
    typer.echo(f"judging {pool} ({len(shown)} item(s), {hidden} hidden; grades "
               f"{app.state.store.scale.spelled()}) into {db}")
    serving.echo_serving("the judging page", host, port, "; every grade is saved as it is given")
    serving.serve(app, host, port, "judge")


def _print_progress(store: Any, pairs: list[tuple[str, str]], hidden: int) -> None:
    from rich.console import Console
    from rich.table import Table

    typer.echo(f"{store.path}: {len(pairs)} item(s) to judge, {hidden} with a qrels grade hidden")
    table = Table()
    table.add_column("annotator", overflow="fold", max_width=30)
    for name in ("judged", "skipped", "of", "done"):
        table.add_column(name, justify="right")
    for a in store.annotators():
        p = store.progress(a, pairs)
        done = f"{100 * p.judged / p.total:.0f}%" if p.total else "n/a"
        table.add_row(a, str(p.judged), str(p.skipped), str(p.total), done)
    if not store.annotators():
        table.add_row("(nobody yet)", "0", "0", str(len(pairs)), "0%")
    Console().print(table)


def export_command(
    db: Path = _db_option(),
    out: Path = out_option("The qrels file to write: TREC (qid 0 docid grade), or BEIR (query-id corpus-id "
                           "score, tab-separated; ids may hold spaces) when it ends in .tsv."),
    method: str = typer.Option("majority", "--method",
                               help="majority (a tie goes to the lower grade) or adjudicate (--adjudicator wins)."),
    adjudicator: str | None = typer.Option(
        None, "--adjudicator", help="With --method adjudicate: the annotator whose grade overrides the others'."),
    pool: Path | None = typer.Option(
        None, "--pool", dir_okay=False,
        help="The pool the database was made for: checked, and its existing grades kept for items nobody graded."),
) -> None:
    """Write the grades in DB as TREC qrels: one grade per item by majority vote or adjudication."""
    from finegrain.build.judge.export import TIE_RULE, export_qrels, parse_method, write_export
    from finegrain.build.judge.store import JudgmentStore

    parse_method(method)
    the_pool = _pool(pool) if pool is not None else None
    with JudgmentStore.open(db, the_pool, create=False) as store:
        result = export_qrels(store, method=method, adjudicator=adjudicator, pool=the_pool)
    if result.n_items == 0:
        raise FinegrainError(f"{str(db)!r} holds no grade yet, so there is nothing to export",
                             "judge first: finegrain judge POOL --db DB --serve")
    path = write_export(result, out)
    for line in result.summary():
        typer.echo(line)
    if result.ties:
        typer.echo(f"(ties are broken {TIE_RULE}; to decide them, grade them as an adjudicator and export with "
                   "--method adjudicate --adjudicator NAME)")
    typer.echo(f"wrote {path}")


def agreement_command(
    db: Path = _db_option(),
    as_json: bool = typer.Option(False, "--json", help="Print the numbers as JSON instead of tables."),
) -> None:
    """Print the annotators' agreement: Cohen's κ per pair, Fleiss' κ and Krippendorff's α."""
    from finegrain.build.judge.agreement import store_agreement
    from finegrain.build.judge.store import JudgmentStore

    with JudgmentStore.open(db, create=False) as store:
        result = store_agreement(store)
    if as_json:
        typer.echo(json.dumps(result.to_dict(), ensure_ascii=False, indent=2))
        return
    from rich.console import Console

    console = Console()
    for table in result.tables():
        console.print(table)
    if len(result.annotators) < 2:
        typer.echo("Agreement needs two annotators who graded the same items; "
                   f"{len(result.annotators)} annotator(s) graded anything so far.")
