"""The compiled walk of nested dicts (``finegrain._native``) gives ``Qrels.from_dict``/``Run.from_dict`` the
same tables as the pure-Python path, and hands back (None) every input it does not take as it is.

Protected: the two paths agree column for column (query order, offsets, document codes in order of first
appearance, the vocabulary, the values and their dtype) on any plain input; what the C walk declines
(other mapping types, non-str ids, bools, numpy scalars that are not floats, ints out of range) is still
read, or refused with the same error, by the Python path.
"""

from __future__ import annotations

import shutil
import sysconfig
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from finegrain import types as fg_types
from finegrain.errors import FinegrainError
from finegrain.native import NATIVE as native
from finegrain.types import Qrels, Run


def test_the_module_is_built_where_a_compiler_is() -> None:
    """An install on a machine with a C compiler and Python's headers builds it (else every test below would
    skip and the fast path would go unchecked)."""
    headers = sysconfig.get_paths()["include"]
    if shutil.which("cc") is None or not (Path(headers) / "Python.h").is_file():
        pytest.skip("no C compiler or Python headers here: finegrain runs its pure-Python path")
    assert native is not None, "finegrain._native is not built, or is older than its source: reinstall with pip install -e ."


def test_a_module_built_from_older_source_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """A checkout updated without reinstalling keeps an old build: finegrain then takes its Python paths
    rather than fail on a function the old build lacks."""
    import importlib
    import types as pytypes

    import finegrain.native as module

    old = pytypes.ModuleType("finegrain._native")
    old.flatten = lambda data, integral: None  # type: ignore[attr-defined]
    monkeypatch.setitem(__import__("sys").modules, "finegrain._native", old)
    try:
        assert importlib.reload(module).NATIVE is None
    finally:
        monkeypatch.undo()
        importlib.reload(module)
    assert module.NATIVE is None or all(hasattr(module.NATIVE, f) for f in module.FUNCTIONS)


def _both(cls, data, monkeypatch):
    """The table ``cls.from_dict(data)`` makes with the C walk and without it (or the error each raises)."""
    def make():
        try:
            return cls.from_dict(data)
        except FinegrainError as e:
            return f"{type(e).__name__}: {e}"

    fast = make()
    monkeypatch.setattr(fg_types, "NATIVE", None)
    slow = make()
    monkeypatch.setattr(fg_types, "NATIVE", native)
    return fast, slow


def _same(a, b) -> None:
    if isinstance(a, str) or isinstance(b, str):
        assert a == b
        return
    assert a.qids == b.qids and a.vocab == b.vocab
    np.testing.assert_array_equal(a.offsets, b.offsets)
    np.testing.assert_array_equal(a.doc_codes, b.doc_codes)
    assert a.values.dtype == b.values.dtype
    np.testing.assert_array_equal(a.values, b.values)


ids = st.text(min_size=1, max_size=4, alphabet="ab7 \u00e9\u4e2d")
scores = st.one_of(st.floats(allow_nan=False, width=64), st.integers(-2**70, 2**70),
                   st.floats(allow_nan=False).map(np.float64))
grades = st.integers(-2**64, 2**64)


@pytest.mark.skipif(native is None, reason="finegrain._native is not built")
@settings(max_examples=150, deadline=None)
@given(st.dictionaries(ids, st.dictionaries(ids, scores, max_size=6), max_size=6))
def test_runs_from_either_path_are_the_same(data) -> None:
    with pytest.MonkeyPatch.context() as mp:
        _same(*_both(Run, data, mp))


@pytest.mark.skipif(native is None, reason="finegrain._native is not built")
@settings(max_examples=150, deadline=None)
@given(st.dictionaries(ids, st.dictionaries(ids, grades, max_size=6), max_size=6))
def test_qrels_from_either_path_are_the_same(data) -> None:
    with pytest.MonkeyPatch.context() as mp:
        _same(*_both(Qrels, data, mp))


@pytest.mark.skipif(native is None, reason="finegrain._native is not built")
@pytest.mark.parametrize(("integral", "data"), [
    (False, OrderedDict(q={"d": 1.0})),            # another mapping type outside
    (False, {"q": OrderedDict(d=1.0)}),            # and inside
    (False, {"q": {1: 1.0}}),                      # a non-str id
    (False, {"q": {"d": True}}),                   # a bool score
    (False, {"q": {"d": np.float32(0.1)}}),        # a numpy scalar that is not a float
    (False, {"q": {"d": "1.5"}}),                  # text
    (False, {"q": {"d": 10**400}}),                # an int no double holds
    (True, {"q": {"d": 1.0}}),                     # a float grade
    (True, {"q": {"d": 2**63}}),                   # an int past int64
    (True, {"q": {"d": np.int64(2)}}),             # a numpy integer
    (True, {"q": {"d": False}}),                   # a bool grade
])
def test_what_the_c_walk_declines_the_python_path_decides(integral, data, monkeypatch) -> None:
    assert native.flatten(data, integral) is None
    _same(*_both(Qrels if integral else Run, data, monkeypatch))


@pytest.mark.skipif(native is None, reason="finegrain._native is not built")
def test_numpy_float64_scores_and_shared_ids_take_the_c_walk() -> None:
    data = {"q1": {"d1": np.float64(0.25), "d2": 3}, "q2": {"d2": 1.5, "d3": -0.0}, "q3": {}}
    offsets, codes, vocab, values = native.flatten(data, False)
    assert np.frombuffer(offsets, np.int64).tolist() == [0, 2, 4, 4]
    assert np.frombuffer(codes, np.int64).tolist() == [0, 1, 1, 2] and vocab == ["d1", "d2", "d3"]
    got = np.frombuffer(values, np.float64)
    assert got.tolist() == [0.25, 3.0, 1.5, 0.0] and np.signbit(got[3])
