"""The CLI vocabulary: options shared by several verbs, declared once.

One flag means one thing on every verb (``tests/cli/test_cli_vocabulary.py``
walks the command tree to check it):

======  =================  ==============================================
``-d``  ``--dataset``      dataset name or folder
``-r``  ``--retriever``    registered retriever (``finegrain list retrievers``)
``-e``  ``--encoder``      registered encoder, ``st:PATH`` or ``clip:PATH``
``-m``  ``--metric``       metric specs, repeatable and comma lists
``-o``  ``--out``          output folder (or file, where the verb writes one)
``-s``  ``--set``          ``KEY=VALUE`` option of the retriever / encoder
``-k``  ``--top-k``        keep the top N results per query
``-l``  ``--lang``         ``zh`` or ``en`` (``cn``: deprecated alias of zh)
``-q``  ``--quiet``        no progress bars
``-b``  ``--baseline``     the system the others are compared with
``-c``  ``--catalog``      album catalog file
``-p``  ``--photobench``   PhotoBench album folder
======  =================  ==============================================

and one long name per concept (the same test holds the table):

=================  ========================================================
``--today``        the "now" of relative dates (``--now``: retired)
``-k --top-k``     how many results are kept or shown (``--top``, ``--run-depth``: retired)
``-c --catalog``   the album catalog, an option on every album verb (the CATALOG argument: retired)
``--cv K``         k-fold cross-validation, with ``--cv-metric`` and ``--seed``
                   (``--cv K,metric=M,seed=S``: retired)
``-s --set``       ``KEY=VALUE`` options of a registered entry (a retriever, an encoder, a
                   fusion method: ``fuse``'s ``--weights``, ``--norm``, ``--rrf-k`` and
                   ``--depth`` are retired)
``--batch-size``   items per batch (``--batch``: retired)
``--no-cache``     neither read nor write the embedding cache, on every verb that encodes
=================  ===============================================================

A retired spelling is hidden from ``--help`` and still read for one release: it prints one
``warning:`` line with the name to write (:func:`retired_option`, :func:`either`).

One verb also reads another tool's letters, because its users bring that
tool's scripts (:data:`VERB_SHORT_FLAGS`): ``finegrain evaluate`` is
trec_eval's verb, so there it reads trec_eval's ``-q`` as ``--per-query`` and
``-c`` as ``--complete``. These are hidden compatibility spellings
(:func:`compat_letter`): ``--help`` shows the long names with one meaning per
letter across verbs, and the long option's help names the letter.

``-m/--metric`` is repeatable, each value a comma-separated list, so
``-m ndcg@10 -m recall@100``, ``-m ndcg@10,recall@100`` and any mix mean the
same thing. (A plain ``str`` option would silently keep only the last ``-m``.)

``--set KEY=VALUE`` values are kept as written and converted in one place,
against the declared parameters of the named retriever or encoder
(:meth:`finegrain.registry.Registry.check`).

Every ``int`` and ``float`` option of every verb is read by the one number
grammar (:mod:`finegrain.numbers`: ASCII digits, int64 integers, finite
floats), not by Python's ``int``/``float`` that read ``1_0`` as 10 and ``١٠``
as 10: :func:`read_numbers_by_the_grammar` gives each such option a parser,
and a bad value is one ``error:`` line naming the option.
"""

from __future__ import annotations

import inspect
import sys
import types
import typing
from collections.abc import Callable, Sequence
from typing import Any

import typer
from typer.models import ParameterInfo

from finegrain.errors import FinegrainError
from finegrain.numbers import NumberError, parse_float, parse_int
from finegrain.registry import Param

METRIC_FLAGS = ("--metric", "--metrics", "-m")
# Short flag -> the long name it stands for, on every verb (tests/cli/test_cli_vocabulary.py).
SHORT_FLAGS: dict[str, str] = {
    "-d": "--dataset",
    "-r": "--retriever",
    "-e": "--encoder",
    "-m": "--metric",
    "-o": "--out",
    "-s": "--set",
    "-k": "--top-k",
    "-l": "--lang",
    "-q": "--quiet",
    "-b": "--baseline",
    "-c": "--catalog",
    "-p": "--photobench",
    "-f": "--family",
    "-n": "--name",
    "-g": "--ground-truth",
}
#: Verb -> another tool's letters it also reads, and the long option each stands for there; hidden from
#: --help (:func:`compat_letter`), declared once (tests/cli/test_cli_vocabulary.py).
VERB_SHORT_FLAGS: dict[str, dict[str, str]] = {
    "evaluate": {"-q": "--per-query", "-c": "--complete"},  # trec_eval's -q and -c
}


def compat_letter(letter: str, long: str, tool: str) -> Any:
    """A flag ``letter`` read as ``long`` on a verb whose users bring ``tool``'s scripts: hidden from
    ``--help`` (where the letter means the vocabulary's option), declared in :data:`VERB_SHORT_FLAGS`."""
    return typer.Option(False, letter, hidden=True, show_default=False, help=f"{tool}'s {letter}: {long}.")


def retired_option(old: str, new: str, *, flags: Sequence[str] = (), multiple: bool = False, **checks: Any) -> Any:
    """A retired spelling (``old``, and any other ``flags``) of the option now written ``new``: hidden from
    ``--help``, still read for one release (with the checks of the new one, e.g. ``min=1``); :func:`either`
    warns when it is used."""
    return typer.Option([] if multiple else None, old, *flags, hidden=True, show_default=False,
                        help=f"Retired: write {new}.", **checks)


def retired_argument(new: str) -> Any:
    """A retired positional argument, now the option ``new``: hidden, still read for one release (:func:`either`)."""
    return typer.Argument(None, hidden=True, show_default=False, metavar="", help=f"Retired: write {new}.")


def retired(old: str, new: str) -> None:
    """The one ``warning:`` line of a retired spelling: what to write instead, and that the old one goes."""
    print(f"warning: {old} is retired, write {new} ({old} stops working in the next release)", file=sys.stderr)


def either(value: Any, old_value: Any, new: str, old: str) -> Any:
    """The option's value from its new spelling ``new`` or its retired one ``old`` (with :func:`retired`'s
    warning); both given is an error naming the two. ``None`` (or an empty list) means "not given"."""
    if old_value is None or old_value == []:
        return value
    if value is not None and value != []:
        raise FinegrainError(f"{new} and {old} are the same option, given twice", f"give {new} only")
    retired(old, new)
    return old_value


def metrics_option(help: str, default: Sequence[str] = ()) -> Any:
    """The ``-m/--metric/--metrics`` option: a list of values, read with :func:`metric_keys`."""
    shown = f" Default: {','.join(default)}." if default else ""
    return typer.Option(
        None, *METRIC_FLAGS,
        help=f"{help} Repeatable and comma-separated: '-m a -m b' = '-m a,b'.{shown}",
        show_default=False,
    )


def metric_keys(values: Sequence[str] | None, default: Sequence[str] = ()) -> tuple[str, ...]:
    """Canonical metric keys of every ``-m`` value, in order, duplicates dropped; ``default`` when none.

    Raises :class:`~finegrain.errors.FinegrainError` naming a bad spec.
    """
    from finegrain.metrics.spec import parse_metrics

    items = [v for v in (values or []) if v is not None]
    if not items:
        items = list(default)
    if not items:
        return ()
    return tuple(s.key for s in parse_metrics(items))


# --------------------------------------------------------------------------- the shared options


def dataset_option(help: str = "Dataset name (e.g. capretrieval/zh) or a folder in a known format.") -> Any:
    return typer.Option(..., "--dataset", "-d", help=help)


def retriever_option(help: str = "Retriever name (finegrain list retrievers).", default: Any = ...) -> Any:
    return typer.Option(default, "--retriever", "-r", help=help)


def out_option(help: str, default: Any = ...) -> Any:
    return typer.Option(default, "--out", "-o", help=help)


def set_option(help: str = "Retriever option KEY=VALUE (repeatable), e.g. --set k1=1.2; see finegrain list retrievers.") -> Any:
    return typer.Option([], "--set", "-s", help=help)


def top_k_option(help: str = "Keep the top N results per query (default: the retriever's own cut).") -> Any:
    """``-k/--top-k N``; a verb with a default states it in ``help`` and applies it after :func:`either`."""
    return typer.Option(None, "--top-k", "-k", min=1, help=help, show_default=False)


def quiet_option() -> Any:
    return typer.Option(False, "--quiet", "-q", help="No progress bars.")


def no_cache_option(what: str = "embedding cache") -> Any:
    return typer.Option(False, "--no-cache", help=f"Neither read nor write the on-disk {what} ($FINEGRAIN_CACHE).")


def today_option() -> Any:
    return typer.Option(None, "--today", metavar="YYYY-MM-DD",
                        help="The 'now' of relative dates; default: the newest photo's date, or today's when no "
                             "photo is dated.")


def catalog_option(help: str = "The catalog: a file, or a postgresql://USER@HOST/DB URL.", default: Any = None) -> Any:
    return typer.Option(default, "--catalog", "-c", help=help)


def require_catalog(option: str | None, argument: str | None) -> str:
    """``-c CATALOG``, or the retired CATALOG argument (with a warning); neither is an error naming the fix."""
    catalog = either(option, argument, "-c CATALOG", "the CATALOG argument")
    if catalog is None:
        raise FinegrainError("no catalog given", "pass -c CATALOG (a file from 'album index', or a postgresql:// URL)")
    return str(catalog)


def cv_option(what: str) -> Any:
    return typer.Option(None, "--cv", metavar="K", show_default=False,
                        help=f"Choose {what} by K-fold cross-validation over queries, with --cv-metric and --seed.")


def cv_metric_option(default: str) -> Any:
    return typer.Option(None, "--cv-metric", metavar="METRIC", show_default=False,
                        help=f"The metric --cv maximises (default: {default}).")


def seed_option(help: str) -> Any:
    return typer.Option(None, "--seed", min=0, show_default=False, help=f"{help} (default 0).")


def check_cv(cv: int | None, cv_metric: str | None, seed: int | None) -> None:
    """``--cv-metric`` and ``--seed`` belong to ``--cv``: either without it is an error, not silently ignored."""
    if cv is None:
        given = [name for name, v in (("--cv-metric", cv_metric), ("--seed", seed)) if v is not None]
        if given:
            raise FinegrainError(f"{given[0]} goes with --cv, and no --cv was given", f"add --cv K or leave {given[0]} out")
    elif cv < 2:
        raise FinegrainError(f"--cv {cv} is fewer than 2 folds", "pass --cv 5, say")


def encoder_option(help: str = "Encoder: e5, minilm, use-m3, st:PATH or clip:PATH (finegrain list encoders).",
                   default: Any = ...) -> Any:
    return typer.Option(default, "--encoder", "-e", help=help)


def lang_option(help: str, default: str | None = "en") -> Any:
    """``--lang/-l zh|en``; ``cn`` (PhotoBench's spelling) is read as ``zh`` with a deprecation warning."""
    return typer.Option(default, "--lang", "-l", help=f"{help} zh or en.", callback=_lang, metavar="zh|en")


def _lang(value: str | None) -> str | None:
    if value is None:
        return None
    from finegrain.text.lang import parse_lang

    lang = parse_lang(value)  # a FinegrainError: one line 'error: unknown language ...', exit code 2
    if value.strip().lower() != lang.value:
        print(f"warning: --lang {value} is read as {lang.value}; write --lang {lang.value}", file=sys.stderr)
    return lang.value


# --------------------------------------------------------------------------- numbers


def read_numbers_by_the_grammar(fn: Callable[..., Any]) -> None:
    """Give each ``int`` / ``float`` option and argument of the verb ``fn`` a parser of the one number grammar
    that also checks its ``min`` and ``max`` (typer leaves those to the parser once there is one)."""
    hints = typing.get_type_hints(fn)
    for name, param in inspect.signature(fn).parameters.items():
        info = param.default
        kind = _number_type(hints.get(name))
        if kind is None or not isinstance(info, ParameterInfo) or info.parser is not None:
            continue
        flags = [d for d in info.param_decls or () if d.startswith("--")]
        label = flags[0] if flags else name.upper()
        info.parser = _number_parser(kind, label, info.min, info.max, info.default)


def _number_type(annotation: Any) -> type | None:
    """``int`` or ``float`` for an annotation ``int``, ``float``, ``int | None`` or ``float | None``; else None."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        inner = [a for a in typing.get_args(annotation) if a is not type(None)]
        annotation = inner[0] if len(inner) == 1 else None
    return annotation if annotation in (int, float) else None


def _number_parser(kind: type, label: str, lo: float | None, hi: float | None, default: Any) -> Callable[[Any], Any]:
    """The option's value converted as a declared parameter is (:meth:`finegrain.registry.Param.convert`)."""
    param = Param(kind, default if isinstance(default, (int, float)) else None, min=lo, max=hi)
    return lambda value: param.convert(label, value)


# --------------------------------------------------------------------------- --set KEY=VALUE


def parse_set(items: Sequence[str]) -> dict[str, str]:
    """``["k1=1.2", "encoder=e5"]`` -> ``{"k1": "1.2", "encoder": "e5"}``: values as written (the registry converts)."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise FinegrainError(f"--set {item!r} is not KEY=VALUE", "write it like --set k1=1.2")
        if key.strip() in out:
            raise FinegrainError(f"--set {key.strip()} is given twice", "give each option once")
        out[key.strip()] = raw.strip()
    return out


def retriever_options(name: str, items: Sequence[str]) -> dict[str, Any]:
    """``--set`` items for the retriever ``name``, checked and converted against its declared parameters.

    Fails before any data is loaded: an unknown retriever suggests near names,
    an unknown key near keys, a bad value the allowed ones.
    """
    from finegrain.retrieve.registry import RETRIEVERS

    raw = parse_set(items)
    if RETRIEVERS.params(name) is None:  # an entry that declares nothing: best-effort types
        return {k: guess_type(v) for k, v in raw.items()}
    return RETRIEVERS.check(name, raw)


def encoder_options(spec: str, items: Sequence[str]) -> dict[str, Any]:
    """``--set`` items for the encoder ``spec``, checked and converted against its declared parameters."""
    from finegrain.registry import check_options
    from finegrain.retrieve.dense.encoders.registry import ENCODERS, _form

    if not items:
        return {}  # nothing to check; the name itself is checked when the encoder is built
    return check_options(f"encoder {spec!r}", ENCODERS.params(_form(spec)[0]), parse_set(items))


def guess_type(raw: str) -> object:
    """``"1.2"`` -> 1.2, ``"true"`` -> True, ``"none"`` -> None, else the string (for entries that declare nothing).

    Numbers are those of the one grammar (:mod:`finegrain.numbers`): ``1_0`` stays the string it is.
    """
    low = raw.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    for parse in (parse_int, parse_float):
        try:
            return parse(raw)
        except NumberError:
            pass
    return raw
