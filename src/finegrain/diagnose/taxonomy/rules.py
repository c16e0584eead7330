"""The rule cascade of the error taxonomy: the first rule that fires tags a failure (see the package)."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from finegrain.diagnose.errors import _unique
from finegrain.diagnose.taxonomy.categories import member_in
from finegrain.diagnose.taxonomy.lexicon import (
    COORD,
    EN_BOILERPLATE,
    LATIN,
    PASSIVE,
    RELATION,
    ZH_BOILERPLATE,
    ZH_MOD_CHARS,
    category,
    is_han,
    known_english,
    related_form,
)
from finegrain.diagnose.taxonomy.text import Analyzer, Term, View
from finegrain.text.distance import osa_distance


@dataclass(frozen=True)
class _Case:
    q: View
    w: View
    r: View
    wid: str
    wtext: str
    rid: str
    rtext: str
    wjudged: bool = True  # False: the qrels never judged the wrong passage


Finding = tuple[str, str, tuple[str, ...]]


def _join(terms: Any) -> str:
    return ", ".join(_unique(t.text if isinstance(t, Term) else str(t) for t in terms))


class _Rules:
    """The taggers; each returns ``(tag, rule, evidence)`` or None."""

    def __init__(self, a: Analyzer, c: _Case) -> None:
        self.a, self.c, self.zh = a, c, a.lang == "zh"
        self.qkeys = {t.key for t in c.q.terms}

    def inw(self, t: Term) -> bool:
        return self.a.present(t, self.c.wid, self.c.wtext)

    def inr(self, t: Term) -> bool:
        return self.a.present(t, self.c.rid, self.c.rtext)

    def _new(self, t: Term) -> bool:
        """A passage term that is not a query term (nor, zh, inside or around one) and not caption boilerplate."""
        if t.key in self.qkeys or t.text in (ZH_BOILERPLATE if self.zh else EN_BOILERPLATE) \
                or (not self.zh and t.key in EN_BOILERPLATE):
            return False
        return not (self.zh and any(t.text in q.text or q.text in t.text for q in self.c.q.terms))

    def typo(self) -> Finding | None:
        a, c = self.a, self.c
        words = _unique(w for t in c.q.terms for w in LATIN.findall(t.text.lower()))
        for word in words:
            if len(word) < 4 or a.word_df.get(word, 0):
                continue
            lim = 1 if len(word) <= 7 else 2
            stem = (a.m.tok.queries([word])[0] or [word])[0] if not self.zh else word.rstrip("s")
            if (not self.zh and a.stem_df.get(stem, 0)) or known_english(word):
                continue  # another form of a corpus word ("playing" with "plays"), or a dictionary word
            best = None
            for v, df in a.word_df.items():
                if abs(len(v) - len(word)) > lim or not v.isalpha() or v[0] != word[0]:
                    continue
                d = osa_distance(word, v)
                other = (a.m.tok.queries([v])[0] or [v])[0] if not self.zh else v.rstrip("s")
                if d <= lim and other != stem and (best is None or (d, -df, v) < best):
                    best = (d, -df, v)
            if best:
                d, df, v = best[0], -best[1], best[2]
                where = ", the relevant passage among them" if v in c.rtext.lower() else ""
                return ("typo", f"the query word {word!r} occurs in no passage; {v!r} (edit distance {d}) "
                                f"occurs in {df}{where}", (word, v))
        if self.zh:
            return self._pinyin_typo()
        return None

    def _pinyin_typo(self) -> Finding | None:
        try:
            from pypinyin import lazy_pinyin
        except ImportError:
            return None
        a = self.a
        for t in self.c.q.terms:
            if len(t.text) < 2 or not all(is_han(ch) for ch in t.text) or a.df(t.text):
                continue
            cands = [v for v in a.zh_vocab.get(tuple(lazy_pinyin(t.text)), ()) if v != t.text]
            if cands:
                v = min(cands, key=lambda x: (-a.df(x), x))
                return ("typo", f"the query word {t.text} occurs in no passage; {v} has the same pinyin "
                                f"({' '.join(lazy_pinyin(v))}) and occurs in {a.df(v)}", (t.text, v))
        return None

    def numerical(self) -> Finding | None:
        q, w = self.c.q, self.c.w
        wvals = {v for _, v in w.numbers}
        for s, v in q.numbers:
            if w.numbers and v not in wvals:
                other = next(s2 for s2, v2 in w.numbers if v2 != v)
                return ("numerical_mismatch", f"the query number {s} is not in the wrong passage, which has {other}",
                        (s, other))
        return None

    def false_negative(self) -> Finding | None:
        """An unjudged wrong passage holding every query term: likely relevant, missing from the qrels."""
        c = self.c
        if c.wjudged or not c.q.terms or not all(self.inw(t) for t in c.q.terms):
            return None
        shared = _join(c.q.terms)
        return ("suspected_false_negative", f"the wrong passage was never judged and contains every query term "
                                            f"({shared}): likely a relevant passage the qrels miss; judge it",
                tuple(_unique(t.text for t in c.q.terms)))

    def taxonomy(self) -> Finding | None:
        """The relevant passage does not name a category word of the query but a member of it
        (海鲜 -> 螃蟹, fruit -> watermelon): CapRetrieval's taxonomy-knowledge miss."""
        c = self.c
        nouns = [t for t in c.q.terms if t.cls in ("noun", "name")]
        cands: list[tuple[str, tuple[Term, ...]]] = [
            (x.text + y.text if self.zh else f"{x.text} {y.text}", (x, y))
            for x, y in pairwise(c.q.terms) if y.cls in ("noun", "name") and x.cls not in ("num", "verb")]
        cands += [(t.text, (t,)) for t in (*c.q.heads, *nouns)]
        seen: set[str] = set()
        words = [t.text for t in c.r.terms]
        for cat, parts in cands:
            if cat in seen or all(self.inr(t) for t in parts):
                continue  # the relevant passage names the category itself
            seen.add(cat)
            member = member_in(self.a.lang, cat, c.r.norm if self.zh else c.rtext, words)
            if member:
                source = "the Chinese category lexicon" if self.zh else "a WordNet hyponym"
                return ("taxonomy_miss", f"the relevant passage does not name the query's {cat} but {member}, a "
                                         f"kind of {cat} ({source}): matching needs taxonomy knowledge",
                        (cat, member))
        return None

    def _first_pos(self, view: View, t: Term) -> int | None:
        if self.zh:
            i = view.norm.find(t.key)
            return None if i < 0 else i
        return next((x.pos for x in view.terms if x.key == t.key), None)

    def _relation(self, view: View, lo: int, hi: int) -> bool:
        """A verb, a passive marker or a direction word between two positions: the nouns have roles."""
        return bool(RELATION.search(view.norm[lo:hi])) or any(
            t.cls == "verb" and lo <= t.pos < hi and t.sub not in ("x", "m") for t in view.terms)

    def syntax(self) -> Finding | None:
        q, w = self.c.q, self.c.w
        role = [t for t in q.terms if t.cls in ("noun", "name")]
        for x, y in pairwise(role):
            if x.key == y.key or x.text in y.text or y.text in x.text:
                continue
            between_q = q.norm[x.pos + len(x.text):y.pos]
            if COORD.search(between_q) or not self._relation(q, x.pos + len(x.text), y.pos):
                continue
            px, py = self._first_pos(w, x), self._first_pos(w, y)
            if px is None or py is None or px == py:
                continue
            lo, hi = (px, py) if px < py else (py, px)
            first = x if px < py else y
            between_w = w.norm[lo + len(first.text):hi]
            if COORD.search(between_w) or len(between_w) > 60 or not self._relation(w, lo + len(first.text), hi):
                continue
            passive_q, passive_w = bool(PASSIVE.search(between_q)), bool(PASSIVE.search(between_w))
            if (not passive_q) != ((px < py) ^ passive_w):
                note = lambda p: " (passive)" if p else ""
                return ("syntax_mismatch", f"the query has {x.text} … {y.text}{note(passive_q)}; the wrong passage "
                                           f"has them in the other role order{note(passive_w)}", (x.text, y.text))
        return None

    def named_entity(self) -> Finding | None:
        gone = [t for t in self.c.q.terms if t.cls == "name" and not self.inw(t)]
        other = [t for t in self.c.w.terms if t.cls == "name" and self._new(t)]
        if gone and other:
            return ("entity_mismatch", f"the query's named entity {gone[0].text} is absent from the wrong passage, "
                                       f"which names {other[0].text}", (gone[0].text, other[0].text))
        return None

    def modifier(self) -> Finding | None:
        c = self.c
        if self.zh:  # 白猫 vs 黑猫: one modifier character replaced on the same head
            for t in c.q.terms:
                if len(t.text) < 2 or t.cls == "mod" or self.inw(t):
                    continue
                for cls, chars in ZH_MOD_CHARS.items():
                    if t.text[0] in chars:
                        for ch in chars:
                            if ch != t.text[0] and ch + t.text[1:] in c.w.norm:
                                return ("modifier_mismatch", f"{cls} modifier replaced on the head {t.text[1:]}: "
                                        f"{t.text} in the query, {ch + t.text[1:]} in the wrong passage",
                                        (t.text, ch + t.text[1:]))
        heads = c.q.heads
        if not heads or not all(self.inw(h) for h in heads):
            return None
        hk = {h.key for h in heads}
        missing = [t for t in c.q.terms if t.key not in hk and not self.inw(t)]
        if not missing:
            return None
        head = _join(heads)
        mods = [t for t in c.w.terms if t.cls == "mod" and self._new(t)]
        for m in missing:
            same = [x for x in mods if m.cls == "mod" and x.sub == m.sub]
            if same:
                return ("modifier_mismatch", f"the head {head} is shared; the query's {m.sub} modifier {m.text} "
                                             f"is replaced by {same[0].text}", (m.text, same[0].text, head))
        if mods:
            return ("modifier_mismatch", f"the head {head} is shared; the query's {_join(missing)} is absent and the "
                                         f"wrong passage has the modifier {mods[0].text} instead",
                    (*_unique(t.text for t in missing), mods[0].text, head))
        return ("modifier_mismatch", f"the head {head} is shared; the query's {_join(missing)} is absent from the "
                                     f"wrong passage", (*_unique(t.text for t in missing), head))

    def _replacement(self) -> Term | None:
        w = self.c.w
        if self.zh:
            for t in w.terms:
                nxt = w.norm[t.pos + len(t.text):t.pos + len(t.text) + 1]
                if t.cls in ("noun", "name") and self._new(t) and (not nxt or nxt not in "上里中旁边的内外下前后"):
                    return t
            return None
        return next((t for t in (*w.heads, *w.terms) if t.cls in ("noun", "name") and self._new(t)), None)

    def _same_class(self, head: Term) -> Term | None:
        """For a head that is a modifier word (sunrise): a passage word of the same class (sunset)."""
        return next((t for t in self.c.w.terms if t.cls == head.cls == "mod" and t.sub == head.sub
                     and self._new(t)), None)

    def head_entity(self) -> Finding | None:
        c = self.c
        gone = [h for h in c.q.heads if not self.inw(h)]
        if not gone or any(self.inw(t) for t in c.q.terms if t.cls not in ("mod", "num")):
            return None
        h = gone[0]
        x = self._same_class(h) or self._replacement()
        if x is None:
            return None
        context = [t for t in c.q.terms if t.cls in ("mod", "num") and self.inw(t)]
        why = ("the same modifier class" if x.cls == "mod" else f"shared context {_join(context)}" if context
               else "the same category" if category(h.text) and category(h.text) == category(x.text)
               else "a shared word part" if related_form(h.text, x.text, self.zh) else "")
        if not why:
            return None  # an unrelated passage (a hub), not a swapped entity: left to "other"
        return ("entity_mismatch", f"the query's head {h.text} is absent from the wrong passage, which is about "
                                   f"{x.text} instead ({why}; no other query noun shared)", (h.text, x.text))

    def over_sensitivity(self) -> Finding | None:
        c, a = self.c, self.a
        shared = [t for t in c.q.terms if self.inw(t)]
        if not shared:
            return None
        gone = [h for h in c.q.heads if not self.inw(h)]
        if gone or (not c.q.heads and len(shared) < len(c.q.terms)):
            rare = min(shared, key=lambda t: (a.df(t.key), t.pos))
            rule = (f"the wrong passage shares {_join(shared)} with the query (rarest: {rare.text}, in "
                    f"{a.df(rare.key)} of {len(a.corpus_texts)} passages)"
                    + (f" but not its head {_join(gone)}" if gone else ""))
            notr = [t for t in shared if not self.inr(t)]
            if notr:
                rule += f"; the relevant passage does not use {_join(notr)} (a paraphrase)"
            return "term_over_sensitivity", rule, tuple(_unique(t.text for t in shared))
        if len(shared) == len(c.q.terms):
            return ("term_over_sensitivity", f"the wrong passage contains every query term ({_join(shared)}) yet "
                                             "is judged irrelevant",
                    tuple(_unique(t.text for t in shared)))
        return None

    def all(self) -> list[Finding]:
        out = []
        for rule in (self.typo, self.numerical, self.syntax, self.false_negative, self.taxonomy, self.named_entity,
                     self.modifier,
                     self.head_entity, self.over_sensitivity):
            f = rule()
            if f is not None:
                out.append(f)
        return out

    def other_reason(self) -> str:
        if not self.c.q.terms:
            return "no rule fired: the query has no content word"
        if not any(self.inw(t) for t in self.c.q.terms):
            return ("no rule fired: the wrong passage shares no query word and nothing links its subject to the "
                    "query's head (an unrelated passage)")
        return "no rule fired"


def tag_failure(a: Analyzer, q: View, wrong: tuple[str, str], relevant: tuple[str, str], *,
                wrong_judged: bool = True) -> tuple[Finding, tuple[str, ...]]:
    """The tag of one failure (first rule that fires) and the other tags whose rules fire too.

    ``wrong_judged=False``: the qrels never judged the wrong passage, so it may be a false negative.
    """
    w = a.view(wrong[1], "d:" + wrong[0])
    r = a.view(relevant[1], "d:" + relevant[0])
    rules = _Rules(a, _Case(q, w, r, wrong[0], wrong[1], relevant[0], relevant[1], wrong_judged))
    found = rules.all()
    if not found:
        return ("other", rules.other_reason(), ()), ()
    first = found[0]
    return first, tuple(_unique(f[0] for f in found[1:] if f[0] != first[0]))
