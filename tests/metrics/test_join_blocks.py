"""The join of a run to its qrels looks each run entry up a block of entries at a time, in the slice of
judgements its block's queries can reach (or, with the compiled module, in its own query's judgements);
neither block bounds nor the compiled lookup ever change a grade. Checked against the
unblocked lookup on runs whose queries come in another order than the qrels', with documents the
qrels never name, queries missing from either side and a universe of queries given by the caller."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from finegrain import Qrels, Run, segments
from finegrain.metrics.join import join

join_module = importlib.import_module("finegrain.metrics.join")  # the module (the package exports the function)


def _tables(seed: int) -> tuple[Qrels, Run, list[str]]:
    rng = np.random.default_rng(seed)
    docs = [f"d{i}" for i in range(40)]
    qids = [f"q{i}" for i in range(25)]
    qrels = {q: {docs[d]: int(rng.integers(0, 3)) for d in rng.choice(30, int(rng.integers(1, 8)), replace=False)}
             for q in qids if rng.random() < 0.8}
    run_q = list(rng.permutation(qids + ["extra"]))
    run = {q: {docs[d]: float(rng.integers(0, 4)) for d in rng.choice(40, int(rng.integers(0, 12)), replace=False)}
           for q in run_q}
    universe = [q for q in rng.permutation(qids) if rng.random() < 0.9]
    return Qrels.from_dict(qrels), Run.from_dict(run), universe


@pytest.mark.parametrize("seed", range(12))
def test_blocked_lookup_gives_every_entry_the_grade_of_the_unblocked_one(
    monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    qrels, run, universe = _tables(seed)
    native = join_module.NATIVE
    for queries in (None, universe):
        monkeypatch.setattr(join_module, "NATIVE", None)
        monkeypatch.setattr(join_module, "SEARCH_BLOCK_ENTRIES", 10**9)
        whole = join(qrels, run, queries)  # one np.searchsorted over every judgement
        for block in (1, 3, 17, None):
            if block is None:  # the compiled lookup, where it is built
                if native is None:
                    continue
                monkeypatch.setattr(join_module, "NATIVE", native)
            else:
                monkeypatch.setattr(join_module, "SEARCH_BLOCK_ENTRIES", block)
            blocked = join(qrels, run, queries)
            assert np.array_equal(blocked.grade, whole.grade) and np.array_equal(blocked.judged, whole.judged)
            assert np.array_equal(blocked.seg, whole.seg) and np.array_equal(blocked.rank, whole.rank)
        monkeypatch.undo()


@pytest.mark.parametrize("seed", range(4))
def test_hit_entries_and_hits_select_the_relevant_entries_within_the_cutoff(seed: int) -> None:
    """The relevant entries' positions (what metrics index with) and the boolean mask both select grade >= rel
    within the top k, for every relevance level and cutoff, asked in any order (they are kept per (rel, k))."""
    qrels, run, universe = _tables(seed)
    joined = join(qrels, run, universe)
    for rel, k in [(1, 3), (1, None), (2, 1), (1, 1), (0, None), (2, 5), (1, 3)]:
        want = (joined.grade >= rel) & (joined.rank < (k if k is not None else np.inf))
        assert joined.hit_entries(rel, k).tolist() == np.flatnonzero(want).tolist()
        assert joined.hits(rel, k).tolist() == want.tolist()


def test_a_run_vocabulary_naming_a_document_twice_gives_both_codes_its_grade() -> None:
    """A run built from columns may hold one id under two codes (nothing refuses that); the compiled lookup
    maps the judgements into the run's vocabulary, where only one code would match, so it hands such a run
    to the search, which maps every run code into the qrels'."""
    qrels = Qrels.from_dict({"q1": {"d1": 2, "d2": 1}, "q2": {"d1": 1}})
    vocab = ["d1", "d2", "".join(["d", "1"])]  # "d1" twice (two objects)
    run = Run(["q1", "q2"], np.array([0, 2, 3]), np.array([0, 1, 2]), vocab, np.array([0.5, 0.4, 0.9]))
    joined = join(qrels, run)
    assert joined.grade.tolist() == [2, 1, 1] and joined.judged.all()


@pytest.mark.parametrize("seed", range(6))
def test_located_entries_are_where_the_whole_columns_put_them(seed: int) -> None:
    """``located`` finds the query and rank of selected entries from the blocks alone (positions or a mask,
    before and after the whole columns exist), and the whole columns give each entry its block's query and
    its place within it; on runs with queries outside the universe and universes reordered."""
    qrels, run, universe = _tables(seed)
    for queries in (None, universe):
        joined = join(qrels, run, queries)
        rng = np.random.default_rng(seed)
        mask = rng.random(len(joined.grade)) < 0.4
        positions = np.flatnonzero(mask)
        early = joined.located(positions), joined.located(mask)
        starts = joined.block_start
        want_seg = np.repeat(joined.block_seg, np.diff(starts))
        want_rank = np.arange(starts[-1]) - np.repeat(starts[:-1], np.diff(starts))
        assert joined.seg.tolist() == want_seg.tolist() and joined.rank.tolist() == want_rank.tolist()
        for seg, rank in (*early, joined.located(positions)):
            assert seg.tolist() == want_seg[positions].tolist() and rank.tolist() == want_rank[positions].tolist()
        for rel, k in [(1, 3), (1, None), (2, 1)]:
            hits = joined.hit_entries(rel, k)
            seg, rank = joined.located(hits)
            assert seg.tolist() == want_seg[hits].tolist() and rank.tolist() == want_rank[hits].tolist()


@pytest.mark.parametrize("compiled", [True, False])
def test_segments_and_positions_of_offsets_with_empty_segments(monkeypatch: pytest.MonkeyPatch, compiled: bool) -> None:
    """Each entry's segment and its place in it, from offsets with empty segments first, between and last,
    compiled and in numpy alike."""
    if not compiled:
        monkeypatch.setattr(segments, "NATIVE", None)
    elif segments.NATIVE is None:
        pytest.skip("finegrain._native is not built here")
    offsets = np.array([0, 0, 3, 3, 4, 6, 6])
    assert segments.segments_of(offsets).tolist() == [1, 1, 1, 3, 4, 4]
    assert segments.positions_of(offsets).tolist() == [0, 1, 2, 0, 0, 1]
