"""Finding words in a query and swapping one of them: English word spans, Chinese longest match.

English words are runs of letters (hyphenated words stay whole: ``second-hand``).
Chinese has no spaces, so a word is found by longest match against a lexicon
that also lists *blockers*: compounds that contain a target word without
meaning it (``白菜`` cabbage holds ``白`` white, ``大学`` university holds ``大``
big). At each position the longest lexicon entry wins; a blocker is skipped
whole, so ``西红柿`` never yields ``红``.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from finegrain.text.words import EN_LETTER_WORD


@dataclass(frozen=True)
class Span:
    """``text[start:end]`` is ``word``."""

    start: int
    end: int
    word: str


def en_words(text: str) -> list[Span]:
    """The letter words of an English text, with their offsets."""
    return [Span(m.start(), m.end(), m.group()) for m in EN_LETTER_WORD.finditer(text)]


def en_phrases(text: str, max_words: int = 3) -> list[list[Span]]:
    """For every word, the phrases of 1..``max_words`` words starting there (joined by single spaces only)."""
    words = en_words(text)
    out: list[list[Span]] = []
    for i, w in enumerate(words):
        group = [w]
        for j in range(i + 1, min(len(words), i + max_words)):
            if text[words[j - 1].end:words[j].start] != " ":
                break
            group.append(Span(w.start, words[j].end, text[w.start:words[j].end]))
        out.append(group)
    return out


def longest_matches(text: str, words: Iterable[str], blockers: Iterable[str] = ()) -> list[Span]:
    """Non-overlapping matches of ``words`` in ``text`` by greedy longest match, skipping ``blockers``."""
    targets = set(words)
    lexicon = targets | set(blockers)
    if not lexicon:
        return []
    longest = max(len(w) for w in lexicon)
    out: list[Span] = []
    i = 0
    while i < len(text):
        hit = next((text[i:i + n] for n in range(min(longest, len(text) - i), 0, -1) if text[i:i + n] in lexicon), None)
        if hit is None:
            i += 1
            continue
        if hit in targets:
            out.append(Span(i, i + len(hit), hit))
        i += len(hit)
    return out


def replace(text: str, span: Span, new: str) -> str:
    """``text`` with ``span`` replaced by ``new``."""
    return text[:span.start] + new + text[span.end:]


_ARTICLE = re.compile(r"(?:^|(?<=[^A-Za-z]))(an?|An?|AN?) $")


def replace_en(text: str, span: Span, new: str) -> str:
    """:func:`replace` for English, fixing the article before the word (``a small`` -> ``an enormous``)."""
    head = text[:span.start]
    m = _ARTICLE.search(head)
    if m and new:
        art = m.group(1)
        want = "an" if new[0].lower() in "aeiou" else "a"
        fixed = match_case(art, want) if art != "A" else want.capitalize()
        head = head[:m.start(1)] + fixed + " "
    return head + new + text[span.end:]


def match_case(word: str, new: str) -> str:
    """``new`` in the case pattern of ``word`` (``Blue`` -> ``Red``, ``BLUE`` -> ``RED``)."""
    if word.isupper() and len(word) > 1:
        return new.upper()
    if word[:1].isupper():
        return new[:1].upper() + new[1:]
    return new


def word_list(text: str) -> list[str]:
    """The entries of a lexicon written as one whitespace-separated string."""
    return text.split()


def rng_for(seed: int, family: str, qid: str) -> np.random.Generator:
    """A generator for one (family, query): the same choice whatever other queries are perturbed."""
    return np.random.default_rng([seed, zlib.crc32(family.encode()), zlib.crc32(qid.encode())])


def pick(rng: np.random.Generator, items: list[str] | tuple[str, ...]) -> str:
    return items[int(rng.integers(len(items)))]


def invert_pairs(pairs: Mapping[str, Iterable[str]]) -> dict[str, tuple[str, ...]]:
    """Make a ``word -> opposites`` table symmetric (``a -> b`` implies ``b -> a``), order kept."""
    out: dict[str, list[str]] = {}
    for a, bs in pairs.items():
        for b in bs:
            out.setdefault(a, [])
            out.setdefault(b, [])
            if b not in out[a]:
                out[a].append(b)
            if a not in out[b]:
                out[b].append(a)
    return {k: tuple(v) for k, v in out.items()}
