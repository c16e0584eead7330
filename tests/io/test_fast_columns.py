"""The fast paths of the TREC readers (finegrain.io._columns) against their line-by-line readers.

Every test runs twice: with the compiled tokenizer (``finegrain._native``, where it is built) and with the
numpy one (what an install without a C compiler runs).

Properties protected:
- the fast path and the line-by-line reader accept the same files with the same columns and refuse
  the same files with the same one error (file, line, value, fix), in both reading modes and across
  block boundaries (hypothesis over a grammar of good and broken lines);
- a plain file never reaches the line-by-line reader (the speed: no Python object per line);
- ids are interned exactly: a hash collision between two ids is a decline, never a merge, both for
  file columns and for ``Qrels``/``Run.from_dict``; pyarrow's interning of large tables gives the
  vocabulary and codes ``dict.fromkeys`` gives (what Arrow may not decide: tests/core/test_arrow_ids.py).
"""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from finegrain import arrow_ids, types
from finegrain.errors import FinegrainError
from finegrain.io import _columns, trec
from finegrain.io._columns import Decline, distinct_rows
from finegrain.io.trec import read_qrels, read_run
from finegrain.types import Qrels, Run
from native_paths import both_paths
from table_outcomes import blocks_of, outcome

IDS = [b"q1", b"q2", b"d1", b"d2", b"doc-0000001234", "文档".encode(), "é".encode(), b"#x", b"d\x01", b"\xff",
       b"a" * 300, b"x\x00"]
SCORES = [b"1", b"0.5", b"-2.25e3", b"12.3456", b"0x1p-2", b"nan", b"1_0", b"inf", b"1e999", b".5", b"5.", b"+1",
          b"--1", b"\xd9\xa3", b"1e-400", b"0.1000000000000000055511151231257827021181583404541015625"]
GRADES = [b"0", b"1", b"-1", b"+2", b"007", b"1.5", b"9223372036854775807", b"9223372036854775808",
          b"-9223372036854775808", b"123456789012345678", b"x", b"-", "２".encode()]
SEPS = [b" ", b"\t", b"  ", b" \x0b", b"\x0c", b"\r "]


tokenizer = both_paths(_columns, types)  # which fast path reads: the compiled one, or numpy's


def _line(draw, fields: list[bytes]) -> bytes:
    kind = draw(st.sampled_from(["plain"] * 30 + ["blank", "comment", "lead", "short", "long", "cr"]))
    if kind == "blank":
        return draw(st.sampled_from([b"", b"  ", b"\t", b"\r"]))
    if kind == "comment":
        return draw(st.sampled_from([b"# a comment", b"  # indented", b"#"]))
    if kind == "short":
        fields = fields[:-1]
    if kind == "long":
        fields = [*fields, b"extra"]
    line = fields[0]
    for f in fields[1:]:
        line += draw(st.sampled_from(SEPS)) + f
    if kind == "lead":
        line = b" " + line
    if kind == "cr":
        line += b"\r"
    return line


def _ids(draw, i: int) -> tuple[bytes, bytes]:
    """A (query id, document id) pair: mostly distinct, well-formed pairs, so that a line with an odd
    number or id is often the only odd thing in its file; sometimes any id of IDS."""
    if draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(IDS)), draw(st.sampled_from(IDS))
    return b"q%d" % (i // 3), draw(st.sampled_from([b"d%d" % i, "文档%d".encode() % i, b"doc-%020d" % i]))


def _pick(draw, values: list[bytes], plain: int) -> bytes:
    return draw(st.sampled_from(values[:plain] if draw(st.integers(0, 4)) else values))


@st.composite
def run_files(draw) -> bytes:
    lines = []
    for i in range(draw(st.integers(0, 12))):
        q, d = _ids(draw, i)
        lines.append(_line(draw, [q, b"Q0", d, b"1", _pick(draw, SCORES, 4), draw(st.sampled_from([b"t", b"t2"]))]))
    return _file(draw, lines)


@st.composite
def qrels_files(draw) -> bytes:
    lines = []
    for i in range(draw(st.integers(0, 12))):
        q, d = _ids(draw, i)
        lines.append(_line(draw, [q, b"0", d, _pick(draw, GRADES, 5)]))
    return _file(draw, lines)


def _file(draw, lines: list[bytes]) -> bytes:
    data = b"\n".join(lines) + draw(st.sampled_from([b"\n", b""]))
    return (b"\xef\xbb\xbf" if draw(st.integers(0, 9)) == 0 else b"") + data


_DIR = Path(tempfile.mkdtemp(prefix="fast-columns-"))
_SLOW_RUN = {False: lambda p: trec._read_run_blocks(p, None, False, False),
             True: lambda p: trec._read_run_blocks(p, None, True, False)}
_SLOW_QRELS = {False: lambda p: trec._read_qrels_lines(p, False), True: lambda p: trec._read_qrels_lines(p, True)}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=run_files(), compat=st.booleans(), chunk=st.sampled_from([None, 7, 40]))
def test_run_reader_agrees_with_the_block_reader(data: bytes, compat: bool, chunk: int | None) -> None:
    path = _DIR / "run.txt"
    path.write_bytes(data)
    mode = "trec_eval" if compat else None
    with blocks_of(chunk):
        assert outcome(lambda p: read_run(p, compat=mode), path) == outcome(_SLOW_RUN[compat], path)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=qrels_files(), compat=st.booleans(), chunk=st.sampled_from([None, 7, 40]))
def test_qrels_reader_agrees_with_the_line_reader(data: bytes, compat: bool, chunk: int | None) -> None:
    path = _DIR / "qrels.txt"
    path.write_bytes(data)
    mode = "trec_eval" if compat else None
    with blocks_of(chunk):
        assert outcome(lambda p: read_qrels(p, compat=mode), path) == outcome(_SLOW_QRELS[compat], path)


# --------------------------------------------------------------------------- plain files stay on the fast path


PLAIN_RUN = "".join(f"q{i // 9}\tQ0 d{(i * 7) % 40}-文档 {i % 9 + 1} {-(i % 13) * 0.25!r} sys\r\n" for i in range(500))
PLAIN_QRELS = "".join(f"q{i // 9} 0 d{(i * 7) % 40}-é {i % 4 - 1}\n" for i in range(500)) + "\n"


@pytest.mark.parametrize("chunk", [None, 64])
def test_plain_files_never_reach_the_line_by_line_readers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          chunk: int | None) -> None:
    if chunk is not None:
        monkeypatch.setattr(_columns, "FAST_CHUNK", chunk)
    run_path, qrels_path = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run_path.write_text(PLAIN_RUN, encoding="utf-8")
    qrels_path.write_text("# judged by hand\n" + PLAIN_QRELS, encoding="utf-8")
    expected_run = trec._read_run_blocks(run_path, None, False, False)
    expected_qrels = trec._read_qrels_lines(qrels_path, True)

    def slow(*args: object) -> None:
        raise AssertionError("a plain file went to the line-by-line reader")

    monkeypatch.setattr(trec, "_read_run_blocks", slow)
    monkeypatch.setattr(trec, "_read_qrels_lines", slow)
    run = read_run(run_path)
    qrels = read_qrels(qrels_path, compat="trec_eval")
    assert outcome(lambda p: run, run_path) == outcome(lambda p: expected_run, run_path)
    assert outcome(lambda p: qrels, qrels_path) == outcome(lambda p: expected_qrels, qrels_path)


@pytest.mark.parametrize("text, line", [
    ("q1 Q0 d1 1 1.0 t\nq1 Q0 d2 1 nan t\n", 2),
    ("q1 Q0 d1 1 1.0 t\n# note\n", 2),
    ("q1 Q0 d1 1 1.0 t\nq1 Q0 d1 2 2.0 t\n", 2),
    ("q1 Q0 d1 1 1.0 t\nq1 Q0 d2 1 t\n", 2),
    ("q1 Q0 d1 1 1.0 t\nq1 Q0 d\x012 1 2.0 t\n", 2),
])
def test_an_error_is_one_line_naming_the_line(tmp_path: Path, text: str, line: int) -> None:
    path = tmp_path / "run.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FinegrainError) as e:
        read_run(path)
    message = str(e.value)
    assert f"{path}:{line}" in message and "Traceback" not in message


@pytest.mark.parametrize("value", SCORES + GRADES)
def test_every_number_reads_as_the_line_reader_reads_it(tmp_path: Path, value: bytes) -> None:
    run_path, qrels_path = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run_path.write_bytes(b"q1 Q0 d0 1 1.5 t\nq1 Q0 d1 1 " + value + b" t\nq2 Q0 d1 1 2 t\n")
    qrels_path.write_bytes(b"q1 0 d0 1\nq1 0 d1 " + value + b"\nq2 0 d1 2\n")
    for compat in (False, True):
        mode = "trec_eval" if compat else None
        assert outcome(lambda p, m=mode: read_run(p, compat=m), run_path) == outcome(_SLOW_RUN[compat], run_path)
        assert outcome(lambda p, m=mode: read_qrels(p, compat=m), qrels_path) == outcome(_SLOW_QRELS[compat], qrels_path)


def test_hex_scores_and_long_grades_are_still_read(tmp_path: Path) -> None:
    run_path, qrels_path = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run_path.write_text("q1 Q0 d1 1 0x1p-2 t\n", encoding="utf-8")
    qrels_path.write_text("q1 0 d1 9223372036854775807\n", encoding="utf-8")
    assert read_run(run_path)["q1"]["d1"] == 0.25
    assert read_qrels(qrels_path)["q1"]["d1"] == 2**63 - 1


# --------------------------------------------------------------------------- exact interning


def test_a_hash_collision_between_two_ids_is_never_a_merge() -> None:
    k = int(_columns._K)
    # rows (0, K) and (1, 0) of two 8-byte words hash alike: 0 * K + K == 1 * K + 0
    words = np.array([[0, k], [1, 0], [0, k]], dtype="<u8")
    with pytest.raises(Decline):
        distinct_rows(words)
    first, inverse = distinct_rows(np.array([[0, k], [2, 0], [0, k]], dtype="<u8"))
    assert first.tolist() == [0, 1] and inverse.tolist() == [0, 1, 0]


class _Same:
    """A key whose hash every other key shares: only equality tells two apart."""

    def __init__(self, v: str) -> None:
        self.v = v

    def __hash__(self) -> int:
        return 7

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and other.v == self.v

    def __repr__(self) -> str:
        return self.v


def test_from_dict_keeps_ids_apart_when_their_hashes_collide() -> None:
    a, b, a2 = _Same("a"), _Same("b"), _Same("a")
    run = Run.from_dict({"q1": {a: 1.0, b: 2.0}, "q2": {a2: 3.0}})
    assert [x.v for x in run.vocab] == ["a", "b"]
    assert run.doc_codes.tolist() == [0, 1, 0]


def test_from_dict_keeps_the_first_of_equal_keys_in_order_of_first_appearance() -> None:
    qrels = Qrels.from_dict({"q1": {"d2": 1, "d1": 0}, "q2": {"d3": 2, "d2": 1}})
    assert qrels.vocab == ("d2", "d1", "d3")
    assert qrels.doc_codes.tolist() == [0, 1, 2, 0]


HAS_ARROW = importlib.util.find_spec("pyarrow") is not None
KEYS = st.lists(
    st.one_of(
        st.sampled_from(["d1", "d2", "d10", "文档", "é", "e\u0301", "", " ", "a\x00b", "\ud800", "\U0001f600"]),
        st.text(max_size=4),
        st.binary(max_size=2),
        st.integers(-2, 2),
        st.none(),
    ),
    max_size=30,
)


@settings(deadline=None)  # the first call imports pyarrow
@given(KEYS)
def test_arrow_interning_is_dict_interning_or_declines(keys: list[object]) -> None:
    expected_vocab = list(dict.fromkeys(keys))
    index = {k: i for i, k in enumerate(expected_vocab)}
    got = types._arrow_intern(keys)
    plain_text = keys and all(type(k) is str for k in keys) and not any(_has_surrogate(k) for k in keys)  # type: ignore[arg-type]
    if plain_text and HAS_ARROW:
        assert got is not None  # plain text always takes the C-level path
    if got is not None:
        vocab, codes = got
        assert vocab == expected_vocab and [type(v) for v in vocab] == [str] * len(vocab)
        assert codes.dtype == np.int64 and codes.tolist() == [index[k] for k in keys]
    vocab, codes = types._intern(keys)
    assert vocab == expected_vocab and codes.tolist() == [index[k] for k in keys]


def _has_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(c) <= 0xDFFF for c in text)


def test_from_dict_interns_large_tables_by_arrow_with_the_same_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(types, "NATIVE", None)  # the Python path's interning
    data = {f"q{i}": {f"d{(i * 7 + j) % 50}": float(j) for j in range(5)} for i in range(40)}
    small = Run.from_dict(data)
    monkeypatch.setattr(arrow_ids, "ARROW_MIN_IDS", 1)
    calls: list[int] = []
    real = types._arrow_intern
    monkeypatch.setattr(types, "_arrow_intern", lambda keys: calls.append(len(keys)) or real(keys))
    large = Run.from_dict(data)
    assert calls == [200]
    assert large.vocab == small.vocab and large.doc_codes.tolist() == small.doc_codes.tolist()
    assert large == small and large.to_dict() == small.to_dict()


WORD_ROWS = st.integers(1, 3).flatmap(
    lambda k: st.lists(st.lists(st.sampled_from([0, 1, 2**63, 2**64 - 1]), min_size=k, max_size=k), max_size=40)
)


@settings(deadline=None)  # the first call imports pyarrow
@given(WORD_ROWS)
def test_arrow_grouping_of_rows_is_the_word_by_word_grouping(rows: list[list[int]]) -> None:
    words = np.array(rows, dtype="<u8").reshape(len(rows), -1 if rows else 1)
    distinct = list(dict.fromkeys(map(tuple, rows)))
    first_of = {r: next(i for i, x in enumerate(rows) if tuple(x) == r) for r in distinct}
    saved = arrow_ids.ARROW_MIN_IDS
    arrow_ids.ARROW_MIN_IDS = 1
    try:
        first, inverse = distinct_rows(words)
    finally:
        arrow_ids.ARROW_MIN_IDS = saved
    assert first.tolist() == [first_of[r] for r in distinct]
    assert inverse.tolist() == [distinct.index(tuple(x)) for x in rows]


@given(st.lists(st.integers(0, 5), max_size=30))
def test_first_positions_finds_where_each_code_first_appears(labels: list[int]) -> None:
    codes = list(dict.fromkeys(labels))
    inverse = np.array([codes.index(x) for x in labels], dtype=np.int64)
    expected = [labels.index(c) for c in codes]
    assert _columns.first_positions(inverse).tolist() == expected


def test_files_read_the_same_when_arrow_groups_their_ids(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_columns, "NATIVE", None)  # the numpy path's grouping
    run_path, qrels_path = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run_path.write_text("".join(f"q{i % 7} Q0 d{(i * 5) % 11}-{i % 3} {i} {1.0 / (i + 1)} t\n" for i in range(60)))
    qrels_path.write_text("".join(f"q{i % 7} 0 d{i % 13} {i % 3}\n" for i in range(50)))
    before = (read_run(run_path), read_qrels(qrels_path))
    monkeypatch.setattr(arrow_ids, "ARROW_MIN_IDS", 1)
    calls: list[int] = []
    real = _columns.byte_rows
    monkeypatch.setattr(_columns, "byte_rows", lambda w: calls.append(len(w)) or real(w))
    after = (read_run(run_path), read_qrels(qrels_path))
    assert calls, "the Arrow grouping was not reached"
    for a, b in zip(before, after):
        assert a == b and a.vocab == b.vocab and a.doc_codes.tolist() == b.doc_codes.tolist()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from([b"ab", b"\n", b"\xef\xbb\xbf", b"c d\n", b"\xe6\x96\x87"]), max_size=30),
       st.integers(3, 9), st.booleans())
def test_blocks_are_the_file_cut_at_line_ends(tokenizer, parts, chunk, numbered) -> None:
    """Blocks put together are the file's bytes (its one leading byte-order mark dropped, no other: a mark
    at the start of a later read is text), each ends at a line end but the last, and a numbered block
    starts at its line's number; for any read size that holds the mark, counted or not."""
    data = b"".join(parts)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "f.txt"
        path.write_bytes(data)
        got = list(_columns.blocks(path, chunk, numbered=numbered))
    body = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    assert b"".join(block for _, block in got) == body
    assert all(block.endswith(b"\n") for _, block in got[:-1])
    seen = 1
    for number, block in got:
        assert number == (seen if numbered else 0)
        seen += block.count(b"\n")
