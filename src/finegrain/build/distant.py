"""Distant labels: a passage is relevant to a query when some span of it matches an answer with F1 >= a threshold.

DuReader-retrieval labels its positives from the human-written DuReader
answers (Qiu et al., 2022, Sect. 2.2.2 and Algorithm 1): "We find all
possible spans (i.e., sub-strings) in the paragraph and calculate their
F1-score with all answers. If there is any span-answer pair that has a higher
F1-score than the threshold (0.5), we label the paragraph as positive";
Algorithm 1 tests ``F1(s, a) >= τ``. So a passage ``p`` is positive for a
query with answers ``A`` when

    max over answers a in A, over spans s of p of  F1(s, a)  >=  τ,

where a span is a contiguous run of the passage's units and ``F1`` is the
bag-of-units F1 of reading comprehension (SQuAD, DuReader): with ``c`` the
units ``s`` and ``a`` share counted with multiplicity, ``P = c/|s|``,
``R = c/|a|``, ``F1 = 2PR/(P+R) = 2c/(|s|+|a|)``. Units are those of
:mod:`finegrain.build.units`: characters in zh (a Latin word or number is one
unit), words in en; punctuation and whitespace are not units, so a span is
"a substring up to punctuation".

:func:`best_span` finds the best span exactly (no sampling): the best span
starts and ends on units of the answer (trimming any other end unit raises
precision and keeps ``c``), and for each start the shared count of every end
is a cumulative sum, computed for all starts at once with numpy. With a floor
``τ`` a span longer than ``|a|(2/τ - 1)`` units cannot reach it and is not
looked at; pairs whose whole-passage bound ``2c/(c+|a|)`` is below ``τ`` are
skipped before any span is scored.

Answers file (JSON lines), one query per line::

    {"query_id": "q1", "answers": ["answer one", "answer two"], "doc_ids": ["d3", "d7"]}

``query_id`` (also ``question_id``, DuReader's name, or ``_id`` / ``id``) and
``answers`` (a list of strings) are required; ``doc_ids`` is optional. When
it is given, only the passages of those documents are candidates for the
query, as DuReader labels the paragraphs of each question's own top-5
documents, and every candidate not labelled relevant is written with grade 0;
without it every passage is a candidate and only the relevant ones are
written. A passage's document is its record's ``doc_id`` (``finegrain
passages`` writes it), else the ``{doc_id}`` of an id ``{doc_id}#p{n}``, else
the passage id itself.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

import numpy as np

from finegrain.build.passages import doc_of
from finegrain.build.textset import TextItem, TextSet, as_text_set
from finegrain.build.units import shared_units, unit_spans
from finegrain.errors import DataFormatError, FinegrainError
from finegrain.io._lines import get_field, iter_id_records, open_text_write
from finegrain.io.ids import IdSyntax, check_ids
from finegrain.text.lang import Lang, detect_lang, parse_lang
from finegrain.types import Qrels

DEFAULT_THRESHOLD = 0.5
_CELLS = 1 << 20  # starts x span lengths scored at once by best_span


class SpanMatch(NamedTuple):
    """The best span of a passage for one answer: its F1 and character offsets in the passage text."""

    f1: float
    start: int
    end: int


@dataclass(frozen=True)
class DistantLabel:
    """A relevant (query, passage) pair: the best F1, the answer it matched and the span as written."""

    query_id: str
    passage_id: str
    f1: float
    answer: str
    span: str


@dataclass(frozen=True)
class Answers:
    """Queries' answers and, where given, their candidate documents (the file format is in the module docstring)."""

    answers: Mapping[str, tuple[str, ...]]
    doc_ids: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        for name in ("answers", "doc_ids"):
            value = getattr(self, name)
            if not isinstance(value, MappingProxyType):
                object.__setattr__(self, name, MappingProxyType({k: tuple(v) for k, v in value.items()}))


@dataclass(frozen=True)
class DistantLabels:
    """The outcome of labelling: the relevant pairs, the candidates judged not relevant, and the counts.

    ``negatives`` holds ``(query_id, passage_id)`` of explicit candidates (a
    query with ``doc_ids``) below the threshold; ``no_answer`` the queries
    none of whose answers has a unit; ``no_positive`` the queries with an
    answer but no relevant passage; ``n_scored`` the (answer, passage) pairs
    whose spans were scored (the others were ruled out by the bound);
    ``unknown_doc_ids`` the ``doc_ids`` of the answers file that no passage
    belongs to.
    """

    labels: tuple[DistantLabel, ...]
    negatives: tuple[tuple[str, str], ...]
    threshold: float
    lang: str
    n_queries: int
    n_passages: int
    no_answer: tuple[str, ...]
    no_positive: tuple[str, ...]
    n_scored: int
    unknown_doc_ids: tuple[str, ...] = ()

    @property
    def n_labelled_queries(self) -> int:
        return len({lb.query_id for lb in self.labels})

    def summary(self) -> str:
        return (f"{len(self.labels)} relevant passages for {self.n_labelled_queries} of {self.n_queries} queries "
                f"(span F1 >= {self.threshold:g}, {self.lang}); {len(self.no_positive)} queries without one, "
                f"{len(self.no_answer)} without a usable answer"
                + (f"; {len(self.unknown_doc_ids)} doc_ids match no passage" if self.unknown_doc_ids else ""))

    def to_qrels(self) -> Any:
        """A :class:`~finegrain.types.Qrels`: grade 1 for the relevant pairs, 0 for the explicit candidates below."""

        rows = [(lb.query_id, lb.passage_id, 1) for lb in self.labels] + [(q, p, 0) for q, p in self.negatives]
        rows.sort(key=lambda r: (r[0], -r[2], r[1]))
        return Qrels.from_records(rows)


# --------------------------------------------------------------------------- the best span


def span_f1(passage: str, answer: str, lang: str | Lang) -> SpanMatch:
    """The best span of ``passage`` for ``answer`` (F1 0 at ``(0, 0)`` when they share no unit)."""
    ps = unit_spans(passage, lang)
    f1, i, j = best_span([u for _, _, u in ps], [u for _, _, u in unit_spans(answer, lang)])
    if f1 <= 0:
        return SpanMatch(0.0, 0, 0)
    return SpanMatch(f1, ps[i][0], ps[j - 1][1])


def best_span(p_units: Sequence[str], a_units: Sequence[str], floor: float = 0.0) -> tuple[float, int, int]:
    """``(f1, i, j)``: the span ``p_units[i:j]`` with the highest F1 against the bag ``a_units``.

    Exact. With ``floor > 0`` spans too long to reach ``floor`` are not looked
    at, so a result below ``floor`` may not be the maximum (it is still an
    attained F1). Ties go to the earliest start, then the shortest span.
    ``(0.0, 0, 0)`` when no unit is shared.
    """
    m, n = len(a_units), len(p_units)
    if not m or not n:
        return 0.0, 0, 0
    need: dict[str, int] = {}
    for u in a_units:
        need[u] = need.get(u, 0) + 1
    # q[t]: a span starting at i counts unit t iff i > q[t] (t is among the first need[u] occurrences from i)
    q = np.arange(n, dtype=np.int64)
    occ: dict[str, list[int]] = {}
    starts = []
    for t, u in enumerate(p_units):
        k = need.get(u)
        if not k:
            continue
        seen = occ.setdefault(u, [])
        seen.append(t)
        q[t] = seen[-1 - k] if len(seen) > k else -1
        starts.append(t)
    if not starts:
        return 0.0, 0, 0
    length = n if floor <= 0 else min(n, int(m * (2.0 / floor - 1.0)) + 1)
    qpad = np.concatenate([q, np.full(length, np.iinfo(np.int64).max)])  # past the end: never counted
    st = np.asarray(starts, dtype=np.int64)
    d = np.arange(length, dtype=np.int64)
    denom = (d + 1 + m).astype(np.float64)
    best = (0.0, 0, 0)
    rows = max(1, _CELLS // length)
    for a in range(0, len(st), rows):
        s = st[a:a + rows]
        common = np.cumsum(qpad[s[:, None] + d[None, :]] < s[:, None], axis=1)
        f1 = 2.0 * common / denom
        k = int(np.argmax(f1))  # first maximum: earliest start, then shortest span
        r, c = divmod(k, length)
        if f1[r, c] > best[0]:
            best = (float(f1[r, c]), int(s[r]), int(s[r]) + c + 1)
    return best


# --------------------------------------------------------------------------- labelling


def distant_label(passages: Any, answers: Answers | Mapping[str, Sequence[str]], *,
                  threshold: float = DEFAULT_THRESHOLD, lang: str | Lang | None = None) -> DistantLabels:
    """Label every candidate passage of every query (see the module docstring).

    ``passages`` is anything :func:`finegrain.build.textset.as_text_set` reads
    as passages (the ``corpus.jsonl`` of ``finegrain passages``, whose records
    name their document, a corpus file, a dataset name, a mapping ``id ->
    text``); ``answers`` an :class:`Answers` or a mapping ``query_id ->
    answers``. ``lang`` defaults to the dataset's, else detected.
    """
    thr = check_threshold(threshold)
    ans = answers if isinstance(answers, Answers) else Answers({q: tuple(a) for q, a in answers.items()})
    ps = as_text_set(passages, "passages")
    language = _lang(lang, ps, ans)
    p_spans = [unit_spans(t, language) for t in ps.texts]
    p_units = [[u for _, _, u in sp] for sp in p_spans]
    rows: list[tuple[str, int, list[str]]] = []  # (query, answer index, units)
    no_answer = []
    for qid, texts in ans.answers.items():
        usable = [(k, [u for _, _, u in unit_spans(t, language)]) for k, t in enumerate(texts)]
        usable = [(k, us) for k, us in usable if us]
        if not usable:
            no_answer.append(qid)
        rows.extend((qid, k, us) for k, us in usable)
    candidates = _candidates(ps, ans)
    best: dict[tuple[str, int], tuple[float, int, int, int]] = {}  # (query, passage row) -> f1, answer, span
    scored = 0
    # a span shares at most c units with the answer: F1 <= 2c / (c + |a|); pairs below the threshold by it are out
    bound = lambda c, la, lb: 2 * c >= thr * (c + la)  # noqa: E731
    for r, j, _ in shared_units([us for _, _, us in rows], p_units, keep=bound):
        qid, k, us = rows[r]
        allowed = candidates.get(qid)
        if allowed is not None and j not in allowed:
            continue
        scored += 1
        f1, i0, i1 = best_span(p_units[j], us, floor=thr)
        if f1 >= thr and f1 > best.get((qid, j), (0.0,))[0]:
            best[(qid, j)] = (f1, k, i0, i1)
    labels = []
    for (qid, j), (f1, k, i0, i1) in sorted(best.items(), key=lambda x: (x[0][0], x[0][1])):
        sp = p_spans[j]
        text = ps.items[j].text
        labels.append(DistantLabel(qid, ps.items[j].id, f1, ans.answers[qid][k], text[sp[i0][0]:sp[i1 - 1][1]]))
    positive = {(lb.query_id, lb.passage_id) for lb in labels}
    negatives = tuple((qid, ps.items[j].id) for qid, allowed in candidates.items() for j in sorted(allowed)
                      if qid not in no_answer and (qid, ps.items[j].id) not in positive)
    labelled = {lb.query_id for lb in labels}
    no_positive = tuple(q for q in ans.answers if q not in labelled and q not in no_answer)
    known_docs = {_document(item) for item in ps.items}
    unknown = tuple(sorted({d for docs in ans.doc_ids.values() for d in docs if d not in known_docs}))
    return DistantLabels(tuple(labels), negatives, thr, str(language), len(ans.answers), len(ps),
                         tuple(no_answer), no_positive, scored, unknown)


def check_threshold(threshold: float) -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0 < threshold <= 1:
        raise FinegrainError(f"threshold {threshold!r} is outside (0, 1]", "DuReader uses --threshold 0.5")
    return float(threshold)


def _lang(lang: str | Lang | None, ps: TextSet, ans: Answers) -> Lang:
    if lang is not None:
        return parse_lang(lang)
    if ps.lang:
        return parse_lang(ps.lang)
    sample = " ".join([*ps.texts[:200], *(a for texts in list(ans.answers.values())[:200] for a in texts)])
    return detect_lang(sample, min_share=0.3)


def _document(item: TextItem) -> str:
    """A passage's document: its record's ``doc_id``, else what its id ``{doc_id}#p{n}`` names, else its id."""

    return item.doc_id or doc_of(item.id)


def _candidates(ps: TextSet, ans: Answers) -> dict[str, set[int]]:
    """``{query: passage rows}`` for the queries with ``doc_ids``."""
    by_doc: dict[str, list[int]] = {}
    for j, item in enumerate(ps.items):
        by_doc.setdefault(_document(item), []).append(j)
    out: dict[str, set[int]] = {}
    for qid, docs in ans.doc_ids.items():
        out[qid] = {j for d in docs for j in by_doc.get(d, ())}
    return out


# --------------------------------------------------------------------------- files


def read_answers(path: str | Path) -> Answers:
    """An answers file (JSON lines; see the module docstring), checked: each query once, answers a list of strings."""

    answers: dict[str, tuple[str, ...]] = {}
    docs: dict[str, tuple[str, ...]] = {}
    for n, qid, obj in iter_id_records(path, ("query_id", "question_id", "_id", "id"), "query id"):
        values = get_field(path, n, obj, "answers", kind="list")
        bad = [v for v in values if not isinstance(v, str)]  # null too: it is no answer text
        if bad:
            raise DataFormatError(path, n, "answers as a list of strings", json.dumps(bad[0], ensure_ascii=False),
                                  "write each answer as a string")
        answers[qid] = tuple(values)
        if obj.get("doc_ids") is not None:
            ids = get_field(path, n, obj, "doc_ids", kind="list")
            if any(not isinstance(d, str | int) or isinstance(d, bool) for d in ids):
                raise DataFormatError(path, n, "doc_ids as a list of document ids", repr(ids))
            docs[qid] = tuple(str(d) for d in ids)
    if not answers:
        raise DataFormatError(path, None, "one {\"query_id\", \"answers\"} object per line", "no record",
                              "write the answers file as JSON lines")
    return Answers(answers, docs)


def write_qrels(labels: DistantLabels, path: str | Path) -> Path:
    """BEIR qrels (``query-id corpus-id score`` with a header): 1 for relevant, 0 for explicit candidates below.

    Written whole or not at all; a labelling without any judgement is refused (a qrels file that
    judges nothing cannot be read back), and so is an id that a tab-separated line cannot hold
    (:mod:`finegrain.io.ids`: a tab, a line break, another control character)
    is refused before anything is written.
    """

    out = Path(path)
    qrels = labels.to_qrels()
    if not qrels.n_entries:  # a qrels file without a judgement is one every qrels reader refuses
        raise FinegrainError(
            f"no passage reaches span F1 >= {labels.threshold:g} with an answer of the {labels.n_queries} "
            f"queries, and no candidate is named by doc_ids: there is no judgement to write to {str(out)!r}",
            "check that the passages and answers are of the same queries and language (--lang), "
            "or lower --threshold")
    target = f"the BEIR qrels file {str(out)!r}"
    check_ids(qrels.qids, "query id", IdSyntax.TSV_FIELD, target=target, hint="fix the id in the answers file")
    check_ids(qrels.vocab, "passage id", IdSyntax.TSV_FIELD, target=target, hint="fix the id in the passages file")
    with open_text_write(out) as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for qid in qrels:
            f.writelines(f"{qid}\t{d}\t{int(g)}\n" for d, g in qrels[qid].items())
    return out


def write_details(labels: DistantLabels, path: str | Path) -> Path:
    """The relevant pairs as JSON lines: ``query_id, passage_id, f1, answer, span``."""

    out = Path(path)
    with open_text_write(out) as f:
        for lb in labels.labels:
            f.write(json.dumps({"query_id": lb.query_id, "passage_id": lb.passage_id, "f1": round(lb.f1, 6),
                                "answer": lb.answer, "span": lb.span}, ensure_ascii=False) + "\n")
    return out

