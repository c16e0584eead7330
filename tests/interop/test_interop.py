"""The Python API a ranx / ir_measures user guesses: every input form gives the same Evaluation; results out as dicts and DataFrames.

Expected numbers are computed by hand in the comments. The same qrels and run
go in as finegrain objects, nested dicts, DataFrames (several column
spellings), ranx objects, ir_measures records, and TREC / ranx-JSON / Parquet
files; each must give the same per-query values.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import finegrain
from finegrain import Qrels, Run, evaluate
from finegrain.cli.main import main
from finegrain.errors import FinegrainError, MissingDependencyError
from finegrain.interop import as_qrels, as_run
from finegrain.io.files import QrelsFormat, read_qrels_file
from finegrain.io.trec import write_qrels

pd = pytest.importorskip("pandas")

QRELS = {"q1": {"d1": 2, "d2": 0, "d5": 1}, "q2": {"d3": 1}, "q3": {"d4": 1}}
RUN = {"q1": {"d1": 0.9, "d2": 0.8, "d5": 0.1}, "q2": {"d3": 0.5, "d9": 0.7}, "q3": {"d8": 0.3}}
# By hand, ndcg@10 with exponential... no: finegrain's nDCG gain is the grade (linear), log2(rank+1) discounts.
#  q1: ranking d1(2) d2(0) d5(1): DCG = 2/1 + 0 + 1/log2(4) = 2.5; ideal d1 d5: 2 + 1/log2(3) = 2.6309...
#      ndcg = 2.5 / 2.63093 = 0.950226
#  q2: ranking d9(0) d3(1): DCG = 1/log2(3) = 0.63093; ideal 1 -> 0.63093
#  q3: d8 only, not relevant -> 0
# recall@10: q1 2/2 = 1 (d1, d5 relevant), q2 1, q3 0 -> mean 2/3
NDCG = {"q1": 2.5 / (2 + 1 / math.log2(3)), "q2": 1 / math.log2(3), "q3": 0.0}


def _records(data: dict, value: str) -> list[tuple[str, str, float]]:
    return [(q, d, v) for q, docs in data.items() for d, v in docs.items()]


def _frame(data: dict, columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame(_records(data, columns[2]), columns=columns)


def _check(ev: finegrain.Evaluation) -> None:
    got = ev.per_query("ndcg@10")
    assert got.keys() == NDCG.keys()
    for q, v in NDCG.items():
        assert got[q] == pytest.approx(v, abs=1e-12), q
    assert ev.mean("recall@10") == pytest.approx(2 / 3)


# --------------------------------------------------------------------------- every form gives the same numbers


def test_nested_dicts_and_finegrain_objects_agree() -> None:
    _check(evaluate(QRELS, RUN, ["ndcg@10", "recall@10"]))
    _check(evaluate(Qrels.from_dict(QRELS), Run.from_dict(RUN), ["ndcg@10", "recall@10"]))


@pytest.mark.parametrize(
    ("qcols", "rcols"),
    [
        (["q_id", "doc_id", "relevance"], ["q_id", "doc_id", "score"]),  # the reported names
        (["query_id", "doc_id", "relevance"], ["query_id", "doc_id", "score"]),  # ir_measures
        (["qid", "docno", "label"], ["qid", "docno", "score"]),  # pyterrier
        (["q_id", "corpus_id", "score"], ["q_id", "corpus_id", "score"]),  # ranx writes qrels with "score"
    ],
)
def test_dataframes_with_common_column_names(qcols: list[str], rcols: list[str]) -> None:
    _check(evaluate(_frame(QRELS, qcols), _frame(RUN, rcols), ["ndcg@10", "recall@10"]))


def test_integer_ids_in_a_frame_become_strings() -> None:
    qrels = pd.DataFrame({"q_id": [1, 1], "doc_id": [10, 11], "relevance": [1, 0]})
    run = pd.DataFrame({"q_id": [1, 1], "doc_id": [11, 10], "score": [0.9, 0.1]})
    ev = evaluate(qrels, run, "ndcg@10")
    # relevant doc "10" at rank 2: 1/log2(3)
    assert ev.per_query("ndcg@10") == {"1": pytest.approx(1 / math.log2(3))}


def test_a_frame_without_the_columns_names_what_it_found() -> None:
    bad = pd.DataFrame({"query": ["q1"], "doc_id": ["d1"], "score": [1.0]})
    with pytest.raises(FinegrainError, match=r"no query id column: its columns are 'query', 'doc_id', 'score'") as e:
        evaluate(QRELS, bad, "ndcg@10")
    assert "q_id" in str(e.value.hint) and "query_id" in str(e.value.hint)
    with pytest.raises(FinegrainError, match="no grade column"):
        evaluate(pd.DataFrame({"q_id": ["q"], "doc_id": ["d"]}), RUN, "ndcg@10")
    with pytest.raises(FinegrainError, match="holds floats"):
        as_run(pd.DataFrame({"q_id": [1.0], "doc_id": ["d"], "score": [1.0]}))


def test_ir_measures_records_and_frames() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    qrels = [ir_measures.Qrel(q, d, r) for q, d, r in _records(QRELS, "relevance")]
    run = [ir_measures.ScoredDoc(q, d, s) for q, d, s in _records(RUN, "score")]
    _check(evaluate(qrels, run, ["ndcg@10", "recall@10"]))
    _check(evaluate(iter(qrels), (r for r in run), ["ndcg@10", "recall@10"]))  # generators too
    # ir_measures' own DataFrame layout: query_id, doc_id, relevance / score
    qf = pd.DataFrame(qrels)
    rf = pd.DataFrame(run)
    assert list(qf.columns)[:3] == ["query_id", "doc_id", "relevance"]
    _check(evaluate(qf, rf, ["ndcg@10", "recall@10"]))
    # and ir_measures agrees on the numbers: nDCG@10 (its default gain is the grade as well)
    ref = ir_measures.calc_aggregate([ir_measures.nDCG @ 10], qrels, run)
    assert ref[ir_measures.nDCG @ 10] == pytest.approx(sum(NDCG.values()) / 3, abs=1e-9)
    with pytest.raises(FinegrainError, match="without a 'relevance' field"):
        evaluate(run, run, "ndcg@10")  # a run where the qrels go


def test_ranx_objects_and_files(tmp_path: Path) -> None:
    ranx = pytest.importorskip("ranx")
    rq, rr = ranx.Qrels(QRELS), ranx.Run(RUN, name="bm25")
    _check(evaluate(rq, rr, ["ndcg@10", "recall@10"]))
    assert as_run(rr).name == "bm25" and as_run(rr).to_dict() == RUN
    assert as_qrels(rq) == Qrels.from_dict(QRELS)
    # ranx's own files: Run.save("x.json") ({qid: {doc: score}}), Parquet, TREC
    rr.save(str(tmp_path / "run.json"))
    rr.save(str(tmp_path / "run.parquet"))
    rr.save(str(tmp_path / "run.trec"))
    rq.save(str(tmp_path / "qrels.json"))
    rq.save(str(tmp_path / "qrels.parquet"))
    for qrels_file in ("qrels.json", "qrels.parquet"):
        for run_file in ("run.json", "run.parquet", "run.trec"):
            _check(evaluate(tmp_path / qrels_file, str(tmp_path / run_file), ["ndcg@10", "recall@10"]))
    assert as_run(tmp_path / "run.json").name == "run"
    # and ranx agrees (ndcg with linear gains = ranx's "ndcg"); ranx scores q3 as 0 as we do
    ref = ranx.evaluate(rq, rr, "ndcg@10")
    assert ref == pytest.approx(sum(NDCG.values()) / 3, abs=1e-9)
    with pytest.raises(FinegrainError, match="is a ranx Run, not a ranx Qrels"):
        evaluate(rr, rr, "ndcg@10")


def test_json_and_parquet_run_files_on_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_qrels(Qrels.from_dict(QRELS), tmp_path / "qrels.txt")
    (tmp_path / "run.json").write_text(__import__("json").dumps(RUN))
    _frame(RUN, ["q_id", "doc_id", "score"]).to_parquet(tmp_path / "run.parquet")
    for name in ("run.json", "run.parquet"):
        assert main(["evaluate", str(tmp_path / "qrels.txt"), str(tmp_path / name), "-m", "ndcg@10"]) == 0
        out = capsys.readouterr().out
        # mean ndcg@10 = (0.950226 + 0.630930 + 0) / 3 = 0.527052
        assert "0.5271" in out, out


def test_bad_json_run_file_names_the_line(tmp_path: Path) -> None:
    p = tmp_path / "run.json"
    p.write_text('{\n "q1": {"d1": 0.5,\n  "d2": "high"}\n}\n')
    with pytest.raises(FinegrainError, match=r"run.json:3: expected a number \(score\) for document 'd2'"):
        as_run(p)
    p.write_text("[1, 2]")
    with pytest.raises(FinegrainError, match="found 'a JSON list'"):
        as_run(p)


def test_bad_inputs_are_named() -> None:
    with pytest.raises(FinegrainError, match=r"run\['q1'\] is a float"):
        evaluate(QRELS, {"q1": 0.5}, "ndcg@10")
    with pytest.raises(FinegrainError, match="not an integer grade"):
        evaluate({"q": {"d": 1.5}}, RUN, "ndcg@10")
    with pytest.raises(FinegrainError, match="finegrain cannot read as run"):
        evaluate(QRELS, 42, "ndcg@10")
    with pytest.raises(FinegrainError, match="is a finegrain Run, not a Qrels"):
        evaluate(Run.from_dict(RUN), Run.from_dict(RUN), "ndcg@10")
    with pytest.raises(FinegrainError, match="is not a file"):
        evaluate(QRELS, "no/such/run.trec", "ndcg@10")
    with pytest.raises(FinegrainError, match=r"the score of document 'd' for query 'q' in run is 'x'"):
        evaluate(QRELS, [("q", "d", "x")], "ndcg@10")


# --------------------------------------------------------------------------- results out


def test_results_as_dict_per_query_and_dataframe() -> None:
    ev = evaluate(QRELS, RUN, ["ndcg@10", "recall@10"], query_types={"q1": "simple", "q2": "complex"})
    assert ev.to_dict() == pytest.approx({"ndcg@10": sum(NDCG.values()) / 3, "recall@10": 2 / 3})
    assert ev.mean("nDCG@10") == ev.to_dict()["ndcg@10"]  # any spelling
    frame = ev.to_dataframe()
    assert list(frame.columns) == ["q_id", "type", "ndcg@10", "recall@10"]
    assert frame["q_id"].tolist() == ["q1", "q2", "q3"]
    assert frame["type"].tolist() == ["simple", "complex", "untyped"]  # the group by_group uses
    assert frame["ndcg@10"].tolist() == pytest.approx([NDCG["q1"], NDCG["q2"], 0.0])
    assert frame["ndcg@10"].mean() == pytest.approx(ev.mean("ndcg@10"))
    with pytest.raises(FinegrainError, match="no metric 'map'; it has ndcg@10, recall@10"):
        ev.mean("map")


def test_to_dataframe_leaves_unscored_queries_nan() -> None:
    # q0 has no relevant document: ranking metrics leave it out (NaN), never 0
    ev = evaluate({"q0": {"d1": 0}, "q1": {"d1": 1}}, {"q1": {"d1": 1.0}}, "ndcg@10")
    frame = ev.to_dataframe()
    assert frame["q_id"].tolist() == ["q0", "q1"] and "type" not in frame.columns
    assert math.isnan(frame["ndcg@10"][0]) and frame["ndcg@10"][1] == 1.0
    assert ev.per_query("ndcg@10") == {"q1": 1.0}


def test_to_dataframe_without_pandas_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real = builtins.__import__

    def no_pandas(name: str, *a: object, **k: object) -> object:
        if name == "pandas":
            raise ImportError(name)
        return real(name, *a, **k)

    ev = evaluate(QRELS, RUN, "ndcg@10")
    monkeypatch.delitem(__import__("sys").modules, "pandas")
    monkeypatch.setattr(builtins, "__import__", no_pandas)
    with pytest.raises(MissingDependencyError, match=r"finegrain\[interop\]"):
        ev.to_dataframe()


# --------------------------------------------------------------------------- the package surface


def test_top_level_names_import_lazily_and_evaluate_is_callable() -> None:
    import subprocess
    import sys

    code = (
        "import sys, finegrain\n"
        "heavy = [m for m in ('pandas', 'pyarrow', 'ranx', 'ir_datasets', 'finegrain.evaluate', 'finegrain.retrieve') "
        "if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "from finegrain import Qrels, Run, evaluate, compare, fuse, load_dataset\n"
        "import finegrain.experiment.run as p\n"  # a submodule import must not break the callable
        "print(evaluate({'q': {'a': 1}}, {'q': {'a': 1.0}}, 'ndcg@10').mean('ndcg@10'))\n"
        "assert 'pandas' not in sys.modules\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1.0"
    with pytest.raises(AttributeError, match="no attribute 'evalaute'"):
        finegrain.evalaute  # noqa: B018


def test_qrels_format_table_reads_a_ranx_json_qrels(tmp_path: Path) -> None:
    p = tmp_path / "qrels.json"
    p.write_text('{"q1": {"d1": 2, "d2": 0}}', encoding="utf-8")
    for fmt in ("table", "auto"):
        qrels, found = read_qrels_file(p, qrels_format=fmt)
        assert found is QrelsFormat.TABLE and qrels.to_dict() == {"q1": {"d1": 2, "d2": 0}}


@pytest.mark.parametrize("run", [
    {"q1": {"d1": np.array([1.0, 2.0])}},
    {"q1": {"d1": np.datetime64("2020-01-01")}},
    {"q1": {"d1": np.bool_(True)}},
])
def test_values_that_are_not_real_numbers_are_refused(run: dict) -> None:
    with pytest.raises(FinegrainError, match="scores are numbers"):
        finegrain.evaluate({"q1": {"d1": 1}}, run, ["ndcg@10"])
    assert finegrain.evaluate({"q1": {"d1": np.int64(1)}}, {"q1": {"d1": np.float32(1)}}, ["ndcg@10"]).to_dict() == {"ndcg@10": 1.0}


def test_a_dataframe_with_a_repeated_column_name_is_refused() -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame([["q1", "d1", 1.0, 2.0]], columns=["q_id", "doc_id", "score", "score"])
    with pytest.raises(FinegrainError, match="more than once"):
        finegrain.evaluate({"q1": {"d1": 1}}, frame, ["ndcg@10"])
