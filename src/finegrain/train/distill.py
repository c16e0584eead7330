"""Label-free distillation data: a teacher retriever relabels generated training pairs over their passage pool.

The pairs of ``finegrain gen-queries`` say only "this query was generated from this passage". A teacher
-- any registered retriever, a fusion of several included (``hybrid-use``: BM25 + e5 + e5-sparse +
USE-m3 by RRF) -- ranks the whole pool for every query, and :func:`relabel` rewrites each pair from
that ranking:

* **The positive** is the source passage (the one the query was generated from) when the teacher ranks
  it within its top ``source_k``; otherwise the teacher's top-1 (``unconfirmed="teacher"``), or the
  pair is dropped (``unconfirmed="drop"``: round-trip filtering, Dai et al., 2022, Promptagator).
  Why the source first: the query was written from it, so it matches by construction, and a teacher
  that ranks it near the top confirms that; trading it for the teacher's top-1 would replace a known
  match by the teacher's pick among near-duplicates. A source the teacher ranks far down means the
  query fits other passages better than its own (a keyword many passages share, a summary that lost
  the detail that set its passage apart), and the teacher's top-1 is then the better label.
  ``source_k=1`` is "always the teacher's top-1". A passage with the same text as the source counts as
  the source (pools repeat captions).
* **Hard negatives** are the teacher's ranks ``window = (first, last)`` (1-based, inclusive), best
  first, without any positive or source passage of the same query text (nor a passage with the text of
  one, or of the query), minus **false negatives** by GIST's rule (Solatorio, 2024, GISTEmbed, as
  sentence-transformers' ``GISTEmbedLoss`` spells its margins): with ``s+`` the teacher's score of the
  pair's positive, a candidate scoring above ``s+ - margin`` (``"absolute"``) or
  ``s+ - |s+| * margin`` (``"relative"``) is dropped. Relative with margin 0.05 is NV-Retriever's
  TopK-PercPos (Moreira et al., 2024: a negative must score below 95% of the positive); it reads the
  teacher's own scale (RRF sums, BM25 scores, cosines), so one margin suits any teacher whose scores are
  positive. The first ``negatives`` survivors are kept; a pair left with fewer is dropped, so every record
  holds the same number, as ``finegrain train`` requires.
* With ``scores_k``, the teacher's top ``scores_k`` passages (ids, texts and scores) ride along with each
  pair as ``"teacher_top"``: ``finegrain train --kl-weight`` fits the student's distribution over them to
  the teacher's (:mod:`finegrain.train.finetune`).

Records that end with the same query and positive are one pair (``duplicate``); negatives the input
already holds are replaced by the teacher's. :func:`relabel` is pure
(pairs, pool, rankings in; pairs and :class:`DistillCounts` out); :func:`distill` reads the pool, runs the
teacher and writes nothing; :meth:`Distilled.write` writes the pairs (``"negatives"`` as texts) and the
provenance sidecar (teacher, rule, counts, the input's provenance). A pool that is an evaluation dataset
makes the output transductive for it, as a dataset pool makes ``gen-queries``' pairs
(:mod:`finegrain.train.queries`); transductive input pairs stay so.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from tqdm.auto import tqdm

from finegrain.atomic import write_text
from finegrain.build.textset import TextSet, read_text_set
from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.frozen import EMPTY
from finegrain.io._lines import open_text_write
from finegrain.retrieve.registry import RETRIEVERS, get_retriever
from finegrain.train.finetune_data import Pair, PairsFile, read_pairs
from finegrain.train.queries import Pool, check_lang, read_pool
from finegrain.types import Corpus, Document, Queries, Query, Run
from finegrain.version import __version__

MARGIN_STRATEGIES: tuple[str, ...] = ("absolute", "relative")
UNCONFIRMED: tuple[str, ...] = ("teacher", "drop")
#: Why a record is not written, in the order the checks run.
DROP_REASONS: tuple[str, ...] = ("no_ranking", "unconfirmed", "duplicate", "too_few_negatives")


@dataclass(frozen=True)
class DistillRule:
    """How a teacher's ranking relabels a pair (see the module docstring)."""

    source_k: int = 3
    window: tuple[int, int] = (10, 50)
    negatives: int = 1
    margin: float = 0.05
    margin_strategy: str = "relative"
    unconfirmed: str = "teacher"
    scores_k: int = 0

    def __post_init__(self) -> None:
        for name, value, low in (("source_k", self.source_k, 1), ("negatives", self.negatives, 1),
                                 ("scores_k", self.scores_k, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise FinegrainError(f"{name}={value!r} is not a whole number >= {low}",
                                     f"give {name.replace('_', '-')} as a whole number, {low} or more")
        first, last = self.window
        if not (isinstance(first, int) and isinstance(last, int)) or not 1 <= first <= last:
            raise FinegrainError(f"window {first!r}:{last!r} is not FIRST:LAST ranks with 1 <= FIRST <= LAST",
                                 "give teacher ranks, e.g. --window 10:50")
        if last - first + 1 < self.negatives:
            raise FinegrainError(f"window {first}:{last} holds {last - first + 1} ranks, fewer than "
                                 f"{self.negatives} negatives", "widen --window or ask for fewer --negatives")
        if isinstance(self.margin, bool) or not isinstance(self.margin, (int, float)) or not 0 <= self.margin < 1e6:
            raise FinegrainError(f"margin={self.margin!r} is not a number in [0, 1e6)", "e.g. --margin 0.05")
        if self.margin_strategy not in MARGIN_STRATEGIES:
            raise UnknownNameError("margin strategy", str(self.margin_strategy), MARGIN_STRATEGIES)
        if self.unconfirmed not in UNCONFIRMED:
            raise UnknownNameError("rule for an unconfirmed source", str(self.unconfirmed), UNCONFIRMED)

    @property
    def depth(self) -> int:
        """How many of the teacher's passages each query needs."""
        return max(self.source_k, self.window[1], self.scores_k)

    def threshold(self, positive: float) -> float:
        """A candidate scoring above this is a false negative of a positive scoring ``positive`` (GIST)."""
        if self.margin_strategy == "absolute":
            return positive - self.margin
        return positive - abs(positive) * self.margin

    def to_json(self) -> dict[str, Any]:
        return {"source_k": self.source_k, "window": list(self.window), "negatives": self.negatives,
                "margin": self.margin, "margin_strategy": self.margin_strategy, "unconfirmed": self.unconfirmed,
                "scores_k": self.scores_k}


@dataclass(frozen=True)
class Ranking:
    """A teacher's ranked passages for one query, best first, with their scores (and, once looked up in the
    pool, their texts)."""

    ids: tuple[str, ...]
    scores: tuple[float, ...]
    texts: tuple[str, ...] = ()

    @classmethod
    def from_run(cls, run: Run, qid: str, k: int) -> Ranking:
        """The top ``k`` of ``qid`` in ``run``, in the one ranking order; empty when the run has no entry."""
        if qid not in run:
            return cls((), ())
        ids = tuple(run.ranked(qid, k))
        row = run[qid]
        return cls(ids, tuple(float(row[d]) for d in ids))


@dataclass(frozen=True)
class DistilledPair:
    """One relabelled pair: the positive (``positive_from`` ``"source"`` or ``"teacher"``, its teacher rank and
    score), the source it replaced or kept, the hard negatives and, when asked for, the teacher's top scores."""

    query: str
    passage: str
    passage_id: str
    style: str | None
    positive_from: str
    teacher_rank: int
    teacher_score: float
    source_passage_id: str | None
    negatives: tuple[str, ...]
    negative_ids: tuple[str, ...]
    line: int
    teacher_top: Ranking | None = None
    group: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"query": self.query, "passage": self.passage, "passage_id": self.passage_id,
                               "style": self.style, "group": self.group, "negatives": list(self.negatives),
                               "negative_ids": list(self.negative_ids), "positive_from": self.positive_from,
                               "teacher_rank": self.teacher_rank, "teacher_score": self.teacher_score,
                               "source_passage_id": self.source_passage_id}
        if self.teacher_top is not None:
            out["teacher_top"] = {"ids": list(self.teacher_top.ids), "texts": list(self.teacher_top.texts),
                                  "scores": list(self.teacher_top.scores)}
        return out


@dataclass(frozen=True)
class DistillCounts:
    """What :func:`relabel` did. ``records`` input pairs, ``queries`` distinct query texts ranked, of which
    ``queries_kept`` have a pair written; of the records, ``kept`` were written (``positive_source`` kept their source, ``positive_teacher`` took the
    teacher's top-1) and ``dropped`` were not, by reason (:data:`DROP_REASONS`); ``source_outside_pool``
    records name a passage the pool does not hold. Over the pairs whose negatives were chosen (the kept and
    the ``too_few_negatives``): ``candidates`` window passages looked at, ``false_negatives`` of them dropped
    by the margin rule; ``negatives`` were written."""

    records: int
    queries: int
    kept: int
    queries_kept: int
    positive_source: int
    positive_teacher: int
    dropped: Mapping[str, int]
    source_outside_pool: int
    candidates: int
    false_negatives: int
    negatives: int

    def to_json(self) -> dict[str, Any]:
        return {"records": self.records, "queries": self.queries, "kept": self.kept, "queries_kept": self.queries_kept,
                "positive_source": self.positive_source, "positive_teacher": self.positive_teacher,
                "dropped": dict(self.dropped), "source_outside_pool": self.source_outside_pool,
                "candidates": self.candidates, "false_negatives": self.false_negatives, "negatives": self.negatives}


# --------------------------------------------------------------------------- the pure core


def relabel(pairs: Sequence[Pair], pool: Mapping[str, str], rankings: Mapping[str, Ranking],
            rule: DistillRule, groups: Mapping[str, str | None] | None = None,
            ) -> tuple[tuple[DistilledPair, ...], DistillCounts]:
    """``pairs`` relabelled by the teacher's ``rankings`` (query text -> :class:`Ranking` over ``pool``, a
    mapping passage id -> text), by ``rule``; the pairs in input order and what was done (module docstring).
    Each pair keeps its positive's sibling group: the record's own for its source, else ``groups`` (pool
    id -> group), so ``finegrain train --avoid-false-negatives`` still sees the captions of one image.

    A query text without a ranking, or with an empty one, drops its records (``no_ranking``). A ranked id
    that ``pool`` does not hold is an error: the rankings were made over another pool.
    """
    first_id: dict[str, str] = {}
    for pid, text in pool.items():
        first_id.setdefault(text, pid)
    by_query: dict[str, list[Pair]] = {}
    for p in pairs:
        by_query.setdefault(p.query, []).append(p)

    dropped = dict.fromkeys(DROP_REASONS, 0)
    out: list[DistilledPair] = []
    outside = candidates = false_negatives = 0
    for query, records in by_query.items():
        ranking = rankings.get(query) or Ranking((), ())
        texts = [_text_of(pool, pid) for pid in ranking.ids]
        sources = [_source_id(p, pool, first_id) for p in records]
        outside += sum(s is None for s in sources)
        if not ranking.ids:
            dropped["no_ranking"] += len(records)
            continue
        rank_of_text: dict[str, int] = {}
        for rank, t in enumerate(texts, start=1):
            rank_of_text.setdefault(t, rank)
        chosen: list[tuple[Pair, str | None, int] | None] = []  # (record, source id, positive's rank)
        for p, source in zip(records, sources, strict=True):
            at = rank_of_text.get(p.passage)
            if at is not None and at <= rule.source_k:
                chosen.append((p, source, at))
            elif rule.unconfirmed == "drop":
                chosen.append(None)
                dropped["unconfirmed"] += 1
            else:
                chosen.append((p, source, 1))
        # never a negative: the query, any positive or source of this query text, by text
        barred = {query, *(p.passage for p in records)}
        barred.update(texts[c[2] - 1] for c in chosen if c is not None)
        seen: set[tuple[str, str]] = set()
        for c in chosen:
            if c is None:
                continue
            p, source, r = c
            positive = texts[r - 1]
            if (query, positive) in seen:
                dropped["duplicate"] += 1
                continue
            seen.add((query, positive))
            picked, looked, false = _negatives(ranking, texts, barred, rule.threshold(ranking.scores[r - 1]), rule)
            candidates += looked
            false_negatives += false
            if len(picked) < rule.negatives:
                dropped["too_few_negatives"] += 1
                continue
            from_source = p.passage == positive
            pid = source if from_source and source is not None else ranking.ids[r - 1]
            group = p.group if from_source and p.group is not None else (groups or {}).get(pid)
            out.append(DistilledPair(
                query, positive, pid, p.style, "source" if from_source else "teacher", r, ranking.scores[r - 1],
                source, tuple(texts[i] for i in picked), tuple(ranking.ids[i] for i in picked), p.line,
                Ranking(ranking.ids[:rule.scores_k], ranking.scores[:rule.scores_k], tuple(texts[:rule.scores_k]))
                if rule.scores_k else None,
                group))
    out.sort(key=lambda d: d.line)
    kept_source = sum(d.positive_from == "source" for d in out)
    counts = DistillCounts(len(pairs), len(by_query), len(out), len({d.query for d in out}), kept_source,
                           len(out) - kept_source, MappingProxyType(dropped), outside, candidates, false_negatives,
                           sum(len(d.negatives) for d in out))
    return tuple(out), counts


def _negatives(ranking: Ranking, texts: Sequence[str], barred: set[str], limit: float,
               rule: DistillRule) -> tuple[list[int], int, int]:
    """The first ``rule.negatives`` positions of the window whose text is not barred (nor taken) and whose
    score is at most ``limit``; and over the whole window, the candidates looked at and those above ``limit``."""
    picked: list[int] = []
    used: set[str] = set()
    looked = above = 0
    first, last = rule.window
    for i in range(first - 1, min(last, len(ranking.ids))):
        t = texts[i]
        if t in barred or t in used:
            continue
        looked += 1
        if ranking.scores[i] > limit:
            above += 1
        elif len(picked) < rule.negatives:
            picked.append(i)
            used.add(t)
    return picked, looked, above


def _text_of(pool: Mapping[str, str], pid: str) -> str:
    try:
        return pool[pid]
    except KeyError:
        raise FinegrainError(f"the teacher ranked passage {pid!r}, which the pool does not hold",
                             "rank the same pool the pairs are relabelled over") from None


def _source_id(p: Pair, pool: Mapping[str, str], first_id: Mapping[str, str]) -> str | None:
    """The pool id of the record's passage: its ``passage_id`` when the pool holds it with that text, else the
    first pool passage with its text; ``None`` when the pool holds no such text."""
    if p.key.startswith("id:") and pool.get(p.key[3:]) == p.passage:
        return p.key[3:]
    return first_id.get(p.passage)


# --------------------------------------------------------------------------- the driver


@dataclass(frozen=True)
class Distilled:
    """The relabelled pairs, what was done, and the provenance written next to them."""

    pairs: tuple[DistilledPair, ...]
    counts: DistillCounts
    provenance: Mapping[str, Any] = field(default_factory=lambda: EMPTY)

    def write(self, path: str | Path) -> Path:
        """The pairs as JSON lines at ``path`` (gzipped for ``.gz``) and ``path + .provenance.json``."""
        if not self.pairs:
            raise FinegrainError("no pair is left to write: " + _dropped_text(self.counts),
                                 "widen --window, raise --source-k, or lower --negatives")
        out = Path(path)
        with open_text_write(out) as f:
            for p in self.pairs:
                f.write(json.dumps(p.to_json(), ensure_ascii=False) + "\n")
        side = out.with_name(out.name + ".provenance.json")
        # default=str: an option given from Python as an object (an Encoder) is recorded by its name
        write_text(side, json.dumps(dict(self.provenance), ensure_ascii=False, indent=2, default=str) + "\n")
        return out


def _dropped_text(counts: DistillCounts) -> str:
    return ", ".join(f"{n} {reason.replace('_', ' ')}" for reason, n in counts.dropped.items() if n) or "none dropped"


def teacher_queries(pairs: Sequence[Pair]) -> Queries:
    """The queries the teacher ranks: each distinct query text once, as ``q0``, ``q1``, ... in the order
    the texts first appear in ``pairs``. A run saved over these ids is a teacher too (the ``run``
    retriever), so a teacher that cannot run here can rank them elsewhere."""
    texts = list(dict.fromkeys(p.query for p in pairs))
    return Queries(Query(f"q{n}", t) for n, t in enumerate(texts))


def distill(pairs: str | Path | PairsFile, pool: str | Path, *, retriever: str,
            retriever_options: Mapping[str, Any] | None = None, rule: DistillRule | None = None,
            lang: str | None = None, show_progress: bool = True) -> Distilled:
    """Relabel the pairs file ``pairs`` with the teacher ``retriever`` (a registered name and its options)
    over ``pool`` (a JSON-lines corpus, a BEIR folder or a dataset name: its passages). ``lang`` is the
    pool's language (a dataset's own by default). Nothing is written (:meth:`Distilled.write`)."""
    rule = rule or DistillRule()
    options = RETRIEVERS.check(retriever, dict(retriever_options or {}))
    data = pairs if isinstance(pairs, PairsFile) else read_pairs(pairs)
    ts = read_text_set(pool, "passages")
    if lang is None and ts.lang is None:
        raise FinegrainError(f"the language of the pool {ts.source!r} is not known", "add --lang zh or --lang en")
    read = read_pool(ts)
    language = str(check_lang(read, lang if lang is not None else str(ts.lang)))  # gen-queries' rule
    teacher = get_retriever(retriever, **options)
    corpus = Corpus(Document(i.id, i.text, i.title) for i in ts.items)
    queries = teacher_queries(data.pairs)
    qids, texts = list(queries), [queries[q].text for q in queries]
    started = time.perf_counter()
    run = teacher.retrieve(corpus, queries, lang=language, top_k=rule.depth, show_progress=show_progress)
    seconds = time.perf_counter() - started
    rankings = {t: Ranking.from_run(run, q, rule.depth)
                for q, t in zip(tqdm(qids, desc="teacher rankings", unit="query", disable=not show_progress,
                                     leave=False, file=sys.stderr), texts, strict=True)}
    out, counts = relabel(data.pairs, {i.id: i.text for i in ts.items}, rankings, rule, read.groups)
    return Distilled(out, counts, MappingProxyType(_provenance(data, ts, read, retriever, options, teacher,
                                                               language, rule, counts, seconds)))


def _provenance(data: PairsFile, ts: TextSet, p: Pool, retriever: str, options: Mapping[str, Any], teacher: Any,
                lang: str, rule: DistillRule, counts: DistillCounts, seconds: float) -> dict[str, Any]:
    """The sidecar: input, pool, teacher, rule, counts; transductive for the pool's dataset, else the input's."""
    given = data.provenance if isinstance(data.provenance, Mapping) else {}
    pool_dataset = ts.source if ts.format == "dataset" else None
    input_dataset = given.get("transductive_dataset") if given.get("transductive") else None
    dataset = pool_dataset or input_dataset
    datasets = list(dict.fromkeys(d for d in (pool_dataset, input_dataset) if d))
    return {
        "kind": "distill",
        "input": {"path": str(data.path), "sha256": data.sha256, "records": len(data.pairs),
                  "provenance": data.provenance},
        "pool": ts.source, "pool_sha256": p.sha256, "pool_sha256_of": p.sha256_of, "pool_passages": len(ts.items),
        "lang": lang,
        "teacher": {"retriever": retriever, "options": dict(options), "config": teacher.config(),
                    "depth": rule.depth, "seconds": round(seconds, 3)},
        "rule": rule.to_json(),
        "counts": counts.to_json(),
        "pairs": counts.kept,
        "finegrain_version": __version__,
        "transductive": dataset is not None, "transductive_dataset": dataset,
        **({"transductive_datasets": datasets} if len(datasets) > 1 else {}),
    }

