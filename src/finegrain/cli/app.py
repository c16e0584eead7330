"""The CLI root: builds the ``finegrain`` Typer app from the verb modules.

Verb modules (``cli/*_cmd.py``) only define command functions; they never
import this module.  :func:`build_cli` is the one place that names each verb
and attaches it, so importing :mod:`finegrain.cli.main` (or this module) yields a
complete app that ``typer.testing.CliRunner`` and ``python -m finegrain`` can run.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from importlib import metadata
from typing import Any

import typer

from finegrain.cli import (
    album_cmd,
    album_plan_cmd,
    album_search_cmd,
    album_serve_cmd,
    album_zero_cmd,
    caption_corpus_cmd,
    compare_cmd,
    concepts_cmd,
    contrast_cmd,
    eval_cmd,
    evaluate_cmd,
    fuse_cmd,
    judge_cmd,
    list_cmd,
    overlap_cmd,
    passages_cmd,
    perturb_cmd,
    pool_cmd,
    report_cmd,
    triage_cmd,
)
from finegrain.errors import FinegrainError

# (name, function) for the top-level verbs, in the order ``--help`` lists them.
VERBS: tuple[tuple[str, Callable[..., Any]], ...] = (
    ("eval", eval_cmd.eval_command),
    ("evaluate", evaluate_cmd.evaluate_command),
    ("compare", compare_cmd.compare_command),
    ("fuse", fuse_cmd.fuse_command),
    ("triage", triage_cmd.triage_command),
    ("report", report_cmd.report_command),
    ("perturb", perturb_cmd.perturb_command),
    ("contrast", contrast_cmd.contrast_command),
    ("concepts", concepts_cmd.concepts_command),
    ("caption-corpus", caption_corpus_cmd.caption_corpus_command),
    ("overlap", overlap_cmd.overlap_command),
    ("pool", pool_cmd.pool_command),
    ("passages", passages_cmd.passages_command),
    ("distant-label", passages_cmd.distant_label_command),
    ("list", list_cmd.list_command),
)

# (name, function) for ``finegrain album ...``.
ALBUM_VERBS: tuple[tuple[str, Callable[..., Any]], ...] = (
    ("index", album_cmd.index_command),
    ("import-photobench", album_cmd.import_photobench_command),
    ("people", album_cmd.people_command),
    ("search", album_search_cmd.search_command),
    ("eval", album_search_cmd.eval_command),
    ("plan", album_plan_cmd.plan_command),
    ("eval-routing", album_plan_cmd.eval_routing_command),
    ("zero-answer", album_zero_cmd.zero_answer_command),
    ("serve", album_serve_cmd.serve_command),
)

# (name, function) for ``finegrain judge ...``; ``finegrain judge POOL ...`` is ``judge open POOL ...``.
JUDGE_VERBS: tuple[tuple[str, Callable[..., Any]], ...] = (
    ("open", judge_cmd.open_command),
    ("export", judge_cmd.export_command),
    ("agreement", judge_cmd.agreement_command),
)


def version() -> str:
    """The installed distribution's version, else ``finegrain.__version__``."""
    try:
        return metadata.version("finegrain")
    except metadata.PackageNotFoundError:
        from finegrain import __version__

        return __version__


def _guard(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn a :class:`FinegrainError` into ``error: ...`` on stderr and its exit code.

    Done per command (not only in :func:`finegrain.cli.main.main`) so that
    ``CliRunner().invoke(app, ...)`` behaves like the installed script.
    """

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except FinegrainError as e:
            print(f"error: {e}", file=sys.stderr)
            raise typer.Exit(e.exit_code) from None

    return wrapper


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"finegrain {version()}")
        raise typer.Exit(0)


def _root(
    show_version: bool = typer.Option(
        False, "--version", help="Print the version and exit.", callback=_show_version, is_eager=True
    ),
) -> None:
    """Retrieval evaluation, diagnosis and search that gets the details right."""


def build_cli() -> typer.Typer:
    """A fresh ``finegrain`` app with every verb and the ``album`` group attached."""
    app = typer.Typer(
        name="finegrain",
        help="Retrieval evaluation, diagnosis and search that gets the details right.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )
    app.callback()(_root)
    for name, fn in VERBS:
        app.command(name)(_guard(fn))
    album_app = typer.Typer(
        name="album",
        help="The personal album engine: index photos, import PhotoBench albums, name people.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )
    for name, fn in ALBUM_VERBS:
        album_app.command(name)(_guard(fn))
    app.add_typer(album_app, name="album")
    judge_app = typer.Typer(
        name="judge",
        cls=judge_cmd.JudgeGroup,
        help="Judge a pool on a local page (finegrain judge POOL --db DB --serve), export qrels, measure agreement.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )
    for name, fn in JUDGE_VERBS:
        judge_app.command(name)(_guard(fn))
    app.add_typer(judge_app, name="judge")
    return app
