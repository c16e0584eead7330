"""How results print in Python: a small table of metric values and the denominators in one line.

The one rule for showing a value: a metric whose values are fractions (its range is [0, 1],
:func:`finegrain.metrics.spec.metric_range`) is shown x100 with two decimals; any other (a rank,
a count) as it is. A key that is not a finegrain metric (an MTEB score) is a fraction. Undefined
is an em dash, never 0.

:class:`~finegrain.evaluate.result.Evaluation`, :class:`~finegrain.results.saved.SavedResults` and
:class:`~finegrain.compare.comparison.Comparison` build their ``__repr__`` and ``_repr_html_`` from
:func:`text_table` / :func:`html_table` and say which values are x100 (:func:`scale_note`).
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

from finegrain.errors import FinegrainError
from finegrain.metrics.spec import metric_range, parse_metric

UNDEFINED = "—"


@lru_cache(maxsize=1024)
def is_fraction(key: str) -> bool:
    """Whether the values of metric ``key`` are fractions in [0, 1] (shown x100)."""
    try:
        low, high = metric_range(parse_metric(key).name)
    except (FinegrainError, KeyError):
        return True
    return (low, high) == (0.0, 1.0)


def value_text(key: str, value: float | None) -> str:
    """``value`` of metric ``key`` for people: x100 with two decimals for a fraction, else as it is."""
    if value is None or not math.isfinite(value):
        return UNDEFINED
    return f"{value * 100:.2f}" if is_fraction(key) else f"{value:.4g}"


def scale_note(keys: Iterable[str]) -> str:
    """What the shown numbers are: ``values x100`` and which keys are shown as they are."""
    raw = [k for k in keys if not is_fraction(k)]
    return "values x100" + (f" ({', '.join(raw)} as is)" if raw else "")


def denominators_text(d: Mapping[str, int]) -> str:
    """The denominators of one aggregate in words: ``2 of 3 queries scored, 1 without a relevant item excluded``."""
    if not d:
        return "no per-query counts saved"
    universe, scored = d.get("n_universe"), d.get("n_scored")
    parts = [f"{scored} of {universe} queries scored"]
    for key, words in (
        ("n_excluded_no_relevant", "without a relevant item excluded"),
        ("n_excluded_not_in_run", "absent from the run excluded (trec_eval)"),
        ("n_no_relevant_as_zero", "without a relevant item counted as 0 (trec_eval)"),
        ("n_missing_from_run", "missing from the run (scored 0)"),
        ("n_undefined", "undefined (left out of the aggregate)"),
        ("n_ignored_run_queries", "run queries outside the qrels ignored"),
    ):
        n = d.get(key)
        if n:
            parts.append(f"{n} {words}")
    return ", ".join(parts)


def denominators_line(denominators: Mapping[str, Mapping[str, int]]) -> str:
    """The denominators of several metrics in one line; metrics that share theirs are named together."""
    groups: dict[str, list[str]] = {}
    for key, d in denominators.items():
        groups.setdefault(denominators_text(d), []).append(key)
    if len(groups) == 1:
        return next(iter(groups))
    return "; ".join(f"{', '.join(keys)}: {text}" for text, keys in groups.items())


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Plain columns: the first left-aligned, the others right-aligned, two spaces apart."""
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return "\n".join(line(r) for r in (header, *rows))


def html_table(caption: str, header: Sequence[str], rows: Sequence[Sequence[str]], footer: str = "") -> str:
    """The same table as HTML for a notebook (every text escaped)."""
    esc = html.escape
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in rows)
    foot = f"<p><small>{esc(footer)}</small></p>" if footer else ""
    return f"<div><p><b>{esc(caption)}</b></p><table><tr>{head}</tr>{body}</table>{foot}</div>"


__all__ = ["UNDEFINED", "denominators_line", "denominators_text", "html_table", "is_fraction", "scale_note",
           "text_table", "value_text"]
