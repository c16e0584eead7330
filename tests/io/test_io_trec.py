"""TREC qrels and run files: round trips, .gz, the fast reader, and every error naming path and line."""

from __future__ import annotations

import gzip
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from finegrain.errors import DataFormatError, DuplicateIdError, FinegrainError
from finegrain.io import _columns
from finegrain.io.trec import read_qrels, read_run, write_qrels, write_run
from finegrain.types import Qrels, Run


def _write(path: Path, text: str) -> Path:
    if path.suffix == ".gz":
        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("name", ["run.trec", "run.trec.gz"])
def test_run_round_trip_is_exact(tmp_path: Path, name: str) -> None:
    scores = {
        "q1": {"d1": 0.1 + 0.2, "d2": 1e-300, "d3": -2.5, "d4": 5e-324, "d5": 123456789.123456789},
        "q2": {"d1": 1.0, "d9": 1.0, "d3": 1.0},
        "中文": {"文档1": 3.0},
    }
    run = Run.from_dict(scores, name="bm25")
    path = tmp_path / name
    write_run(run, path)
    back = read_run(path)
    assert back == run
    assert back.to_dict() == scores  # exact floats, not approximately
    assert back.name == "bm25"
    assert back.ranked("q2") == run.ranked("q2") == ["d9", "d3", "d1"]  # ties: doc id descending


def test_write_run_lines_are_ranked_with_one_based_ranks(tmp_path: Path) -> None:
    run = Run.from_dict({"q": {"a": 1.0, "b": 3.0, "c": 2.0, "d": 2.0}}, name="x")
    path = tmp_path / "r.txt"
    write_run(run, path, tag="mytag")
    lines = path.read_text().splitlines()
    assert lines == [
        "q Q0 b 1 3.0 mytag",
        "q Q0 d 2 2.0 mytag",
        "q Q0 c 3 2.0 mytag",
        "q Q0 a 4 1.0 mytag",
    ]


def test_gzip_output_is_deterministic(tmp_path: Path) -> None:
    run = Run.from_dict({"q": {"a": 1.0}}, name="x")
    write_run(run, tmp_path / "a.gz")
    time.sleep(1.1)
    write_run(run, tmp_path / "b.gz")
    assert (tmp_path / "a.gz").read_bytes() == (tmp_path / "b.gz").read_bytes()


@pytest.mark.parametrize("name", ["qrels.txt", "qrels.txt.gz"])
def test_qrels_round_trip(tmp_path: Path, name: str) -> None:
    data = {"q1": {"d1": 2, "d2": 0, "d3": -1}, "q2": {"d1": 1}}
    write_qrels(Qrels.from_dict(data), tmp_path / name)
    back = read_qrels(tmp_path / name)
    assert back.to_dict() == data
    assert back.qids == ("q1", "q2")


def test_qrels_with_empty_query_loses_it(tmp_path: Path) -> None:
    write_qrels(Qrels.from_dict({"q1": {}, "q2": {"d": 1}}), tmp_path / "q")
    assert read_qrels(tmp_path / "q").to_dict() == {"q2": {"d": 1}}


ids = st.text(alphabet="abcXYZ019_-.é中", min_size=1, max_size=6)
finite = st.floats(allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(ids, st.dictionaries(ids, finite, min_size=1, max_size=8), min_size=1, max_size=5))
def test_run_round_trip_property(tmp_path_factory: pytest.TempPathFactory, data: dict) -> None:
    path = tmp_path_factory.mktemp("prop") / "run.txt"
    run = Run.from_dict(data, name="p")
    write_run(run, path)
    back = read_run(path)
    assert back.to_dict() == run.to_dict()
    for q in run:
        assert back.ranked(q) == run.ranked(q)


# --------------------------------------------------------------------------- reading details


def test_read_run_name_defaults_to_tag_then_stem(tmp_path: Path) -> None:
    p = _write(tmp_path / "system.run.gz", "q Q0 d 1 1.5 tagA\n")
    assert read_run(p).name == "tagA"
    assert read_run(p, name="mine").name == "mine"
    empty = _write(tmp_path / "empty.trec", "\n\n")
    r = read_run(empty, allow_empty=True)
    assert r.name == "empty" and len(r) == 0


def test_blank_lines_crlf_and_bom_are_tolerated(tmp_path: Path) -> None:
    p = tmp_path / "r.txt"
    p.write_bytes(b"\xef\xbb\xbfq1 Q0 d1 1 2.0 t\r\n\r\n   \nq1\tQ0\td2\t2\t1.0\tt\r\nq2 Q0 d1 1 0.5 t")
    run = read_run(p)
    assert run.to_dict() == {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d1": 0.5}}
    q = tmp_path / "q.txt"
    q.write_bytes(b"\xef\xbb\xbf\nq1 0 d1 1\r\n\nq1 0 d2 0\n")
    assert read_qrels(q).to_dict() == {"q1": {"d1": 1, "d2": 0}}


def test_read_run_keeps_query_order_and_ignores_rank_column(tmp_path: Path) -> None:
    p = _write(tmp_path / "r", "b Q0 x 7 1.0 t\na Q0 x 1 2.0 t\nb Q0 y 1 3.0 t\n")
    run = read_run(p)
    assert run.qids == ("b", "a")
    assert run.ranked("b") == ["y", "x"]


def test_read_run_across_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_columns, "CHUNK", 64)
    monkeypatch.setattr(_columns, "FAST_CHUNK", 64)  # many small blocks, lines split across reads
    lines = [f"q{i // 7} Q0 d{i} {i % 7 + 1} {i * 0.5!r} t" for i in range(300)]
    lines.insert(100, "")
    p = _write(tmp_path / "r.txt", "\n".join(lines) + "\n")
    run = read_run(p)
    assert run.n_entries == 300
    assert run["q3"]["d21"] == 10.5
    bad = list(lines)
    bad[250] = "q1 Q0 dX 1 nan t"
    _write(p, "\n".join(bad) + "\n")
    with pytest.raises(DataFormatError) as e:
        read_run(p)
    assert e.value.line == 251 and f"{p}:251" in str(e.value)


def test_read_run_is_fast(tmp_path: Path) -> None:
    n = 300_000
    rng = np.random.default_rng(0)
    scores = rng.random(n) * 10
    text = "".join(f"q{i // 1000} Q0 d{i % 1000} {i % 1000 + 1} {s!r} t\n" for i, s in enumerate(scores.tolist()))
    p = _write(tmp_path / "big.txt", text)
    t0 = time.perf_counter()
    run = read_run(p)
    elapsed = time.perf_counter() - t0
    assert run.n_entries == n and len(run) == n // 1000
    assert elapsed < 6.0, f"read_run took {elapsed:.1f}s for {n} lines"


# --------------------------------------------------------------------------- errors


def _error(path: Path, fn=read_run) -> DataFormatError:
    with pytest.raises(DataFormatError) as e:
        fn(path)
    return e.value


def test_qrels_wrong_field_count(tmp_path: Path) -> None:
    p = _write(tmp_path / "qrels.txt", "q1 0 d1 1\nq1 0 d2\n")
    err = _error(p, read_qrels)
    assert err.line == 2 and err.path == str(p)
    assert f"{p}:2" in str(err)
    assert "4 whitespace-separated fields 'qid iter docid grade'" in str(err)
    assert "q1 0 d2" in err.found


def test_qrels_non_integer_grade(tmp_path: Path) -> None:
    p = _write(tmp_path / "qrels.txt.gz", "q1 0 d1 1\n\nq1 0 d2 1.5\n")
    err = _error(p, read_qrels)
    assert err.line == 3 and f"{p}:3" in str(err) and "integer" in str(err) and "1.5" in str(err)


def test_qrels_duplicate_pair_names_both_lines(tmp_path: Path) -> None:
    p = _write(tmp_path / "qrels.txt", "q1 0 d1 1\nq2 0 d1 1\nq1 0 d1 2\n")
    err = _error(p, read_qrels)
    assert isinstance(err, DuplicateIdError)
    assert err.line == 3 and f"{p}:3" in str(err) and "line 1" in str(err) and "q1 d1" in str(err)


def test_run_wrong_field_count(tmp_path: Path) -> None:
    p = _write(tmp_path / "run.txt", "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0\nq1 Q0 d3 3 0.5 t x\n")
    err = _error(p)
    assert err.line == 2 and f"{p}:2" in str(err) and "6 whitespace-separated fields" in str(err)
    assert "q1 Q0 d2 2 1.0" in err.found


def test_run_compensating_field_counts_are_still_caught(tmp_path: Path) -> None:
    # 5 + 7 fields = 12: a flat count would not notice; the per-line count does.
    p = _write(tmp_path / "run.txt", "q1 Q0 d1 1 2.0\nt q1 Q0 d2 2 1.0 t\n")
    assert _error(p).line == 1


@pytest.mark.parametrize("bad", ["nan", "NaN", "inf", "-Infinity"])
def test_run_nan_or_infinite_score(tmp_path: Path, bad: str) -> None:
    p = _write(tmp_path / "run.txt", f"q1 Q0 d1 1 2.0 t\n\nq1 Q0 d2 2 {bad} t\n")
    err = _error(p)
    assert err.line == 3 and f"{p}:3" in str(err) and "finite" in str(err) and bad in str(err)


def test_run_non_numeric_score(tmp_path: Path) -> None:
    p = _write(tmp_path / "run.txt.gz", "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 high t\n")
    err = _error(p)
    assert err.line == 2 and f"{p}:2" in str(err) and "high" in str(err)


def test_run_duplicate_pair_names_both_lines(tmp_path: Path) -> None:
    p = _write(tmp_path / "run.txt", "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq2 Q0 d1 1 1.0 t\nq1 Q0 d2 3 0.5 t\n")
    err = _error(p)
    assert isinstance(err, DuplicateIdError)
    assert err.line == 4 and f"{p}:4" in str(err) and "first at line 2" in str(err)


def test_run_reports_the_earliest_duplicate(tmp_path: Path) -> None:
    # (q1, z) repeats at line 3, (q1, a) only at line 4: line 3 is reported.
    p = _write(tmp_path / "run.txt", "q1 Q0 z 1 2.0 t\nq1 Q0 a 2 1.0 t\nq1 Q0 z 3 0.5 t\nq1 Q0 a 4 0.1 t\n")
    err = _error(p)
    assert err.line == 3 and "first at line 1" in str(err)


def test_bad_utf8_names_the_line(tmp_path: Path) -> None:
    p = tmp_path / "qrels.txt"
    p.write_bytes(b"q1 0 d1 1\nq1 0 d\xff 1\n")
    err = _error(p, read_qrels)
    assert err.line == 2 and "UTF-8" in str(err)


def test_missing_file_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FinegrainError) as e:
        read_run(tmp_path / "nope.trec")
    assert "nope.trec" in str(e.value) and "not found" in str(e.value)


def test_write_refuses_ids_with_whitespace(tmp_path: Path) -> None:
    with pytest.raises(FinegrainError, match="whitespace"):
        write_run(Run.from_dict({"q 1": {"d": 1.0}}), tmp_path / "r")
    with pytest.raises(FinegrainError, match="whitespace"):
        write_run(Run.from_dict({"q": {"d": 1.0}}), tmp_path / "r", tag="my tag")
    with pytest.raises(FinegrainError, match="whitespace"):
        write_qrels(Qrels.from_dict({"q": {"d\t2": 1}}), tmp_path / "q")


def test_error_messages_are_one_line(tmp_path: Path) -> None:
    p = _write(tmp_path / "run.txt", "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0\n")
    assert "\n" not in str(_error(p))
