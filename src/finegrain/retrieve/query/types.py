"""A query's type predicted from its text alone, for routing fusion weights by type (``hybrid-routed``).

:class:`QueryTypePredictor` is a multinomial naive Bayes classifier (add-one
smoothing, class priors from the training queries) over surface features of
the query text, chosen a priori and language-agnostic:

* the query's units -- each CJK character, each run of Latin letters or
  digits (lower-cased), each other non-space symbol (``+``, ``,``, ``，``);
* adjacent unit pairs, with ``^`` and ``$`` marking the start and the end
  (``^猫``, ``的猫``, ``猫$``: where a modifier or a head noun sits);
* the length in units, capped at 12 (``len:3``).

It is **trained**, never hand-written: :meth:`QueryTypePredictor.fit` takes
query texts and their gold types; :func:`finegrain.retrieve.fusion.routed` fits one
per cross-validation fold on the other folds' queries only, so a query's
predicted type never comes from its own gold type. :meth:`~QueryTypePredictor.predict`
reads only texts.

:func:`route_of` maps a type to a route (a group of types sharing fusion
weights). ``routes="paper"`` follows the CapRetrieval paper's own split of its
eight types (§2 and Appendix B.1): Singleton Entity (person, place, object,
concept) and Singleton Event are ``plain`` phrases "without imposing extra
conditions"; conjunction, simple and complex condition are ``constrained``. A
type name outside the paper's eight is a route of its own. ``routes="types"``:
each type is its own route.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from finegrain.errors import FinegrainError

#: how types are grouped into routes (see the module docstring)
ROUTES: tuple[str, ...] = ("paper", "types")
PLAIN = "plain"
CONSTRAINED = "constrained"
#: the CapRetrieval paper's query types (Appendix B.1) and their route under ``routes="paper"``
PAPER_ROUTES: Mapping[str, str] = MappingProxyType({
    "singleton_object": PLAIN, "singleton_person": PLAIN, "singleton_place": PLAIN,
    "singleton_concept": PLAIN, "singleton_event": PLAIN,
    "conjunction": CONSTRAINED, "simple_condition": CONSTRAINED, "complex_condition": CONSTRAINED,
})
MAX_LEN = 12
ALPHA = 1.0  # add-one (Laplace) smoothing, fixed a priori

_CJK = "\u3400-\u9fff\uf900-\ufaff"
_UNIT = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+|[^\w\s]", re.UNICODE)


def units(text: str) -> list[str]:
    """The query's units: CJK characters, Latin/digit runs (lower-cased), other symbols."""
    return _UNIT.findall(text.lower())


def features(text: str) -> list[str]:
    """Units, boundary-marked unit pairs and a capped length: the predictor's features."""
    u = units(text)
    marked = ["^", *u, "$"]
    return [*(f"u:{x}" for x in u), *(f"b:{a}|{b}" for a, b in zip(marked, marked[1:])),
            f"len:{min(len(u), MAX_LEN)}"]


def route_of(query_type: str | None, routes: str = "paper") -> str | None:
    """The route of a (predicted) query type; None stays None (no type, no route)."""
    if routes not in ROUTES:
        raise FinegrainError(f"routes={routes!r} is not a way of grouping query types",
                             f"use one of {', '.join(map(repr, ROUTES))}")
    if query_type is None or routes == "types":
        return query_type
    return PAPER_ROUTES.get(query_type, query_type)


@dataclass(frozen=True)
class QueryTypePredictor:
    """A fitted naive Bayes query-type classifier (build it with :meth:`fit`)."""

    classes: tuple[str, ...]
    log_prior: tuple[float, ...]
    #: per class: feature -> log P(feature | class); unseen features use ``unseen[class]``
    log_likelihood: tuple[Mapping[str, float], ...] = field(repr=False)
    unseen: tuple[float, ...] = field(repr=False)
    vocabulary: frozenset[str] = field(repr=False)
    n_train: int = 0

    @classmethod
    def fit(cls, texts: Sequence[str], types: Sequence[str | None]) -> QueryTypePredictor:
        """Fit on ``texts`` and their gold ``types`` (a None type is skipped: nothing to learn)."""
        if len(texts) != len(types):
            raise FinegrainError(f"{len(texts)} texts for {len(types)} types", "give one type per text")
        pairs = [(t, y) for t, y in zip(texts, types) if y is not None]
        if not pairs:
            raise FinegrainError("no training query has a type", "fit the predictor on queries with known types")
        classes = tuple(sorted({y for _, y in pairs}))
        counts: dict[str, Counter[str]] = {c: Counter() for c in classes}
        docs = Counter(y for _, y in pairs)
        for t, y in pairs:
            counts[y].update(features(t))
        vocab = frozenset(f for c in classes for f in counts[c])
        v = len(vocab)
        log_prior, tables, unseen = [], [], []
        for c in classes:
            total = sum(counts[c].values()) + ALPHA * v
            tables.append(MappingProxyType({f: math.log((n + ALPHA) / total) for f, n in counts[c].items()}))
            unseen.append(math.log(ALPHA / total))
            log_prior.append(math.log(docs[c] / len(pairs)))
        return cls(classes, tuple(log_prior), tuple(tables), tuple(unseen), vocab, len(pairs))

    def scores(self, text: str) -> tuple[float, ...]:
        """Log joint probability per class (features never seen in training are ignored)."""
        feats = [f for f in features(text) if f in self.vocabulary]
        return tuple(p + sum(tab.get(f, u) for f in feats)
                     for p, tab, u in zip(self.log_prior, self.log_likelihood, self.unseen))

    def predict_one(self, text: str) -> str:
        """The most probable type (ties: the first class in sorted order)."""
        s = self.scores(text)
        return self.classes[max(range(len(s)), key=lambda i: (s[i], -i))]

    def predict(self, texts: Sequence[str]) -> list[str]:
        return [self.predict_one(t) for t in texts]


@dataclass(frozen=True)
class Accuracy:
    """Predicted vs gold types (queries with a gold type only): overall, per route and a confusion table."""

    n: int
    correct: int
    route_correct: int
    confusion: Mapping[str, Mapping[str, int]]  # gold -> predicted -> count

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.n if self.n else None

    @property
    def route_accuracy(self) -> float | None:
        return self.route_correct / self.n if self.n else None

    def to_json_dict(self) -> dict[str, object]:
        return {"n": self.n, "accuracy": self.accuracy, "route_accuracy": self.route_accuracy,
                "confusion": {g: dict(p) for g, p in self.confusion.items()}}


def accuracy(gold: Mapping[str, str | None], predicted: Mapping[str, str], routes: str = "paper") -> Accuracy:
    """Score ``predicted`` (``{qid: type}``) against ``gold`` over the queries with a gold type."""
    qids = [q for q in predicted if gold.get(q) is not None]
    confusion: dict[str, Counter[str]] = {}
    correct = route_correct = 0
    for q in qids:
        g, p = gold[q] or "", predicted[q]  # never None here (filtered above)
        confusion.setdefault(g, Counter())[p] += 1
        correct += g == p
        route_correct += route_of(g, routes) == route_of(p, routes)
    return Accuracy(len(qids), correct, route_correct,
                    MappingProxyType({g: MappingProxyType(dict(c)) for g, c in sorted(confusion.items())}))
