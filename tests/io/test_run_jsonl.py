"""Saved runs whose ids TREC cannot hold: run.jsonl round trips, the
eval pipeline's choice of format, and every reader of a results folder."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from finegrain.cli.main import main
from finegrain.errors import DataFormatError, FinegrainError
from finegrain.io.run_jsonl import is_trec_safe, read_run_jsonl, write_run_jsonl
from finegrain.results.files import RUN_JSONL, RUN_TREC, read_saved_run, run_file_name, save_run
from finegrain.types import Run

AWKWARD = ["IMG 0001.jpg", "a\tb", "line\nbreak", "cr\rx", "ideo\u3000space", "sep\u2028x", "nbsp\u00a0x",
           "照片 二.JPG", "emoji 📷", "#hash", "quote\"and\\slash", "ctrl\x01x", "nul\x00x"]


def _awkward_run(name: str = "my run") -> Run:
    data = {f"q {i}": {d: float(len(AWKWARD) - j) for j, d in enumerate(AWKWARD)} for i in range(2)}
    data["q\ttab"] = {"IMG 0001.jpg": 1.0, "plain": 1.0}  # a tie: broken by the one rule
    data["empty query"] = {}
    return Run.from_dict(data, name=name)


def _same(a: Run, b: Run) -> None:
    assert a == b
    assert a.name == b.name
    assert list(a.qids) == list(b.qids)
    for q in a:
        assert a.ranked(q) == b.ranked(q)


@pytest.mark.parametrize("fname", ["run.jsonl", "run.jsonl.gz"])
def test_awkward_ids_round_trip(tmp_path: Path, fname: str) -> None:
    run = _awkward_run()
    assert not is_trec_safe(run)
    path = write_run_jsonl(run, tmp_path / fname)
    _same(run, read_run_jsonl(path))
    if fname.endswith(".gz"):
        assert gzip.open(path).read(2) == b"{\""


def test_scores_read_back_to_the_same_floats(tmp_path: Path) -> None:
    scores = [0.1 + 0.2, 1e-310, -0.0, 1.7976931348623157e308, math.inf, -math.inf, 12345678901234567.0]
    run = Run.from_dict({"q": {f"d {i}": s for i, s in enumerate(scores)}})
    back = read_run_jsonl(write_run_jsonl(run, tmp_path / "r.jsonl"))
    assert [back["q"][f"d {i}"] for i in range(len(scores))] == scores


def test_file_is_readable_utf8_json_lines(tmp_path: Path) -> None:
    run = Run.from_dict({"q 1": {"照片 二.JPG": 2.0, "b": 1.0}}, name="bm25")
    lines = (write_run_jsonl(run, tmp_path / "r.jsonl")).read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0]) == {"format": "finegrain.run/1", "name": "bm25"}
    assert json.loads(lines[1]) == {"qid": "q 1", "results": [["照片 二.JPG", 2.0], ["b", 1.0]]}
    assert "照片 二.JPG" in lines[1]  # not \u-escaped


_ids = st.text(min_size=1, max_size=12).filter(str.strip)  # any text but a blank id (surrogates: never generated)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(_ids, st.dictionaries(_ids, st.floats(allow_nan=False), max_size=6), min_size=1, max_size=5),
       _ids)
def test_any_ids_round_trip(tmp_path_factory: pytest.TempPathFactory, data: dict, name: str) -> None:
    run = Run.from_dict(data, name=name)
    path = tmp_path_factory.mktemp("prop") / "run.jsonl"
    _same(run, read_run_jsonl(write_run_jsonl(run, path)))


@pytest.mark.parametrize("text, where", [
    ("", "empty file"),
    ('{"qid": "q", "results": []}\n', ":1"),
    ('{"format": "finegrain.run/1"}\n{"qid": "q", "results": [["d"]]}\n', ":2"),
    ('{"format": "finegrain.run/1"}\n{"qid": "q", "results": [["d", "1.0"]]}\n', ":2"),
    ('{"format": "finegrain.run/1"}\n{"qid": "q", "results": [["d", 1], ["d", 2]]}\n', ":2"),
    ('{"format": "finegrain.run/1"}\n{"qid": "q", "results": []}\n{"qid": "q", "results": []}\n', ":3"),
    ('{"format": "finegrain.run/1"}\n{"qid": "q", "results": [["d", NaN]]}\n', ":2"),
    ('{"format": "finegrain.run/1"}\nnot json\n', ":2"),
    ('{"format": "finegrain.run/1"}\n' + "[" * 5000 + "]" * 5000 + "\n", ":2"),
])
def test_bad_files_name_path_and_line(tmp_path: Path, text: str, where: str) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(DataFormatError) as e:
        read_run_jsonl(p)
    assert str(p) in str(e.value) and where in str(e.value)


# --------------------------------------------------------------------------- the pipeline's choice


def test_save_run_chooses_trec_only_when_trec_can_hold_the_ids(tmp_path: Path) -> None:
    plain = Run.from_dict({"q1": {"d1": 2.0, "d2": 1.0}}, name="bm25")
    assert run_file_name(plain) == RUN_TREC
    assert save_run(tmp_path, plain).name == RUN_TREC
    _same(plain, read_saved_run(tmp_path))

    spaced = _awkward_run("bm25")
    assert run_file_name(spaced) == RUN_JSONL
    assert save_run(tmp_path, spaced).name == RUN_JSONL
    assert not (tmp_path / RUN_TREC).exists(), "a stale run.trec would disagree with run.jsonl"
    _same(spaced, read_saved_run(tmp_path))

    save_run(tmp_path, plain)
    assert not (tmp_path / RUN_JSONL).exists()


@pytest.mark.parametrize("name", ["st:/models/my model", "tab\tname"])
def test_a_run_name_trec_cannot_hold_goes_to_jsonl(tmp_path: Path, name: str) -> None:
    run = Run.from_dict({"q1": {"d1": 1.0}}, name=name)
    assert save_run(tmp_path, run).name == RUN_JSONL
    assert read_saved_run(tmp_path).name == name


def test_read_saved_run_without_a_run_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FinegrainError, match="no saved run"):
        read_saved_run(tmp_path)


# --------------------------------------------------------------------------- end to end


@pytest.fixture
def spaced_beir(tmp_path: Path) -> Path:
    """A BEIR folder whose query and document ids have spaces and non-ASCII characters."""
    d = tmp_path / "spaced"
    (d / "qrels").mkdir(parents=True)
    docs = {"IMG 0001.jpg": "a red bicycle by the lake", "照片 三.JPG": "a red car parked in the snow",
            "bike": "red bicycle", "car": "a blue car in the snow", "dogs": "two dogs playing"}
    queries = {"q 1": "red bicycle", "q 2": "car in snow", "q3": "dogs"}
    qrels = [("q 1", "IMG 0001.jpg", 1), ("q 2", "car", 2), ("q 2", "照片 三.JPG", 1), ("q3", "dogs", 1)]
    (d / "corpus.jsonl").write_text("".join(json.dumps({"_id": k, "text": v}, ensure_ascii=False) + "\n"
                                            for k, v in docs.items()), encoding="utf-8")
    (d / "queries.jsonl").write_text("".join(json.dumps({"_id": k, "text": v}) + "\n" for k, v in queries.items()),
                                     encoding="utf-8")
    (d / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{doc}\t{g}\n" for q, doc, g in qrels),
                                          encoding="utf-8")
    return d


def test_eval_saves_spaced_ids_and_compare_and_report_read_the_folders(
    tmp_path: Path, spaced_beir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outs = []
    for retriever in ("bm25", "bm25-okapi"):
        out = tmp_path / retriever
        code = main(["eval", "-d", str(spaced_beir), "-r", retriever, "-m", "ndcg@10", "-m", "recall@10",
                     "-o", str(out), "--quiet"])
        stdout = capsys.readouterr().out
        assert code == 0
        assert (out / RUN_JSONL).is_file() and not (out / RUN_TREC).exists()
        assert "run.jsonl" in stdout and "JSON lines" in stdout
        results = json.loads((out / "results.json").read_text(encoding="utf-8"))
        assert results["run_file"] == RUN_JSONL
        run = read_saved_run(out)
        assert "IMG 0001.jpg" in run.ranked("q 1") and "照片 三.JPG" in run.ranked("q 2")
        assert results["aggregate"]["recall@10"] == 1.0  # the spaced ids were matched to the qrels
        assert set(run) <= set(results["queries"])
        outs.append(out)

    assert main(["compare", *map(str, outs), "-m", "ndcg@10", "--json"]) == 0
    cmp = json.loads(capsys.readouterr().out)
    assert cmp["metrics"] == ["ndcg@10"]
    page = tmp_path / "r.html"
    assert main(["report", *map(str, outs), "-o", str(page), "-m", "recall@10,ndcg@10"]) == 0
    assert page.is_file() and "recall@10" in page.read_text(encoding="utf-8")


def test_photobench_album_eval_keeps_its_file_names(tmp_path: Path, with_data_root: Path) -> None:
    """The crash: PhotoBench ids are file names such as 'FullSizeRender 10.JPG'."""
    if not (with_data_root / "photobench" / "album1").is_dir():
        pytest.skip("PhotoBench album1 is not in the shared data")
    out = tmp_path / "pb"
    assert main(["eval", "-d", "photobench/album1", "-r", "bm25-okapi", "-m", "ndcg@10", "-o", str(out), "--quiet"]) == 0
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["run_file"] == RUN_JSONL
    run = read_saved_run(out)
    assert set(run) == set(results["queries"])


def test_finegrain_evaluate_reads_a_saved_run_jsonl(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = Run.from_dict({"q 1": {"IMG 1.jpg": 2.0, "IMG 2.jpg": 1.0}, "q2": {"d": 0.5}}, name="my run")
    write_run_jsonl(run, tmp_path / "run.jsonl")
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq 1\tIMG 2.jpg\t1\nq2\td\t1\n", encoding="utf-8")
    assert main(["evaluate", str(tmp_path / "qrels.tsv"), str(tmp_path / "run.jsonl"), "-m", "mrr", "--json"]) == 0
    # q 1: the relevant IMG 2.jpg at rank 2 -> 1/2; q2: rank 1 -> 1; mean 0.75
    assert json.loads(capsys.readouterr().out) == {"mrr": 0.75}
