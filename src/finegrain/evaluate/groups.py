"""Query groups (query types): the one name for "no type" and the one order of groups.

Every view that slices by query type (``Evaluation.by_group``, ``compare``'s
per-type tests, the report's tables, the error analysis and the taxonomy)
names a query without a type :data:`UNTYPED` and orders groups with
:func:`order_groups`: by name, ``"untyped"`` last.
"""

from __future__ import annotations

from collections.abc import Iterable

UNTYPED = "untyped"


def group_of(query_type: str | None) -> str:
    """The group of a query whose type is ``query_type`` (None -> ``"untyped"``)."""
    return UNTYPED if query_type is None else str(query_type)


def order_groups(groups: Iterable[str]) -> list[str]:
    """Groups sorted by name, ``"untyped"`` last (each once)."""
    names = set(groups)
    return sorted(g for g in names if g != UNTYPED) + ([UNTYPED] if UNTYPED in names else [])
