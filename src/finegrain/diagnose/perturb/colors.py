"""Colour substitution: matplotlib's named colours, RGB distance, a distant replacement.

The explainable-ranking paper (Sec. 5.1) replaces a colour of the query "with
another distant color", the distance being that of "the RGB values of
Matplotlib colors" with "a proximity threshold to ensure perceptually
non-negligible color changes". Here:

* the palette is ``matplotlib.colors.CSS4_COLORS`` plus ``XKCD_COLORS``
  (prefix ``xkcd:`` dropped); a name in both takes the CSS4 value, as
  ``matplotlib.colors.to_rgb(name)`` does;
* the distance is Euclidean on 0-255 RGB (max ``255*sqrt(3)`` = 441.7); a
  replacement must be at least ``threshold`` away (default
  :data:`DEFAULT_THRESHOLD`);
* the replacement is drawn (seeded) among the admissible colours, so a run is
  reproducible with ``--seed``.

English colour words: a palette name counts as a colour in a text only when it
is used as a colour word, i.e. WordNet knows it as an adjective at least as
often as a noun (``red``, ``grey`` yes; ``orange``, ``tomato``, ``chocolate``
no: in a query they are the fruit and the food); a two- or three-word palette
name counts when its last word does (``light blue``). Replacements are drawn
from the same colour words, so the perturbed query stays plain English.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from finegrain.diagnose.perturb.antonyms import adjective_dominant
from finegrain.diagnose.perturb.text import Span, en_phrases
from finegrain.diagnose.perturb.text import word_list as _split

DEFAULT_THRESHOLD = 150.0
MAX_DISTANCE = 255.0 * math.sqrt(3.0)


@lru_cache(maxsize=1)
def palette() -> dict[str, tuple[int, int, int]]:
    """Every matplotlib colour name (lower case, CSS4 first, then XKCD) -> RGB in 0..255."""
    from matplotlib import colors as mcolors

    out: dict[str, tuple[int, int, int]] = {}
    for name in mcolors.XKCD_COLORS:
        out[name.removeprefix("xkcd:")] = _rgb255(mcolors.to_rgb(name))
    for name in mcolors.CSS4_COLORS:  # CSS4 wins for names in both, as in matplotlib
        out[name] = _rgb255(mcolors.to_rgb(name))
    return out


def rgb(name: str) -> tuple[int, int, int]:
    """RGB (0..255) of a matplotlib colour name."""
    return palette()[name.lower()]


def distance(a: str, b: str) -> float:
    """Euclidean RGB distance (0..255 per channel) between two colour names."""
    return float(np.linalg.norm(np.subtract(rgb(a), rgb(b), dtype=np.float64)))


def _rgb255(c: tuple[float, float, float]) -> tuple[int, int, int]:
    return (round(c[0] * 255), round(c[1] * 255), round(c[2] * 255))


# --------------------------------------------------------------------------- English colour words


# Words that may qualify a colour in a multi-word palette name ("light blue", "navy blue").
COLOR_MODIFIERS: frozenset[str] = frozenset(_split(
    "light dark pale bright deep pastel dull dusty medium vivid sky navy royal neon forest sea"
))


# XKCD names that pass the WordNet test but are not hues in a query ("dark jacket", "royal palace").
NOT_HUES: frozenset[str] = frozenset(_split(
    "bland dark pale royal drab marine spruce rust cherry sandy evergreen carnation"
))


@lru_cache(maxsize=1)
def en_color_words() -> frozenset[str]:
    """Palette names that read as English colour words (see the module docstring).

    One word: adjective-dominant in WordNet. Two or three words: the last one is
    such a colour word and every other one is a colour word or a
    :data:`COLOR_MODIFIERS` word, none twice (so ``light blue`` and ``yellow
    green``, but not XKCD's ``baby poop green`` or ``light light blue``).
    :data:`NOT_HUES` are left out.
    """
    names = [n for n in palette() if all(p.isalpha() for p in n.split(" ")) and len(n.split(" ")) <= 3]
    single = frozenset(n for n in names if " " not in n and n not in NOT_HUES and adjective_dominant(n))
    multi = {
        n for n in names if " " in n and n.split(" ")[-1] in single
        and len(set(n.split(" "))) == len(n.split(" "))
        and all(p in single or p in COLOR_MODIFIERS for p in n.split(" ")[:-1])
    }
    return single | frozenset(multi)


def en_color_spans(text: str) -> list[Span]:
    """Colour words in an English text, longest palette name first, no overlaps."""
    words = en_color_words()
    out: list[Span] = []
    taken = -1
    for group in en_phrases(text):
        if group[0].start < taken:
            continue
        for span in reversed(group):
            if span.word.lower() in words:
                out.append(span)
                taken = span.end
                break
    return out


# --------------------------------------------------------------------------- choosing a replacement


@dataclass(frozen=True)
class ColorChoice:
    replacement: str
    distance: float
    n_candidates: int


def choose(
    original: str, candidates: frozenset[str] | set[str] | list[str], rng: np.random.Generator,
    threshold: float = DEFAULT_THRESHOLD,
) -> ColorChoice | None:
    """A seeded pick among ``candidates`` at RGB distance >= ``threshold`` from ``original``; None if none is."""
    names = sorted(c for c in candidates if c != original)
    if not names:
        return None
    base = np.asarray(rgb(original), dtype=np.float64)
    dist = np.linalg.norm(np.asarray([rgb(c) for c in names], dtype=np.float64) - base, axis=1)
    ok = np.flatnonzero(dist >= threshold)
    if len(ok) == 0:
        return None
    i = int(ok[int(rng.integers(len(ok)))])
    return ColorChoice(names[i], float(dist[i]), len(ok))
