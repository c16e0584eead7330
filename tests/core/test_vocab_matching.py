"""Ids are matched and interned by hash for speed, and equal hashes never make unequal ids one: Qrels.codes_of
(a run's vocabulary looked up in the qrels') and from_dict's interning give what a dict would, even when
ids are built to collide; Arrow's hash join, where it is taken, gives the same codes. Every test runs with the
compiled lookup (``finegrain._native``, where it is built) and without it."""

from __future__ import annotations

import importlib.util
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from finegrain import Qrels, Run, arrow_ids
from finegrain import types as fg_types
from finegrain.evaluate import evaluate
from native_paths import both_paths

lookup = both_paths(fg_types, without="python")  # which lookup matches ids: the compiled one, or Python's


class Colliding(str):
    """A string whose hash is chosen (equal to another string's, say)."""

    def __new__(cls, text: str, h: int) -> Colliding:
        s = super().__new__(cls, text)
        s._h = h
        return s

    def __hash__(self) -> int:
        return self._h

    def __eq__(self, other: object) -> bool:
        return str.__eq__(self, other)


HAS_ARROW = importlib.util.find_spec("pyarrow") is not None


def _by_dict(vocab: tuple[str, ...], ids: list[str]) -> list[int]:
    index = {d: i for i, d in enumerate(vocab)}
    return [index.get(d, -1) for d in ids]


@given(st.lists(st.text(max_size=4), max_size=30, unique=True), st.lists(st.text(max_size=4), max_size=30))
def test_codes_of_is_a_dict_lookup(vocab: list[str], ids: list[str]) -> None:
    qrels = Qrels.from_dict({"q": dict.fromkeys(vocab, 1)}) if vocab else Qrels.from_dict({})
    got = qrels.codes_of(tuple(ids))
    want = _by_dict(qrels.vocab, ids)
    assert got is None and tuple(ids) == qrels.vocab or got is not None and got.tolist() == want


def test_an_id_with_the_hash_of_a_judged_id_is_not_that_id() -> None:
    qrels = Qrels.from_dict({"q": {"a": 1, "b": 0}})
    impostor = Colliding("zz", hash("a"))
    assert qrels.codes_of(("b", impostor, "a")).tolist() == [1, -1, 0]


def test_judged_ids_that_share_a_hash_are_still_told_apart() -> None:
    a, b = Colliding("a", 7), Colliding("b", 7)
    qrels = Qrels.from_dict({"q": {a: 1, b: 2}})
    assert len(qrels.vocab) == 2
    assert qrels.codes_of((Colliding("b", 7), Colliding("a", 7), Colliding("c", 7))).tolist() == [1, 0, -1]


def test_a_run_whose_ids_collide_with_judged_ones_scores_as_a_dict_would() -> None:
    # equal ids hash alike (Python's rule); here the run retrieves only an impostor of the relevant document: nothing relevant is found
    qrels = Qrels.from_dict({"q": {"rel": 1}})
    run = Run.from_dict({"q": {Colliding("other", hash("rel")): 1.0}})
    assert evaluate(qrels, run, ["ndcg@10"], warn=False).aggregate()["ndcg@10"] == 0.0


def test_from_dict_never_merges_colliding_ids() -> None:
    x, y = Colliding("x", 5), Colliding("y", 5)
    run = Run.from_dict({"q1": {x: 1.0, y: 0.5}, "q2": {Colliding("y", 5): 2.0, Colliding("x", 5): 1.0}})
    assert sorted(map(str, run.vocab)) == ["x", "y"]
    plain = {q: [(str(d), v) for d, v in docs.items()] for q, docs in run.to_dict().items()}
    assert plain == {"q1": [("x", 1.0), ("y", 0.5)], "q2": [("y", 2.0), ("x", 1.0)]}
    assert np.array_equal(run.counts(), [2, 2])


@settings(deadline=None)  # the first call imports pyarrow
@given(st.lists(st.text(max_size=4), max_size=30, unique=True), st.lists(st.text(max_size=4), max_size=30))
def test_codes_of_by_arrow_is_a_dict_lookup(vocab: list[str], ids: list[str]) -> None:
    saved = arrow_ids.ARROW_MIN_IDS
    arrow_ids.ARROW_MIN_IDS = 0
    try:
        qrels = Qrels.from_dict({"q": dict.fromkeys(vocab, 1)})
        got = qrels.codes_of(tuple(ids))
        arrow_taken = qrels._arrow_codes_of(tuple(ids)) is not None
    finally:
        arrow_ids.ARROW_MIN_IDS = saved
    assert got is None and tuple(ids) == qrels.vocab or got is not None and got.tolist() == _by_dict(qrels.vocab, ids)
    plain = all(arrow_ids.id_array([t]) is not None for t in [*vocab, *ids])
    assert arrow_taken == (HAS_ARROW and plain and bool(vocab) and bool(ids))


def test_worth_arrow_from_a_million_ids_or_ten_thousand_once_pyarrow_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "pyarrow", raising=False)
    assert not arrow_ids.worth_arrow(arrow_ids.ARROW_MIN_IDS - 1) and arrow_ids.worth_arrow(arrow_ids.ARROW_MIN_IDS)
    assert not arrow_ids.worth_arrow(arrow_ids.ARROW_WARM_MIN_IDS)
    monkeypatch.setitem(sys.modules, "pyarrow", object())
    assert arrow_ids.worth_arrow(arrow_ids.ARROW_WARM_MIN_IDS) and not arrow_ids.worth_arrow(arrow_ids.ARROW_WARM_MIN_IDS - 1)


def test_a_pickled_table_matches_ids_in_a_process_that_hashes_strings_another_way(tmp_path) -> None:
    """What a table caches from its ids (its hash index holds this process's string hashes) is not pickled: a
    process with another hash seed that loads it finds the same codes."""
    qrels = Qrels.from_dict({"q1": {f"d{i}": 1 for i in range(50)}})
    assert qrels._hash_index is not None  # cached on the table
    path = tmp_path / "qrels.pkl"
    path.write_bytes(pickle.dumps(qrels))
    script = (
        "import pickle, sys; from finegrain import types; types.NATIVE = None; "
        "qrels = pickle.loads(open(sys.argv[1], 'rb').read()); "
        "print(qrels.codes_of(['d3', 'd7', 'x']).tolist())"
    )
    for seed in ("1", "2"):
        out = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, check=True,
                             env={**os.environ, "PYTHONHASHSEED": seed})
        assert out.stdout.strip() == "[3, 7, -1]"
