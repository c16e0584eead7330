"""The perturbation families: one salient attribute of a query swapped for its opposite.

``antonym``    an adjective -> a WordNet antonym (en) / a lexicon antonym (zh)
``color-all``  a colour -> a colour at RGB distance >= threshold among all colour words
``color-in``   the same, among the colours that occur in the dataset's corpus
``size``       a big word <-> a small word
``negation``   the query negated (not in the paper; a control for "does the model read 'no'?")
``typo``       one keyboard-style typo in one word (a control: the meaning should *not* change)

Each family perturbs at most one word per query ("focused on an individual
semantic each time", the paper's Sec. 5.1); when a query has several candidate
words, one is drawn. Every draw uses a generator seeded by ``(seed, family,
qid)``, so a query's perturbation does not depend on which other queries or
families are in the run. A query with no candidate word is not perturbed by
that family (it does not count in its tables).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

import finegrain.diagnose.perturb.colors as colors
import finegrain.diagnose.perturb.zh_lexicon as zh_lexicon
from finegrain.diagnose.perturb.antonyms import en_antonym_spans, zh_antonym_spans
from finegrain.diagnose.perturb.sizes import en_size_spans, zh_size_spans
from finegrain.diagnose.perturb.text import (
    Span,
    en_words,
    longest_matches,
    match_case,
    pick,
    replace,
    replace_en,
    rng_for,
)
from finegrain.diagnose.perturb.text import word_list as _split
from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.results.probes import PerturbationRecord

FAMILIES: tuple[str, ...] = ("antonym", "color-all", "color-in", "size", "negation", "typo")
LANGS: tuple[str, ...] = ("en", "zh")


@dataclass(frozen=True)
class Perturbation:
    """One perturbed query: ``perturbed`` is ``original`` with ``original[start:end]`` (``word``) -> ``replacement``."""

    qid: str
    family: str
    original: str
    perturbed: str
    word: str
    replacement: str
    start: int
    end: int
    detail: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def saved(self) -> PerturbationRecord:
        """As saved, one per line, in ``perturbations.jsonl``."""
        return PerturbationRecord(qid=self.qid, family=self.family, original=self.original, perturbed=self.perturbed,
                                  word=self.word, replacement=self.replacement, start=self.start, end=self.end,
                                  **({"detail": dict(self.detail)} if self.detail else {}))


@dataclass(frozen=True)
class Context:
    """What the families need besides the query: language, seed, colour threshold and the corpus colours."""

    lang: str
    seed: int = 0
    color_threshold: float = colors.DEFAULT_THRESHOLD
    corpus_colors: frozenset[str] = frozenset()  # colour names (en) / matplotlib names (zh) found in the corpus
    # zh: character -> corpus characters with the same toneless pinyin, most frequent first (typo family)
    homophones: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def parse_families(items: Iterable[str] | None) -> tuple[str, ...]:
    """``["antonym,size", "typo"]`` -> the family names in canonical order; None or empty -> all."""
    names = [n.strip().lower() for item in (items or ()) for n in item.split(",") if n.strip()]
    if not names:
        return FAMILIES
    for n in names:
        if n not in FAMILIES:
            raise UnknownNameError("perturbation family", n, FAMILIES)
    return tuple(f for f in FAMILIES if f in names)


def make_context(lang: str, corpus_texts: Sequence[str], *, seed: int = 0,
                 color_threshold: float = colors.DEFAULT_THRESHOLD, need_corpus_colors: bool = True,
                 need_homophones: bool = True) -> Context:
    """The :class:`Context` for a dataset; scans the corpus for its colours when ``color-in`` needs them,
    and (zh) for homophone characters when ``typo`` needs them."""
    if lang not in LANGS:
        raise FinegrainError(f"query perturbation has no lexicons for language {lang!r}", f"use one of {', '.join(LANGS)}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise FinegrainError(f"seed={seed!r} is not a whole number >= 0", "pass --seed 0")
    if not 0.0 <= color_threshold <= colors.MAX_DISTANCE:
        raise FinegrainError(f"colour threshold {color_threshold!r} is outside 0..{colors.MAX_DISTANCE:.1f}",
                             "RGB distance is on 0-255 channels; the default is 150")
    found = corpus_colors(lang, corpus_texts) if need_corpus_colors else frozenset()
    sounds = corpus_homophones(corpus_texts) if lang == "zh" and need_homophones else {}
    return Context(lang, seed, float(color_threshold), found, MappingProxyType(sounds))


def corpus_homophones(texts: Iterable[str], *, per_char: int = 5) -> dict[str, tuple[str, ...]]:
    """Each Han character of ``texts`` -> up to ``per_char`` other characters of ``texts`` with the same
    toneless pinyin, most frequent first (ties by code point): the typos a pinyin keyboard makes.
    Empty without ``pypinyin`` (the zh typo family then swaps and deletes only)."""
    try:
        from pypinyin import Style, pinyin
    except ImportError:
        return {}
    freq: dict[str, int] = {}
    for t in texts:
        for c in _CJK_CHAR.findall(t):
            freq[c] = freq.get(c, 0) + 1
    by_sound: dict[str, list[str]] = {}
    for c in freq:
        sound = pinyin(c, style=Style.NORMAL, heteronym=False)[0][0]
        if sound and sound != c:
            by_sound.setdefault(sound, []).append(c)
    out: dict[str, tuple[str, ...]] = {}
    for chars in by_sound.values():
        ranked = sorted(chars, key=lambda c: (-freq[c], c))
        for c in chars:
            others = tuple(x for x in ranked if x != c)[:per_char]
            if others:
                out[c] = others
    return out


def corpus_colors(lang: str, texts: Iterable[str]) -> frozenset[str]:
    """The colours named in ``texts``: English colour words (lower case) or, for zh, matplotlib names."""
    out: set[str] = set()
    if lang == "en":
        for t in texts:
            out.update(s.word.lower() for s in colors.en_color_spans(t))
    else:
        surfaces = zh_lexicon.ZH_COLORS
        for t in texts:
            out.update(surfaces[s.word][0] for s in longest_matches(t, surfaces, zh_lexicon.ZH_COLOR_BLOCKERS))
    return frozenset(out)


def perturb(qid: str, text: str, family: str, ctx: Context) -> Perturbation | None:
    """The ``family`` perturbation of one query, or None when the family does not apply to it."""
    rng = rng_for(ctx.seed, family, qid)
    if family == "antonym":
        spans = en_antonym_spans(text) if ctx.lang == "en" else zh_antonym_spans(text)
        return _swap(qid, text, family, spans, rng, ctx.lang)
    if family == "size":
        spans = en_size_spans(text) if ctx.lang == "en" else zh_size_spans(text)
        return _swap(qid, text, family, spans, rng, ctx.lang)
    if family in ("color-all", "color-in"):
        return _color(qid, text, family, rng, ctx)
    if family == "negation":
        return _negation(qid, text, ctx.lang)
    if family == "typo":
        return _typo(qid, text, rng, ctx.lang, ctx.homophones)
    raise UnknownNameError("perturbation family", family, FAMILIES)


def build_perturbations(
    queries: Iterable[tuple[str, str]], families: Sequence[str], ctx: Context
) -> list[Perturbation]:
    """All perturbations of ``(qid, text)`` pairs, family by family, in query order."""
    items = list(queries)
    return [p for f in families for qid, text in items if (p := perturb(qid, text, f, ctx)) is not None]


# --------------------------------------------------------------------------- word swaps


def _swap(qid: str, text: str, family: str, spans: list[tuple[Span, tuple[str, ...]]],
          rng: np.random.Generator, lang: str) -> Perturbation | None:
    spans = [(s, opts) for s, opts in spans if opts]
    if not spans:
        return None
    span, options = spans[int(rng.integers(len(spans)))]
    new = pick(rng, options)
    new = match_case(span.word, new) if lang == "en" else new
    perturbed = replace_en(text, span, new) if lang == "en" else replace(text, span, new)
    return Perturbation(qid, family, text, perturbed, span.word, new, span.start, span.end,
                        MappingProxyType({"choices": list(options)}))


def _color(qid: str, text: str, family: str, rng: np.random.Generator, ctx: Context) -> Perturbation | None:
    if ctx.lang == "en":
        pool = ctx.corpus_colors if family == "color-in" else colors.en_color_words()
        found = [(s, s.word.lower()) for s in colors.en_color_spans(text)]
        form_of: dict[str, str] = {}
    else:
        table = zh_lexicon.ZH_COLORS
        spans = longest_matches(text, table, zh_lexicon.ZH_COLOR_BLOCKERS)
        found = [(s, table[s.word][0]) for s in spans]
        form_of = {s.word: table[s.word][1] for s in spans}
    order = rng.permutation(len(found)) if found else []
    for i in order:  # the first drawn colour word that has an admissible replacement
        span, name = found[int(i)]
        if ctx.lang == "en":
            candidates = set(pool)
        else:
            form = form_of[span.word]
            surface = _zh_surface_by_name(form)
            candidates = {n for n in surface if family == "color-all" or n in ctx.corpus_colors}
        choice = colors.choose(name, candidates, rng, ctx.color_threshold)
        if choice is None:
            continue
        if ctx.lang == "en":
            new = match_case(span.word, choice.replacement)
        else:
            new = _zh_surface_by_name(form_of[span.word])[choice.replacement]
        detail = {"color": name, "replacement_color": choice.replacement, "rgb_distance": round(choice.distance, 2),
                  "threshold": ctx.color_threshold, "n_candidates": choice.n_candidates}
        perturbed = replace_en(text, span, new) if ctx.lang == "en" else replace(text, span, new)
        return Perturbation(qid, family, text, perturbed, span.word, new, span.start, span.end,
                            MappingProxyType(detail))
    return None


def _zh_surface_by_name(form: str) -> dict[str, str]:
    """For one zh form ("char" / "word"): matplotlib name -> its first surface in that form."""
    out: dict[str, str] = {}
    for surface, (name, f) in zh_lexicon.ZH_COLORS.items():
        if f == form:
            out.setdefault(name, surface)
    return out


# --------------------------------------------------------------------------- negation

_EN_THERE = ("is", "are", "was", "were")
_EN_AUX = ("is", "are", "was", "were", "can", "does", "do", "has", "have")
_ZH_NEG_BLOCKERS = frozenset(_split(
    "没有 有点 有些 有趣 有名 所有 拥有 有限 有效 有关 有机 还是 就是 但是 可是 于是 是否 总是 不是 只是 要是 正是 或是 不有"
))


def _negation(qid: str, text: str, lang: str) -> Perturbation | None:
    """Negate the query by the first rule that applies (see :data:`NEGATION_RULES`)."""
    if lang == "en":
        words = en_words(text)
        low = [w.word.lower() for w in words]
        nxt = lambda i: low[i + 1] if i + 1 < len(low) else ""
        for i, w in enumerate(low):
            if w == "there" and nxt(i) in _EN_THERE and nxt(i + 1) not in ("no", "not"):
                return _insert_after(qid, text, words[i + 1], "no", "there-is-no")
        for i, w in enumerate(low):
            if w in _EN_AUX and nxt(i) not in ("no", "not"):
                return _insert_after(qid, text, words[i], "not", "aux-not")
        for i, w in enumerate(low):
            if w == "with":
                new = match_case(words[i].word, "without")
                return Perturbation(qid, "negation", text, replace(text, words[i], new), words[i].word, new,
                                    words[i].start, words[i].end, MappingProxyType({"rule": "with-without"}))
        if not words:
            return None
        return Perturbation(qid, "negation", text, "no " + text, "", "no", 0, 0, MappingProxyType({"rule": "prefix-no"}))
    spans = longest_matches(text, ("有", "是"), _ZH_NEG_BLOCKERS)
    for target, new, rule in (("有", "没有", "you-meiyou"), ("是", "不是", "shi-bushi")):
        hit = next((s for s in spans if s.word == target), None)
        if hit is not None:
            return Perturbation(qid, "negation", text, replace(text, hit, new), hit.word, new, hit.start, hit.end,
                                MappingProxyType({"rule": rule}))
    if not text.strip():
        return None
    return Perturbation(qid, "negation", text, "没有" + text, "", "没有", 0, 0, MappingProxyType({"rule": "prefix-meiyou"}))


def _insert_after(qid: str, text: str, anchor: Span, word: str, rule: str) -> Perturbation:
    new = f"{anchor.word} {word}"
    return Perturbation(qid, "negation", text, replace(text, anchor, new), anchor.word, new, anchor.start,
                        anchor.end, MappingProxyType({"rule": rule}))


NEGATION_RULES: dict[str, tuple[str, ...]] = {
    "en": ("there is/are X -> there is/are no X", "first auxiliary (is, are, can, does, has, ...) -> AUX not",
           "with -> without", "otherwise: 'no ' + query"),
    "zh": ("有 -> 没有 (not in 没有/所有/有点...)", "是 -> 不是 (not in 还是/就是/但是...)", "otherwise: '没有' + query"),
}

# --------------------------------------------------------------------------- typos

_QWERTY = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_CJK_CHAR = re.compile(r"[\u3400-\u9fff]")


def _neighbours(c: str) -> str:
    """Letters next to ``c`` on a QWERTY keyboard (same row and the rows above/below)."""
    for r, row in enumerate(_QWERTY):
        i = row.find(c)
        if i < 0:
            continue
        out = [row[j] for j in (i - 1, i + 1) if 0 <= j < len(row)]
        for rr in (r - 1, r + 1):
            if 0 <= rr < len(_QWERTY):
                out += [_QWERTY[rr][j] for j in (i - 1, i, i + 1) if 0 <= j < len(_QWERTY[rr])]
        return "".join(dict.fromkeys(out))
    return ""


def _typo(qid: str, text: str, rng: np.random.Generator, lang: str,
          homophones: Mapping[str, tuple[str, ...]] | None = None) -> Perturbation | None:
    """English: swap / delete / insert / substitute (QWERTY neighbour) one letter of one word of >= 3 letters.
    Chinese: a character replaced by a corpus character of the same toneless pinyin (the pinyin-keyboard
    typo, when ``homophones`` has one), two adjacent different characters swapped, or one character
    deleted (only in queries of >= 3 characters: deleting one of two leaves another word)."""
    if lang == "en":
        words = [w for w in en_words(text) if len(w.word) >= 3]
        if not words:
            return None
        span = words[int(rng.integers(len(words)))]
        w = span.word
        op = pick(rng, ("swap", "delete", "insert", "substitute"))
        i = int(rng.integers(1, len(w)))  # keep the first letter: the usual typo, and the word stays findable
        swaps = [j for j in range(1, len(w) - 1) if w[j] != w[j + 1]]  # positions j <-> j+1, first letter kept
        if op == "swap" and not swaps:
            op = "delete"
        if op == "swap":
            j = swaps[int(rng.integers(len(swaps)))]
            new = w[:j] + w[j + 1] + w[j] + w[j + 2:]
        elif op == "delete":
            new = w[:i] + w[i + 1:]
        else:
            near = _neighbours(w[i].lower()) or "e"
            c = pick(rng, tuple(near))
            c = c.upper() if w[i].isupper() else c
            new = w[:i] + c + w[i:] if op == "insert" else w[:i] + c + w[i + 1:]
        return Perturbation(qid, "typo", text, replace(text, span, new), w, new, span.start, span.end,
                            MappingProxyType({"op": op}))
    pos = [m.start() for m in _CJK_CHAR.finditer(text)]
    if len(pos) < 2:
        return None
    pairs = [(a, b) for a, b in itertools.pairwise(pos) if b == a + 1 and text[a] != text[b]]
    sounding = [a for a in pos if (homophones or {}).get(text[a])]
    ops = (("homophone",) if sounding else ()) + (("swap",) if pairs else ()) + (("delete",) if len(pos) >= 3 else ())
    if not ops:
        return None
    op = pick(rng, ops)
    if op == "homophone":
        a = sounding[int(rng.integers(len(sounding)))]
        c = pick(rng, homophones[text[a]])  # type: ignore[index]
        return Perturbation(qid, "typo", text, text[:a] + c + text[a + 1:], text[a], c, a, a + 1,
                            MappingProxyType({"op": "homophone"}))
    if op == "swap":
        a, b = pairs[int(rng.integers(len(pairs)))]
        return Perturbation(qid, "typo", text, text[:a] + text[b] + text[a] + text[b + 1:], text[a:b + 1],
                            text[b] + text[a], a, b + 1, MappingProxyType({"op": "swap"}))
    a = pos[int(rng.integers(len(pos)))]
    return Perturbation(qid, "typo", text, text[:a] + text[a + 1:], text[a], "", a, a + 1,
                        MappingProxyType({"op": "delete"}))
