"""Source-type routing accuracy: the planner's predicted source type (V, M, F, VM, VF, MF,
VMF) against the ``Source`` labels of a PhotoBench album's queries.

``evaluate_routing(album, lang)`` plans every query with the rule-based planner (or a
given planner) and reports accuracy, the 7x7 confusion matrix (gold rows, predicted
columns), per-label precision/recall with their supports, and the accuracy on the
even- and odd-indexed halves of the query list (the rules were designed looking at the
even half; the odd half is held out), and the accuracy per query class (the queries'
``Class`` tags, else read off each plan: :mod:`finegrain.album.bench.classes`), with every
denominator explicit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from finegrain.album.bench.classes import derive_classes
from finegrain.album.engine.plan.records import SOURCE_TYPES, Plan
from finegrain.album.engine.plan.rules import plan_query
from finegrain.album.engine.plan.vocabulary import AlbumVocabulary
from finegrain.errors import FinegrainError
from finegrain.io.photobench import QUERY_CLASSES, photobench_lang

Planner = Callable[[str, AlbumVocabulary, str], Plan]


@dataclass(frozen=True, slots=True)
class LabelScore:
    label: str
    precision: float | None  # None when the label was never predicted
    recall: float | None  # None when the label has no gold query
    predicted: int
    support: int


@dataclass(frozen=True)
class RoutingReport:
    """Routing accuracy of one album in one language."""

    album: str
    lang: str
    n: int
    correct: int
    confusion: Mapping[str, Mapping[str, int]]  # gold -> predicted -> count
    per_label: tuple[LabelScore, ...]
    per_query: tuple[tuple[str, str, str, str], ...]  # (query id, text, gold, predicted)
    halves: Mapping[str, tuple[int, int]]  # "even"/"odd" -> (correct, n)
    by_class: Mapping[str, tuple[int, int]] = field(default_factory=lambda: MappingProxyType({}))  # tag -> (correct, n)
    class_origin: str = "derived"  # "gold" (the queries' Class field), "derived" (their plans) or "mixed"

    @property
    def accuracy(self) -> float:
        return self.correct / self.n if self.n else 0.0

    def half_accuracy(self, half: str) -> float:
        c, n = self.halves[half]
        return c / n if n else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            **{key: getattr(self, key) for key in ("album", "lang", "n", "correct", "accuracy")},
            "halves": {k: {"correct": c, "n": n, "accuracy": c / n if n else None} for k, (c, n) in self.halves.items()},
            "class_origin": self.class_origin,
            "by_class": {k: {"correct": c, "n": n, "accuracy": c / n if n else None} for k, (c, n) in self.by_class.items()},
            "labels": list(SOURCE_TYPES),
            "confusion": {g: dict(row) for g, row in self.confusion.items()},
            "per_label": [
                {"label": s.label, "precision": s.precision, "recall": s.recall, "predicted": s.predicted, "support": s.support}
                for s in self.per_label
            ],
            "per_query": [{"id": q, "text": t, "gold": g, "predicted": p} for q, t, g, p in self.per_query],
        }


def _rules(text: str, vocab: AlbumVocabulary, lang: str) -> Plan:
    return plan_query(text, vocab, lang=lang)


def evaluate_routing(album: Any, lang: str, *, planner: Planner | None = None) -> RoutingReport:
    """Plan every query of ``album`` (a PhotoBench :class:`Album`) in ``lang`` ('en', 'zh'/'cn')."""
    key = photobench_lang(lang)
    if not album.queries:
        raise FinegrainError(f"album {album.name!r} has no queries", "routing needs queries with a Source label")
    plan_lang = "en" if key == "en" else "zh"
    vocab = AlbumVocabulary.from_photobench(album, key)
    run = planner or _rules
    confusion = {g: dict.fromkeys(SOURCE_TYPES, 0) for g in SOURCE_TYPES}
    rows = []
    halves = {"even": [0, 0], "odd": [0, 0]}
    by_class: dict[str, list[int]] = {t: [0, 0] for t in QUERY_CLASSES}
    n_gold = 0
    for i, q in enumerate(album.queries):
        text = q.text(key)
        plan = run(text, vocab, plan_lang)
        pred = plan.source
        n_gold += q.classes is not None
        for tag in q.classes if q.classes is not None else derive_classes(plan, zero=q.is_zero_gt):
            by_class[tag][0] += pred == q.source
            by_class[tag][1] += 1
        confusion[q.source][pred] += 1
        rows.append((q.id, text, q.source, pred))
        h = halves["even" if i % 2 == 0 else "odd"]
        h[0] += pred == q.source
        h[1] += 1
    per_label = []
    for label in SOURCE_TYPES:
        tp = confusion[label][label]
        predicted = sum(confusion[g][label] for g in SOURCE_TYPES)
        support = sum(confusion[label].values())
        per_label.append(
            LabelScore(label, tp / predicted if predicted else None, tp / support if support else None, predicted, support)
        )
    return RoutingReport(
        album=album.name,
        lang=key,
        n=len(rows),
        correct=sum(g == p for _, _, g, p in rows),
        confusion=MappingProxyType({g: MappingProxyType(r) for g, r in confusion.items()}),
        per_label=tuple(per_label),
        per_query=tuple(rows),
        halves=MappingProxyType({k: (c, n) for k, (c, n) in halves.items()}),
        by_class=MappingProxyType({k: (c, n) for k, (c, n) in by_class.items() if n}),
        class_origin="gold" if n_gold == len(rows) else "derived" if not n_gold else "mixed",
    )
