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
from rich.markup import escape
from typer.core import TyperArgument, TyperCommand, TyperOption

from finegrain.cli import (
    album_cmd,
    album_eval_cmd,
    album_plan_cmd,
    album_search_cmd,
    album_serve_cmd,
    album_zero_cmd,
    caption_corpus_cmd,
    compare_cmd,
    concepts_cmd,
    contrast_cmd,
    convert_cmd,
    distill_cmd,
    eval_cmd,
    evaluate_cmd,
    fuse_cmd,
    gen_queries_cmd,
    judge_cmd,
    list_cmd,
    overlap_cmd,
    passages_cmd,
    perturb_cmd,
    pool_cmd,
    report_cmd,
    soup_cmd,
    train_cmd,
    triage_cmd,
)
from finegrain.cli import options as opt
from finegrain.errors import FinegrainError

# (command path, function), in the order ``--help`` lists them; "album index" is ``index`` of the group ``album``.
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
    ("gen-queries", gen_queries_cmd.gen_queries_command),
    ("distill", distill_cmd.distill_command),
    ("train", train_cmd.train_command),
    ("soup", soup_cmd.soup_command),
    ("list", list_cmd.list_command),
    ("convert", convert_cmd.convert_command),
    ("album index", album_cmd.index_command),
    ("album import-photobench", album_cmd.import_photobench_command),
    ("album people", album_cmd.people_command),
    ("album search", album_search_cmd.search_command),
    ("album eval", album_eval_cmd.eval_command),
    ("album plan", album_plan_cmd.plan_command),
    ("album eval-routing", album_plan_cmd.eval_routing_command),
    ("album zero-answer", album_zero_cmd.zero_answer_command),
    ("album serve", album_serve_cmd.serve_command),
    ("album migrate", album_cmd.migrate_command),
    ("album postgres", album_cmd.postgres_command),
    ("judge open", judge_cmd.open_command),  # ``finegrain judge POOL ...`` is ``judge open POOL ...``
    ("judge export", judge_cmd.export_command),
    ("judge agreement", judge_cmd.agreement_command),
)

# group name -> (help, click group class or None)
GROUPS: dict[str, tuple[str, Any]] = {
    "album": ("The personal album engine: index photos, import PhotoBench albums, name people.", None),
    "judge": ("Judge a pool on a local page (finegrain judge POOL --db DB --serve), export qrels, measure agreement.",
              judge_cmd.JudgeGroup),
}


def version() -> str:
    """The installed distribution's version, else ``finegrain.__version__``."""
    try:
        return metadata.version("finegrain")
    except metadata.PackageNotFoundError:
        from finegrain.version import __version__

        return __version__


#: The exit code of a command that ran out of memory (bad input is a FinegrainError's, 2).
OUT_OF_MEMORY_EXIT = 1


def _guard(fn: Callable[..., Any], path: str) -> Callable[..., Any]:
    """Turn a :class:`FinegrainError` into ``error: ...`` on stderr and its exit code, a
    :class:`MemoryError` into one ``error:`` line naming the command (:func:`out_of_memory`) and exit code
    :data:`OUT_OF_MEMORY_EXIT`, and an :class:`OSError` (a path the system refuses) into one line naming
    the path (:func:`os_error`); never a traceback.

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
        except MemoryError as e:
            print(f"error: {out_of_memory(path, e)}", file=sys.stderr)
            raise typer.Exit(OUT_OF_MEMORY_EXIT) from None
        except OSError as e:
            error = os_error(e)
            print(f"error: {error}", file=sys.stderr)
            raise typer.Exit(error.exit_code) from None

    return wrapper


def os_error(e: OSError) -> FinegrainError:
    """A file the system will not open or stat (a name too long, a folder where a file is wanted, no permission,
    ...) as one line naming the path and the reason; the path comes from the command line or a file it read."""
    reason = e.strerror or type(e).__name__
    where = f"{e.filename!r}: " if e.filename is not None else ""
    return FinegrainError(f"{where}{reason}", "check the path: that it names a file you can read (or a folder "
                          "where one is wanted) and that no part of it is longer than the system allows")


def out_of_memory(path: str, e: MemoryError) -> FinegrainError:
    """What ran out (the command, and what the error says it was doing) and the ways out, on one line."""
    detail = " ".join(str(e).split())
    return FinegrainError(f"finegrain {path} ran out of memory" + (f": {detail}" if detail else ""),
                          "give it a smaller input, or a smaller --batch-size or -k where it takes one, "
                          "or run it on a machine with more free memory")


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


class Command(TyperCommand):
    """A verb whose ``--help`` shows its text as written and whose usage line leaves out its hidden parameters.

    Typer renders help through rich, whose markup reads ``[ray]`` in ``pip install 'finegrain[ray]'`` as a
    style and drops it; finegrain's help uses no markup, so every text is escaped once here. Hidden parameters
    (retired spellings, e.g. the CATALOG argument that ``-c`` replaced) are left out of the usage line as
    ``--help`` leaves them out of its lists.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.help = literal(self.help)
        for param in self.params:
            if isinstance(param, TyperOption | TyperArgument):
                param.help = literal(param.help)

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if not getattr(param, "hidden", False):
                pieces.extend(param.get_usage_pieces(ctx))
        return pieces


def build_cli() -> typer.Typer:
    """A fresh ``finegrain`` app with every verb of :data:`VERBS` and its groups attached."""
    app = _typer("finegrain", "Retrieval evaluation, diagnosis and search that gets the details right.")
    app.callback()(_root)
    groups = {name: _typer(name, help, cls) for name, (help, cls) in GROUPS.items()}
    for path, fn in VERBS:
        group, _, name = path.rpartition(" ")
        opt.read_numbers_by_the_grammar(fn)
        (groups[group] if group else app).command(name, cls=Command)(_guard(fn, path))
    for name, sub in groups.items():
        app.add_typer(sub, name=name)
    return app


def literal(text: str | None) -> str | None:
    """``text`` escaped for rich markup, so that ``--help`` prints it as written (square brackets included)."""
    return escape(text) if text else text


def _typer(name: str, help: str, cls: Any = None) -> typer.Typer:
    extra = {"cls": cls} if cls is not None else {}
    return typer.Typer(name=name, help=literal(help), no_args_is_help=True, add_completion=False,
                       pretty_exceptions_enable=False, **extra)
