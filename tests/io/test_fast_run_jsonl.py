"""The fast paths of the run.jsonl reader against its line-by-line json reader.

Every test runs twice: with the compiled reader (``finegrain._native``, where it is built) and with the
numpy one (what an install without a C compiler runs).

Properties protected:
- the fast path and the json reader accept the same files with the same run and refuse the same files with
  the same one error (file, line, value, fix), across block boundaries (hypothesis over lines written as
  write_run_jsonl writes them and broken ones: other spacing, escapes, JSON numbers C reads but JSON does
  not (``+1``, ``01``, ``.5``, ``1.``), ``-0``, big integers, ``Infinity``, duplicates, bad ids);
- a file written by write_run_jsonl never reaches the json reader.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from finegrain.errors import FinegrainError
from finegrain.io import _columns, run_jsonl
from finegrain.io.run_jsonl import read_run_jsonl, write_run_jsonl
from finegrain.types import Run
from native_paths import both_paths
from table_outcomes import blocks_of, outcome

tokenizer = both_paths(_columns)  # which fast path reads: the compiled one, or numpy's

HEADERS = [b'{"format": "finegrain.run/1", "name": "bm25"}', b'{"format": "finegrain.run/1"}',
           b'{"name": "x", "format": "finegrain.run/1"}', b'{"format": "finegrain.run/2", "name": "x"}',
           b'{"format": "finegrain.run/1", "name": ""}', b'{"format": "finegrain.run/1", "name": "a\\u00e9"}',
           b'{"format": "finegrain.run/1", "name": 3}', b"", b"[1]"]
NUMBERS = [b"1.5", b"0", b"-0", b"-0.0", b"12", b"0.35000000000000003", b"1e5", b"1E-5", b"-2.5e+3",
           b"123456789012345678901234567890", b"1" * 400, b"9007199254740993", b"+1", b"01", b".5", b"1.", b"1.e5",
           b"-", b"Infinity", b"-Infinity", b"NaN", b"1e400", b"true", b'"1"', b"0x10", b"1_0", b"1 ", b"- 1"]
IDS = [b'"d1"', b'"q 1"', '"文档"'.encode(), b'"IMG\\t2.jpg"', b'""', b'" "', b'"\\ud800"', b'"a\\"b"', b"1",
       b"null", b'"' + b"x" * 300 + b'"', b'"d\x01"', b'"\xff"']


def _result(draw, j: int) -> bytes:
    """A ``[doc, score]`` pair: mostly a new document and a plain number, so that one odd value is often the
    only odd thing in its file."""
    doc = draw(st.sampled_from(IDS)) if draw(st.integers(0, 7)) == 0 else b'"d%d"' % j
    num = draw(st.sampled_from(NUMBERS if draw(st.integers(0, 5)) == 0 else NUMBERS[:6]))
    sep = b", " if draw(st.integers(0, 15)) else draw(st.sampled_from([b",", b" , ", b", \t"]))
    return b"[" + doc + sep + num + b"]"


@st.composite
def jsonl_files(draw) -> bytes:
    lines = [draw(st.sampled_from(HEADERS if draw(st.integers(0, 4)) == 0 else HEADERS[:1]))]
    for i in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(["plain"] * 20 + ["blank", "keys", "spaces", "extra", "cr", "not-json"]))
        if kind == "blank":
            lines.append(draw(st.sampled_from([b"", b"  ", b"\r"])))
            continue
        if kind == "not-json":
            lines.append(draw(st.sampled_from([b'{"qid": "q", "results": [["d", 1]]', b"[]", b"{}", b"1, 2"])))
            continue
        qid = draw(st.sampled_from(IDS)) if draw(st.integers(0, 7)) == 0 else b'"q%d"' % i
        results = b", ".join(_result(draw, j) for j in range(draw(st.integers(0, 4))))
        line = b'{"qid": ' + qid + b', "results": [' + results + b"]}"
        if kind == "keys":
            line = b'{"results": [' + results + b'], "qid": ' + qid + b"}"
        if kind == "spaces":
            line = line.replace(b": ", b":", 1)
        if kind == "extra":
            line = line[:-1] + b', "x": 1}'
        lines.append(line + (b"\r" if kind == "cr" else b""))
    data = b"\n".join(lines) + draw(st.sampled_from([b"\n", b""]))
    return (b"\xef\xbb\xbf" if draw(st.integers(0, 9)) == 0 else b"") + data


_DIR = Path(tempfile.mkdtemp(prefix="fast-jsonl-"))


@settings(max_examples=500, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=jsonl_files(), chunk=st.sampled_from([None, 7, 60]))
def test_jsonl_reader_agrees_with_the_json_reader(data: bytes, chunk: int | None) -> None:
    path = _DIR / "run.jsonl"
    path.write_bytes(data)
    with blocks_of(chunk):
        assert outcome(read_run_jsonl, path) == outcome(lambda p: run_jsonl._read_run_jsonl_lines(p, None), path)


@pytest.mark.parametrize("chunk", [None, 64])
def test_written_runs_never_reach_the_json_reader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  chunk: int | None) -> None:
    if chunk is not None:
        monkeypatch.setattr(_columns, "FAST_CHUNK", chunk)
    run = Run.from_dict({f"q {i}": {f"文档 {(i * 7 + j) % 40}": (j % 5) * 0.25 - i for j in range(i % 6)}
                         for i in range(200)}, name="bm25 okapi")
    path = write_run_jsonl(run, tmp_path / "run.jsonl")
    expected = outcome(lambda p: run_jsonl._read_run_jsonl_lines(p, None), path)
    monkeypatch.setattr(run_jsonl, "_read_run_jsonl_lines", lambda *a: pytest.fail("a written run went to json"))
    assert outcome(read_run_jsonl, path) == expected
    assert read_run_jsonl(path) == run


@pytest.mark.parametrize("line, value", [
    (b'{"qid": "q1", "results": [["d1", 1.5], ["d1", 2]]}', "d1"),
    (b'{"qid": "q1", "results": [["d1", 01]]}', "JSON"),
    (b'{"qid": "q1", "results": [["d1", NaN]]}', "NaN"),
    (b'{"qid": "", "results": [["d1", 1]]}', "query id"),
])
def test_an_error_is_one_line_naming_the_line(tmp_path: Path, line: bytes, value: str) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(b'{"format": "finegrain.run/1", "name": "x"}\n{"qid": "q0", "results": [["d1", 1]]}\n' + line + b"\n")
    with pytest.raises(FinegrainError) as e:
        read_run_jsonl(path)
    message = str(e.value)
    assert "run.jsonl:3" in message and value in message and "Traceback" not in message


@pytest.mark.parametrize("value", NUMBERS + [b"[" + i + b", 1]" for i in IDS])
def test_every_number_and_id_reads_as_the_json_reader_reads_it(tmp_path: Path, value: bytes) -> None:
    pair = value if value.startswith(b"[") else b'["d1", ' + value + b"]"
    path = tmp_path / "run.jsonl"
    path.write_bytes(b'{"format": "finegrain.run/1", "name": "x"}\n{"qid": "q0", "results": [["d0", 1.5], '
                     + pair + b"]}\n")
    assert outcome(read_run_jsonl, path) == outcome(lambda p: run_jsonl._read_run_jsonl_lines(p, None), path)


def test_a_header_nested_past_the_parser_is_one_error_line(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"[" * 100_000 + b"\n")
    with pytest.raises(FinegrainError) as e:
        read_run_jsonl(path)
    assert "run.jsonl:1" in str(e.value) and "nested" in str(e.value)
