"""The fast paths of the BEIR qrels reader (read_qrels_tsv, read_beir) against its line reader.

Every test runs twice: with the compiled tokenizer (``finegrain._native``, where it is built) and with the
numpy one (what an install without a C compiler runs).

Properties protected:
- the fast path and the line reader accept the same files with the same qrels and refuse the same files
  with the same one error (file, line, value, fix), across block boundaries (hypothesis over a grammar of
  good and broken lines: headers, CRLF, spaces in ids, lines split on spaces, bad grades, bad ids, NUL);
- read_beir takes the fast path and still names the line of a query or document the folder lacks;
- a plain file never reaches the line reader.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from finegrain.errors import FinegrainError
from finegrain.io import _columns, beir
from finegrain.io.beir import read_beir, read_qrels_tsv
from native_paths import both_paths
from table_outcomes import blocks_of, outcome

tokenizer = both_paths(_columns)  # which fast path reads: the compiled one, or numpy's

IDS = [b"q1", b"d1", b"q 1", b" d2 ", b"doc-0000001234", "文档".encode(), b"#x", b"d\x01", b"\xff", b"a" * 300,
       b"x\x00", b"", b" ", "a\u2028b".encode(), b"d\r"]
GRADES = [b"0", b"1", b"-1", b"+2", b"007", b" 1", b"1 ", b"1.5", b"9223372036854775807", b"9223372036854775808",
          b"123456789012345678", b"x", b"-", b"", "２".encode(), b"score"]


@st.composite
def tsv_files(draw) -> bytes:
    lines = []
    if draw(st.booleans()):
        lines.append(draw(st.sampled_from([b"query-id\tcorpus-id\tscore", b"qid\tdocid\trelevance", b"q d score",
                                           b"q\td\t1x"])))
    for i in range(draw(st.integers(0, 12))):
        if draw(st.integers(0, 3)) == 0:
            q, d = draw(st.sampled_from(IDS)), draw(st.sampled_from(IDS))
        else:
            q, d = b"q%d" % (i // 3), draw(st.sampled_from([b"d%d" % i, "文档 %d".encode() % i]))
        g = draw(st.sampled_from(GRADES if draw(st.integers(0, 4)) == 0 else GRADES[:3]))
        kind = draw(st.sampled_from(["plain"] * 20 + ["blank", "spaces", "short", "long", "cr"]))
        if kind == "blank":
            lines.append(draw(st.sampled_from([b"", b"  ", b"\t\t", b"\r"])))
            continue
        fields = [q, d, g][: 2 if kind == "short" else 3] + ([b"x"] if kind == "long" else [])
        line = (b" " if kind == "spaces" else b"\t").join(fields)
        lines.append(line + (b"\r" if kind == "cr" else b""))
    data = b"\n".join(lines) + draw(st.sampled_from([b"\n", b"", b"\r\n"]))
    return (b"\xef\xbb\xbf" if draw(st.integers(0, 9)) == 0 else b"") + data


_DIR = Path(tempfile.mkdtemp(prefix="fast-tsv-"))


@settings(max_examples=400, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=tsv_files(), chunk=st.sampled_from([None, 7, 40]))
def test_tsv_reader_agrees_with_the_line_reader(data: bytes, chunk: int | None) -> None:
    path = _DIR / "qrels.tsv"
    path.write_bytes(data)
    with blocks_of(chunk):
        assert outcome(read_qrels_tsv, path) == outcome(beir._read_qrels_tsv_lines, path)


PLAIN = "query-id\tcorpus-id\tscore\r\n" + "".join(f"q {i // 9}\td{(i * 7) % 40}-文档\t{i % 4 - 1}\r\n" for i in range(500))


@pytest.mark.parametrize("chunk", [None, 64])
def test_plain_files_never_reach_the_line_reader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  chunk: int | None) -> None:
    if chunk is not None:
        monkeypatch.setattr(_columns, "FAST_CHUNK", chunk)
    path = tmp_path / "qrels.tsv"
    path.write_text(PLAIN, encoding="utf-8")
    expected = outcome(beir._read_qrels_tsv_lines, path)

    def slow(*args: object) -> None:
        raise AssertionError("a plain file went to the line reader")

    monkeypatch.setattr(beir, "iter_qrels_tsv", slow)
    assert outcome(read_qrels_tsv, path) == expected


def _folder(root: Path, qrels: str) -> Path:
    root.mkdir()
    (root / "corpus.jsonl").write_text('{"_id": "d1", "text": "a"}\n{"_id": "d 2", "text": "b"}\n', encoding="utf-8")
    (root / "queries.jsonl").write_text('{"_id": "q1", "text": "x"}\n{"_id": "q2", "text": "y"}\n', encoding="utf-8")
    (root / "qrels.tsv").write_text(qrels, encoding="utf-8")
    return root


def test_read_beir_takes_the_fast_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _folder(tmp_path / "b", "query-id\tcorpus-id\tscore\nq2\td 2\t1\nq1\td1\t0\n")
    monkeypatch.setattr(beir, "iter_qrels_tsv", lambda *a: pytest.fail("the line reader read a plain file"))
    _, queries, qrels = read_beir(root)
    assert list(queries) == ["q1", "q2"] and qrels.to_dict() == {"q1": {"d1": 0}, "q2": {"d 2": 1}}


@pytest.mark.parametrize("qrels, line, value, folder_only", [
    ("q1\td1\t1\nq3\td1\t1\n", 2, "q3", True),
    ("q1\td1\t1\nq2\td3\t1\n", 2, "d3", True),
    ("q1\td1\t1\nq2\td1\tx\n", 2, "'x'", False),
    ("q1\td1\t1\nq1\td1\t2\n", 2, "q1 d1", False),
])
def test_an_error_is_one_line_naming_the_line(tmp_path: Path, qrels: str, line: int, value: str,
                                              folder_only: bool) -> None:
    root = _folder(tmp_path / "b", qrels)
    reads = [lambda: read_beir(root)] + ([] if folder_only else [lambda: read_qrels_tsv(root / "qrels.tsv")])
    for read in reads:
        with pytest.raises(FinegrainError) as e:
            read()
        message = str(e.value)
        assert f"qrels.tsv:{line}" in message and value in message and "Traceback" not in message
