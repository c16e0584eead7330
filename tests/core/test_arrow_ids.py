"""Arrow takes only the ids whose equality and order it decides as Python does (finegrain.arrow_ids).

Properties protected:
- a ``str`` subclass (its own equality), bytes next to text, ``None``, numbers, a lone surrogate
  and an empty list are declined, so the caller keeps Python's semantics;
- where Arrow sorts a vocabulary, the ranks are Python's code-point order (``sorted``), astral and
  private-use characters included.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from finegrain import arrow_ids, ranking
from finegrain.arrow_ids import id_array

pytestmark = pytest.mark.skipif(importlib.util.find_spec("pyarrow") is None, reason="pyarrow (the interop extra)")


class _Folded(str):
    """A str equal to every spelling of it in any case: only Python's equality knows."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and self.casefold() == other.casefold()

    def __hash__(self) -> int:
        return hash(self.casefold())


@pytest.mark.parametrize(
    "ids",
    [[_Folded("Doc"), "doc"], ["x", b"x"], ["x", None], ["1", 1], ["\ud800"], ["ok", "a\udfffb"], []],
    ids=["str-subclass", "bytes", "none", "number", "surrogate", "inner-surrogate", "empty"],
)
def test_ids_whose_equality_only_python_decides_are_declined(ids: list[object]) -> None:
    assert id_array(ids) is None


def test_plain_text_becomes_one_string_array() -> None:
    arr = id_array(["d1", "文档", "", "\U0001f600"])
    assert arr is not None and arr.to_pylist() == ["d1", "文档", "", "\U0001f600"]


@settings(deadline=None)  # the first call imports pyarrow
@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=5), unique=True, max_size=40))
def test_arrow_sorted_string_ranks_are_code_point_ranks(vocab: list[str]) -> None:
    expected = np.empty(len(vocab), dtype=np.int64)
    expected[sorted(range(len(vocab)), key=vocab.__getitem__)] = np.arange(len(vocab))
    saved = arrow_ids.ARROW_MIN_IDS
    arrow_ids.ARROW_MIN_IDS = 1
    try:
        got = ranking.string_ranks(vocab)
    finally:
        arrow_ids.ARROW_MIN_IDS = saved
    assert got.tolist() == expected.tolist()
    if vocab:
        assert id_array(vocab) is not None  # the Arrow path, not the fallback, was checked
