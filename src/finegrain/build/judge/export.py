"""From clicks to qrels: one grade per judged item, by majority vote or by adjudication.

Each annotator counts once per item, with their latest grade (:meth:`JudgmentStore.latest`).

* ``majority``: the grade most annotators gave. **A tie goes to the lowest of the tied
  grades** (a disagreement never makes an item more relevant than half the judges said);
  every tie is listed in :attr:`Export.ties` so it can be adjudicated.
* ``adjudicate``: where the adjudicator (an annotator named by ``adjudicator``) graded the
  item, their grade is final; elsewhere the majority rule above applies.

``pool`` given (it must be the store's pool), the pool's existing grades are kept for the
items no annotator graded, so the qrels cover the whole pool that was ever judged.
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from finegrain.build.judge.store import JudgmentStore, pool_fingerprint
from finegrain.build.pool_file import Pool
from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.io.beir import write_qrels_tsv
from finegrain.io.trec import write_qrels
from finegrain.types import Qrels

METHODS: tuple[str, ...] = ("majority", "adjudicate")
TIE_RULE = "toward the lower grade"


@dataclass(frozen=True)
class Tie:
    """An item whose top grades had equal votes; ``chosen`` is the lowest of them."""

    qid: str
    doc_id: str
    votes: Mapping[int, int]  # grade -> number of annotators
    chosen: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "votes", MappingProxyType(dict(sorted(self.votes.items()))))

    def spelled(self) -> str:
        """``q1/d3 (0:1 2:1 -> 0)``."""
        votes = " ".join(f"{g}:{n}" for g, n in self.votes.items())
        return f"{self.qid}/{self.doc_id} ({votes} -> {self.chosen})"


@dataclass(frozen=True)
class Export:
    """The qrels a method made from a store, with what it had to decide."""

    qrels: Qrels
    method: str
    annotators: tuple[str, ...]
    n_judged: int  # items with at least one grade
    ties: tuple[Tie, ...] = ()  # broken toward the lower grade (under adjudication: where the adjudicator did not grade)
    adjudicator: str | None = None
    adjudicated: int = 0  # items graded by the adjudicator
    overruled: int = 0  # of those, items where the adjudicator's grade differs from the others' majority
    from_pool: int = 0  # items nobody graded, kept with the pool's existing grade
    votes: Mapping[tuple[str, str], Mapping[str, int]] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def n_items(self) -> int:
        return self.qrels.n_entries

    def summary(self) -> list[str]:
        """Lines for a person: what was written and every decision that was not unanimous."""
        lines = [f"{self.n_items} judgments for {len(self.qrels)} queries by {self.method} of "
                 f"{len(self.annotators)} annotator(s) ({', '.join(self.annotators) or 'none'})"]
        if self.adjudicator is not None:
            lines.append(f"adjudicator {self.adjudicator}: graded {self.adjudicated} item(s), "
                         f"overruling the majority on {self.overruled}")
        if self.from_pool:
            lines.append(f"{self.from_pool} item(s) nobody graded kept with the pool's existing grade")
        if self.ties:
            shown = ", ".join(t.spelled() for t in self.ties[:10]) + (", ..." if len(self.ties) > 10 else "")
            lines.append(f"{len(self.ties)} tie(s) broken {TIE_RULE}: {shown}")
        else:
            lines.append("no ties")
        return lines


def parse_method(method: str) -> str:
    """``method`` if it is one of :data:`METHODS`, else an error suggesting the near one."""
    if method not in METHODS:
        raise UnknownNameError("export method", method, METHODS)
    return method


def majority_grade(grades: list[int]) -> tuple[int, bool]:
    """The most frequent of ``grades`` and whether it was a tie (then the lowest tied grade)."""
    counts = Counter(grades)
    top = max(counts.values())
    tied = sorted(g for g, n in counts.items() if n == top)
    return tied[0], len(tied) > 1


def export_qrels(store: JudgmentStore, *, method: str = "majority", adjudicator: str | None = None,
                 pool: Pool | None = None) -> Export:
    """The qrels of ``store`` by ``method`` (see the module doc); items in the pool's order."""
    parse_method(method)
    if method == "adjudicate":
        if adjudicator is None:
            raise FinegrainError("--method adjudicate needs the adjudicator's name",
                                 "add --adjudicator NAME (an annotator whose grades override the others')")
        store.check_known(adjudicator, "adjudicator")
    elif adjudicator is not None:
        raise FinegrainError(f"--adjudicator {adjudicator!r} is given but --method is {method!r}",
                             "add --method adjudicate, or drop --adjudicator")
    if pool is not None and pool_fingerprint(pool) != store.fingerprint:
        raise FinegrainError(f"the pool given is not the one {str(store.path)!r} was made for",
                             "pass the pool the judgments were made on, or leave out --pool")
    by_item: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    for j in store.latest():
        if j.grade is not None:
            by_item[(j.qid, j.doc_id)][j.annotator] = j.grade
    records: list[tuple[str, str, int]] = []
    ties: list[Tie] = []
    adjudicated = overruled = from_pool = 0
    order = list(store.items)
    known = set(order)
    order += sorted(set(by_item) - known)  # not expected: the store refuses unknown items
    for qid, doc_id in order:
        votes = by_item.get((qid, doc_id))
        if not votes:
            if pool is not None:
                it = pool.item(qid, doc_id)
                if it is not None and it.grade is not None:
                    records.append((qid, doc_id, it.grade))
                    from_pool += 1
            continue
        others = [g for a, g in votes.items() if a != adjudicator]
        if adjudicator is not None and adjudicator in votes:
            grade = votes[adjudicator]
            adjudicated += 1
            if others and majority_grade(others)[0] != grade:
                overruled += 1
        else:
            grade, tie = majority_grade(list(votes.values()))
            if tie:
                ties.append(Tie(qid, doc_id, Counter(votes.values()), grade))
        records.append((qid, doc_id, grade))
    return Export(
        qrels=Qrels.from_records(records), method=method, annotators=store.annotators(),
        n_judged=len(by_item), ties=tuple(ties), adjudicator=adjudicator, adjudicated=adjudicated,
        overruled=overruled, from_pool=from_pool,
        votes=MappingProxyType({k: MappingProxyType(v) for k, v in by_item.items()}),
    )


def write_export(export: Export, path: str | os.PathLike[str]) -> Path:
    """Write the export's qrels: BEIR qrels (tab-separated ``query-id corpus-id score``,
    :func:`finegrain.io.beir.write_qrels_tsv`) when ``path`` ends in ``.tsv`` (or ``.tsv.gz``), else
    TREC qrels (``qid 0 docid grade``, :func:`finegrain.io.trec.write_qrels`).

    A pool's ids are JSON strings, which may hold spaces; a TREC line cannot, and the TREC writer's
    error points to ``.tsv``, where they are fine.
    """

    p = Path(path)
    if p.is_dir():
        raise FinegrainError(f"--out {str(p)!r} is a folder", "give a file name, e.g. --out qrels.trec")
    try:
        if p.name.endswith((".tsv", ".tsv.gz")):
            write_qrels_tsv(export.qrels, p)
        else:
            write_qrels(export.qrels, p)
    except OSError as e:
        raise FinegrainError(f"cannot write {str(p)!r}: {e.strerror or e}", "choose a writable --out") from None
    return p
