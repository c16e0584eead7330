"""Text that enters is valid, and bounded: lone surrogates, bytes that are not UTF-8, over-long lines and
over-large JSON documents are one DataFormatError naming the file and line; files are written whole or not at all.

The limits are module constants (finegrain.io._lines.MAX_LINE_BYTES, MAX_DOCUMENT_BYTES); the tests
lower them with monkeypatch so the over-long inputs stay small.
"""

from __future__ import annotations

import gzip
import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from finegrain.build.pool_file import read_pool
from finegrain.cli.main import main
from finegrain.errors import DataFormatError, FinegrainError
from finegrain.io import _columns, _lines
from finegrain.io._lines import iter_jsonl, open_text_write, parse_json, read_json
from finegrain.io.beir import read_corpus, read_qrels_tsv
from finegrain.io.idlist import read_ids
from finegrain.io.run_jsonl import read_run_jsonl
from finegrain.io.trec import read_qrels, read_run

CUT = "the text holds a cut character (lone surrogate \\ud83d); re-export the file as valid UTF-8"


def _w(path: Path, data: str | bytes) -> Path:
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


# --------------------------------------------------------------------------- lone surrogates


def test_a_cut_emoji_in_a_json_line_is_refused_with_the_line_and_the_fix(tmp_path: Path) -> None:
    p = _w(tmp_path / "corpus.jsonl", '{"_id": "d1", "text": "ok"}\n{"_id": "d2", "text": "a cat \\ud83d"}\n')
    with pytest.raises(DataFormatError) as e:
        list(iter_jsonl(p))
    assert e.value.line == 2 and str(e.value).startswith(f"{p}:2: expected valid UTF-8 text")
    assert e.value.hint == CUT


@pytest.mark.parametrize("doc", [
    '{"a": 1,\n "k\\ud83d": 2}',  # an object key
    '[1,\n [[{"x": ["\\uD83D"]}]]]',  # upper-case hex, nested
    '{"a":\n "\\ud83dx"}',  # a high surrogate not followed by a low one
    '{"a":\n "x\\ude00"}',  # a low surrogate alone
    '{"a":\n "\\ude00\\ud83d"}',  # both halves, in the wrong order
])
def test_a_whole_json_document_names_the_line_of_the_escape(tmp_path: Path, doc: str) -> None:
    p = _w(tmp_path / "doc.json", doc)
    with pytest.raises(DataFormatError) as e:
        read_json(p)
    assert e.value.line == 2 and "lone surrogate" in (e.value.hint or "")


def test_paired_surrogates_and_escaped_backslashes_are_text(tmp_path: Path) -> None:
    p = _w(tmp_path / "ok.json", '{"emoji": "\\ud83d\\ude00", "literal": "\\\\ud83d", "\\uD83D\\uDE00": 1}')
    data, _ = read_json(p)
    assert data == {"emoji": "😀", "literal": "\\ud83d", "😀": 1}


def test_a_surrogate_at_the_bottom_of_deep_nesting_is_an_error_not_a_recursion_error() -> None:
    depth = 900
    with pytest.raises(DataFormatError, match="valid UTF-8"):
        parse_json("x.json", None, "[" * depth + '"\\udc80"' + "]" * depth)


# any character, surrogates included (hypothesis leaves them out of st.characters())
_chars = st.one_of(st.characters(), st.integers(0xD800, 0xDFFF).map(chr))
_json_values = st.recursive(
    st.none() | st.integers() | st.text(alphabet=_chars, max_size=4),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(alphabet=_chars, max_size=3), kids, max_size=3),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(_json_values)
def test_json_is_read_exactly_when_every_string_is_text(value: Any) -> None:
    text = json.dumps(value)  # ASCII: every surrogate escaped (and a high-low pair reads back as one character)
    meaning = json.loads(text)
    try:
        json.dumps(meaning, ensure_ascii=False).encode("utf-8")
        valid = True
    except UnicodeEncodeError:
        valid = False
    if valid:
        assert parse_json("v.json", 1, text) == meaning
    else:
        with pytest.raises(DataFormatError, match="valid UTF-8 text"):
            parse_json("v.json", 1, text)


def test_readers_of_runs_and_pools_refuse_a_lone_surrogate(tmp_path: Path) -> None:
    run = _w(tmp_path / "run.jsonl", '{"format": "finegrain.run/1", "name": "a"}\n'
             '{"qid": "q1", "results": [["d\\ud83d", 2.0], ["d2", 1.0]]}\n')
    with pytest.raises(DataFormatError, match=r"run.jsonl:2: expected valid UTF-8"):
        read_run_jsonl(run)
    pool = _w(tmp_path / "pool.jsonl", '{"schema": "finegrain.pool/1", "depth": 1, "systems": ["a"]}\n'
              '{"query": "q1", "text": "purple \\udc00flower"}\n')
    with pytest.raises(DataFormatError, match=r"pool.jsonl:2: expected valid UTF-8"):
        read_pool(pool)


@pytest.mark.parametrize("command", [["pool", "--depth", "5", "-o"], ["fuse", "-o"]])
def test_cli_with_a_cut_character_in_a_run_is_one_error_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    a = _w(tmp_path / "a.jsonl", '{"format": "finegrain.run/1", "name": "a"}\n'
           '{"qid": "q1", "results": [["d\\ud83d", 2.0], ["d2", 1.0]]}\n')
    b = _w(tmp_path / "b.trec", "q1 Q0 d2 1 3.0 b\n")
    out = tmp_path / "out"
    code = main([command[0], str(a), str(b), *command[1:], str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith(f"error: {a}:2: expected valid UTF-8 text")
    assert "re-export the file as valid UTF-8" in err[0]
    assert not out.exists()


# --------------------------------------------------------------------------- bytes that are not UTF-8


def test_bad_bytes_in_a_whole_json_document_name_their_line(tmp_path: Path) -> None:
    p = _w(tmp_path / "doc.json", b'{"a": 1,\n "b": 2,\n "c": "caf\xe9"}\n')
    with pytest.raises(DataFormatError) as e:
        read_json(p)
    assert e.value.line == 3 and "UTF-8" in str(e.value) and "\\xe9" in (e.value.hint or "")


def test_bad_bytes_far_into_a_long_line_are_shown(tmp_path: Path) -> None:
    p = _w(tmp_path / "q.tsv", b"query-id\tcorpus-id\tscore\nq1\t" + b"d" * 300 + b"\xff\t1\n")
    with pytest.raises(DataFormatError) as e:
        read_qrels_tsv(p)
    assert e.value.line == 2 and "\\xff" in str(e.value)


def test_a_run_tag_that_is_not_utf8_names_its_line(tmp_path: Path) -> None:
    p = _w(tmp_path / "run", b"\n\nq1 Q0 d1 1 2.0 t\xff\n")
    with pytest.raises(DataFormatError) as e:
        read_run(p)
    assert e.value.line == 3 and "UTF-8" in str(e.value)


# --------------------------------------------------------------------------- bounded lines


LIMIT = 64


@pytest.fixture
def small_lines(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(_lines, "MAX_LINE_BYTES", LIMIT)
    return LIMIT


def _too_long(reader: Any, path: Path, line: int) -> None:
    with pytest.raises(DataFormatError) as e:
        reader(path)
    assert e.value.line == line, str(e.value)
    assert f"expected a line of at most {LIMIT} bytes, found 'a line of more than {LIMIT} bytes'" in str(e.value)


def test_a_line_at_the_limit_is_read_and_one_byte_more_is_refused(tmp_path: Path, small_lines: int) -> None:
    head = "q1 0 d1 1\n"
    at = "q1 0 " + "d" * (LIMIT - 7) + " 1"
    assert len(at) == LIMIT
    assert len(read_qrels(_w(tmp_path / "ok", head + at + "\n"))["q1"]) == 2
    assert len(read_qrels(_w(tmp_path / "ok-eof", head + at))["q1"]) == 2  # no line end at the end of the file
    over = "q1 0 " + "d" * (LIMIT - 6) + " 1"
    _too_long(read_qrels, _w(tmp_path / "bad", head + over + "\n"), 2)
    _too_long(read_qrels, _w(tmp_path / "bad-eof", head + over), 2)


@pytest.mark.parametrize("chunk", [16, 1 << 20])  # a line over many blocks; a line inside one block
def test_the_fast_run_reader_bounds_lines_too(tmp_path: Path, small_lines: int, monkeypatch: pytest.MonkeyPatch,
                                             chunk: int) -> None:
    monkeypatch.setattr(_columns, "CHUNK", chunk)
    monkeypatch.setattr(_columns, "FAST_CHUNK", chunk)
    good = "".join(f"q1 Q0 d{i} {i} 1.0 t\n" for i in range(1, 6))
    assert len(read_run(_w(tmp_path / "ok", good))["q1"]) == 5
    long_line = "q2 Q0 " + "d" * LIMIT + " 1 1.0 t\n"
    _too_long(read_run, _w(tmp_path / "mid", good + long_line + good.replace("q1", "q3")), 6)
    _too_long(read_run, _w(tmp_path / "end", good + long_line.rstrip("\n")), 6)


def test_every_line_reader_bounds_lines(tmp_path: Path, small_lines: int) -> None:
    pad = "x" * (LIMIT + 1)
    _too_long(read_qrels_tsv, _w(tmp_path / "q.tsv", f"query-id\tcorpus-id\tscore\nq1\t{pad}\t1\n"), 2)
    _too_long(read_ids, _w(tmp_path / "ids.txt", f"a\nb\n{pad}\n"), 3)
    _too_long(lambda p: list(read_corpus(p).values()),
              _w(tmp_path / "corpus.jsonl", '{"_id": "d1", "text": "x"}\n' + json.dumps({"_id": "d2", "text": pad}) + "\n"), 2)
    _too_long(read_run_jsonl, _w(tmp_path / "run.jsonl", '{"format": "finegrain.run/1"}\n'
                                 + json.dumps({"qid": "q", "results": [[pad, 1.0]]}) + "\n"), 2)
    gz = tmp_path / "qrels.gz"
    gz.write_bytes(gzip.compress(f"q1 0 d1 1\nq1 0 {pad} 1\n".encode(), mtime=0))
    _too_long(read_qrels, gz, 2)


def test_an_endless_line_is_refused_in_bounded_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_lines, "MAX_LINE_BYTES", 1024)
    monkeypatch.setattr(_columns, "CHUNK", 4096)
    monkeypatch.setattr(_columns, "FAST_CHUNK", 4096)
    p = _w(tmp_path / "blob", b"x" * (4 << 20))  # 4 MB without a line end
    for reader in (read_qrels, read_run, read_ids):
        tracemalloc.start()
        with pytest.raises(DataFormatError, match="a line of more than 1,024 bytes"):
            reader(p)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < 512 << 10, (reader.__name__, peak)  # never the whole 4 MB line


# --------------------------------------------------------------------------- bounded JSON documents


def test_a_json_document_over_the_limit_is_refused_before_it_is_parsed(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_lines, "MAX_DOCUMENT_BYTES", 100)
    doc = json.dumps({"k": "v" * 80})
    assert len(doc) <= 100 and read_json(_w(tmp_path / "ok.json", doc))[0] == {"k": "v" * 80}
    big = json.dumps({"k": "v" * 100})
    for p in (_w(tmp_path / "big.json", big), _w(tmp_path / "big.json.gz", gzip.compress(big.encode(), mtime=0))):
        with pytest.raises(DataFormatError, match="expected a document of at most 100 bytes, found 'more than 100 bytes'"):
            read_json(p)


# --------------------------------------------------------------------------- writing whole or not at all


@pytest.mark.parametrize("name", ["out.txt", "out.txt.gz"])
def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path, name: str) -> None:
    p = tmp_path / name
    with open_text_write(p) as f:
        f.write("old\n")
    old = p.read_bytes()
    with pytest.raises(RuntimeError), open_text_write(p) as f:
        f.write("new\n" * 1000)
        raise RuntimeError("killed half-way")
    assert p.read_bytes() == old and sorted(tmp_path.iterdir()) == [p]
    with pytest.raises(FinegrainError, match=r"cannot write .*lone surrogate \\udc80"), open_text_write(p) as f:
        f.write("fine\n")
        f.write("cut \udc80\n")
    assert p.read_bytes() == old and sorted(tmp_path.iterdir()) == [p]


def test_gzip_output_is_the_same_bytes_every_time(tmp_path: Path) -> None:
    outs = []
    for i in range(2):
        with open_text_write(tmp_path / f"{i}.gz") as f:
            f.write("q1 0 d1 1\n文档\n")
        outs.append((tmp_path / f"{i}.gz").read_bytes())
    assert outs[0] == outs[1] and gzip.decompress(outs[0]).decode() == "q1 0 d1 1\n文档\n"
