"""WordNet hypernyms for KW training queries, sense-checked against the passage they are made for.

A noun's first WordNet sense is often not the one a caption means (``bike`` is first a
motorcycle, ``water`` first the chemical compound), and its direct hypernym can be a
category no user searches for (``binary compound``). :func:`hypernym` therefore

1. scores every noun sense of the word by a simplified Lesk overlap -- the passage's other
   content words found in the sense's *signature* (its gloss, examples, lemma names and its
   hypernyms' lemma names; words reduced to their WordNet base form, stop words left out) --
   plus ``PRIOR_WEIGHT`` times the sense's share of the word's tagged uses in WordNet's
   sense-tagged corpora (``cntlist.rev``);
2. keeps the best sense only when it *fits*: at least one signature word is in the passage, or
   the sense is dominant (at least ``DOMINANT_SHARE`` of the word's tagged uses); otherwise no
   hypernym (an ambiguous word in a passage that does not say which sense);
3. takes that sense's most specific hypernym (deepest; ties by name) that is not abstract: a
   minimum depth below WordNet's root of ``MIN_DEPTH`` and not in :data:`ABSTRACT`; the hypernym's
   first lemma is the keyword (``dog`` -> ``canine``).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

from finegrain.lexicons.wordnet import wordnet
from finegrain.text.stopwords import stopwords

PRIOR_WEIGHT = 1.5
DOMINANT_SHARE = 0.8
MIN_DEPTH = 4
#: Top-level or chemistry-textbook categories: true of the noun, useless as a search query.
ABSTRACT = frozenset({
    "entity.n.01", "physical_entity.n.01", "abstraction.n.06", "object.n.01", "whole.n.02", "thing.n.12",
    "thing.n.08", "matter.n.03", "substance.n.01", "substance.n.07", "compound.n.02", "binary_compound.n.01",
    "material.n.01", "artifact.n.01", "instrumentality.n.03", "device.n.01", "organism.n.01",
    "living_thing.n.01", "causal_agent.n.01", "group.n.01", "collection.n.01", "social_group.n.01",
    "psychological_feature.n.01", "event.n.01", "act.n.02", "activity.n.01", "attribute.n.02",
    "property.n.02", "quality.n.01", "state.n.02", "condition.n.01", "relation.n.01", "part.n.01",
    "part.n.02", "part.n.03", "measure.n.02", "unit.n.03", "communication.n.02", "cognition.n.01",
    "content.n.05", "location.n.01", "region.n.01", "region.n.03", "point.n.02", "structure.n.01",
    "natural_object.n.01", "geological_formation.n.01", "element.n.05", "facility.n.01",
})


def hypernym(noun: str, context: Iterable[str] = ()) -> str | None:
    """The hypernym keyword of ``noun`` as used among the words ``context`` (see the module docstring),
    or ``None`` when no sense fits or every hypernym of the fitting sense is abstract."""

    word = noun.lower()
    sense = fitting_sense(word, context)
    if sense is None:
        return None
    ups = [u for u in (sense.hypernyms() or sense.instance_hypernyms())
           if u.min_depth() >= MIN_DEPTH and u.name() not in ABSTRACT]
    if not ups:
        return None
    # nltk lists a synset's hypernyms in an order that changes between processes: pick the most specific
    best = min(ups, key=lambda u: (-u.min_depth(), u.name()))
    name = best.lemma_names()[0].replace("_", " ").lower()
    return None if name == word else name


def fitting_sense(word: str, context: Iterable[str] = ()) -> Any | None:
    """The noun sense of ``word`` that fits ``context`` (steps 1-2 of the module docstring), or ``None``."""
    senses = wordnet().synsets(word, pos="n")
    if not senses:
        return None
    base = _base(word)
    ctx = {_base(w) for w in context} - stopwords("en") - {word, base}
    counts = [_count(s, base) for s in senses]
    total = sum(counts)
    scored = []
    for k, (s, c) in enumerate(zip(senses, counts)):
        share = c / total if total else 0.0
        overlap = len(ctx & _signature(s.name()))
        scored.append((overlap + PRIOR_WEIGHT * share, overlap, share, -k, s))
    scored.sort(key=lambda x: x[:4], reverse=True)
    _, overlap, share, _, best = scored[0]
    if len(scored) > 1 and scored[1][:3] == scored[0][:3]:
        return None  # two senses fit exactly as well: the passage does not say which
    return best if overlap > 0 or share >= DOMINANT_SHARE else None


def _count(sense: Any, base: str) -> int:
    return sum(lemma.count() for lemma in sense.lemmas() if lemma.name().lower() == base)


@cache
def _base(word: str) -> str:
    w = word.lower()
    return wordnet().morphy(w, "n") or wordnet().morphy(w, "v") or w


@cache
def _signature(name: str) -> frozenset[str]:
    sense = wordnet().synset(name)
    text = [sense.definition(), *sense.examples()]
    for s in (sense, *sense.hypernyms()):
        text += [lemma.replace("_", " ") for lemma in s.lemma_names()]
    words = {w for t in text for w in _words(t)}
    return frozenset(_base(w) for w in words) - stopwords("en")


def _words(text: str) -> list[str]:
    return [w for w in "".join(c.lower() if c.isalpha() else " " for c in text).split() if len(w) > 1]
