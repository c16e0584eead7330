"""Training queries for a passage pool: KW (salient keywords) and SM (summaries), as pairs for ``finegrain train``.

CapRetrieval (Xu et al., 2025, Sect. 4.1, Tables 4-6, App. D) trains an
encoder on LLM-generated queries of two granularities, KW and SM, over a pool
of passages from which every passage with ROUGE-L > 0.6 to a test passage was
removed. :func:`generate_queries` does the same:

1. read the pool (a JSON-lines corpus with ``_id``/``id`` and ``text``, a BEIR
   folder, or a dataset name: its corpus) and its sibling groups
   (:func:`read_pool`);
2. with ``exclude``, drop the pool passages with ROUGE-L above ``rouge_l`` to
   any passage of ``exclude`` (:func:`finegrain.build.overlap.find_overlap`,
   zh characters / en words), before anything is generated;
3. per passage and style: from the LLM when ``llm`` is given
   (:mod:`finegrain.train.llm`), falling back to the rules for that passage when
   no valid reply comes (counted in :attr:`QuerySet.fallbacks`); else KW by
   :mod:`finegrain.train.rules`, and SM by ``sm_source``: ``auto`` -- the
   passage's **siblings** (other captions of the same image, in the pool) when
   it has any, else the rule compressions of the passage; ``siblings`` -- the
   siblings only; ``compress`` -- the compressions only, siblings or not
   (summaries of the passage itself: a sibling caption may be text the
   encoder already trained on);
4. **generic queries**: a rule or sibling query made in more than
   ``max(MIN_QUERY_PASSAGES, floor(max_query_share * U))`` of the ``U`` units
   of the pool (a unit is a sibling group, or a passage without one, so the
   five captions of one image count once) is kept only in the units where it
   is most *salient* -- its score's share of the passage's ``sum idf`` (KW:
   the TF-IDF score; SM: the query's ``sum idf``), a unit by its best passage,
   ties by pool order -- and dropped elsewhere (counted in the provenance's
   ``generic``). A query every passage shares (``canine`` in a caption pool)
   teaches little and fills a batch with false negatives. LLM queries are
   never capped;
5. at most ``per_passage`` queries per passage and style, best first
   (defaults 12 KW and 7 SM, the means of Table 6's in-domain rows); siblings
   beyond that are sampled with ``seed``.

Sibling groups, first rule that applies: ``siblings="flickr8k:PATH"`` (a pool
text equal to a caption of ``Flickr8k.token.txt`` belongs to its image; a
caption written the same for several images, e.g. "A black and white dog is
running through the grass .", to the one with the most captions in the pool);
``group_by_prefix=SEP`` (the id up to its last ``SEP``); a ``group`` field in the
pool's records; ids that all read ``NAME#n`` (Flickr8k's own ids). Siblings
are always pool passages, so the leakage filter covers them too.

**Transductive pools.** A pool that is a dataset (a name, or a folder read as one) is that
dataset's passages only, never its queries or qrels; training on it and then evaluating on the
same dataset is *transductive*, never zero-shot. The provenance always says so:
``"transductive": true`` and ``"transductive_dataset"`` (the dataset's name) for a dataset pool,
``false`` / ``None`` for a file. ``transductive=True`` (``gen-queries --pool-from-eval-corpus``)
demands such a pool. ``finegrain train`` carries the two fields into ``finegrain_training.json``
and ``finegrain eval`` of the model on that dataset marks its results.

Each pair is ``{"query", "passage", "passage_id", "style", "source", "group"}`` with
``source`` one of ``rules``, ``siblings``, ``llm`` and ``group`` the passage's
sibling group (``null``: none), so training can keep the captions of one image
out of one batch (:meth:`QuerySet.write`, plus the sidecar
``PAIRS.jsonl.provenance.json`` with ``sm_source``, ``generic`` and Table 6's
statistics per style, the share of KW that are WordNet hypernyms among them).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from finegrain.atomic import write_text
from finegrain.build.overlap import check_threshold, find_overlap
from finegrain.build.textset import TextItem, TextSet, read_text_set
from finegrain.build.units import exact_key, units
from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.frozen import EMPTY
from finegrain.io._lines import iter_id_records, open_text_write
from finegrain.io.flickr8k import read_flickr8k_captions
from finegrain.text.lang import Lang, detect_lang, parse_lang
from finegrain.train import rules
from finegrain.train.llm import STYLES, LLMSettings, ask_all
from finegrain.version import __version__

STYLE_CHOICES: tuple[str, ...] = ("kw", "sm", "both")
SOURCES: tuple[str, ...] = ("rules", "siblings", "llm")
SM_SOURCES: tuple[str, ...] = ("auto", "siblings", "compress")
DEFAULT_PER_PASSAGE: Mapping[str, int] = MappingProxyType({"kw": 12, "sm": 7})
DEFAULT_ROUGE_L = 0.6
DEFAULT_MAX_QUERY_SHARE = 0.005
MIN_QUERY_PASSAGES = 20
_HASH_ID = re.compile(r"^(?P<group>.+)#\d+$")


@dataclass(frozen=True)
class QueryPair:
    """One training pair: a generated query, the passage it was generated from, the passage's sibling group
    (``None``: none), and the rule that made it (``kind``: a KW kind of :data:`finegrain.train.rules.KINDS`,
    ``None`` for SM and LLM queries; not written)."""

    query: str
    passage: str
    passage_id: str
    style: str
    source: str
    group: str | None = None
    kind: str | None = None

    def to_json(self) -> dict[str, str | None]:
        return {"query": self.query, "passage": self.passage, "passage_id": self.passage_id,
                "style": self.style, "source": self.source, "group": self.group}


@dataclass(frozen=True)
class Made:
    """A query made for one passage before the generic cap and the per-passage limit: its source, KW kind,
    and salience there (its score's share of the passage's ``sum idf``; ``None`` for an LLM query)."""

    query: str
    source: str
    kind: str | None = None
    salience: float | None = None


@dataclass(frozen=True)
class StyleStats:
    """Table 6's columns for one style: passages with a query, their total units, queries per passage,
    units per query (zh characters, en words), the pairs by source, and the pairs that are WordNet hypernyms."""

    style: str
    passages: int
    passage_units: int
    queries: int
    sources: Mapping[str, int]
    units_per_query: float | None = None
    hypernyms: int = 0

    @property
    def queries_per_passage(self) -> float | None:
        return self.queries / self.passages if self.passages else None

    @property
    def hypernym_share(self) -> float | None:
        return self.hypernyms / self.queries if self.queries else None


@dataclass(frozen=True)
class Pool:
    """The pool's passages in order, each passage's sibling group (``None``: no group), and how groups were found."""

    items: tuple[TextItem, ...]
    groups: Mapping[str, str | None]
    grouping: str
    source: str
    sha256: str
    sha256_of: str
    lang: str | None = None


@dataclass(frozen=True)
class QuerySet:
    """The generated pairs, the pool passages they come from (``n_passages``, after the leakage filter),
    the LLM fallbacks per style, and the provenance written next to the pairs."""

    pairs: tuple[QueryPair, ...]
    lang: str
    styles: tuple[str, ...]
    n_passages: int
    passage_units: int
    fallbacks: Mapping[str, int] = field(default_factory=lambda: EMPTY)
    provenance: Mapping[str, Any] = field(default_factory=lambda: EMPTY)

    def stats(self) -> tuple[StyleStats, ...]:
        """One :class:`StyleStats` per style, in :attr:`styles` order."""
        out = []
        for style in self.styles:
            pairs = [p for p in self.pairs if p.style == style]
            passages = {p.passage_id: p.passage for p in pairs}
            sources = {s: sum(p.source == s for p in pairs) for s in SOURCES}
            q_units = [len(units(p.query, self.lang)) for p in pairs]
            out.append(StyleStats(style, len(passages), sum(len(units(t, self.lang)) for t in passages.values()),
                                  len(pairs), MappingProxyType(sources),
                                  sum(q_units) / len(q_units) if q_units else None,
                                  sum(p.kind == "hypernym" for p in pairs)))
        return tuple(out)

    def write(self, path: str | Path) -> Path:
        """The pairs as JSON lines at ``path`` (gzipped for ``.gz``) and ``path + .provenance.json``."""

        out = Path(path)
        with open_text_write(out) as f:
            for p in self.pairs:
                f.write(json.dumps(p.to_json(), ensure_ascii=False) + "\n")
        side = out.with_name(out.name + ".provenance.json")
        prov = {**self.provenance, "pairs": len(self.pairs), "llm_fallbacks": dict(self.fallbacks),
                "stats": [_stats_json(s) for s in self.stats()]}
        write_text(side, json.dumps(prov, ensure_ascii=False, indent=2) + "\n")
        return out


def _stats_json(s: StyleStats) -> dict[str, Any]:
    return {"style": s.style, "passages": s.passages, "passage_units": s.passage_units, "queries": s.queries,
            "queries_per_passage": s.queries_per_passage, "units_per_query": s.units_per_query,
            "sources": dict(s.sources), "hypernyms": s.hypernyms, "hypernym_share": s.hypernym_share}


# --------------------------------------------------------------------------- checks


def parse_styles(style: str) -> tuple[str, ...]:
    """``kw`` -> ``("kw",)``, ``sm`` -> ``("sm",)``, ``both`` -> ``("kw", "sm")``."""
    key = style.strip().lower() if isinstance(style, str) else style
    if key not in STYLE_CHOICES:
        raise UnknownNameError("query style", str(style), STYLE_CHOICES)
    return STYLES if key == "both" else (key,)


def parse_sm_source(value: str) -> str:
    """``auto``, ``siblings`` or ``compress`` (see the module docstring)."""
    key = value.strip().lower() if isinstance(value, str) else value
    if key not in SM_SOURCES:
        raise UnknownNameError("SM source", str(value), SM_SOURCES)
    return key


def check_query_share(value: float) -> float:
    """``value`` when it is a share in (0, 1]; one clear error otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise FinegrainError(f"max_query_share={value!r} is not a share in (0, 1]",
                             f"give the largest share of the pool one query may be made for, e.g. --max-query-share "
                             f"{DEFAULT_MAX_QUERY_SHARE} (1 keeps every query)")
    return float(value)


def query_cap(n_units: int, share: float) -> int:
    """The most units (sibling groups, or lone passages) one query is kept in:
    ``max(MIN_QUERY_PASSAGES, floor(share * n_units))``."""
    return max(MIN_QUERY_PASSAGES, math.floor(share * n_units + 1e-9))


def _per_passage(value: int | None) -> dict[str, int]:
    if value is None:
        return dict(DEFAULT_PER_PASSAGE)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise FinegrainError(f"per_passage={value!r} is not a whole number >= 1",
                             "give the most queries per passage and style, e.g. --per-passage 10")
    return {s: value for s in STYLES}


# --------------------------------------------------------------------------- the pool


def read_pool(pool: Any, *, group_by_prefix: str | None = None, siblings: str | None = None) -> Pool:
    """The passages of ``pool`` and their sibling groups (see the module docstring)."""
    ts = pool if isinstance(pool, TextSet) else read_text_set(pool, "passages")
    sha, sha_of = _digest(ts)
    groups: dict[str, str | None]
    if siblings is not None:
        groups, grouping = _flickr8k_groups(ts, siblings), f"siblings {siblings}"
    elif group_by_prefix is not None:
        if not group_by_prefix:
            raise FinegrainError("--group-by-prefix is empty", "give the separator, e.g. --group-by-prefix '#'")
        groups = {i.id: (i.id.rpartition(group_by_prefix)[0] or None) for i in ts.items}
        grouping = f"id prefix before the last {group_by_prefix!r}"
    else:
        field_groups = _group_field(ts)
        if field_groups is not None:
            groups, grouping = field_groups, "the records' group field"
        elif all(_HASH_ID.match(i.id) for i in ts.items):
            groups = {i.id: _HASH_ID.match(i.id).group("group") for i in ts.items}  # type: ignore[union-attr]
            grouping = "ids NAME#n"
        else:
            groups, grouping = dict.fromkeys(ts.ids), "none"
    return Pool(ts.items, MappingProxyType(groups), grouping, ts.source, sha, sha_of, ts.lang)


def _digest(ts: TextSet) -> tuple[str, str]:
    path = Path(ts.source)
    h = hashlib.sha256()
    if ts.format == "jsonl" and path.is_file():
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest(), "file"
    for item in ts.items:
        h.update(json.dumps([item.id, item.text], ensure_ascii=False).encode() + b"\n")
    return h.hexdigest(), "[id, text] JSON lines of the passages"


def _group_field(ts: TextSet) -> dict[str, str | None] | None:
    if ts.format != "jsonl":
        return None

    found: dict[str, str | None] = {}
    for _, rid, obj in iter_id_records(ts.source, ("_id", "id"), "id"):
        g = obj.get("group")
        found[rid] = None if g is None else str(g)
    return found if any(g is not None for g in found.values()) else None


def _flickr8k_groups(ts: TextSet, spec: str) -> dict[str, str | None]:
    kind, _, path = spec.partition(":")
    if kind != "flickr8k" or not path:
        raise FinegrainError(f"--siblings {spec!r} is not KIND:PATH with a known kind",
                             "use --siblings flickr8k:PATH/Flickr8k.token.txt")

    if not Path(path).is_file():
        raise FinegrainError(f"--siblings: no file {path!r}", "give the path of Flickr8k.token.txt")
    caps = read_flickr8k_captions(path)
    images_of: dict[str, list[str]] = {}
    for im, cs in caps.captions.items():
        for c in cs:
            images_of.setdefault(exact_key(c), []).append(im)
    # a caption written the same for several images belongs to the one with the most captions in the pool
    found = {i.id: images_of.get(exact_key(i.text), []) for i in ts.items}
    votes = Counter(im for ims in found.values() for im in ims)
    groups = {k: (max(ims, key=lambda im: votes[im]) if ims else None) for k, ims in found.items()}
    if not any(groups.values()):
        raise FinegrainError(f"no passage of {ts.source!r} is a caption of {path}",
                             "the pool's texts must be Flickr8k captions as written in the token file")
    return groups


def check_lang(pool: Pool, lang: str | Lang) -> Lang:
    """``lang``, when the pool's texts are in it (its dataset language, else detected); a clear error otherwise."""
    language = parse_lang(lang)
    found = parse_lang(pool.lang) if pool.lang else detect_lang(" ".join(i.text for i in pool.items[:500]),
                                                                min_share=0.3)
    if found is not language:
        raise FinegrainError(f"--lang {language} but the passages of {pool.source!r} are {found}",
                             f"use --lang {found}, or give a pool in {language}")
    return language


# --------------------------------------------------------------------------- generation


def generate_queries(
    pool: Any,
    *,
    style: str = "both",
    lang: str | Lang,
    per_passage: int | None = None,
    seed: int = 0,
    exclude: Any = None,
    rouge_l: float = DEFAULT_ROUGE_L,
    group_by_prefix: str | None = None,
    siblings: str | None = None,
    llm: LLMSettings | None = None,
    transductive: bool = False,
    sm_source: str = "auto",
    max_query_share: float = DEFAULT_MAX_QUERY_SHARE,
    show_progress: bool = False,
) -> QuerySet:
    """KW and/or SM training queries for every passage of ``pool`` (see the module docstring);
    ``transductive``: ``pool`` must be a dataset (its passages are used, label-free); ``sm_source``:
    where rule SM queries come from; ``max_query_share``: the generic-query cap; ``show_progress``: a bar
    over the LLM's passages."""

    styles = parse_styles(style)
    limits = _per_passage(per_passage)
    sm_from = parse_sm_source(sm_source)
    share = check_query_share(max_query_share)
    if not isinstance(pool, (Pool, TextSet)):
        pool = read_text_set(pool, "passages")
    eval_dataset = pool.source if isinstance(pool, TextSet) and pool.format == "dataset" else None
    if transductive and eval_dataset is None:
        raise FinegrainError(f"--pool-from-eval-corpus needs a dataset, not {pool.source!r}",
                             "give a dataset name (finegrain list datasets) or a dataset folder")
    p = pool if isinstance(pool, Pool) else read_pool(pool, group_by_prefix=group_by_prefix, siblings=siblings)
    language = check_lang(p, lang)
    items, excluded = _exclude(p, exclude, rouge_l, language)
    if not items:
        raise FinegrainError(f"no passage of {p.source!r} is left after the leakage filter",
                             "check --exclude; every pool passage is too close to it")
    texts = [i.text for i in items]
    rng = random.Random(seed)
    words = rules.idf_words(texts, language)
    idf, unseen = rules.idf_table(words)
    weights = [rules.passage_weight(w, idf, unseen, language) for w in words]
    units_of = [p.groups.get(i.id) or f"passage {i.id}" for i in items]
    cap = query_cap(len(set(units_of)), share)
    made: dict[str, list[list[Made]]] = {}
    fallbacks: dict[str, int] = {}
    generic: dict[str, dict[str, Any]] = {}
    for st in styles:
        llm_out: list[list[str] | None] = [None] * len(items)
        if llm is not None:
            llm_out = [a.queries for a in ask_all(llm, texts, st, language, seed=seed, show_progress=show_progress)]
        need = [k for k, q in enumerate(llm_out) if q is None]
        fallbacks[st] = len(need) if llm is not None else 0
        rule_out = _rule_queries(st, need, items, p, language, rng, limits[st], sm_from, (idf, unseen, weights))
        per: list[list[Made]] = [[Made(q, "llm") for q in qs] if qs is not None else [] for qs in llm_out]
        for k, got in zip(need, rule_out):
            per[k] = got
        made[st], generic[st] = cap_generic(per, cap, [exact_key(t) for t in texts], units_of)
    pairs = []
    for k, item in enumerate(items):
        group = p.groups.get(item.id)
        for st in styles:
            for m in made[st][k][: limits[st]]:
                pairs.append(QueryPair(m.query, item.text, item.id, st, m.source, group, m.kind))
    prov = {
        "pool": p.source, "pool_sha256": p.sha256, "pool_sha256_of": p.sha256_of, "pool_passages": len(p.items),
        "style": style, "styles": list(styles), "lang": str(language), "seed": seed,
        "per_passage": limits, "grouping": p.grouping, "sm_source": sm_from,
        "generic": {"max_query_share": share, "units": len(set(units_of)), "max_units_per_query": cap,
                    "rule": f"a rule or sibling query made in more than max({MIN_QUERY_PASSAGES}, floor(share x "
                            "units)) units (sibling groups; a passage without one is its own) is kept only in "
                            "the units where its salience is highest",
                    **{st: g for st, g in generic.items()}},
        "generator": {"llm": llm.describe() if llm is not None else None,
                      "rules": {"kw": "TF-IDF over the pool; en: spaCy noun chunks, head nouns, verbs, verb + object, "
                                      "subject + verb, noun + prepositional object, pairs of salient nouns, WordNet "
                                      "hypernyms of the sense that fits the passage; zh: jieba nouns, verbs, noun "
                                      "runs, modifier + noun, verb + object, pairs of salient nouns",
                                "sm": {"auto": "siblings in the pool, else compressions of the passage",
                                       "siblings": "siblings in the pool only",
                                       "compress": "compressions of the passage only"}[sm_from],
                                "spacy_model": rules.SPACY_PACKAGE if language is Lang.EN else None}},
        "exclude": excluded, "finegrain_version": _version(),
        "transductive": eval_dataset is not None, "transductive_dataset": eval_dataset,
    }
    return QuerySet(tuple(pairs), str(language), styles, len(items),
                    sum(len(units(t, language)) for t in texts), MappingProxyType(fallbacks),
                    MappingProxyType(prov))


def cap_generic(per: Sequence[Sequence[Made]], cap: int, passage_keys: Sequence[str],
                units_of: Sequence[str]) -> tuple[list[list[Made]], dict[str, Any]]:
    """Each passage's queries, distinct and none equal to the passage, with every rule or sibling query made
    for more than ``cap`` units (``units_of``: each passage's sibling group, or the passage itself) kept only
    in the ``cap`` units where its salience is highest (a unit's best passage; ties: pool order); LLM
    queries are never capped. Also what was dropped: pairs, queries capped, the most generic."""

    lists: list[list[Made]] = []
    holders: dict[str, dict[str, tuple[float, int]]] = {}
    for k, made in enumerate(per):
        seen = {passage_keys[k]}
        kept = []
        for m in made:
            key = exact_key(m.query)
            if key and key not in seen:
                seen.add(key)
                kept.append(m)
                if m.source != "llm":
                    units_held = holders.setdefault(key, {})
                    best = units_held.get(units_of[k])
                    here = (-(m.salience or 0.0), k)
                    units_held[units_of[k]] = min(best, here) if best is not None else here
        lists.append(kept)
    gone: dict[str, set[str]] = {}
    capped: dict[str, int] = {}
    for key, held in holders.items():
        if len(held) > cap:
            capped[key] = len(held)
            ranked = sorted(held, key=lambda u: held[u])
            gone[key] = set(ranked[cap:])
    out = [[m for m in made if units_of[k] not in gone.get(exact_key(m.query), ())] for k, made in enumerate(lists)]
    top = sorted(capped.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
    dropped = sum(len(a) - len(b) for a, b in zip(lists, out))
    return out, {"dropped": dropped, "capped_queries": len(capped), "most_generic": [list(t) for t in top]}


def _rule_queries(style: str, todo: Sequence[int], items: Sequence[TextItem], pool: Pool, lang: Lang,
                  rng: random.Random, limit: int, sm_from: str,
                  weights: tuple[Mapping[str, float], float, Sequence[float]]) -> list[list[Made]]:
    if not todo:
        return []
    idf, unseen, passage_weight = weights

    def salience(k: int, score: float) -> float:
        return score / passage_weight[k] if passage_weight[k] > 0 else 0.0

    if style == "kw":
        cands = rules.keyword_candidates([items[k].text for k in todo], lang)
        return [[Made(w.text, "rules", w.kind, salience(k, w.score)) for w in rules.score_keywords(c, idf, unseen, lang)]
                for k, c in zip(todo, cands)]

    def sm_salience(k: int, query: str) -> float:
        return salience(k, rules.passage_weight(rules.idf_words([query], lang)[0], idf, unseen, lang))

    members: dict[str, list[TextItem]] = {}
    for i in pool.items:
        g = pool.groups.get(i.id)
        if g is not None:
            members.setdefault(g, []).append(i)
    out: list[list[Made] | None] = []
    for k in todo:
        item = items[k]
        g = pool.groups.get(item.id)
        group = members.get(g, []) if g is not None and sm_from != "compress" else []
        sibs = [s.text for s in group if s.id != item.id and exact_key(s.text) != exact_key(item.text)]
        if len(sibs) > limit:
            chosen = set(rng.sample(range(len(sibs)), limit))
            sibs = [s for n, s in enumerate(sibs) if n in chosen]
        out.append([Made(s, "siblings", None, sm_salience(k, s)) for s in sibs] if sibs else None)
    plain = [n for n, o in enumerate(out) if o is None] if sm_from != "siblings" else []
    squeezed = rules.compressions([items[todo[n]].text for n in plain], lang)
    for n, got in zip(plain, squeezed):
        out[n] = [Made(q, "rules", None, sm_salience(todo[n], q)) for q in got]
    return [o or [] for o in out]


def _exclude(pool: Pool, exclude: Any, rouge_l: float, lang: Lang) -> tuple[list[TextItem], dict[str, Any] | None]:
    items = list(pool.items)
    if exclude is None:
        return items, None

    thr = check_threshold("rougeL", rouge_l)
    ts = TextSet(tuple(items), pool.source, "memory", "passages")
    result = find_overlap(ts, exclude, by="rougeL", threshold=thr, lang=lang, field="passages")
    gone = set(result.overlapping)
    return [i for i in items if i.id not in gone], {
        "corpus": str(result.b_source or exclude), "corpus_passages": result.n_b, "rule": result.rule,
        "rougeL": thr, "removed": len(gone), "kept": len(items) - len(gone)}


def _version() -> str:
    return __version__
