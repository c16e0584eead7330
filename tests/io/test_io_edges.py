"""Regression tests for the loader defects: each crash and silent misparse, by class.

Every bad input must end in one FinegrainError naming the file (and line when
there is one), never a traceback and never a wrong number.
"""

from __future__ import annotations

import gzip
import json
import tracemalloc
from pathlib import Path

import pytest

from finegrain import Qrels, Run
from finegrain.errors import DataFormatError, FinegrainError
from finegrain.io.beir import read_beir, read_qrels_tsv, write_beir
from finegrain.io.capretrieval import read_capretrieval
from finegrain.io.ids import MAX_ID_CHARS
from finegrain.io.photobench import read_album
from finegrain.io.trec import read_qrels, read_run
from finegrain.results.files import read_results
from finegrain.types import Corpus, Document, Queries, Query

CORRUPT_GZ = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff\x07"  # a gzip header, then a broken deflate block


def _w(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def _beir(root: Path, corpus: bytes, qrels: str = "q1\td1\t1\n") -> Path:
    _w(root / "queries.jsonl", '{"_id": "q1", "text": "x"}\n')
    _w(root / "qrels" / "test.tsv", "query-id\tcorpus-id\tscore\n" + qrels)
    _w(root / "corpus.jsonl", corpus)
    return root


# --------------------------------------------------------------------------- crashes


@pytest.mark.parametrize("reader", [read_qrels, read_run])
def test_corrupt_gzip_is_a_clear_error(tmp_path: Path, reader) -> None:
    p = _w(tmp_path / "bad.trec.gz", CORRUPT_GZ)
    with pytest.raises(DataFormatError, match="bad.trec.gz.*gzip") as e:
        reader(p)
    assert "corrupt or truncated" in str(e.value)


def test_truncated_gzip_is_a_clear_error(tmp_path: Path) -> None:
    whole = gzip.compress(b"q 0 d 1\n" * 1000, mtime=0)
    p = _w(tmp_path / "cut.qrels.gz", whole[: len(whole) // 2])
    with pytest.raises(DataFormatError, match="cut.qrels.gz"):
        read_qrels(p)


def test_corrupt_gzip_beir_corpus(tmp_path: Path) -> None:
    root = _beir(tmp_path / "b", b"")
    (root / "corpus.jsonl").unlink()
    _w(root / "corpus.jsonl.gz", CORRUPT_GZ)
    with pytest.raises(DataFormatError, match="corpus.jsonl.gz"):
        read_beir(root)


@pytest.mark.parametrize("grade", ["99999999999999999999", "18446744073709551616", "-9223372036854775809", "9" * 5000])
def test_grades_past_int64_are_refused_in_trec_qrels(tmp_path: Path, grade: str) -> None:
    with pytest.raises(DataFormatError, match=r"q:1: .*grade range"):
        read_qrels(_w(tmp_path / "q", f"q1 0 d1 {grade}\n"))


@pytest.mark.parametrize("grade", ["9223372036854775808", "18446744073709551615"])
def test_grades_that_would_wrap_are_refused_everywhere(tmp_path: Path, grade: str) -> None:
    # 2^63 .. 2^64-1 used to wrap to negative grades (TREC, BEIR qrels.tsv, CapRetrieval)
    with pytest.raises(DataFormatError, match="grade range"):
        read_qrels(_w(tmp_path / "q", f"q1 0 d1 {grade}\n"))
    with pytest.raises(DataFormatError, match="grade range"):
        read_qrels_tsv(_w(tmp_path / "q.tsv", f"q1\td1\t{grade}\n"))
    cap = tmp_path / "cap"
    _w(cap / "candidates.jsonl", '{"id": "d1", "text": "x"}\n')
    positives = json.dumps([{"id": "d1", "score": "GRADE"}]).replace('"GRADE"', grade)
    _w(cap / "queries.jsonl", f'{{"id": "q1", "query": "x", "positives": {positives}}}\n')
    with pytest.raises(DataFormatError, match="queries.jsonl:1"):
        read_capretrieval(cap)


def test_largest_int64_grade_is_read(tmp_path: Path) -> None:
    assert read_qrels(_w(tmp_path / "q", "q1 0 d1 9223372036854775807\n"))["q1"]["d1"] == 2**63 - 1


@pytest.mark.parametrize("score", ["1e20", "1e400", "-1e19"])
def test_capretrieval_scores_out_of_range(tmp_path: Path, score: str) -> None:
    cap = tmp_path / "cap"
    _w(cap / "candidates.jsonl", '{"id": "d1", "text": "x"}\n')
    positives = json.dumps([{"id": "d1", "score": "SCORE"}]).replace('"SCORE"', score)
    _w(cap / "queries.jsonl", f'{{"id": "q1", "query": "x", "positives": {positives}}}\n')
    with pytest.raises(DataFormatError, match="queries.jsonl:1"):
        read_capretrieval(cap)


def test_deeply_nested_json_line(tmp_path: Path) -> None:
    line = '{"_id": "p1", "text": ' + "[" * 5000 + "]" * 5000 + "}\n"
    root = _beir(tmp_path / "b", line.encode(), qrels="q1\tp1\t1\n")
    with pytest.raises(DataFormatError, match=r"corpus.jsonl:1: .*nested"):
        read_beir(root)


def test_deeply_nested_photobench_metadata(tmp_path: Path) -> None:
    album = tmp_path / "album"
    _w(album / "metadata.json", '{"a.jpg": ' + "[" * 5000 + "]" * 5000 + "}")
    _w(album / "samples_query.json", "[]")
    with pytest.raises(DataFormatError, match=r"metadata.json.*nested"):
        read_album(album)


def test_json_integer_with_thousands_of_digits(tmp_path: Path) -> None:
    line = '{"_id": "p1", "text": "x", "n": ' + "7" * 5000 + "}\n"
    root = _beir(tmp_path / "b", line.encode(), qrels="q1\tp1\t1\n")
    with pytest.raises(DataFormatError, match=r"corpus.jsonl:1"):
        read_beir(root)


def test_nan_and_infinity_are_not_json(tmp_path: Path) -> None:
    cap = tmp_path / "cap"
    _w(cap / "candidates.jsonl", '{"id": "d1", "text": "x"}\n')
    _w(cap / "queries.jsonl", '{"id": "q1", "query": "x", "positives": [{"id": "d1", "score": NaN}]}\n')
    with pytest.raises(DataFormatError, match="NaN"):
        read_capretrieval(cap)


def test_huge_face_id_in_photobench(tmp_path: Path) -> None:
    album = tmp_path / "album"
    _w(album / "metadata.json", '{"a.jpg": {"latitude": null, "longitude": null, "time": ""}}')
    big = "9" * 5000
    faces = {"face_id_to_nicknames": {big: ["x"], "1": ["me"]}, "image_to_face_ids": {"a.jpg": [big, "1"]}}
    _w(album / "face_info_en.json", json.dumps(faces))
    _w(album / "samples_query.json", "[]")
    assert set(read_album(album).photos["a.jpg"].faces) == {"1", big}


# --------------------------------------------------------------------------- silent misparses


@pytest.mark.parametrize("grade", ["٣", "２", "1_0", "+1_0", "2.0", "0x1", "1e2"])
def test_grades_only_in_ascii_decimal(tmp_path: Path, grade: str) -> None:
    with pytest.raises(DataFormatError, match=r"q:1"):
        read_qrels(_w(tmp_path / "q", f"q1 0 d1 {grade}\n"))
    with pytest.raises(DataFormatError, match=r"q.tsv:1"):
        read_qrels_tsv(_w(tmp_path / "q.tsv", f"q1\td1\t{grade}\n"))


def test_beir_header_is_a_name_and_ids_may_hold_spaces(tmp_path: Path) -> None:
    p = _w(tmp_path / "q.tsv", "query-id\tcorpus-id\tscore\nq 1\td 1\t2\nq2\td2\t 1\n")
    assert read_qrels_tsv(p).to_dict() == {"q 1": {"d 1": 2}, "q2": {"d2": 1}}
    with pytest.raises(DataFormatError, match="no judgement"):
        read_qrels_tsv(_w(tmp_path / "h.tsv", "query-id\tcorpus-id\tscore\n"))


@pytest.mark.parametrize("score", ["1_0", "2_129133", "٣", "２", "nan", "inf", "-Infinity", "1e400", "0x1p99999"])
def test_scores_use_the_c_grammar(tmp_path: Path, score: str) -> None:
    with pytest.raises(DataFormatError, match=r"r:2: .*score"):
        read_run(_w(tmp_path / "r", f"q Q0 a 1 1.0 t\nq Q0 b 2 {score} t\n"))


def test_c_float_literals_are_read(tmp_path: Path) -> None:
    run = read_run(_w(tmp_path / "r", "q Q0 a 1 .5 t\nq Q0 b 2 5. t\nq Q0 c 3 0x1.8p1 t\nq Q0 d 4 -1E-3 t\nq Q0 e 5 +2 t\n"))
    assert run["q"] == {"a": 0.5, "b": 5.0, "c": 3.0, "d": -0.001, "e": 2.0}


def test_query_id_ending_in_nul_is_refused_not_merged(tmp_path: Path) -> None:
    p = _w(tmp_path / "r", b"q1 Q0 a 1 2.0 t\nq1\x00 Q0 b 1 1.0 t\n")
    with pytest.raises(DataFormatError, match=r"r:2: .*NUL"):
        read_run(p)
    with pytest.raises(DataFormatError, match=r"q:2: .*NUL"):
        read_qrels(_w(tmp_path / "q", b"q1 0 a 1\nq1\x00 0 b 1\n"))


def test_a_long_query_id_costs_no_fixed_width_copy(tmp_path: Path) -> None:
    long_id = "q" * MAX_ID_CHARS  # the longest id the rule allows
    lines = "".join(f"{long_id if i == 0 else f'q{i}'} Q0 d{i} 1 1.0 t\n" for i in range(100_000))
    p = _w(tmp_path / "r", lines)
    tracemalloc.start()
    run = read_run(p)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert long_id in run and len(run) == 100_000
    assert peak < 120 * 2**20  # a fixed-width id column would add 100,000 x 1,000 bytes (x4 as str)


def test_ids_differing_only_in_trailing_bytes_stay_apart(tmp_path: Path) -> None:
    run = read_run(_w(tmp_path / "r", "q1 Q0 a 1 2.0 t\nq1\u0100 Q0 b 1 1.0 t\nq1 Q0 c 2 1.0 t\n"))
    assert set(run) == {"q1", "q1\u0100"} and set(run["q1"]) == {"a", "c"}


@pytest.mark.parametrize("reader,line", [(read_qrels, "#301 0 d1 1\n"), (read_run, "#q Q0 d 1 1.0 t\n")])
def test_commented_out_line_is_an_error_in_strict_mode(tmp_path: Path, reader, line: str) -> None:
    good = "q1 0 d1 1\n" if reader is read_qrels else "q1 Q0 d1 1 2.0 t\n"
    p = _w(tmp_path / "f", good + line)
    with pytest.raises(DataFormatError, match=r"f:2: .*--compat trec_eval"):
        reader(p)


def test_comments_and_trailing_fields_in_trec_eval_mode(tmp_path: Path) -> None:
    q = _w(tmp_path / "q", "# judged by NIST\nq1 0 d1 1\n#q2 0 d2 1\nq2 0 d3 2\n")
    assert read_qrels(q, compat="trec_eval").to_dict() == {"q1": {"d1": 1}, "q2": {"d3": 2}}
    r = _w(tmp_path / "r", "  # header\nq1 Q0 d1 1 2.0 s extra fields\n\nq2 Q0 d3 1 1.0 s\n")
    run = read_run(r, compat="trec_eval")
    assert run.to_dict() == {"q1": {"d1": 2.0}, "q2": {"d3": 1.0}} and run.name == "s"
    with pytest.raises(DataFormatError, match="r:1: .*comment"):
        read_run(r)  # strict: the comment line is refused
    with pytest.raises(DataFormatError, match="trailing fields"):
        read_run(_w(tmp_path / "r2", "q1 Q0 d1 1 2.0 s extra\n"))
    # trec_eval refuses trailing fields in qrels in both modes
    with pytest.raises(DataFormatError, match="q2:1"):
        read_qrels(_w(tmp_path / "q2", "q1 0 d1 1 extra\n"), compat="trec_eval")
    with pytest.raises(FinegrainError, match="unknown compatibility mode"):
        read_qrels(q, compat="ranx")


def test_trailing_fields_and_blank_lines_do_not_shift_records(tmp_path: Path) -> None:
    # found by the fuzzer: 12 fields on one line plus a blank line is 6 fields per line on average;
    # a bare CR is whitespace inside a line (trec_eval splits lines on LF only), so the rest is ignored
    r = _w(tmp_path / "r", b"q Q0 a 1 0.25 t\rq Q0 d 2 .5 t\n\n")
    assert read_run(r, compat="trec_eval").to_dict() == {"q": {"a": 0.25}}
    r = _w(tmp_path / "r2", b"q Q0 a 1 1 t x x x x x x\n\nq Q0 b 2 2 t\n")
    assert read_run(r, compat="trec_eval").to_dict() == {"q": {"a": 1.0, "b": 2.0}}


def test_trailing_fields_keep_line_numbers_in_errors(tmp_path: Path) -> None:
    r = _w(tmp_path / "r", "q Q0 a 1 1.0 t x y\nq Q0 b 2 1.0 t\nq Q0 c 3 oops t z\n")
    with pytest.raises(DataFormatError, match=r"r:3: .*score"):
        read_run(r, compat="trec_eval")


@pytest.mark.parametrize("content", ["", "\n\n  \n", "# only a comment\n"])
def test_empty_files_are_errors(tmp_path: Path, content: str) -> None:
    found = "comment" if "#" in content else "an empty file"
    with pytest.raises(DataFormatError, match=found):
        read_run(_w(tmp_path / "r", content), compat="trec_eval")
    with pytest.raises(DataFormatError, match=found):
        read_qrels(_w(tmp_path / "q", content), compat="trec_eval")
    assert len(read_run(_w(tmp_path / "r", content), compat="trec_eval", allow_empty=True)) == 0


def test_beir_qrels_without_a_judgement(tmp_path: Path) -> None:
    root = _beir(tmp_path / "b", b'{"_id": "d1", "text": "x"}\n', qrels="")
    with pytest.raises(DataFormatError, match="test.tsv.*no judgement"):
        read_beir(root)


def test_beir_round_trip_of_what_finegrain_writes(tmp_path: Path) -> None:
    corpus = Corpus([Document("d1", "a cat"), Document("d 2", "a dog")])
    queries = Queries([Query("q1", "cat")])
    qrels = Qrels.from_dict({"q1": {"d1": 2, "d 2": 0}})
    write_beir(tmp_path / "b", corpus, queries, qrels)
    c, q, r = read_beir(tmp_path / "b")
    assert r == qrels and list(c) == ["d1", "d 2"]


def test_core_types_refuse_values_that_would_wrap_or_truncate() -> None:
    with pytest.raises(FinegrainError, match="out of range"):
        Qrels.from_dict({"q": {"d": 2**63}})
    with pytest.raises(FinegrainError, match="not an integer grade"):
        Qrels.from_dict({"q": {"d": 1.5}})
    with pytest.raises(FinegrainError, match="out of range"):
        Run.from_dict({"q": {"d": 10**400}})
    assert Qrels.from_dict({"q": {"d": 2.0}})["q"]["d"] == 2


# --------------------------------------------------------------------------- saved results


def _results(tmp_path: Path, **change) -> Path:
    data = {
        "schema": "finegrain.results/1",
        "aggregate": {"ndcg@10": 0.5},
        "per_query": {"ndcg@10": {"q1": 1.0, "q2": 0.0}},
        "denominators": {"ndcg@10": {"n_universe": 2}},
    }
    data.update(change)
    return _w(tmp_path / "res" / "results.json", json.dumps(data))


@pytest.mark.parametrize("change", [
    {"aggregate": {"ndcg@10": "high"}},
    {"per_query": {"ndcg@10": [1.0]}},
    {"per_query": {"ndcg@10": {"q1": True}}},
    {"denominators": {"ndcg@10": {"n_universe": -1}}},
    {"queries": {"q1": {"text": 3}}},
    {"by_type": {"x": {"ndcg@10": {"value": "a"}}}},
    {"per_query": {"recall@5": {"q1": 1.0}}},
])
def test_results_json_of_the_wrong_shape(tmp_path: Path, change: dict) -> None:
    with pytest.raises(DataFormatError, match="results.json"):
        read_results(_results(tmp_path, **change).parent)


def test_results_json_that_is_not_json(tmp_path: Path) -> None:
    p = _w(tmp_path / "res" / "results.json", '{"schema": "finegrain.results/1", "aggregate": NaN}')
    with pytest.raises(DataFormatError, match="NaN"):
        read_results(p)
    assert read_results(_results(tmp_path))["aggregate"] == {"ndcg@10": 0.5}
