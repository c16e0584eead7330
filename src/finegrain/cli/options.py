"""Options shared by several verbs, declared once.

``-m/--metric`` is the one metric option: repeatable, each value a
comma-separated list, so ``-m ndcg@10 -m recall@100``, ``-m ndcg@10,recall@100``
and any mix mean the same thing. (A plain ``str`` option would silently keep
only the last ``-m``.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import typer

METRIC_FLAGS = ("--metric", "--metrics", "-m")


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
