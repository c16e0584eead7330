"""Query groups (query types): the one name for "no type" and the one order of groups.

Every view that slices by query type (``Evaluation.by_group``, ``compare``'s
per-type tests, the report's tables, the error analysis and the taxonomy)
names a query without a type :data:`UNTYPED` and orders groups with
:func:`order_groups`: by name, ``"untyped"`` last.

A :class:`QuerySplit` (``finegrain eval --split-by overlap=FILE``) gives the
queries two groups instead of their types, ``"Overlap"`` (the queries FILE
lists) and ``"Others"``; they flow through the same by-type views.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.io.idlist import read_overlap_ids

UNTYPED = "untyped"


def group_of(query_type: str | None) -> str:
    """The group of a query whose type is ``query_type`` (None -> ``"untyped"``)."""
    return UNTYPED if query_type is None else str(query_type)


def order_groups(groups: Iterable[str]) -> list[str]:
    """Groups sorted by name, ``"untyped"`` last (each once)."""
    names = set(groups)
    return sorted(g for g in names if g != UNTYPED) + ([UNTYPED] if UNTYPED in names else [])


# --------------------------------------------------------------------------- splits from a file
# DuReader-retrieval Table 6 reports its models on the dev queries similar to a training query
# ("Overlap") and on the rest ("Others"). ``finegrain eval --split-by overlap=FILE`` makes that
# split the query groups of an evaluation, in place of the query types.

OVERLAP = "Overlap"
OTHERS = "Others"
SPLIT_KINDS: tuple[str, ...] = ("overlap",)


@dataclass(frozen=True)
class QuerySplit:
    """Two query groups from a file of query ids: the listed queries (``inside``) and the rest (``outside``)."""

    by: str
    path: str
    members: frozenset[str]
    inside: str = OVERLAP
    outside: str = OTHERS

    def groups(self, qids: Iterable[str]) -> dict[str, str]:
        """``{qid: group}`` for ``qids``."""
        return {q: self.inside if q in self.members else self.outside for q in qids}

    def describe(self, qids: Iterable[str]) -> dict[str, Any]:
        """What the split did to these queries, for provenance: the file, group sizes, ids it lists that are not among them."""
        universe = list(qids)
        known = set(universe)
        inside = sum(1 for q in universe if q in self.members)
        return {"by": self.by, "file": self.path, "groups": {self.inside: inside, self.outside: len(universe) - inside},
                "listed_not_in_dataset": len(self.members - known)}


def parse_split(spec: str) -> QuerySplit:
    """``"overlap=FILE"`` -> the :class:`QuerySplit` of the query ids FILE lists.

    FILE is the pairs file of ``finegrain overlap A B -o FILE`` (its ``a_id``
    column), or a plain list of query ids (one per line, or JSON lines with
    ``id``); see :func:`finegrain.build.overlap.read_overlap_ids`.
    """

    kind, sep, path = spec.partition("=")
    if not sep or not path.strip():
        raise FinegrainError(f"--split-by {spec!r} is not KIND=FILE", "write it like --split-by overlap=overlap.jsonl")
    if kind.strip() not in SPLIT_KINDS:
        raise UnknownNameError("query split", kind.strip(), SPLIT_KINDS)

    ids = read_overlap_ids(path.strip())
    return QuerySplit(kind.strip(), path.strip(), frozenset(ids))
