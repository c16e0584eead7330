"""The compiled walk of nested dicts (``finegrain._native``) gives ``Qrels.from_dict``/``Run.from_dict`` the
same tables as the pure-Python path, and hands back (None) every input it does not take as it is.

Protected: the two paths agree column for column (query order, offsets, document codes in order of first
appearance, the vocabulary, the values and their dtype) on any plain input, whatever the dicts' layout (deleted
entries, split tables, keys once of another kind: where the walk reads entries in place); what the C walk declines
(other mapping types, non-str ids, bools, numpy scalars that are not floats, ints out of range) is still
read, or refused with the same error, by the Python path.
"""

from __future__ import annotations

import shutil
import sys
import sysconfig
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from finegrain import ranking
from finegrain import types as fg_types
from finegrain.errors import FinegrainError
from finegrain.io import _columns
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
    assert np.frombuffer(codes, np.int64).tolist() == [0, 1, 1, 2] and vocab == ("d1", "d2", "d3")
    got = np.frombuffer(values, np.float64)
    assert got.tolist() == [0.25, 3.0, 1.5, 0.0] and np.signbit(got[3])


@pytest.mark.skipif(native is None, reason="finegrain._native is not built")
@pytest.mark.parametrize("total", [15, 16, 17, 1023, 1024, 1025, 2049, 5000])
@pytest.mark.parametrize("integral", [False, True])
def test_long_walks_agree_across_chunk_and_lookahead_bounds(total, integral, monkeypatch) -> None:
    """The C walk reads entries in chunks and interns each id some entries after reading it: ids that repeat
    across those bounds, and queries that straddle them, get the codes and values the Python path gives."""
    rng = np.random.default_rng(total)
    pool = [f"doc{i}" for i in range(max(2, total // 3))]
    counts = rng.multinomial(total, np.ones(7) / 7)
    data = {f"q{q}": {pool[i]: (int(rng.integers(-3, 4)) if integral else float(rng.random()))
                      for i in rng.choice(len(pool), min(int(c), len(pool)), replace=False).tolist()}
            for q, c in enumerate(counts)}
    cls = Qrels if integral else Run
    fast, slow = _both(cls, data, monkeypatch)
    _same(fast, slow)
    assert native.flatten(data, integral) is not None


@pytest.mark.skipif(native is None, reason="finegrain._native is not built")
def test_the_walk_holds_each_id_once_per_table_and_lets_go_on_every_path() -> None:
    """The vocabulary holds one reference per distinct id; a finished table lets go of them when freed, and
    a declined walk (an entry it does not take after many interned) holds none."""
    ids = [f"doc{i}" for i in range(3000)]
    taken = {f"q{q}": {d: float(i) for i, d in enumerate(ids[q::3])} for q in range(3)}
    declined = {**taken, "q9": {**dict.fromkeys(ids[:5], 1.0), 7: 1.0}}
    before = [sys.getrefcount(d) for d in ids]
    flat = native.flatten(taken, False)
    assert [sys.getrefcount(d) for d in ids] == [n + 1 for n in before]
    del flat
    for _ in range(3):
        native.flatten(taken, False)
        assert native.flatten(declined, False) is None
    assert [sys.getrefcount(d) for d in ids] == before


@pytest.mark.skipif(native is None, reason="finegrain._native is not built")
@pytest.mark.parametrize("at", [0, 1023, 1024, 2500])
def test_a_late_entry_it_does_not_take_declines_the_whole_walk(at) -> None:
    """An entry it does not take, in any chunk, hands the whole input to the Python path (no partial table)."""
    entries = {f"d{i}": float(i) for i in range(3000)}
    data = {"q1": dict(list(entries.items())[:at]), "q2": {**dict(list(entries.items())[at:]), 7: 1.0}}
    assert native.flatten(data, False) is None


class _Holder:
    """Its instances' ``__dict__`` is a split dict (keys shared with the class's other instances)."""


def _with_history(entries: list[tuple[str, float]], history: str, junk: list[str]) -> dict:
    """A dict whose items are ``entries`` in order, built so that its layout keeps a history: deleted entries
    between the live ones (``holes``), a key that was not a str once (``general``: a dict of any key kind),
    an instance's split dict (``split``), or entries deleted and put back at the end (``moved``)."""
    if history == "split":
        obj = _Holder()
        vars(obj).update(entries)
        return vars(obj)
    d: dict = {0: None} if history == "general" else {}
    for (doc, score), extra in zip(entries, junk * len(entries)):
        if history == "holes":
            d["~" + extra] = None  # "~" is in no id: a key of its own, deleted below
        d[doc] = score
        d.pop("~" + extra, None)
    if history == "moved":
        for doc, score in entries[: len(entries) // 2]:
            del d[doc]
            d[doc] = score
    d.pop(0, None)
    return d


@pytest.mark.skipif(native is None, reason="finegrain._native is not built")
@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.tuples(ids, st.floats(allow_nan=False)), max_size=8, unique_by=lambda e: e[0]),
                max_size=5),
       st.sampled_from(["holes", "general", "split", "moved"]), st.lists(ids, min_size=1, max_size=3))
def test_the_walk_reads_dicts_of_any_layout_in_their_order(queries, history, junk) -> None:
    """However a dict was built (deleted entries, keys of another kind once, a split table, entries moved), the
    walk takes it, reads its items in their iteration order, and gives the Python path's table."""
    data = {f"q{i}": _with_history(entries, history, junk) for i, entries in enumerate(queries)}
    flat = native.flatten(data, False)
    assert flat is not None
    offsets, codes, vocab, values = flat
    items = [item for inner in data.values() for item in inner.items()]
    assert [vocab[c] for c in np.frombuffer(codes, np.int64).tolist()] == [doc for doc, _ in items]
    assert np.frombuffer(values, np.float64).tolist() == [score for _, score in items]
    assert np.frombuffer(offsets, np.int64).tolist() == np.cumsum([0, *map(len, data.values())]).tolist()
    with pytest.MonkeyPatch.context() as mp:
        _same(*_both(Run, data, mp))


# ---------------------------------------------------------------- a run entry's grade in its query's judgements

judgements = st.lists(st.tuples(st.integers(0, 4), st.integers(0, 9), st.integers(-2, 3)), max_size=30)


@pytest.mark.skipif(native is None, reason="finegrain._native is not built")
@settings(max_examples=300, deadline=None)
@given(judgements, st.lists(st.tuples(st.integers(0, 4), st.integers(0, 11)), max_size=40), st.booleans(),
       st.randoms(use_true_random=False))
def test_judged_grades_are_each_querys_own_judgements(judged, entries, unnamed, rnd) -> None:
    """Each ranked entry gets the grade its own block's query's judgements give its document (judged 0 and
    negative grades included), or 0 and unjudged; one query's entries may come in several blocks, the
    entries in any order of the document column; a judgement of a document the run never names (-1) marks
    nothing."""
    pairs = {(q, d): g for q, d, g in judged}  # one judgement per (query, document)
    ordered = sorted(pairs.items())  # a query's judgements together
    jseg = np.array([q for (q, _), _ in ordered], dtype=np.int64)
    jdocs = np.array([-1 if unnamed and d % 3 == 0 else d for (_, d), _ in ordered], dtype=np.int64)
    jgrades = np.array([g for _, g in ordered], dtype=np.int64)
    named = {(q, d): g for ((q, _), g), d in zip(ordered, jdocs.tolist()) if d >= 0}
    blocks: list[tuple[int, list[int]]] = []  # consecutive entries of one query: a block
    for q, d in entries:
        if blocks and blocks[-1][0] == q and rnd.random() < 0.7:
            blocks[-1][1].append(d)
        else:
            blocks.append((q, [d]))
    seg = [q for q, ds in blocks for _ in ds]
    docs_ranked = [d for _, ds in blocks for d in ds]
    entry_of = list(range(len(docs_ranked)))
    rnd.shuffle(entry_of)  # position i is run entry entry_of[i]
    docs = np.zeros(len(docs_ranked), dtype=np.int64)
    docs[entry_of] = docs_ranked
    block_seg = np.array([q for q, _ in blocks], dtype=np.int64)
    block_start = np.concatenate([[0], np.cumsum([len(ds) for _, ds in blocks])]).astype(np.int64)
    grade_b, judged_b = native.judged_grades(jseg, jdocs, jgrades, block_seg, block_start,
                                             np.array(entry_of, dtype=np.int64), docs, 12, 5)
    want = [named.get((q, d), 0) for q, d in zip(seg, docs_ranked)]
    want_judged = [(q, d) in named for q, d in zip(seg, docs_ranked)]
    assert np.frombuffer(grade_b, np.int64).tolist() == want
    assert np.frombuffer(judged_b, bool).tolist() == want_judged


@pytest.mark.skipif(native is None, reason="finegrain._native is not built")
def test_judgements_out_of_bounds_or_apart_are_refused() -> None:
    one, zero, blocks = np.array([0], dtype=np.int64), np.array([0], dtype=np.int64), np.array([0, 1], np.int64)

    def call(jseg=one, jdocs=one, bseg=zero, bstart=blocks, entries=zero, docs=one, queries=1):
        return native.judged_grades(jseg, jdocs, one, bseg, bstart, entries, docs, 3, queries)

    with pytest.raises(ValueError):  # a query's judgements apart
        native.judged_grades(np.array([0, 1, 0]), np.array([0, 1, 2]), np.zeros(3, np.int64), zero, blocks, zero,
                             one, 3, 2)
    with pytest.raises(ValueError):  # a judged document outside the codes
        call(jdocs=np.array([5]))
    with pytest.raises(ValueError):  # below -1
        call(jdocs=np.array([-2]))
    with pytest.raises(ValueError):  # a block's query outside the queries
        call(bseg=np.array([3]))
    with pytest.raises(ValueError):  # blocks that do not cover the entries
        call(bstart=np.array([0, 2]))
    with pytest.raises(ValueError):  # a block start that decreases
        call(bseg=np.array([0, 0]), bstart=np.array([0, 2, 1]), entries=np.array([0, 0, 0]))
    with pytest.raises(ValueError):  # an entry outside the document column
        call(entries=np.array([4]))
    with pytest.raises(ValueError):  # an entry's document outside the codes (-1 included)
        call(docs=np.array([-1]))
    assert call(queries=2**32) is None  # a 4-byte query mark: Python's path


@pytest.mark.skipif(native is None, reason="finegrain._native is not built")
def test_index_in_declines_a_vocabulary_with_a_repeated_id_when_asked() -> None:
    """With ``distinct``, a repeated id (an equal str, not the same object) gives None: its second position
    would never be found."""
    vocab = ["a", "b", "".join(["a"])]
    assert np.frombuffer(native.index_in(vocab, ["b", "a", "z"]), np.int64).tolist() == [1, 0, -1]
    assert native.index_in(vocab, ["b"], True) is None
    assert np.frombuffer(native.index_in(vocab[:2], ["b", "z"], True), np.int64).tolist() == [1, -1]


# ---------------------------------------------------------------- the order of strings (the docno tie rule)

def _python_ranks(strings: list[str]) -> list[int]:
    order = sorted(range(len(strings)), key=strings.__getitem__)
    ranks = [0] * len(strings)
    for position, i in enumerate(order):
        ranks[i] = position
    return ranks


# Shared prefixes longer than the 8-byte key, NUL bytes the key's zero padding could hide, every UTF-8 width.
order_text = st.text(alphabet="ab\x00\u00e9\uffff\U0001f600", max_size=12)


@pytest.mark.skipif(native is None, reason="finegrain._native is not built")
@settings(max_examples=300, deadline=None)
@given(st.lists(order_text, max_size=40), st.sampled_from(["", "doc-000000", "\u4e2d\u6587/"]))
def test_compiled_string_ranks_are_code_point_order(strings, prefix) -> None:
    """Each string's position in Python's str order (code points), equal strings in input order; with a
    long shared prefix, so the key is read past it."""
    strings = [prefix + s for s in strings]
    got = native.string_ranks(strings)
    assert np.frombuffer(got, np.int64).tolist() == _python_ranks(strings)


@pytest.mark.skipif(native is None, reason="finegrain._native is not built")
def test_string_ranks_decline_what_utf8_bytes_do_not_order() -> None:
    """A lone surrogate has no UTF-8 bytes, and a str subclass may order itself: both go to the Python path."""
    class Id(str):
        pass

    assert native.string_ranks(["a", "\ud800"]) is None
    assert native.string_ranks(["a", Id("b")]) is None
    assert native.string_ranks(["a", 1]) is None


def test_ranking_order_is_the_same_with_and_without_the_module(monkeypatch: pytest.MonkeyPatch) -> None:
    """``string_ranks`` (the docno order of every tie) gives one answer on every path."""
    rng = np.random.default_rng(0)
    vocab = [f"d{int(x)}" for x in rng.permutation(5000)] + ["\u00e9", "e\x00", "e", "\U0001f600"]
    first = ranking.string_ranks(vocab).tolist()
    monkeypatch.setattr(ranking, "NATIVE", None)
    assert ranking.string_ranks(vocab).tolist() == first == _python_ranks(vocab)


# ---------------------------------------------------------------- repeated (query, document) pairs

@pytest.mark.skipif(native is None, reason="finegrain._native is not built")
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 6)), max_size=30))
def test_has_repeats_finds_a_pair_twice_exactly_when_one_is(pairs) -> None:
    """On entries grouped by query: True exactly when a (query, document) pair occurs twice. Entries not
    grouped: None (the caller sorts), or True for a repeat met before the first query out of order."""
    grouped = sorted(pairs, key=lambda p: p[0])
    seg = np.array([p[0] for p in grouped], dtype=np.int64)
    codes = np.array([p[1] for p in grouped], dtype=np.int64)
    assert native.has_repeats(seg, codes, 7) is (len(set(pairs)) < len(pairs))
    seg_raw = np.array([p[0] for p in pairs], dtype=np.int64)
    if bool((seg_raw[1:] < seg_raw[:-1]).any()):
        got = native.has_repeats(seg_raw, np.array([p[1] for p in pairs], dtype=np.int64), 7)
        assert got is None or (got is True and len(set(pairs)) < len(pairs))


def test_a_repeated_pair_is_found_with_and_without_the_module(monkeypatch: pytest.MonkeyPatch) -> None:
    cases = [([0, 0, 1, 1], [3, 4, 3, 4], False), ([0, 0, 1, 1], [3, 4, 4, 4], True),
             ([1, 0, 1], [2, 2, 2], True), ([1, 0, 0], [2, 2, 3], False), ([], [], False)]
    for path in ("compiled", "numpy"):
        if path == "numpy":
            monkeypatch.setattr(_columns, "NATIVE", None)
        for seg, codes, want in cases:
            assert _columns.repeated_pair(np.array(seg, np.int64), np.array(codes, np.int64), 5) is want, (path, seg)


# ---------------------------------------------------------------- each entry's query and position

@pytest.mark.skipif(native is None, reason="finegrain._native is not built")
@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 5), max_size=12))
def test_segments_and_positions_are_numpys(counts) -> None:
    """Each entry's query and its position within it, empty queries included, as the numpy path gives them."""
    offsets = np.concatenate(([0], np.cumsum(counts, dtype=np.int64))).astype(np.int64)
    want_seg = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    want_pos = np.arange(int(offsets[-1]), dtype=np.int64) - offsets[want_seg]
    assert np.frombuffer(native.segments_of(offsets), np.int64).tolist() == want_seg.tolist()
    assert np.frombuffer(native.positions_of(offsets), np.int64).tolist() == want_pos.tolist()


@pytest.mark.skipif(native is None, reason="finegrain._native is not built")
def test_offsets_that_are_no_table_are_refused() -> None:
    with pytest.raises(ValueError):
        native.positions_of(np.array([1, 2], dtype=np.int64))
    with pytest.raises(ValueError):
        native.segments_of(np.array([0, 3, 2], dtype=np.int64))


# ---------------------------------------------------------------- a run's rows in the ranking rule's order

@pytest.mark.skipif(native is None, reason="finegrain._native is not built")
@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.tuples(st.sampled_from([0.0, -0.0, 1.0, 2.5, -np.inf]), st.integers(0, 5)), max_size=40),
                min_size=1, max_size=4),
       st.lists(st.sampled_from([0, 1, 7, -3, 2**62, -(2**62), 2**63 - 1]), min_size=6, max_size=6),
       st.randoms(use_true_random=False))
def test_rank_rows_orders_by_score_then_rank_then_entry(rows, tie, rnd) -> None:
    """From each row's ascending argsort (equal scores in any order, padding past the row's count), the
    entries come out by score descending, each run of equal scores by its ids' ranks descending, then entry
    ascending: short runs and long ones, ranks of any size and sign. Without ranks, a run of equal scores
    stops it (False)."""
    scores = [s for row in rows for s, _ in row]
    codes = [c for row in rows for _, c in row]
    offsets = np.concatenate([[0], np.cumsum([len(row) for row in rows])]).astype(np.int64)
    width = max(len(row) for row in rows)
    asc = np.zeros((len(rows), width), dtype=np.int64)
    for r, row in enumerate(rows):
        cols = list(range(width))
        rnd.shuffle(cols)  # equal scores in any order
        asc[r] = sorted(cols, key=lambda c: row[c][0] if c < len(row) else -np.inf)
    want = [e for a, b in zip(offsets, offsets[1:])
            for e in sorted(range(a, b), key=lambda e: (-scores[e], -tie[codes[e]], e))]
    args = (asc, offsets, np.array(scores, dtype=np.float64))
    got = np.empty(len(scores), dtype=np.int64)
    assert native.rank_rows(got, *args, np.array(codes, dtype=np.int64), np.array(tie, dtype=np.int64)) is True
    assert got.tolist() == want
    tied = any(row[i][0] == row[j][0] for row in rows for i in range(len(row)) for j in range(i))
    empty = np.empty(0, dtype=np.int64)
    assert native.rank_rows(np.empty(len(scores), dtype=np.int64), *args, empty, empty) is (not tied)
