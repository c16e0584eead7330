"""Leakage between two sets: which items of A (queries or passages) are near-duplicates of items of B.

DuReader-retrieval removed the training queries too similar to a dev or test
query and reports the models on the similar queries ("Overlap") and the rest
("Others") apart (Qiu et al., 2022, Sect. 2.3 and Table 6); CapRetrieval's
in-domain training pool drops every caption with ROUGE-L > 0.6 to a test
caption (Xu et al., 2025, App. D). :func:`find_overlap` finds such pairs by
one of four methods (``by``):

``exact``
    equal after normalisation (:func:`finegrain.build.units.exact_key`: NFKC,
    case-folded, whitespace collapsed); score 1. No threshold.
``rougeL``
    ROUGE-L F-measure (``2·LCS / (|a| + |b|)``) computed by ``rouge-score`` on
    the text units of :mod:`finegrain.build.units` (Chinese characters for zh,
    words for en); a pair counts when its score is **above** the threshold
    (CapRetrieval's rule is "ROUGE-L > 0.6"; default 0.6). Candidates are
    pre-filtered without losing any pair: the LCS is at most the units the two
    texts share (counted with multiplicity), so a pair whose
    ``2·shared / (|a| + |b|)`` is below the threshold is never scored.
``minhash``
    Jaccard similarity of the texts' sets of unit n-grams (``ngram``, default
    2: character bigrams in zh, word bigrams in en; a text shorter than n is
    one shingle), candidates from a ``datasketch`` MinHash LSH index over B
    (``num_perm`` permutations; bands and rows tuned for the threshold with
    misses weighted 0.8 and false candidates 0.2, ``lsh_weights``), each
    candidate then scored by its exact Jaccard; a pair counts at Jaccard
    **>=** the threshold (default 0.5). LSH may miss a pair near the threshold
    (it trades recall for speed: ``benchmarks/overlap_minhash.py`` prints the
    recall of planted near-duplicates).
``embedding``
    cosine similarity of the texts' vectors from an encoder (default ``e5``,
    multilingual-e5-small), lower-cased and whitespace-collapsed as the dense
    retrievers do; queries are encoded as queries and passages as passages,
    cached on disk, searched exactly by
    :class:`~finegrain.retrieve.dense.index.DenseIndex`; a pair counts at
    cosine **>=** the threshold (default 0.95: e5-small's cosines are high for
    any two short texts in one language, so the threshold sits above those of
    unrelated short Chinese queries and below those of paraphrases).

An item of A counts once however many items of B it matches; every matching
pair is kept (:attr:`OverlapResult.pairs`). Items whose text is empty (or has
no unit) match nothing.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Any

from finegrain._lazy import require
from finegrain.build.textset import TextItem, TextSet, as_text_set
from finegrain.build.units import exact_key, shared_units, units
from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.frozen import EMPTY
from finegrain.io._lines import open_text_write
from finegrain.retrieve.dense.encoders.cache import CachedEncoder, EmbeddingCache
from finegrain.retrieve.dense.encoders.registry import get_encoder
from finegrain.retrieve.dense.index import DenseIndex
from finegrain.settings import default_cache_dir
from finegrain.text.lang import Lang, detect_lang, parse_lang

METHODS: tuple[str, ...] = ("exact", "rougeL", "minhash", "embedding")
DEFAULT_THRESHOLDS: Mapping[str, float] = MappingProxyType({"rougeL": 0.6, "minhash": 0.5, "embedding": 0.95})
#: How each method compares a score with the threshold (CapRetrieval's ROUGE-L rule is strict).
RULES: Mapping[str, str] = MappingProxyType({"rougeL": ">", "minhash": ">=", "embedding": ">="})
DEFAULT_NGRAM = 2
DEFAULT_NUM_PERM = 128
#: datasketch's LSH weights of (false positives, false negatives) when it picks bands and rows: candidates
#: are verified by exact Jaccard, so a false positive costs one set intersection and a miss is lost.
DEFAULT_LSH_WEIGHTS = (0.2, 0.8)
DEFAULT_ENCODER = "e5"


@dataclass(frozen=True)
class OverlapPair:
    """One item of A and one of B judged near-duplicates, with the method's score."""

    a_id: str
    b_id: str
    a_text: str
    b_text: str
    score: float


@dataclass(frozen=True)
class OverlapResult:
    """Which items of A overlap B, by one method.

    ``a_ids`` lists every item of A in order (the denominator); ``pairs`` every
    matching pair, in A's order, best score first within an item; ``params``
    the method's settings (n-gram, permutations, encoder model id).
    """

    method: str
    threshold: float | None
    lang: str
    field: str
    a_ids: tuple[str, ...]
    n_b: int
    pairs: tuple[OverlapPair, ...]
    params: Mapping[str, Any] = dataclasses.field(default_factory=lambda: EMPTY)
    a_source: str = ""
    b_source: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.params, MappingProxyType):
            object.__setattr__(self, "params", MappingProxyType(dict(self.params)))

    @property
    def n_a(self) -> int:
        return len(self.a_ids)

    @cached_property
    def overlapping(self) -> tuple[str, ...]:
        """The ids of A's items with at least one pair, in A's order."""
        hit = {p.a_id for p in self.pairs}
        return tuple(i for i in self.a_ids if i in hit)

    @property
    def n_overlapping(self) -> int:
        return len(self.overlapping)

    @property
    def rule(self) -> str:
        """The test a pair passed, as printed: ``exact``, ``rougeL > 0.6``, ``minhash Jaccard >= 0.5``, ..."""
        if self.method == "exact":
            return "exact"
        what = {"rougeL": "rougeL", "minhash": "minhash Jaccard", "embedding": "embedding cosine"}[self.method]
        return f"{what} {RULES[self.method]} {self.threshold:g}"

    def summary(self) -> str:
        """One line: ``7 of 100 queries in A overlap B (exact)``."""
        noun = self.field if self.field in ("queries", "passages") else "items"
        return f"{self.n_overlapping} of {self.n_a} {noun} in A overlap B ({self.rule})"

    def best_pairs(self) -> list[OverlapPair]:
        """One pair per overlapping item of A: its best match (pairs are already best first)."""
        seen: set[str] = set()
        out = []
        for p in self.pairs:
            if p.a_id not in seen:
                seen.add(p.a_id)
                out.append(p)
        return out

    def matches(self, a_id: str) -> list[OverlapPair]:
        return [p for p in self.pairs if p.a_id == a_id]

    def to_rows(self) -> list[dict[str, Any]]:
        """The pairs as JSON-able rows: ``a_id, b_id, a_text, b_text, score, method``."""
        return [{"a_id": p.a_id, "b_id": p.b_id, "a_text": p.a_text, "b_text": p.b_text,
                 "score": round(p.score, 6), "method": self.method} for p in self.pairs]


# --------------------------------------------------------------------------- the entry point


def find_overlap(
    a: Any,
    b: Any,
    *,
    by: str = "exact",
    threshold: float | None = None,
    lang: str | Lang | None = None,
    field: str = "queries",
    ngram: int = DEFAULT_NGRAM,
    num_perm: int = DEFAULT_NUM_PERM,
    lsh_weights: tuple[float, float] = DEFAULT_LSH_WEIGHTS,
    encoder: Any = DEFAULT_ENCODER,
    cache_dir: str | Path | None = None,
    cache: bool = True,
    seed: int = 1,
    show_progress: bool = False,
) -> OverlapResult:
    """The items of ``a`` that are near-duplicates of items of ``b`` (see the module docstring).

    ``a`` and ``b`` are :class:`~finegrain.build.textset.TextSet` objects, file
    paths or dataset names (read with ``field``), ``Queries`` / ``Corpus``,
    mappings ``id -> text`` or lists of texts. ``lang`` defaults to the
    datasets' language, else the one detected in the texts. ``encoder`` is an
    encoder name or an :class:`~finegrain.retrieve.dense.encoders.base.Encoder`
    (``embedding`` only); ``seed`` the MinHash permutations' seed.
    """
    method = check_method(by)
    thr = check_threshold(method, threshold)
    if isinstance(ngram, bool) or not isinstance(ngram, int) or ngram < 1:
        raise FinegrainError(f"ngram={ngram!r} is not a whole number >= 1", "use 2 (bigrams) or 3")
    if isinstance(num_perm, bool) or not isinstance(num_perm, int) or num_perm < 16:
        raise FinegrainError(f"num_perm={num_perm!r} is not a whole number >= 16", "use 128 (the default)")
    sa, sb = as_text_set(a, field), as_text_set(b, field)
    language = resolve_lang(lang, sa, sb)
    params: dict[str, Any] = {}
    found: Iterable[tuple[int, int, float]]
    if method == "minhash":
        params = {"ngram": ngram, "num_perm": num_perm, "seed": seed, "lsh_weights": list(lsh_weights)}
        found = _minhash(sa.texts, sb.texts, language, thr, ngram=ngram, num_perm=num_perm, seed=seed,
                         weights=lsh_weights)
    elif method == "embedding":
        kind = "passage" if sa.field == "passages" else "query"
        found, params = _embedding(sa.texts, sb.texts, thr, encoder=encoder, kind=kind, cache=cache,
                                   cache_dir=cache_dir, show_progress=show_progress)
    elif method == "rougeL":
        found = _rouge_l(sa.texts, sb.texts, language, thr)
    else:
        found = _exact(sa.texts, sb.texts)
    pairs = _pairs(sa.items, sb.items, found)
    return OverlapResult(method, thr, str(language), sa.field, sa.ids, len(sb), tuple(pairs), params,
                         sa.source, sb.source)


def check_method(by: str) -> str:
    if by not in METHODS:
        low = {m.lower(): m for m in METHODS}
        if isinstance(by, str) and by.lower().replace("-", "").replace("_", "") in low:
            return low[by.lower().replace("-", "").replace("_", "")]
        raise UnknownNameError("overlap method", str(by), METHODS)
    return by


def check_threshold(method: str, threshold: float | None) -> float | None:
    """The threshold to use: None for ``exact`` (which takes none), the method's default when not given."""
    if method == "exact":
        if threshold is not None:
            raise FinegrainError(f"--by exact takes no threshold (got {threshold!r})",
                                 "leave --threshold out, or use --by rougeL|minhash|embedding")
        return None
    if threshold is None:
        return DEFAULT_THRESHOLDS[method]
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0 < threshold <= 1:
        raise FinegrainError(f"threshold {threshold!r} is outside (0, 1]",
                             f"give a similarity between 0 and 1, e.g. --threshold {DEFAULT_THRESHOLDS[method]}")
    return float(threshold)


def resolve_lang(lang: str | Lang | None, *sets: TextSet) -> Lang:
    """``lang`` when given; else the sets' dataset language when they agree; else detected in their texts."""
    if lang is not None:
        return parse_lang(lang)
    known = {s.lang for s in sets if s.lang}
    if len(known) == 1:
        return parse_lang(known.pop())
    sample = " ".join(t for s in sets for t in s.texts[:500])
    return detect_lang(sample, min_share=0.3)


def _pairs(a: Sequence[TextItem], b: Sequence[TextItem], found: Iterable[tuple[int, int, float]]) -> list[OverlapPair]:
    rows = sorted(found, key=lambda r: (r[0], -r[2], r[1]))
    return [OverlapPair(a[i].id, b[j].id, a[i].text, b[j].text, float(s)) for i, j, s in rows]


# --------------------------------------------------------------------------- methods


def _exact(a: Sequence[str], b: Sequence[str]) -> Iterator[tuple[int, int, float]]:
    index: dict[str, list[int]] = {}
    for j, t in enumerate(b):
        key = exact_key(t)
        if key:
            index.setdefault(key, []).append(j)
    for i, t in enumerate(a):
        for j in index.get(exact_key(t), ()) if exact_key(t) else ():
            yield i, j, 1.0


class _UnitTokenizer:
    """A rouge-score tokenizer giving the units of :mod:`finegrain.build.units` (memoised per text)."""

    def __init__(self, lang: Lang) -> None:
        self.lang = lang
        self._memo: dict[str, list[str]] = {}

    def tokenize(self, text: str) -> list[str]:
        got = self._memo.get(text)
        if got is None:
            got = self._memo[text] = units(text, self.lang)
        return got


def _rouge_l(a: Sequence[str], b: Sequence[str], lang: Lang, threshold: float | None) -> Iterator[tuple[int, int, float]]:
    rouge_scorer = require("rouge_score.rouge_scorer", "build", "rouge-score")
    assert threshold is not None  # check_threshold gives one for rougeL
    tok = _UnitTokenizer(lang)
    ua, ub = [tok.tokenize(t) for t in a], [tok.tokenize(t) for t in b]
    scorer = rouge_scorer.RougeScorer(["rougeL"], tokenizer=tok)
    # ROUGE-L F = 2 LCS / (|a| + |b|) <= 2 shared / (|a| + |b|): pairs below the threshold by it are out. A bound
    # equal to the threshold stays: rouge-score's float F of that pair may round just above it (0.8000000000000002).
    for i, j, _ in shared_units(ua, ub, keep=lambda v, la, lb: 2 * v >= threshold * (la + lb)):
        score = scorer.score(b[j], a[i])["rougeL"].fmeasure
        if score > threshold:
            yield i, j, score


def shingles(text: str, lang: Lang, n: int) -> set[bytes]:
    """The set of unit n-grams of ``text`` (UTF-8, units joined by U+001F); one shingle when shorter than n."""
    toks = units(text, lang)
    if not toks:
        return set()
    if len(toks) <= n:
        return {"\x1f".join(toks).encode()}
    return {"\x1f".join(toks[k:k + n]).encode() for k in range(len(toks) - n + 1)}


def _minhash(a: Sequence[str], b: Sequence[str], lang: Lang, threshold: float | None, *, ngram: int,
             num_perm: int, seed: int, weights: tuple[float, float]) -> Iterator[tuple[int, int, float]]:
    datasketch = require("datasketch", "build")
    MinHash, MinHashLSH = datasketch.MinHash, datasketch.MinHashLSH
    assert threshold is not None
    sb = [shingles(t, lang, ngram) for t in b]
    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm, weights=weights)
    keep_b = [j for j, s in enumerate(sb) if s]
    with lsh.insertion_session() as session:
        for j, m in zip(keep_b, MinHash.generator((sorted(sb[j]) for j in keep_b), num_perm=num_perm, seed=seed)):
            session.insert(j, m, check_duplication=False)
    sa = [shingles(t, lang, ngram) for t in a]
    keep_a = [i for i, s in enumerate(sa) if s]
    for i, m in zip(keep_a, MinHash.generator((sorted(sa[i]) for i in keep_a), num_perm=num_perm, seed=seed)):
        si = sa[i]
        for j in lsh.query(m):
            sj = sb[j]
            inter = len(si & sj)
            score = inter / (len(si) + len(sj) - inter)
            if score >= threshold:
                yield i, j, score


def _embedding(a: Sequence[str], b: Sequence[str], threshold: float | None, *, encoder: Any, kind: str,
               cache: bool, cache_dir: str | Path | None, show_progress: bool,
               ) -> tuple[list[tuple[int, int, float]], dict[str, Any]]:
    assert threshold is not None
    if isinstance(encoder, str):
        enc = get_encoder(encoder)
    else:
        enc = encoder
    root = None
    if cache:
        root = cache_dir if cache_dir is not None else default_cache_dir()
    wrapped = CachedEncoder(enc, EmbeddingCache(root) if root is not None else None, show_progress=show_progress)
    keep_a = [i for i, t in enumerate(a) if t.strip()]
    keep_b = [j for j, t in enumerate(b) if t.strip()]
    params = {"encoder": encoder if isinstance(encoder, str) else enc.model_id, "model_id": enc.model_id,
              "kind": kind, "text": "lower-cased, whitespace collapsed"}
    if not keep_a or not keep_b:
        return [], params
    va = wrapped.encode(_normalise([a[i] for i in keep_a]), kind=kind, desc="overlap: encode A")  # type: ignore[arg-type]
    vb = wrapped.encode(_normalise([b[j] for j in keep_b]), kind=kind, desc="overlap: encode B")  # type: ignore[arg-type]
    index = DenseIndex(vb, [str(j) for j in keep_b], backend="numpy")
    run = index.search(va, [str(i) for i in keep_a], threshold=threshold, name="overlap")
    found = [(int(q), int(d), float(s)) for q in run for d, s in run[q].items()]
    return found, params


def _normalise(texts: Sequence[str]) -> list[str]:
    """As :meth:`finegrain.retrieve.dense.retriever.DenseRetriever.normalise` with its defaults."""
    return [" ".join(t.lower().split()) for t in texts]


# --------------------------------------------------------------------------- files


def write_pairs(result: OverlapResult, path: str | Path) -> Path:
    """The pairs as JSON lines (``a_id, b_id, a_text, b_text, score, method``); gzipped for ``.gz``."""

    out = Path(path)
    with open_text_write(out) as f:
        for row in result.to_rows():
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return out


