"""The local WordNet copy built from Debian's files: nltk reads it, nothing is downloaded."""

from __future__ import annotations

from pathlib import Path

import pytest

from finegrain.errors import FinegrainError
from finegrain.lexicons import wordnet as wnmod


def test_lexnames_has_the_45_wordnet_files_in_order() -> None:
    lines = wnmod.lexnames_text().splitlines()
    assert len(lines) == 45
    assert lines[0] == "00\tadj.all\t3"
    assert lines[5] == "05\tnoun.animal\t1"
    assert lines[44] == "44\tadj.ppl\t3"


def test_reader_answers_synsets_antonyms_and_similarity() -> None:
    wn = wnmod.wordnet()
    dog = wn.synset("dog.n.01")
    assert dog.lexname() == "noun.animal"
    # path similarity = 1 / (1 + shortest is-a path): dog-canine-carnivore-feline-cat is 4 edges
    assert dog.path_similarity(wn.synset("cat.n.01")) == pytest.approx(1 / 5)
    antonyms = {a.name() for s in wn.synsets("big", pos="a") for l in s.lemmas() for a in l.antonyms()}
    assert antonyms & {"small", "little"}


def test_missing_source_names_the_folder_and_the_fix(tmp_path: Path) -> None:
    with pytest.raises(FinegrainError) as e:
        wnmod.prepare(source=tmp_path / "nowhere", cache_dir=tmp_path / "cache")
    assert "nowhere" in str(e.value) and "wordnet-base" in str(e.value)
