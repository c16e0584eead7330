"""Pooling (finegrain.build.pool and 'finegrain pool'): hand-computed tiny pools, a brute-force
reference on random runs, real dureader/mini results folders, and bad input."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from finegrain.build.pool import pool_results, pool_runs, pool_table, summarise
from finegrain.build.pool_file import SCHEMA, Pool, read_pool, write_pool
from finegrain.cli.main import main
from finegrain.datasets import load_dataset
from finegrain.errors import FinegrainError
from finegrain.metrics import metric_values
from finegrain.results.companions import Companion
from finegrain.types import Qrels, Run

# depth 2 tops -- A: q1 d1 d2 | q2 d5 d6;  B: q1 d2 d4 | q2 d6 d7;  C: q1 d3 d2 | q2 d5
A = Run.from_dict({"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"d5": 1.0, "d6": 0.5}}, name="A")
B = Run.from_dict({"q1": {"d2": 5.0, "d4": 4.0, "d1": 1.0}, "q2": {"d6": 2.0, "d7": 1.0}}, name="B")
C = Run.from_dict({"q1": {"d3": 9.0, "d2": 8.0}, "q2": {"d5": 1.0}}, name="C")
QRELS = Qrels.from_dict({"q1": {"d1": 0, "d4": 2, "d9": 1}, "q2": {"d7": 1}, "q3": {"d1": 1}})


def rows(pool: Pool) -> list[tuple]:
    return [(it.qid, it.doc_id, it.n_systems, it.best_rank, it.systems, it.grade) for it in pool.items]


# --------------------------------------------------------------------------- hand-computed


def test_tiny_pool_by_hand() -> None:
    pool = pool_runs([A, B, C], depth=2, qrels=QRELS, seed=0)
    got = rows(pool)
    # q1: d2 by all three (best rank 1: B's); then best rank 1 by one system: d1 (A), d3 (C) in a seeded
    # order; then d4 (B, rank 2).  q2: d5 (A 1, C 1) and d6 (A 2, B 1) both 2 systems, best 1; then d7.
    assert got[0] == ("q1", "d2", 3, 1, ("A", "B", "C"), None)
    assert set(got[1:3]) == {("q1", "d1", 1, 1, ("A",), 0), ("q1", "d3", 1, 1, ("C",), None)}
    assert got[3] == ("q1", "d4", 1, 2, ("B",), 2)
    assert set(got[4:6]) == {("q2", "d5", 2, 1, ("A", "C"), None), ("q2", "d6", 2, 1, ("A", "B"), None)}
    assert got[6] == ("q2", "d7", 1, 2, ("B",), 1)
    assert [it.order for it in pool.items] == list(range(7))
    assert pool.systems == ("A", "B", "C") and pool.depth == 2 and pool.seed == 0
    assert pool.grades == (0, 1, 2)  # 0 up to the qrels' top grade
    assert [it.doc_id for it in pool.unjudged()] == [r[1] for r in got if r[5] is None]


def test_ties_are_shuffled_by_the_seed_deterministically() -> None:
    orders = {}
    for seed in range(30):
        first = [it.doc_id for it in pool_runs([A, B, C], depth=2, seed=seed).items]
        again = [it.doc_id for it in pool_runs([A, B, C], depth=2, seed=seed).items]
        assert first == again
        orders[seed] = (tuple(first[1:3]), tuple(first[4:6]))
    assert {o[0] for o in orders.values()} == {("d1", "d3"), ("d3", "d1")}
    assert {o[1] for o in orders.values()} == {("d5", "d6"), ("d6", "d5")}


def test_order_does_not_depend_on_the_order_of_the_runs() -> None:
    for seed in range(5):
        abc = pool_runs([A, B, C], depth=2, seed=seed)
        cab = pool_runs([C, A, B], depth=2, seed=seed)
        assert [(it.qid, it.doc_id, it.n_systems, it.best_rank) for it in abc.items] == \
            [(it.qid, it.doc_id, it.n_systems, it.best_rank) for it in cab.items]
        assert cab.items[0].systems == ("C", "A", "B")  # the pool's system order


def test_a_run_ties_are_cut_by_the_one_ranking_rule() -> None:
    # equal scores: doc id descending, as trec_eval; depth 1 keeps "b", not "a"
    tied = Run.from_dict({"q": {"a": 1.0, "b": 1.0, "c": 0.5}}, name="t")
    other = Run.from_dict({"q": {"c": 1.0}}, name="o")
    assert set(rows(pool_runs([tied, other], depth=1))) == {("q", "b", 1, 1, ("t",), None),
                                                            ("q", "c", 1, 1, ("o",), None)}


def test_unusual_ids_are_matched_to_the_qrels_exactly() -> None:
    ids = ["a\0", "a", "é", "a b", "\U0001f600", ""]
    run = Run.from_dict({"q": {d: float(i) for i, d in enumerate(ids)}}, name="r")
    qrels = Qrels.from_dict({"q": {"a\0": 2, "": 1, "a b": 0, "zz": 1}})
    pool = pool_runs([run], depth=10, qrels=qrels)
    assert {it.doc_id: it.grade for it in pool.items} == {"a\0": 2, "a": None, "é": None, "a b": 0,
                                                          "\U0001f600": None, "": 1}


def test_blocks_do_not_change_the_pool() -> None:
    runs = random_runs(3, n_runs=5, n_queries=40)
    whole = pool_table(runs, depth=7, seed=3)
    tiny = pool_table(runs, depth=7, seed=3, _block_entries=1)  # one query per block
    for col in ("query", "doc", "n_systems", "best_rank", "members", "grade", "judged"):
        assert (getattr(whole, col) == getattr(tiny, col)).all(), col


def test_texts_grades_and_header() -> None:
    queries = {"q1": "first query", "q2": "second"}
    corpus = {"d1": "one", "d2": "two", "d5": "five", "d8": "not pooled"}
    pool = pool_runs([A, B], depth=1, queries=queries, corpus=corpus, dataset="toy", lang="en", grades=[0, 1, 2, 3])
    assert dict(pool.queries) == queries
    assert dict(pool.texts) == {"d1": "one", "d2": "two", "d5": "five"}  # only pooled documents
    assert pool.dataset == "toy" and pool.lang == "en" and pool.grades == (0, 1, 2, 3)
    with pytest.raises(FinegrainError, match="judging scale"):
        pool_runs([A], depth=1, grades=[0, 0])


def test_fully_judged_qrels_make_an_unlisted_item_a_judged_zero() -> None:
    from types import SimpleNamespace

    pool = pool_runs([A, B, C], depth=2, qrels=QRELS, fully_judged=True)
    assert {(it.doc_id, it.grade) for it in pool.items if it.qid == "q1"} == {("d1", 0), ("d2", 0), ("d3", 0),
                                                                              ("d4", 2)}
    assert not pool.unjudged()
    # a Dataset supplies qrels, texts, language and its fully_judged flag
    ds = SimpleNamespace(name="toy", qrels=QRELS, queries={"q1": "x"}, corpus={"d4": "y"}, lang="zh",
                         meta={"fully_judged": True})
    from_ds = pool_runs([A, B, C], depth=2, dataset=ds)
    assert rows(from_ds) == rows(pool) and from_ds.dataset == "toy" and from_ds.lang == "zh"
    assert dict(from_ds.queries) == {"q1": "x"} and dict(from_ds.texts) == {"d4": "y"}
    assert pool_runs([A, B, C], depth=2, dataset="toy", qrels=QRELS).unjudged()  # a name alone: not fully judged


def test_pool_file_round_trip(tmp_path: Path) -> None:
    pool = pool_runs([A, B, C], depth=2, qrels=QRELS, queries={"q1": "x"}, corpus={"d2": "y"})
    back = read_pool(write_pool(pool, tmp_path / "p.jsonl.gz"))
    assert back.items == pool.items and dict(back.queries) == {"q1": "x"} and dict(back.texts) == {"d2": "y"}
    assert back.header() == pool.header() and back.header()["schema"] == SCHEMA


_HEADER = {"schema": SCHEMA, "depth": 10, "systems": ["a"], "seed": 0, "dataset": "d", "lang": "en",
           "grades": [0, 1, 2], "provenance": {}}
_ITEM = {"qid": "q1", "doc_id": "d1", "order": 0, "n_systems": 1, "best_rank": 1, "systems": ["a"], "grade": None}


def _pool_file(path: Path, header: dict, item: dict = _ITEM) -> Path:
    path.write_text(json.dumps(header) + "\n" + json.dumps(item) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("field", "value"), [
    ("dataset", ["a"]), ("dataset", 12345678901234567890), ("dataset", {"x": 1}), ("lang", 5), ("lang", ["en"]),
    ("depth", 2**64), ("seed", 123456789012345678901), ("depth", "10"), ("grades", [0, 2**70]), ("grades", []),
    ("systems", "a"), ("provenance", [1]), ("provenance", "x"),
])
def test_pool_header_fields_are_checked_on_read(field: str, value: object, tmp_path: Path) -> None:
    path = _pool_file(tmp_path / "pool.jsonl", {**_HEADER, field: value})
    with pytest.raises(FinegrainError, match=rf"pool.jsonl:1: expected a valid pool header, found '{field} must be"):
        read_pool(path)


def test_pool_items_hold_int64_numbers(tmp_path: Path) -> None:
    path = _pool_file(tmp_path / "pool.jsonl", _HEADER, {**_ITEM, "order": 2**64})
    with pytest.raises(FinegrainError, match=r"pool.jsonl:2: expected string ids, integer order"):
        read_pool(path)
    assert read_pool(_pool_file(tmp_path / "ok.jsonl", {**_HEADER, "dataset": None, "provenance": None})).dataset is None


@pytest.mark.parametrize("dataset", [["a"], 12345678901234567890])
def test_judge_serve_refuses_a_bad_pool_header_with_one_line(dataset: object, tmp_path: Path, capsys) -> None:
    path = _pool_file(tmp_path / "pool.jsonl", {**_HEADER, "dataset": dataset})
    db = tmp_path / "j.sqlite"
    code = main(["judge", str(path), "--db", str(db), "--serve", "--port", "1"])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("error: ") and "pool.jsonl:1" in lines[0] and "dataset" in lines[0]
    assert not db.exists()


def test_summary_fits_80_columns() -> None:
    long = Run.from_dict({"q1": {"d8": 1.0}, "q2": {"d9": 1.0}}, name="a-very-long-system-name-" + "x" * 80)
    summary = summarise(pool_runs([A, B, C, long], depth=2, qrels=QRELS))
    assert summary.n_queries == 2 and summary.n_items == 9 and summary.n_judged == 3
    assert (summary.per_query_min, summary.per_query_max) == (4, 5)
    assert dict((s[0], s[1:]) for s in summary.systems)["A"] == (4, 1, 0)  # A alone: q1 d1 (judged 0)
    lines = summary.lines()
    assert all(len(line) <= 80 for line in lines)
    assert any("3 of 9 (33.3%)" in line for line in lines)
    short = summary.lines(max_systems=2)
    assert "... 2 more systems" in short[-2] and len(short) == len(lines) - 1


# --------------------------------------------------------------------------- brute force on random runs


def random_runs(seed: int, n_runs: int = 6, n_queries: int = 30) -> list[Run]:
    rnd = random.Random(seed)
    docs = [f"d{i}" for i in range(60)] + ["D", "é", "a b"]
    runs = []
    for r in range(n_runs):
        data = {}
        for qi in range(n_queries):
            picked = rnd.sample(docs, rnd.randint(0 if qi % 7 == 3 else 1, 25))
            data[f"q{qi}"] = {d: float(rnd.randint(0, 5)) for d in picked}  # many ties
        runs.append(Run.from_dict(data, name=f"s{r}"))
    return runs


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("depth", [1, 3, 10, 100])
def test_matches_a_brute_force_pool(seed: int, depth: int) -> None:
    runs = random_runs(seed)
    qrels = Qrels.from_dict({f"q{i}": {f"d{j}": (i + j) % 3 for j in range(0, 60, 4)} for i in range(0, 30, 2)})
    pool = pool_runs(runs, depth=depth, qrels=qrels, seed=seed)
    expected: dict[tuple[str, str], tuple[int, int, tuple[str, ...]]] = {}
    for run in runs:
        for q in run.qids:
            for rank, d in enumerate(run.ranked(q, depth), 1):
                n, best, systems = expected.get((q, d), (0, rank, ()))
                expected[(q, d)] = (n + 1, min(best, rank), (*systems, run.name))
    got = {(it.qid, it.doc_id): (it.n_systems, it.best_rank, it.systems) for it in pool.items}
    assert got == expected
    for it in pool.items:
        assert it.grade == dict(qrels.get(it.qid, {})).get(it.doc_id)
    # judging order: queries contiguous in the first run's order, then (-n_systems, best_rank) non-decreasing
    qorder = [q for q in runs[0].qids if any(k[0] == q for k in expected)]
    assert list(pool.qids) == qorder
    keys = [(qorder.index(it.qid), -it.n_systems, it.best_rank) for it in pool.items]
    assert keys == sorted(keys)


def test_single_run_pool_judged_share_equals_judged_at_depth() -> None:
    runs = random_runs(9, n_runs=1)
    qrels = Qrels.from_dict({f"q{i}": {f"d{j}": j % 2 for j in range(0, 60, 3)} for i in range(30)})
    pool = pool_runs(runs, depth=5, qrels=qrels)
    judged5 = metric_values(qrels, runs[0], "judged@5")
    for q in pool.qids:
        items = [it for it in pool.items if it.qid == q]
        assert sum(it.judged for it in items) / len(items) == pytest.approx(judged5[q])


# --------------------------------------------------------------------------- bad input


def test_bad_depth_seed_and_runs() -> None:
    for depth in (0, -1, True, 2.5, "10"):
        with pytest.raises(FinegrainError, match="depth"):
            pool_runs([A, B], depth=depth)  # type: ignore[arg-type]
    with pytest.raises(FinegrainError, match="seed"):
        pool_runs([A, B], depth=1, seed=-1)
    with pytest.raises(FinegrainError, match="no run to pool"):
        pool_runs([], depth=1)
    empty = Run.from_dict({"q1": {}, "q2": {}}, name="E")
    with pytest.raises(FinegrainError, match="'E' has no result"):
        pool_runs([A, empty], depth=1)
    with pytest.raises(FinegrainError, match="distinct name"):
        pool_runs([A, B], depth=1, names=["x", "x"])


def test_runs_over_different_queries_name_both_runs_and_a_query() -> None:
    other = Run.from_dict({"q1": {"d1": 1.0}, "q7": {"d2": 1.0}}, name="other")
    with pytest.raises(FinegrainError) as e:
        pool_runs([A, other], depth=1)
    msg = str(e.value)
    assert "'A'" in msg and "'other'" in msg and "'q2'" in msg and "2 queries differ" in msg
    assert "same dataset" in msg


def test_same_names_are_made_distinct() -> None:
    a2 = Run.from_dict(A.to_dict(), name="A")
    assert pool_runs([A, a2], depth=1).systems == ("A", "A#2")


def test_sources_that_are_not_results(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(FinegrainError, match="holds no run"):
        pool_results([tmp_path / "empty"], depth=1)
    with pytest.raises(FinegrainError, match="no results folder or run file"):
        pool_results([tmp_path / "nowhere"], depth=1)
    with pytest.raises(FinegrainError, match="no run to pool"):
        pool_results([], depth=1)


# --------------------------------------------------------------------------- real data: dureader/mini


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory, data_root: Path) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("pool")
    out = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FINEGRAIN_DATA", str(data_root))
        for r in ("bm25-okapi", "bm25"):
            assert main(["eval", "-d", "dureader/mini", "-r", r, "-m", "ndcg@10", "-o", str(base / r), "--quiet"]) == 0
            out[r] = base / r
    return out


def test_pool_of_dureader_results_folders(folders: dict[str, Path], with_data_root: Path) -> None:
    ds = load_dataset("dureader/mini")
    pool = pool_results([folders["bm25-okapi"], folders["bm25"]], depth=10, seed=0)
    assert pool.systems == ("bm25-okapi", "bm25") and pool.dataset == "dureader/mini" and pool.lang == "zh"
    assert set(pool.qids) == set(ds.queries) and len(pool.qids) == 8
    assert len(pool) == 81  # golden: the two BM25 variants share 77 of their top 10s
    assert sum(it.judged for it in pool.items) == 60
    for it in pool.items:
        assert it.grade == dict(ds.qrels[it.qid]).get(it.doc_id)
        assert 1 <= it.best_rank <= 10 and it.n_systems == len(it.systems)
    assert dict(pool.queries) == {q: ds.queries[q].text for q in pool.qids}
    assert set(pool.texts) == {it.doc_id for it in pool.items}
    assert all(pool.texts[d] == ds.corpus[d].text for d in pool.texts)
    assert pool.grades == (0, 1)
    assert pool.provenance["qrels"] == "dureader/mini's qrels" and pool.provenance["warnings"] == []
    # the same pool from the run files, with the qrels file given and no texts
    files = pool_results([folders["bm25-okapi"] / "run.trec", folders["bm25"] / "run.trec"], depth=10,
                         qrels=with_data_root / "dureader_mini" / "qrels.tsv", texts=False)
    assert rows(files) == rows(pool) and not files.texts and not files.queries


def test_a_query_with_no_result_is_completed_from_results_json(folders: dict[str, Path], tmp_path: Path,
                                                               with_data_root: Path) -> None:
    cut = tmp_path / "cut"
    shutil.copytree(folders["bm25"], cut)
    lines = (cut / "run.trec").read_text().splitlines(keepends=True)
    (cut / "run.trec").write_text("".join(line for line in lines if not line.startswith("q3 ")))
    res = json.loads((cut / "results.json").read_text())  # as eval writes it: the record matches the run
    res["files"]["run.trec"] = Companion.of(cut / "run.trec").to_json()
    (cut / "results.json").write_text(json.dumps(res))
    pool = pool_results([folders["bm25-okapi"], cut], depth=5, texts=False)
    assert {it.systems for it in pool.items if it.qid == "q3"} == {("bm25-okapi",)}
    # a plain run file has no results.json to complete it: the query sets differ
    with pytest.raises(FinegrainError, match="'q3' is in 'bm25-okapi' but not in"):
        pool_results([folders["bm25-okapi"] / "run.trec", cut / "run.trec"], depth=5, texts=False)


def test_folders_of_different_datasets_are_refused(folders: dict[str, Path], tmp_path: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(folders["bm25"], other)
    res = json.loads((other / "results.json").read_text())
    res["provenance"]["dataset"]["name"] = "capretrieval/zh"
    (other / "results.json").write_text(json.dumps(res))
    with pytest.raises(FinegrainError, match="different datasets"):
        pool_results([folders["bm25"], other], depth=3)


def test_dataset_that_does_not_load_is_a_warning(folders: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:
    monkeypatch.setenv("FINEGRAIN_DATA", str(tmp_path / "nowhere"))
    pool = pool_results([folders["bm25-okapi"], folders["bm25"]], depth=3)
    assert all(it.grade is None for it in pool.items)
    assert not pool.texts and len(pool.queries) == 8  # query texts from results.json
    assert "did not load" in pool.provenance["warnings"][0]


def test_cli_writes_the_pool_and_prints_a_summary(folders: dict[str, Path], tmp_path: Path, with_data_root: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "pool"
    code = main(["pool", str(folders["bm25-okapi"]), str(folders["bm25"]), "--depth", "10", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    pool = read_pool(out)
    assert len(pool) == 81 and pool.texts
    assert all(len(line) <= 80 for line in printed.splitlines() if not line.startswith("wrote "))
    assert "texts embedded: 8 queries, 65 passages" in printed
    assert "81 items over 8 queries" in printed and "60 of 81 (74.1%)" in printed and "bm25-okapi" in printed
    # a folder as --out gets pool.jsonl; --no-texts and --seed
    (tmp_path / "dir").mkdir()
    assert main(["pool", str(folders["bm25-okapi"]), str(folders["bm25"]), "--depth", "3", "--no-texts",
                 "--seed", "4", "-o", str(tmp_path / "dir")]) == 0
    again = read_pool(tmp_path / "dir" / "pool.jsonl")
    assert not again.texts and again.seed == 4 and again.depth == 3


def test_cli_errors_are_one_line(folders: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["pool", str(folders["bm25"]), "--depth", "0", "--out", str(tmp_path / "p")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1 and "depth 0" in err[0]
    code = main(["pool", str(tmp_path), "--depth", "3", "--out", str(tmp_path / "p")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1 and "holds no run" in err[0]


def test_package_exports_pool_lazily() -> None:
    import finegrain

    assert finegrain.pool is pool_results
    assert "pool" in dir(finegrain)


@pytest.mark.parametrize("kind", ["query", "doc"])
def test_a_query_or_document_text_is_given_once(kind: str, tmp_path: Path) -> None:
    """A second text record for one id silently replaced the first (the judge showed the last one and the
    judgments database was bound to it); it is an error naming both lines."""
    header = {"schema": SCHEMA, "depth": 1, "systems": ["a"], "grades": [0, 1]}
    item = {"qid": "q1", "doc_id": "d1", "order": 0, "n_systems": 1, "best_rank": 1, "systems": ["a"], "grade": None}
    lines = [header, {kind: "x", "text": "first"}, {kind: "x", "text": "second"}, item]
    path = tmp_path / "pool.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in lines), encoding="utf-8")
    with pytest.raises(FinegrainError, match=rf"pool\.jsonl:3: expected each {kind} text record once.*first at line 2"):
        read_pool(path)
