"""KW hypernyms are sense-checked against the passage: the WordNet sense the caption's other words point
to, or a dominant one; none when no sense fits, and never an abstract category. Captions are real
Flickr8k captions (as written in ``Flickr8k.token.txt``)."""

from __future__ import annotations

import pytest

from finegrain.build.units import units
from finegrain.lexicons.wordnet import wordnet
from finegrain.train.hypernyms import ABSTRACT, MIN_DEPTH, fitting_sense, hypernym


def _in(noun: str, caption: str) -> str | None:
    return hypernym(noun, units(caption, "en"))


@pytest.mark.parametrize("caption", ["A black dog is running in the grass .", "A black dog swims in the water .",
                                     "White dog playing with a red ball on the shore near the water ."])
def test_dog_keeps_canine_its_dominant_sense(caption: str) -> None:
    assert _in("dog", caption) == "canine"


@pytest.mark.parametrize("caption", ["A black dog swims in the water .", "A black dog is running in the water .",
                                     "White dog playing with a red ball on the shore near the water ."])
def test_water_in_a_caption_is_never_a_binary_compound(caption: str) -> None:
    """water's first sense is the compound H2O (hypernyms binary compound, liquid), not the lake or sea a
    dog swims in: a caption that does not say which sense has no water hypernym."""
    assert _in("water", caption) is None


def test_water_that_is_drunk_is_a_liquid_and_never_a_binary_compound() -> None:
    assert "binary_compound.n.01" in ABSTRACT
    assert hypernym("water", ["clear", "colorless", "liquid", "drink"]) == "liquid"


def test_bike_is_a_bicycle_only_when_the_caption_says_so() -> None:
    """bike's first WordNet sense is a motorcycle; "pedaling" points to the bicycle (moved by foot pedals),
    and a caption with neither keeps no hypernym rather than the wrong one."""
    assert _in("bike", "A man on a mountain bike is pedaling up a hill .") == "wheeled vehicle"
    assert _in("bike", "A woman rides a bike on a dirt path .") is None
    assert hypernym("bike") is None
    assert hypernym("qwzxv") is None


def test_a_chosen_hypernym_is_never_abstract() -> None:
    for noun in ("water", "thing", "object", "stuff", "substance", "group", "part", "person", "area"):
        sense = fitting_sense(noun)
        up = hypernym(noun)
        if up is None or sense is None:
            continue
        found = [h for h in sense.hypernyms() + sense.instance_hypernyms()
                 if h.lemma_names()[0].replace("_", " ").lower() == up]
        assert found and all(h.name() not in ABSTRACT and h.min_depth() >= MIN_DEPTH for h in found), noun
    assert wordnet().synset("binary_compound.n.01").min_depth() >= MIN_DEPTH  # denied by name, not depth
