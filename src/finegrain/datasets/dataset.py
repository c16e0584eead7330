"""One dataset: a frozen (corpus, queries, qrels, lang, meta), and how a loader assembles it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from finegrain.frozen import EMPTY
from finegrain.text.lang import detect_lang, parse_lang
from finegrain.types import Corpus, Qrels, Queries


@dataclass(frozen=True)
class Dataset:
    """A corpus, its queries and their judgements, with provenance.

    ``meta`` always has ``format``, ``path``, ``source``, ``license``,
    ``citation`` and ``fully_judged`` (True when every query-document pair
    is judged, so an unlisted document is a true 0; False when unlisted
    documents are unjudged); loaders add what they know (``types_unmatched``,
    ``provenance`` file, ...).
    """

    name: str
    corpus: Corpus
    queries: Queries
    qrels: Qrels
    lang: str
    meta: Mapping[str, Any] = field(default_factory=lambda: EMPTY)

    def __post_init__(self) -> None:
        if not isinstance(self.meta, MappingProxyType):
            object.__setattr__(self, "meta", MappingProxyType(dict(self.meta)))

    @property
    def zero_answer_qids(self) -> tuple[str, ...]:
        """Queries with no relevant document (grade >= 1) in the qrels."""
        return tuple(q for q in self.queries if q in self.qrels and not self.qrels.has_relevant(q))

    def summary(self) -> dict[str, Any]:
        """Counts for a report header: documents, queries, judgements, zero-answer queries, types."""
        types = Counter(q.type for q in self.queries.values() if q.type is not None)
        return {
            "name": self.name,
            "lang": self.lang,
            "documents": len(self.corpus),
            "queries": len(self.queries),
            "judged_queries": sum(1 for q in self.queries if q in self.qrels),
            "judgements": self.qrels.n_entries,
            "zero_answer_queries": len(self.zero_answer_qids),
            "typed_queries": sum(types.values()),
            "types": dict(sorted(types.items())),
            "fully_judged": bool(self.meta.get("fully_judged", False)),
        }

    def __repr__(self) -> str:
        return (
            f"Dataset({self.name!r}, lang={self.lang!r}, {len(self.corpus)} documents, "
            f"{len(self.queries)} queries, {self.qrels.n_entries} judgements)"
        )


def make_dataset(
    name: str, fmt: str, folder: Path, corpus: Corpus, queries: Queries, qrels: Qrels, lang: str,
    info: dict[str, Any],
) -> Dataset:
    meta = {"format": fmt, "path": str(folder), "lang": lang, **info}
    prov = _provenance_file(folder)
    if prov is not None:
        meta["provenance"] = str(prov)
    return Dataset(name, corpus, queries, qrels, lang, MappingProxyType(meta))


def _provenance_file(folder: Path) -> Path | None:
    for d in (folder, folder.parent, folder.parent.parent):
        if (d / "PROVENANCE.md").is_file():
            return d / "PROVENANCE.md"
    return None


def lang_of_folder(folder: Path, queries: Queries) -> str:
    if folder.name.lower() in ("zh", "cn", "en"):
        return parse_lang(folder.name)
    return detect_lang("".join(q.text for q in list(queries.values())[:200]), min_share=0.3)
