"""Qrels and Run carry their I/O as ranx's do: from_file / save in every format, from_dict, from_df / to_df, to_dict
in ranked order; and the hook through which the core types reach finegrain.io (finegrain.hooks)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from finegrain import Qrels, Run
from finegrain.errors import FinegrainError
from finegrain.hooks import Hook

# stored in an order that is not the ranking: d2 has the top score of q1, d7 of q2
RUN = {"q1": {"d1": 0.5, "d2": 2.0, "d3": 1.25}, "q2": {"d4": -1.0, "d7": 3.5}}
QRELS = {"q1": {"d1": 1, "d2": 0, "d3": 2}, "q2": {"d7": 1}}

RUN_NAMES = ["run.trec", "run.txt", "run.trec.gz", "run.json", "run.json.gz", "run.parquet", "run.jsonl", "run.jsonl.gz"]
QRELS_NAMES = ["qrels.trec", "qrels.txt", "qrels.txt.gz", "qrels.tsv", "qrels.tsv.gz", "qrels.json", "qrels.json.gz",
               "qrels.parquet"]


def test_a_run_lists_its_documents_in_ranked_order() -> None:
    run = Run.from_dict(RUN, name="bm25")
    assert list(run.to_dict()["q1"]) == ["d2", "d3", "d1"] and list(run["q2"]) == ["d7", "d4"]
    assert run.to_dict() == RUN  # the same mapping, only ordered
    assert list(run.to_dict()["q1"]) == run.ranked("q1")


def test_ties_in_to_dict_follow_the_one_rule() -> None:
    run = Run.from_dict({"q": {"a": 1.0, "c": 1.0, "b": 1.0}})
    assert list(run.to_dict()["q"]) == run.ranked("q") == ["c", "b", "a"]  # trec_eval: id descending on ties


def test_from_dict_takes_a_name() -> None:
    assert Run.from_dict(RUN, name="b").name == "b"
    assert Run.from_dict(RUN).name == "run"
    assert Run.from_dict(RUN, name=None).name == "run"


@pytest.mark.parametrize("name", RUN_NAMES)
def test_a_run_round_trips_through_every_format(tmp_path: Path, name: str) -> None:
    if "parquet" in name:
        pytest.importorskip("pyarrow")
    run = Run.from_dict(RUN, name="bm25")
    path = run.save(tmp_path / name)
    assert path == tmp_path / name and path.is_file()
    back = Run.from_file(path)
    assert back.to_dict() == run.to_dict()
    assert [list(d) for d in back.to_dict().values()] == [list(d) for d in run.to_dict().values()]
    assert Run.from_file(path, name="x").name == "x"


@pytest.mark.parametrize("name", QRELS_NAMES)
def test_qrels_round_trip_through_every_format(tmp_path: Path, name: str) -> None:
    if "parquet" in name:
        pytest.importorskip("pyarrow")
    qrels = Qrels.from_dict(QRELS)
    back = Qrels.from_file(qrels.save(tmp_path / name))
    assert back == qrels


@pytest.mark.parametrize(("fmt", "kind"), [("trec", "run"), ("json", "run"), ("parquet", "run"), ("jsonl", "run"),
                                           ("trec", "qrels"), ("beir", "qrels"), ("json", "qrels"),
                                           ("parquet", "qrels")])
def test_format_argument_overrides_the_file_name(tmp_path: Path, fmt: str, kind: str) -> None:
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    table = Run.from_dict(RUN, name="bm25") if kind == "run" else Qrels.from_dict(QRELS)
    path = table.save(tmp_path / "data.bin", format=fmt)
    back = Run.from_file(path, format=fmt) if kind == "run" else Qrels.from_file(path, format=fmt)
    assert back.to_dict() == table.to_dict()


def test_trec_files_are_what_trec_eval_reads(tmp_path: Path) -> None:
    Run.from_dict(RUN, name="bm25").save(tmp_path / "r.trec")
    assert (tmp_path / "r.trec").read_text().splitlines()[:3] == [
        "q1 Q0 d2 1 2.0 bm25", "q1 Q0 d3 2 1.25 bm25", "q1 Q0 d1 3 0.5 bm25"]
    Qrels.from_dict(QRELS).save(tmp_path / "q.tsv")
    assert (tmp_path / "q.tsv").read_text().splitlines()[0] == "query-id\tcorpus-id\tscore"


def test_an_unknown_suffix_is_refused_not_guessed(tmp_path: Path) -> None:
    with pytest.raises(FinegrainError, match=r"cannot tell the run format from the file name 'run.csv'.*format="):
        Run.from_dict(RUN).save(tmp_path / "run.csv")
    assert not (tmp_path / "run.csv").exists()
    with pytest.raises(FinegrainError, match="holds qrels only"):
        Run.from_dict(RUN).save(tmp_path / "run.tsv")
    with pytest.raises(FinegrainError, match="holds runs only"):
        Qrels.from_dict(QRELS).save(tmp_path / "q.jsonl")
    with pytest.raises(FinegrainError, match="unknown qrels format 'csv'"):
        Qrels.from_file(tmp_path / "q.txt", format="csv")


def test_a_run_that_cannot_be_trec_keeps_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "r.trec"
    Run.from_dict(RUN, name="bm25").save(path)
    before = path.read_bytes()
    with pytest.raises(FinegrainError, match="whitespace"):
        Run.from_dict({"q 1": {"d": 1.0}}).save(path)
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["r.trec"]
    Run.from_dict({"q 1": {"d": 1.0}}, name="spaced").save(tmp_path / "r.jsonl")  # the format that keeps any id
    assert Run.from_file(tmp_path / "r.jsonl").to_dict() == {"q 1": {"d": 1.0}}


def test_json_refuses_an_infinite_score(tmp_path: Path) -> None:
    with pytest.raises(FinegrainError, match="JSON has no infinity"):
        Run.from_dict({"q": {"d": float("inf")}}).save(tmp_path / "r.json")
    assert not (tmp_path / "r.json").exists()


def test_dataframes_in_ranx_columns() -> None:
    pd = pytest.importorskip("pandas")
    run = Run.from_dict(RUN, name="bm25")
    df = run.to_df()
    assert list(df.columns) == ["q_id", "doc_id", "score"]
    assert df["doc_id"].tolist() == ["d2", "d3", "d1", "d7", "d4"]  # ranked, query by query
    assert run.to_dataframe().equals(df)
    assert Run.from_df(df, name="b").to_dict() == run.to_dict() and Run.from_df(df, name="b").name == "b"
    qdf = Qrels.from_dict(QRELS).to_df()
    assert list(qdf.columns) == ["q_id", "doc_id", "score"] and qdf["score"].dtype.kind == "i"
    assert Qrels.from_df(qdf) == Qrels.from_dict(QRELS)
    other = pd.DataFrame({"qq": ["a", "a"], "dd": ["x", "y"], "s": [1.0, 2.0], "score": [9.0, 9.0]})
    assert Run.from_df(other, q_id_col="qq", doc_id_col="dd", score_col="s").to_dict() == {"a": {"y": 2.0, "x": 1.0}}
    with pytest.raises(FinegrainError, match="no column 'nope'.*'qq', 'dd', 's', 'score'"):
        Run.from_df(other, q_id_col="nope")


def test_ranx_reads_our_frames_and_files(tmp_path: Path) -> None:
    ranx = pytest.importorskip("ranx")
    run = Run.from_dict(RUN, name="bm25")
    assert ranx.Run.from_df(run.to_df()).to_dict() == run.to_dict()
    assert ranx.Qrels.from_df(Qrels.from_dict(QRELS).to_df()).to_dict() == QRELS
    assert dict(ranx.Run.from_file(str(run.save(tmp_path / "r.json"))).to_dict()) == run.to_dict()
    ranx.Run.from_dict(RUN).save(str(tmp_path / "ranx.trec"))
    assert Run.from_file(tmp_path / "ranx.trec").to_dict() == run.to_dict()


def test_an_empty_hook_says_so() -> None:
    hook: Hook[int] = Hook("counting")
    with pytest.raises(FinegrainError, match="counting is not wired up"):
        hook()
    hook.fill(lambda: 7)
    assert hook() == 7


def test_import_finegrain_loads_no_reader_until_a_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "r.trec"
    Run.from_dict(RUN, name="bm25").save(path)
    code = ("import sys; from finegrain import Run; before = 'finegrain.io.formats' in sys.modules; "
            f"r = Run.from_file({str(path)!r}); print(before, 'finegrain.io.formats' in sys.modules, r.name)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.split() == ["False", "True", "bm25"]
