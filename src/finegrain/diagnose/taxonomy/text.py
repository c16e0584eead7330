"""Term views of texts: content words with their class, numbers and heads, and corpus statistics.

:class:`Analyzer` builds a :class:`View` of a query or passage (jieba
part-of-speech words for zh; ``\\w`` words, Porter stems, suffix and case rules
for en) and the corpus statistics the rules need (document frequencies,
capitalisation, pinyin vocabulary), once per analysis.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from finegrain.diagnose.errors import (
    _SEPARATORS,
    ZH_CONJUNCTIONS,
    _Matcher,
)
from finegrain.diagnose.taxonomy.lexicon import (
    DIGITS,
    EN_FUNCTION,
    EN_MODIFIERS,
    EN_NOUN_ING,
    EN_NOUN_LY,
    EN_NUMBERS,
    EN_VERBS,
    LATIN,
    SENT_END,
    ZH_MODIFIERS,
    ZH_NAME_POS,
    ZH_NUM,
    ZH_QWORDS,
    is_han,
    num_value,
    verb_base,
)
from finegrain.text import EN_WORD, ZH_STOPWORDS, pos_words


@dataclass(frozen=True)
class Term:
    """A content word: surface text, presence key (zh the word, en its stem), class and position."""

    text: str
    key: str
    cls: str  # num | mod | name | noun | verb
    sub: str  # modifier class, or the jieba POS tag
    pos: int  # character offset in the normalised text


@dataclass(frozen=True)
class View:
    """A text seen as content words, numbers (surface, value) and heads."""

    norm: str  # normalised text (zh: whitespace removed)
    terms: tuple[Term, ...]
    numbers: tuple[tuple[str, str], ...]  # (surface, value)
    heads: tuple[Term, ...]


class Analyzer:
    """Term views of texts and corpus statistics for one language (built once per analysis)."""

    def __init__(self, lang: str, corpus_texts: Mapping[str, str]) -> None:
        self.lang = lang
        self.m = _Matcher(lang)
        self.corpus_texts = corpus_texts
        self._views: dict[str, View] = {}

    # -- corpus statistics (lazy) -------------------------------------------------

    @cached_property
    def _compact(self) -> list[str]:
        return ["".join(self.m._normalize(t).split()) for t in self.corpus_texts.values()]

    @cached_property
    def word_df(self) -> Counter[str]:
        """Document frequency of lower-cased Latin words (en: all words; zh: Latin runs)."""
        pat = LATIN if self.lang == "zh" else re.compile(r"[a-z0-9]+")
        return Counter(w for t in self.corpus_texts.values() for w in set(pat.findall(t.lower())))

    @cached_property
    def capitalised(self) -> Mapping[str, float]:
        """en: per word, the share of its mid-sentence occurrences written with a capital letter."""
        cap, total = Counter(), Counter()
        for t in self.corpus_texts.values():
            for sent in SENT_END.split(t):
                for w in EN_WORD.findall(sent)[1:]:
                    total[w.lower()] += 1
                    cap[w.lower()] += w[0].isupper()
        return {w: cap[w] / n for w, n in total.items() if n >= 2}

    @cached_property
    def zh_vocab(self) -> Mapping[tuple[str, ...], tuple[str, ...]]:
        """zh: toneless pinyin -> corpus jieba words with that pinyin (built on first use)."""
        from pypinyin import lazy_pinyin

        words = sorted({w for toks in self.m.tok.documents(list(self.corpus_texts.values())) for w in toks
                        if len(w) >= 2 and all(is_han(c) for c in w)})
        out: dict[tuple[str, ...], list[str]] = {}
        for w in words:
            out.setdefault(tuple(lazy_pinyin(w)), []).append(w)
        return {k: tuple(v) for k, v in out.items()}

    def df(self, key: str) -> int:
        if self.lang == "zh":
            return sum(key in t for t in self._compact)
        return self.stem_df.get(key, 0)

    @cached_property
    def stem_df(self) -> Counter[str]:
        return Counter(s for toks in self.m.tok.documents(list(self.corpus_texts.values())) for s in set(toks))

    # -- views -----------------------------------------------------------------------

    def view(self, text: str, cache_key: str | None = None) -> View:
        if cache_key is not None and cache_key in self._views:
            return self._views[cache_key]
        v = self._zh_view(text) if self.lang == "zh" else self._en_view(text)
        if cache_key is not None:
            self._views[cache_key] = v
        return v

    def _zh_view(self, text: str) -> View:
        norm = "".join(self.m._normalize(text).split())
        terms: list[Term] = []
        groups: list[list[Term]] = [[]]
        pos = 0
        for w, flag in pos_words(norm):
            at, pos = pos, pos + len(w)
            if w in ZH_CONJUNCTIONS or _SEPARATORS.fullmatch(w) or SENT_END.fullmatch(w):
                groups.append([])
                continue
            if not any(c.isalnum() for c in w) or w in ZH_STOPWORDS or w in ZH_QWORDS:
                continue
            if w in ZH_MODIFIERS:
                cls, sub = "mod", ZH_MODIFIERS[w]
            elif ZH_NUM.match(w) or DIGITS.fullmatch(w) or flag in ("m", "q"):
                cls, sub = "num", flag
            elif flag in ZH_NAME_POS and len(w) >= 2:
                cls, sub = "name", flag
            elif flag[0] in "atbz" or flag in ("ad", "an", "f"):
                cls, sub = "mod", "time" if flag == "t" else "position" if flag == "f" else "adjective"
            elif flag[0] == "n" or flag in ("vn", "s", "j", "eng"):
                cls, sub = "noun", flag
            else:
                cls, sub = "verb", flag
            t = Term(w, w, cls, sub, at)
            terms.append(t)
            groups[-1].append(t)
        numbers = [(m.group(), num_value(m.group())) for m in DIGITS.finditer(norm)]
        numbers += [(m.group(), num_value(m.group())) for m in ZH_NUM.finditer(norm)]
        # head-final: the last word of each conjunct that is not a number or a lexicon modifier
        heads = [next((t for t in reversed(g) if t.cls != "num" and t.text not in ZH_MODIFIERS), None) for g in groups]
        return View(norm, tuple(terms), tuple(numbers), tuple(_unique_terms(h for h in heads if h)))

    def _en_view(self, text: str) -> View:
        norm = self.m._normalize(text)
        terms: list[Term] = []
        runs: list[list[list[Term]]] = [[[]]]  # conjunct -> noun-phrase runs -> terms
        words = list(EN_WORD.finditer(text))
        prev_end_sentence = True
        for mt in words:
            w, low = mt.group(), mt.group().lower()
            first = prev_end_sentence
            prev_end_sentence = bool(SENT_END.search(text[mt.end():mt.end() + 2]))
            if low in ("and", "or"):
                runs.append([[]])
                continue
            stems = self.m.tok.queries([low.replace("-", " ")])[0]
            if not stems or low in EN_FUNCTION:
                runs[-1].append([])  # a function word ends a noun phrase
                continue
            cls, sub = self._en_class(w, low, first)
            for s in stems:
                t = Term(low, s, cls, sub, mt.start())
                terms.append(t)
                if cls == "verb":
                    runs[-1].append([])
                else:
                    runs[-1][-1].append(t)
            if re.match(r"\s*[,;/&]", text[mt.end():mt.end() + 2]):
                runs.append([[]])
        numbers = [(t.text, num_value(t.text)) for t in terms if t.cls == "num"]
        heads = []
        for conj in runs:
            run = next((r for r in conj if any(t.cls in ("noun", "name") for t in r)), None)
            if run:
                heads.append([t for t in run if t.cls in ("noun", "name")][-1])
        if not heads:  # no noun ("Sunrise", "purple"): the last content word that is not a number
            heads = [t for t in terms if t.cls != "num"][-1:]
        return View(norm, tuple(terms), tuple(numbers), tuple(_unique_terms(heads)))

    def _en_class(self, w: str, low: str, first_in_sentence: bool) -> tuple[str, str]:
        if DIGITS.fullmatch(low) or low in EN_NUMBERS:
            return "num", "number"
        if low in EN_MODIFIERS:
            return "mod", EN_MODIFIERS[low]
        if (any(c.isupper() for c in w[1:]) and any(c.islower() for c in w)) or (w.isupper() and len(w) >= 2) \
                or (w[0].isupper() and not first_in_sentence) or self.capitalised.get(low, 0.0) >= 2 / 3:
            return "name", "proper"
        if low.endswith(("ful", "ous", "less")):
            return "mod", "adjective"
        if low.endswith("ly") and len(low) >= 6 and low not in EN_NOUN_LY:
            return "verb", "adverb"  # an adverb: neither a head nor a modifier of the head noun
        if low in EN_VERBS or verb_base(low) in EN_VERBS or (
                low.endswith(("ing", "ed")) and len(low) > 5 and low not in EN_NOUN_ING):
            return "verb", "verb"
        return "noun", "noun"

    def present(self, term: Term, doc_id: str, text: str) -> bool:
        return self.m.has_term(self.m.passage(doc_id, text), term.key)


def _unique_terms(terms: Any) -> list[Term]:
    return list({t.key: t for t in reversed(list(terms))}.values())[::-1]
