"""Judging a pool: the store, the scale, highlighting, agreement, export, the
JSON API's answers to bad input, the CLI, and a server killed mid-judging losing nothing.

Pools are written with ``write_pool`` (the pool file format is another module's); the
agreement coefficients are checked against numbers worked out by hand on tiny tables.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import FrozenInstanceError
from pathlib import Path
from typing import Any

import pytest

from finegrain.build.judge.agreement import agreement, store_agreement
from finegrain.build.judge.export import Tie, export_qrels, majority_grade, parse_method, write_export
from finegrain.build.judge.highlight import highlight, query_terms
from finegrain.build.judge.scale import Scale
from finegrain.build.judge.store import (
    BadAnnotatorError,
    BadGradeError,
    JudgmentStore,
    UnknownItemError,
    pool_fingerprint,
)
from finegrain.build.pool_file import Pool, pool_items, write_pool
from finegrain.cli.main import main
from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.io.files import read_qrels_file
from finegrain.io.trec import read_qrels

QUERIES = {"q1": "紫色的花", "q2": "a red car on the street", "q3": "猫和狗"}
TEXTS = {
    "d1": "一朵紫色的花放在花瓶里。",
    "d2": "蓝天白云下的草地。",
    "d3": "The red car is parked on the street; other cars are red too.",
    "d4": "A blue bicycle leans on a wall.",
    "d5": "一只猫和一只狗在院子里玩。",
    "d6": "院子里有一只猫。",
}
ROWS = [  # (qid, doc_id, n_systems, best_rank, systems, existing grade)
    ("q1", "d1", 2, 1, ["bm25", "e5"], None),
    ("q1", "d2", 1, 3, ["e5"], None),
    ("q2", "d3", 2, 1, ["bm25", "e5"], None),
    ("q2", "d4", 1, 2, ["bm25"], 0),  # the qrels already graded it: hidden unless --all
    ("q3", "d5", 2, 1, ["bm25", "e5"], None),
    ("q3", "d6", 1, 2, ["e5"], 2),  # graded too
]


def make_pool(rows: list[tuple[Any, ...]] = ROWS, **kw: Any) -> Pool:
    """A small zh + en pool in judging order, with texts."""
    args: dict[str, Any] = {"depth": 10, "systems": ("bm25", "e5"), "dataset": "toy/judge", "queries": QUERIES,
                            "texts": TEXTS}
    args.update(kw)
    return Pool(items=pool_items(rows), **args)


@pytest.fixture
def pool_file(tmp_path: Path) -> Path:
    return write_pool(make_pool(), tmp_path / "pool.jsonl")


@pytest.fixture
def store(tmp_path: Path) -> JudgmentStore:
    s = JudgmentStore.open(tmp_path / "j.sqlite", make_pool())
    yield s
    s.close()


# --------------------------------------------------------------------------- the scale


def test_scale_parses_grades_and_labels() -> None:
    assert Scale.parse("0,1,2") == Scale((0, 1, 2), ("irrelevant", "partial", "relevant"))
    assert Scale.parse("2,0,1").grades == (0, 1, 2)  # kept in grade order, labels follow their grade
    s = Scale.parse("0=no, 1=yes")
    assert s.labels == ("no", "yes") and s.label(1) == "yes" and 1 in s and 5 not in s and True not in s
    assert Scale.parse("0,1,2,3").labels[-1] == "highly relevant"
    assert Scale.parse("-1,0,1,2,3,4").labels == ("irrelevant", "grade 0", "grade 1", "grade 2", "grade 3", "relevant")
    assert Scale.from_json(s.to_json()) == s
    assert Scale().spelled() == "0 irrelevant / 1 partial / 2 relevant"


@pytest.mark.parametrize("text, needle", [("0,x", "'x'"), ("1", "one grade"), ("0,0,1", "twice"), ("", "no grade"),
                                          ("0=,1", "empty"), ("0,١", "'١' in --grades"), ("0,１", "'１' in --grades"),
                                          ("0,1_0", "'1_0' in --grades"), ("0,99999999999999999999", "outside")])
def test_bad_scales_are_named(text: str, needle: str) -> None:
    with pytest.raises(FinegrainError, match=needle):
        Scale.parse(text)


# --------------------------------------------------------------------------- the store


def test_store_round_trip_latest_wins_and_history_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    pool = make_pool()
    with JudgmentStore.open(path, pool) as s:
        assert s.login("  alice ") == "alice"
        assert s.login("alice") == "alice" and s.login("bob") == "bob"
        a1 = s.record("alice", "q1", "d1", 1)
        s.record("bob", "q1", "d1", 0)
        a2 = s.record("alice", "q1", "d1", 2)  # alice changes her mind
        s.skip("alice", "q2", "d3")
        s.record("alice", "q3", "d5", 2)
        s.skip("alice", "q3", "d5")  # a skip after a grade does not erase it
        assert a2.seq > a1.seq and a1.grade == 1 and not a1.skipped
        with pytest.raises(FrozenInstanceError):
            a1.grade = 0  # type: ignore[misc]
    with sqlite3.connect(path) as raw:  # WAL mode is a property of the file
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with JudgmentStore.open(path, pool, create=False) as s:
        assert s.annotators() == ("alice", "bob")
        assert s.grades_of("alice") == {("q1", "d1"): 2, ("q3", "d5"): 2}
        assert s.grades_of("bob") == {("q1", "d1"): 0}
        assert [(j.annotator, j.grade) for j in s.history(qid="q1", doc_id="d1")] == [("alice", 1), ("bob", 0),
                                                                                       ("alice", 2)]
        assert len(s.history()) == 6 and len(s.history("alice")) == 5
        assert [(j.qid, j.grade) for j in s.latest()] == [("q1", 0), ("q1", 2), ("q3", 2)]
        assert s.skipped_by("alice") == {("q2", "d3")}
        p = s.progress("alice")
        assert (p.judged, p.skipped, p.total, p.left) == (2, 1, 6, 4)
        assert s.progress("alice", [("q1", "d1"), ("q1", "d2")]).judged == 1
        assert s.items[0] == ("q1", "d1") and len(s.items) == 6 and s.scale == Scale()
        assert all(j.at.endswith("Z") and "T" in j.at for j in s.history())


def test_store_refuses_bad_clicks(store: JudgmentStore) -> None:
    store.login("alice")
    with pytest.raises(UnknownItemError, match="'q1', 'd9'"):
        store.record("alice", "q1", "d9", 1)
    with pytest.raises(BadGradeError, match="grade 3 is not on the scale 0 irrelevant / 1 partial / 2 relevant"):
        store.record("alice", "q1", "d1", 3)
    with pytest.raises(BadAnnotatorError, match="empty"):
        store.record("  ", "q1", "d1", 1)
    with pytest.raises(BadAnnotatorError, match="not logged in"):
        store.record("carol", "q1", "d1", 1)
    with pytest.raises(BadAnnotatorError, match="control"):
        store.login("al\x00ice")
    with pytest.raises(BadAnnotatorError, match="at most 64"):
        store.login("x" * 65)
    assert store.history() == ()  # nothing half-written


def test_a_database_of_another_pool_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    JudgmentStore.open(path, make_pool()).close()
    other = make_pool(texts={**TEXTS, "d1": "a different passage"})
    assert pool_fingerprint(other) != pool_fingerprint(make_pool())
    with pytest.raises(FinegrainError, match="another pool") as e:
        JudgmentStore.open(path, other)
    assert e.value.hint and "new --db" in e.value.hint
    # the same items in another order, or with other existing grades, are the same pool
    reordered = make_pool(rows=[ROWS[2], ROWS[0], ROWS[1], *ROWS[3:]])
    JudgmentStore.open(path, reordered).close()
    with pytest.raises(FinegrainError, match="started with grades 0,1,2, not 0,1"):
        JudgmentStore.open(path, make_pool(), scale=Scale.parse("0,1"))


def test_files_that_are_not_a_judgments_database(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello, this is not sqlite\n" * 10)
    with pytest.raises(FinegrainError, match="is not a judgments database"):
        JudgmentStore.open(text, make_pool())
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as c:
        c.execute("CREATE TABLE photos (id TEXT)")
    with pytest.raises(FinegrainError, match="not a judgments database"):
        JudgmentStore.open(other)
    with pytest.raises(FinegrainError, match="no judgments database"):
        JudgmentStore.open(tmp_path / "missing.sqlite", create=False)
    with pytest.raises(FinegrainError, match="is a folder"):
        JudgmentStore.open(tmp_path, make_pool())


# --------------------------------------------------------------------------- highlighting


def test_highlight_marks_the_query_words_as_written() -> None:
    terms = query_terms("The purple Flower")
    assert terms == {"purple", "flower"}  # the stop word "the" is not a term
    pieces = highlight("A purple flower; flowers and PURPLE.", terms)
    assert "".join(t for t, _ in pieces) == "A purple flower; flowers and PURPLE."
    assert [t for t, marked in pieces if marked] == ["purple", "flower", "PURPLE"]  # no stems: "flowers" unmarked


def test_highlight_cuts_chinese_with_jieba() -> None:
    terms = query_terms("紫色的花")
    assert terms == {"紫色", "花"}  # 的 is a stop word
    pieces = highlight("一朵紫色的花放在花瓶里。", terms)
    assert "".join(t for t, _ in pieces) == "一朵紫色的花放在花瓶里。"
    assert [t for t, marked in pieces if marked] == ["紫色", "花"]  # 花瓶 is another word: not marked
    assert highlight("no overlap at all", query_terms("紫色")) == [("no overlap at all", False)]
    assert highlight("", terms) == []


# --------------------------------------------------------------------------- agreement, by hand


def _table(columns: dict[str, list[int | None]]) -> dict[tuple[str, str], dict[str, int]]:
    n = len(next(iter(columns.values())))
    return {("q", f"d{i}"): {a: g[i] for a, g in columns.items() if g[i] is not None} for i in range(n)}


def test_cohen_kappa_by_hand() -> None:
    a = [0, 0, 1, 1, 2, 2, 2, 0, 1, 2]
    b = [0, 1, 1, 1, 2, 2, 0, 0, 1, 2]
    result = agreement(_table({"a": a, "b": b}), (0, 1, 2))
    (pair,) = result.pairs
    # p_o = 8/10; marginals a (3,3,4), b (3,4,3): p_e = (9 + 12 + 12)/100 = 0.33; κ = 0.47/0.67
    assert pair.n_items == 10 and pair.observed == pytest.approx(0.8)
    assert pair.kappa == pytest.approx(47 / 67)
    # linear weights |i-j|: observed disagreement 1 + 2 = 3; expected sum |i-j| a_i b_j / n = 88/10
    assert pair.kappa_linear == pytest.approx(1 - 3 / 8.8)
    from sklearn.metrics import cohen_kappa_score

    assert pair.kappa == pytest.approx(cohen_kappa_score(a, b))


FLEISS = {  # five items graded by three raters, one by two (left out of Fleiss' κ)
    "r1": [0, 1, 0, 1, 2, 0],
    "r2": [0, 1, 1, 2, 2, 1],
    "r3": [0, 1, 1, 2, 2, None],
}


def test_fleiss_kappa_and_krippendorff_alpha_by_hand() -> None:
    result = agreement(_table(FLEISS), (0, 1, 2))
    # counts per item over grades 0,1,2: [3,0,0] [0,3,0] [1,2,0] [0,1,2] [0,0,3]
    # P_i = 1, 1, 1/3, 1/3, 1 -> mean 11/15; p_j = 4/15, 6/15, 5/15 -> P_e = 77/225; κ = 88/148
    assert result.fleiss_raters == 3 and result.fleiss_items == 5 and result.fleiss_left_out == 1
    assert result.fleiss_kappa == pytest.approx(22 / 37)
    # α over all six items (17 pairable values, n_c = 5, 7, 5):
    # nominal: 1 - (n-1) * 6 / 190 = 47/95; ordinal (δ01 = δ12 = 36, δ02 = 144): 1 - 16 * 216 / 12240 = 61/85
    assert result.alpha_items == 6 and result.n_judgments == 17 and result.n_items == 6
    assert result.alpha_nominal == pytest.approx(47 / 95)
    assert result.alpha_ordinal == pytest.approx(61 / 85)
    assert [(p.a, p.b, p.n_items) for p in result.pairs] == [("r1", "r2", 6), ("r1", "r3", 5), ("r2", "r3", 5)]
    # and the packages say the same
    import krippendorff
    import numpy as np
    from statsmodels.stats.inter_rater import fleiss_kappa

    data = np.array([[np.nan if g is None else g for g in col] for col in FLEISS.values()], dtype=float)
    assert result.alpha_ordinal == pytest.approx(krippendorff.alpha(data, level_of_measurement="ordinal"))
    assert result.fleiss_kappa == pytest.approx(fleiss_kappa(np.array([[3, 0, 0], [0, 3, 0], [1, 2, 0], [0, 1, 2],
                                                                      [0, 0, 3]])))


def test_undefined_coefficients_are_none_not_zero() -> None:
    same = agreement(_table({"a": [1, 1, 1], "b": [1, 1, 1]}), (0, 1, 2))
    assert same.pairs[0].observed == 1.0
    assert same.pairs[0].kappa is None and same.fleiss_kappa is None and same.alpha_nominal is None
    alone = agreement(_table({"a": [0, 1, 2]}), (0, 1, 2))
    assert alone.pairs == () and alone.fleiss_raters is None and alone.alpha_ordinal is None
    apart = agreement({("q", "d1"): {"a": 1}, ("q", "d2"): {"b": 0}}, (0, 1))
    assert apart.pairs[0].n_items == 0 and apart.pairs[0].kappa is None


def test_tables_fit_80_columns() -> None:
    from rich.console import Console

    result = agreement(_table({"a-very-long-annotator-name-indeed": [0, 1, 2, 2], "b": [0, 1, 1, 2],
                               "c": [0, 2, 2, 2]}), (0, 1, 2))
    console = Console(width=200, record=True)
    for t in result.tables():
        console.print(t)
    lines = console.export_text().splitlines()
    assert max(len(line) for line in lines) <= 80, lines


# --------------------------------------------------------------------------- export


def test_majority_breaks_ties_toward_the_lower_grade() -> None:
    assert majority_grade([2, 2, 1]) == (2, False)
    assert majority_grade([2, 0]) == (0, True)
    assert majority_grade([1, 2, 2, 1, 0]) == (1, True)
    assert Tie("q", "d", {2: 1, 0: 1}, 0).spelled() == "q/d (0:1 2:1 -> 0)"


def _clicks(store: JudgmentStore, clicks: list[tuple[str, str, str, int | None]]) -> None:
    for who, q, d, g in clicks:
        store.login(who)
        store.record(who, q, d, g)


CLICKS = [
    ("alice", "q1", "d1", 2), ("bob", "q1", "d1", 2), ("carol", "q1", "d1", 1),  # 2 by majority
    ("alice", "q1", "d2", 0), ("bob", "q1", "d2", 1),  # a tie -> 0
    ("alice", "q2", "d3", 1), ("alice", "q2", "d3", 2), ("bob", "q2", "d3", 0), ("carol", "q2", "d3", 2),  # 2
    ("carol", "q3", "d5", 1), ("carol", "q3", "d5", None),  # a skip does not erase carol's 1
]


def test_majority_export_equals_the_clicks(store: JudgmentStore, tmp_path: Path) -> None:
    _clicks(store, CLICKS)
    result = export_qrels(store)
    assert result.qrels.to_dict() == {"q1": {"d1": 2, "d2": 0}, "q2": {"d3": 2}, "q3": {"d5": 1}}
    assert [t.spelled() for t in result.ties] == ["q1/d2 (0:1 1:1 -> 0)"]
    assert result.n_judged == 4 and result.annotators == ("alice", "bob", "carol")
    assert "1 tie(s) broken toward the lower grade: q1/d2 (0:1 1:1 -> 0)" in result.summary()
    out = write_export(result, tmp_path / "qrels.trec")
    assert read_qrels(out).to_dict() == result.qrels.to_dict()
    assert out.read_text() == "q1 0 d1 2\nq1 0 d2 0\nq2 0 d3 2\nq3 0 d5 1\n"


def test_a_pool_with_spaces_in_its_ids_exports_to_tsv(tmp_path: Path) -> None:
    """Pool ids are JSON strings and may hold spaces (file names); a TREC line cannot, and its writer's
    error says to write BEIR qrels (.tsv). --out *.tsv did not: the judgments could not be exported at all."""
    pool = make_pool([("q 1", "IMG 0001.jpg", 1, 1, ("bm25",), None), ("q 1", "d2", 1, 2, ("bm25",), None)],
                     queries={"q 1": "cat"}, texts={"IMG 0001.jpg": "a cat"})
    with JudgmentStore.open(tmp_path / "j.sqlite", pool) as s:
        _clicks(s, [("alice", "q 1", "IMG 0001.jpg", 2), ("alice", "q 1", "d2", 0)])
        result = export_qrels(s)
    with pytest.raises(FinegrainError, match=r"holds a space.*write BEIR qrels \(\.tsv\)"):
        write_export(result, tmp_path / "qrels.trec")
    out = write_export(result, tmp_path / "qrels.tsv")
    assert out.read_text(encoding="utf-8").splitlines()[0] == "query-id\tcorpus-id\tscore"
    assert read_qrels_file(out)[0].to_dict() == {"q 1": {"IMG 0001.jpg": 2, "d2": 0}}
    assert not (tmp_path / "qrels.trec").exists()


def test_adjudication_overrides_where_the_adjudicator_graded(store: JudgmentStore) -> None:
    _clicks(store, [*CLICKS, ("judge", "q1", "d2", 1), ("judge", "q1", "d1", 0)])
    result = export_qrels(store, method="adjudicate", adjudicator="judge")
    assert result.qrels.to_dict() == {"q1": {"d1": 0, "d2": 1}, "q2": {"d3": 2}, "q3": {"d5": 1}}
    assert result.adjudicated == 2 and result.overruled == 2 and result.ties == ()
    assert any("adjudicator judge: graded 2 item(s), overruling the majority on 2" == line for line in result.summary())


def test_export_keeps_the_pools_grades_only_when_asked(store: JudgmentStore) -> None:
    _clicks(store, CLICKS[:3])
    assert export_qrels(store).qrels.to_dict() == {"q1": {"d1": 2}}
    result = export_qrels(store, pool=make_pool())
    assert result.qrels.to_dict() == {"q1": {"d1": 2}, "q2": {"d4": 0}, "q3": {"d6": 2}} and result.from_pool == 2
    with pytest.raises(FinegrainError, match="not the one"):
        export_qrels(store, pool=make_pool(texts={**TEXTS, "d2": "changed"}))


def test_export_errors_name_the_fix(store: JudgmentStore) -> None:
    _clicks(store, CLICKS[:2])
    with pytest.raises(UnknownNameError, match="unknown export method 'majorty'") as e:
        parse_method("majorty")
    assert "majority" in (e.value.hint or "")
    with pytest.raises(FinegrainError, match="needs the adjudicator"):
        export_qrels(store, method="adjudicate")
    with pytest.raises(UnknownNameError, match="unknown adjudicator 'alicia'") as e:
        export_qrels(store, method="adjudicate", adjudicator="alicia")
    assert "alice" in (e.value.hint or "")
    with pytest.raises(FinegrainError, match="--method adjudicate"):
        export_qrels(store, adjudicator="alice")


def test_store_agreement_uses_the_latest_grades(store: JudgmentStore) -> None:
    _clicks(store, CLICKS)
    result = store_agreement(store)
    assert result.annotators == ("alice", "bob", "carol") and result.grades == (0, 1, 2)
    ab = result.pairs[0]
    assert (ab.a, ab.b, ab.n_items) == ("alice", "bob", 3)
    assert ab.observed == pytest.approx(1 / 3)  # q1/d1 2=2, q1/d2 0≠1, q2/d3 2≠0 (alice's latest is 2)
    assert result.to_dict()["fleiss"] == {"kappa": result.fleiss_kappa, "raters": 3, "items": 2, "left_out": 1}


# --------------------------------------------------------------------------- the JSON API


@pytest.fixture
def client(tmp_path: Path, pool_file: Path) -> Any:
    pytest.importorskip("fastapi")
    pytest.importorskip("httpx")
    from fastapi.testclient import TestClient

    from finegrain.build.judge.app import create_app

    app = create_app(pool_file, tmp_path / "j.sqlite")
    with TestClient(app) as c:
        c.post("/api/login", json={"annotator": "alice"}).raise_for_status()
        yield c


def test_the_api_walks_an_annotator_through_the_pool(client: Any) -> None:
    config = client.get("/api/config").json()
    assert config["total"] == 4 and config["hidden"] == 2
    assert [(g["grade"], g["label"], g["key"]) for g in config["grades"]] == [
        (0, "irrelevant", "0"), (1, "partial", "1"), (2, "relevant", "2")]
    state = client.get("/api/state", params={"annotator": "alice"}).json()
    assert state["next"] == 0 and state["progress"] == {"judged": 0, "skipped": 0, "total": 4}
    item = client.get("/api/item", params={"annotator": "alice", "position": 0}).json()
    assert (item["qid"], item["doc_id"], item["query"], item["grade"]) == ("q1", "d1", "紫色的花", None)
    assert [t for t, marked in item["passage"] if marked] == ["紫色", "花"]
    r = client.post("/api/judgments", json={"annotator": "alice", "qid": "q1", "doc_id": "d1", "grade": 2})
    assert r.status_code == 200 and r.json()["next"] == 1 and r.json()["saved"]["label"] == "relevant"
    r = client.post("/api/skips", json={"annotator": "alice", "qid": "q1", "doc_id": "d2"})
    assert r.json()["next"] == 2 and r.json()["first_skipped"] == 1
    assert r.json()["progress"] == {"judged": 1, "skipped": 1, "total": 4}
    item = client.get("/api/item", params={"annotator": "alice", "position": 0}).json()
    assert item["grade"] == 2
    assert client.get("/api/team").json() == [{"annotator": "alice", "judged": 1, "skipped": 1, "total": 4}]


BAD_POSTS = [  # (path, body, status, words of the message)
    ("/api/judgments", {"annotator": "alice", "qid": "q9", "doc_id": "d1", "grade": 1}, 404, "not in the pool"),
    ("/api/judgments", {"annotator": "alice", "qid": "q2", "doc_id": "d4", "grade": 1}, 404, "--all"),
    ("/api/judgments", {"annotator": "alice", "qid": "q1", "doc_id": "d1", "grade": 5}, 422, "not on the scale"),
    ("/api/judgments", {"annotator": "alice", "qid": "q1", "doc_id": "d1", "grade": -1}, 422, "not on the scale"),
    ("/api/judgments", {"annotator": "alice", "qid": "q1", "doc_id": "d1", "grade": "2"}, 422, "valid integer"),
    ("/api/judgments", {"annotator": "alice", "qid": "q1", "doc_id": "d1", "grade": 1.5}, 422, "grade"),
    ("/api/judgments", {"annotator": "alice", "qid": "q1", "doc_id": "d1"}, 422, "grade: Field required"),
    ("/api/judgments", {"annotator": "", "qid": "q1", "doc_id": "d1", "grade": 1}, 422, "annotator name is empty"),
    ("/api/judgments", {"annotator": "   ", "qid": "q1", "doc_id": "d1", "grade": 1}, 422, "empty"),
    ("/api/judgments", {"annotator": "mallory", "qid": "q1", "doc_id": "d1", "grade": 1}, 403, "log in"),
    ("/api/judgments", {"annotator": None, "qid": "q1", "doc_id": "d1", "grade": 1}, 422, "annotator"),
    ("/api/judgments", [1, 2, 3], 422, "request"),
    ("/api/skips", {"annotator": "alice", "qid": "q1", "doc_id": "nope"}, 404, "not in the pool"),
    ("/api/login", {"annotator": ""}, 422, "annotator name is empty"),
    ("/api/login", {"annotator": "x" * 65}, 422, "at most 64"),
    ("/api/login", {}, 422, "annotator: Field required"),
]


@pytest.mark.parametrize("path, body, status, words", BAD_POSTS, ids=[f"{p} {b}"[:60] for p, b, _, _ in BAD_POSTS])
def test_bad_posts_are_4xx_json_with_a_message(client: Any, path: str, body: Any, status: int, words: str) -> None:
    r = client.post(path, json=body)
    assert r.status_code == status, r.text
    detail = r.json()["detail"]
    assert isinstance(detail, str) and words in detail, detail
    assert client.get("/api/team").json()[0]["judged"] == 0  # nothing was stored


def test_bad_queries_and_bodies_are_4xx(client: Any) -> None:
    r = client.post("/api/judgments", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 422 and "not valid JSON" in r.json()["detail"]
    assert client.get("/api/item", params={"annotator": "alice", "position": 99}).status_code == 404
    assert client.get("/api/item", params={"annotator": "alice", "position": -1}).status_code == 422
    assert client.get("/api/item", params={"annotator": "", "position": 0}).status_code == 422
    assert client.get("/api/item", params={"annotator": "alice"}).status_code == 422
    assert client.get("/api/state", params={"annotator": "eve"}).status_code == 403
    assert client.get("/api/state", params={"annotator": "alice", "after": "x"}).status_code == 422


def test_no_body_gives_a_5xx(client: Any) -> None:
    """Arbitrary JSON at every POST route: always an answer below 500 (hypothesis, bounded)."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    scalar = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20), st.floats(allow_nan=False),
                       st.text(max_size=80))
    value = st.recursive(scalar, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8),
                                                                                              inner, max_size=3),
                         max_leaves=8)
    field = st.sampled_from(["annotator", "qid", "doc_id", "grade", "x"])
    body = st.one_of(value, st.dictionaries(field, st.one_of(value, st.sampled_from(["alice", "q1", "d1", 0, 2])),
                                            max_size=5))

    @settings(max_examples=150, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(path=st.sampled_from(["/api/judgments", "/api/skips", "/api/login"]), payload=body)
    def check(path: str, payload: Any) -> None:
        r = client.post(path, json=payload)
        assert r.status_code < 500, (path, payload, r.text)
        assert r.headers["content-type"].startswith("application/json")

    check()


def test_hidden_items_are_shown_with_all(tmp_path: Path, pool_file: Path) -> None:
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from finegrain.build.judge.app import create_app

    with TestClient(create_app(pool_file, tmp_path / "all.sqlite", include_judged=True)) as c:
        assert c.get("/api/config").json()["total"] == 6
        c.post("/api/login", json={"annotator": "bob"})
        assert c.post("/api/judgments", json={"annotator": "bob", "qid": "q2", "doc_id": "d4", "grade": 1}).status_code == 200


def test_a_pool_with_nothing_left_to_judge_and_a_foreign_host(tmp_path: Path) -> None:
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from finegrain.build.judge.app import create_app

    graded = [(q, d, n, b, s, 1) for q, d, n, b, s, _ in ROWS]
    app = create_app(make_pool(rows=graded), tmp_path / "done.sqlite", allowed_hosts=["127.0.0.1", "localhost"])
    with TestClient(app, base_url="http://127.0.0.1") as c:
        assert c.get("/api/config").json()["total"] == 0 and c.get("/api/config").json()["hidden"] == 6
        c.post("/api/login", json={"annotator": "alice"})
        assert c.get("/api/state", params={"annotator": "alice"}).json()["next"] is None
    with TestClient(app, base_url="http://evil.example") as c:  # a DNS-rebinding page cannot reach it
        assert c.get("/api/config").status_code == 400


def test_the_page_is_one_self_contained_file(client: Any) -> None:
    html = client.get("/").text
    assert "<script>" in html and "<style>" in html
    assert "http://" not in html and "https://" not in html and "src=" not in html  # nothing from the network


# --------------------------------------------------------------------------- the CLI


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_export_and_agreement(tmp_path: Path, pool_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "j.sqlite"
    with JudgmentStore.open(db, make_pool()) as s:
        _clicks(s, CLICKS)
    out_file = tmp_path / "qrels.trec"
    code, out, err = _run(["judge", "export", "--db", str(db), "--out", str(out_file)], capsys)
    assert code == 0, err
    assert read_qrels(out_file).to_dict() == {"q1": {"d1": 2, "d2": 0}, "q2": {"d3": 2}, "q3": {"d5": 1}}
    assert "1 tie(s) broken toward the lower grade" in out and f"wrote {out_file}" in out
    code, out, err = _run(["judge", "export", "--db", str(db), "-o", str(out_file), "--method", "adjudicate",
                           "--adjudicator", "bob", "--pool", str(pool_file)], capsys)
    assert code == 0, err
    assert read_qrels(out_file).to_dict() == {"q1": {"d1": 2, "d2": 1}, "q2": {"d3": 0, "d4": 0},
                                              "q3": {"d5": 1, "d6": 2}}
    code, out, err = _run(["judge", "agreement", "--db", str(db)], capsys)
    assert code == 0, err
    assert "Fleiss' κ" in out and "Krippendorff's α ordinal" in out and "alice" in out
    assert max(len(line) for line in out.splitlines()) <= 80
    code, out, _ = _run(["judge", "agreement", "--db", str(db), "--json"], capsys)
    assert code == 0 and json.loads(out)["fleiss"]["raters"] == 3
    code, out, err = _run(["judge", str(pool_file), "--db", str(db)], capsys)  # progress, no --serve
    assert code == 0, err
    assert "alice" in out and "--serve" in out and "4 item(s) to judge" in out


@pytest.mark.parametrize("argv, words", [
    (["judge", "export", "--db", "DB", "--out", "OUT", "--method", "majorty"], "unknown export method 'majorty'"),
    (["judge", "export", "--db", "DB", "--out", "OUT", "--method", "adjudicate"], "needs the adjudicator"),
    (["judge", "export", "--db", "MISSING", "--out", "OUT"], "no judgments database"),
    (["judge", "agreement", "--db", "MISSING"], "no judgments database"),
    (["judge", "exprot", "--db", "DB"], "did you mean `finegrain judge export`"),
    (["judge", "POOL", "--db", "DB", "--serve", "--host", "0.0.0.0"], "not a loopback address"),
    (["judge", "POOL", "--db", "DB", "--grades", "0,1,1"], "twice"),
    (["judge", "OTHER_POOL", "--db", "DB"], "another pool"),
    (["judge", "export", "--db", "DB", "--out", "OUT", "--pool", "OTHER_POOL"], "another pool"),
])
def test_cli_errors_are_one_line_and_exit_2(argv: list[str], words: str, tmp_path: Path, pool_file: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "j.sqlite"
    with JudgmentStore.open(db, make_pool()) as s:
        _clicks(s, CLICKS[:2])
    other = write_pool(make_pool(rows=ROWS[:2]), tmp_path / "other.jsonl")
    names = {"DB": str(db), "OUT": str(tmp_path / "q.trec"), "MISSING": str(tmp_path / "nope.sqlite"),
             "POOL": str(pool_file), "OTHER_POOL": str(other)}
    code, out, err = _run([names.get(a, a) for a in argv], capsys)
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0], err


def test_the_judge_group_takes_both_forms(tmp_path: Path, pool_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["judge", "--help"], capsys)
    assert code == 0 and "open" in out and "export" in out and "agreement" in out
    code, out, _ = _run(["judge", "open", str(pool_file), "--db", str(tmp_path / "new.sqlite")], capsys)
    assert code == 0 and "no judgments yet" in out and not (tmp_path / "new.sqlite").exists()
    code, out, _ = _run(["judge", str(pool_file), "--db", str(tmp_path / "new.sqlite")], capsys)
    assert code == 0 and "no judgments yet" in out


# --------------------------------------------------------------------------- killing the server


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.load(r)  # type: ignore[no-any-return]


def test_killing_the_server_mid_judging_loses_no_saved_grade(tmp_path: Path) -> None:
    pytest.importorskip("uvicorn")
    rows = [(f"q{i // 10}", f"d{i}", 1, 1, ["bm25"], None) for i in range(200)]
    pool = make_pool(rows=rows, queries={f"q{i}": f"query {i}" for i in range(20)},
                     texts={f"d{i}": f"passage {i}" for i in range(200)})
    pool_path = write_pool(pool, tmp_path / "big.jsonl")
    db = tmp_path / "j.sqlite"
    port = _free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "finegrain", "judge", str(pool_path), "--db", str(db), "--serve",
                             "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                            start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(base + "/api/config", timeout=2) as r:
                    assert json.load(r)["total"] == 200
                break
            except (urllib.error.URLError, ConnectionError):
                if proc.poll() is not None or time.monotonic() > deadline:
                    out = proc.stdout.read().decode() if proc.stdout else ""
                    pytest.fail(f"the judge server did not start: {out}")
                time.sleep(0.1)
        acknowledged: dict[str, list[tuple[str, str, int]]] = {"alice": [], "bob": []}
        sent: set[tuple[str, str, str, int]] = set()
        stop = threading.Event()

        def judge(who: str, grade_of: Any) -> None:
            _post(base + "/api/login", {"annotator": who})
            for i in range(200):
                if stop.is_set():
                    return
                q, d, g = f"q{i // 10}", f"d{i}", grade_of(i)
                sent.add((who, q, d, g))
                try:
                    answer = _post(base + "/api/judgments", {"annotator": who, "qid": q, "doc_id": d, "grade": g})
                except (urllib.error.URLError, ConnectionError, OSError):
                    return  # the server is gone: this grade was never acknowledged
                assert answer["saved"]["grade"] == g
                acknowledged[who].append((q, d, g))

        threads = [threading.Thread(target=judge, args=("alice", lambda i: i % 3)),
                   threading.Thread(target=judge, args=("bob", lambda i: (i + 1) % 3))]
        for t in threads:
            t.start()
        while len(acknowledged["alice"]) + len(acknowledged["bob"]) < 40:  # mid-judging
            assert any(t.is_alive() for t in threads)
            time.sleep(0.01)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        stop.set()
        for t in threads:
            t.join(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    with JudgmentStore.open(db, pool, create=False) as s:
        stored = {(j.annotator, j.qid, j.doc_id, j.grade) for j in s.history()}
        for who, done in acknowledged.items():
            assert done, f"{who} judged nothing before the kill"
            assert set(done) <= {(q, d, g) for a, q, d, g in stored if a == who}, "an acknowledged grade was lost"
        assert stored <= sent  # and nothing that was not sent
        assert len(stored) >= 40
