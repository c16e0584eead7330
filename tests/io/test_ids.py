"""The one id rule (finegrain.io.ids): what each format's writers refuse, its readers refuse too, naming the line.

A written file always reads back to the same ids; an id a format cannot hold
is refused before anything is written, with one error naming the id.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from finegrain.build.pool_file import Pool, PoolItem, read_pool, write_pool
from finegrain.errors import DataFormatError, FinegrainError
from finegrain.io.beir import read_corpus, read_qrels_tsv, write_beir
from finegrain.io.idlist import read_ids
from finegrain.io.ids import MAX_ID_CHARS, IdSyntax, first_bad_id, id_problem
from finegrain.io.run_jsonl import is_trec_safe, read_run_jsonl, write_run_jsonl
from finegrain.io.tables import read_table_file
from finegrain.io.trec import read_qrels, read_run, write_qrels, write_run
from finegrain.types import Corpus, Document, Qrels, Queries, Query, Run

LONG = "d" * (MAX_ID_CHARS + 1)


@pytest.mark.parametrize("value, token, tsv, json_ok", [
    ("d1", True, True, True),
    ("FBIS3-10082", True, True, True),
    ("文档#1", True, True, True),
    ("emoji📷", True, True, True),
    ("d" * MAX_ID_CHARS, True, True, True),
    (LONG, False, False, False),
    ("", False, False, False),
    ("   ", False, False, False),
    ("IMG 0001.jpg", False, True, True),
    ("ideo\u3000space", False, True, True),
    ("nbsp\u00a0x", False, True, True),
    ("a\tb", False, False, True),
    ("line\nbreak", False, False, True),
    ("ctrl\x01x", False, False, True),
    ("c1\x85x", False, False, True),
    ("del\x7fx", False, False, True),
    ("nul\x00x", False, False, True),
    ("sep\u2028x", False, False, True),
    ("cut\ud83d", False, False, False),
])
def test_the_rule_by_hand(value: str, token: bool, tsv: bool, json_ok: bool) -> None:
    assert (id_problem(value, IdSyntax.TOKEN) is None) is token
    assert (id_problem(value, IdSyntax.TSV_FIELD) is None) is tsv
    assert (id_problem(value, IdSyntax.JSON) is None) is json_ok
    # the fast path over many ids agrees with the rule one id at a time
    for syntax, ok in ((IdSyntax.TOKEN, token), (IdSyntax.TSV_FIELD, tsv), (IdSyntax.JSON, json_ok)):
        assert (first_bad_id(["a", value, "b"], syntax) is None) is ok


def test_a_query_id_opening_a_trec_line_may_not_start_with_a_byte_order_mark(tmp_path: Path) -> None:
    """U+FEFF is neither a space nor a control character, but at the start of a file every reader drops
    it as a byte-order mark: a qrels file whose first query id began with it was written and then read
    back wrong (or refused). The writers refuse it, naming it; inside an id, or not first, it is fine."""
    assert "U+FEFF" in (id_problem("\ufeffq", IdSyntax.TOKEN, first_field=True) or "")
    assert first_bad_id(["q1", "\ufeffq"], IdSyntax.TOKEN, first_field=True) is not None
    assert id_problem("q\ufeff", IdSyntax.TOKEN, first_field=True) is None
    assert id_problem("\ufeffd", IdSyntax.TOKEN) is None
    with pytest.raises(FinegrainError, match=r"query id '\\ufeffq' .* starts with U\+FEFF"):
        write_qrels(Qrels.from_dict({"\ufeffq": {"d": 1}}), tmp_path / "q.trec")
    with pytest.raises(FinegrainError, match="starts with U\\+FEFF"):
        write_run(Run.from_dict({"\ufeffq": {"d": 1.0}}), tmp_path / "r.trec")
    assert not list(tmp_path.iterdir())
    write_qrels(Qrels.from_dict({"q": {"\ufeffd": 1}}), tmp_path / "q.trec")
    assert read_qrels(tmp_path / "q.trec").to_dict() == {"q": {"\ufeffd": 1}}


def test_a_query_id_opening_a_trec_line_may_not_start_with_a_hash() -> None:
    assert id_problem("#q1", IdSyntax.TOKEN) is None
    assert "'#'" in (id_problem("#q1", IdSyntax.TOKEN, first_field=True) or "")
    assert first_bad_id(["q1", "#q2"], IdSyntax.TOKEN, first_field=True) == ("#q2", id_problem("#q2", IdSyntax.TOKEN,
                                                                                                first_field=True))


# --------------------------------------------------------------------------- writers and readers agree


# any character: surrogates (which st.characters() leaves out), controls and spaces are drawn often
_chars = st.one_of(st.characters(), st.integers(0xD800, 0xDFFF).map(chr), st.sampled_from("\t\n\r\x00\x01\x85 \u3000\u2028#\ufeff"))
_any_id = st.text(alphabet=_chars, min_size=0, max_size=8)
_id_lists = st.lists(st.one_of(_any_id, st.sampled_from(["q 1", "a\tb", "x\ny", "#h", "", " ", LONG, "ok"])),
                     min_size=1, max_size=4, unique=True)


@settings(max_examples=150, deadline=None)
@given(qids=_id_lists, docs=_id_lists)
def test_trec_run_writer_and_reader_share_the_rule(tmp_path_factory: pytest.TempPathFactory, qids: list[str],
                                                   docs: list[str]) -> None:
    run = Run.from_dict({q: {d: float(i) for i, d in enumerate(docs)} for q in qids}, name="t")
    path = tmp_path_factory.mktemp("trec") / "run.trec"
    writable = (all(id_problem(q, IdSyntax.TOKEN, first_field=True) is None for q in qids)
                and all(id_problem(d, IdSyntax.TOKEN) is None for d in docs))
    assert is_trec_safe(run) is writable
    if writable:
        write_run(run, path)
        assert read_run(path).to_dict() == run.to_dict()
    else:
        with pytest.raises(FinegrainError, match="cannot write"):
            write_run(run, path)
        assert not path.exists() and not list(path.parent.iterdir())


@settings(max_examples=150, deadline=None)
@given(qids=_id_lists, docs=_id_lists)
def test_beir_qrels_writer_and_reader_share_the_rule(tmp_path_factory: pytest.TempPathFactory, qids: list[str],
                                                     docs: list[str]) -> None:
    qrels = Qrels.from_dict({q: {d: 1 for d in docs} for q in qids})
    root = tmp_path_factory.mktemp("beir")
    corpus = Corpus(Document(d, "text") for d in docs)
    queries = Queries(Query(q, "text") for q in qids)
    writable = all(id_problem(x, IdSyntax.TSV_FIELD) is None for x in qids + docs)
    if writable:
        write_beir(root, corpus, queries, qrels)
        assert read_qrels_tsv(root / "qrels.tsv").to_dict() == qrels.to_dict()
    else:
        with pytest.raises(FinegrainError, match="cannot write"):
            write_beir(root, corpus, queries, qrels)
        assert not list(root.iterdir()), "nothing is written when one id is refused"


@settings(max_examples=100, deadline=None)
@given(qids=_id_lists, docs=_id_lists)
def test_run_jsonl_writer_and_reader_share_the_rule(tmp_path_factory: pytest.TempPathFactory, qids: list[str],
                                                    docs: list[str]) -> None:
    run = Run.from_dict({q: {d: float(i) for i, d in enumerate(docs)} for q in qids}, name="t")
    path = tmp_path_factory.mktemp("jsonl") / "run.jsonl"
    if all(id_problem(x, IdSyntax.JSON) is None for x in qids + docs):
        assert read_run_jsonl(write_run_jsonl(run, path)).to_dict() == run.to_dict()
    else:
        with pytest.raises(FinegrainError, match="cannot write"):
            write_run_jsonl(run, path)
        assert not path.exists()


def test_a_lone_surrogate_id_is_refused_by_the_jsonl_writer_before_anything_is_written(tmp_path: Path) -> None:
    run = Run.from_dict({"q": {"ok": 2.0, "cut\ud83d": 1.0}})
    with pytest.raises(FinegrainError, match=r"cut character \(lone surrogate \\ud83d\)"):
        write_run_jsonl(run, tmp_path / "run.jsonl")
    assert not list(tmp_path.iterdir())
    assert not is_trec_safe(run)


def test_writers_name_the_bad_id_and_what_was_to_be_written(tmp_path: Path) -> None:
    with pytest.raises(FinegrainError) as e:
        write_qrels(Qrels.from_dict({"q1": {"d\x01": 1}}), tmp_path / "q.trec")
    assert "'d\\x01'" in str(e.value) and "control character U+0001" in str(e.value) and "q.trec" in str(e.value)
    with pytest.raises(FinegrainError, match=r"query id '#q' .* starts with '#'"):
        write_qrels(Qrels.from_dict({"#q": {"d": 1}}), tmp_path / "q.trec")
    with pytest.raises(FinegrainError, match=r"run tag 'my\\x00tag'"):
        write_run(Run.from_dict({"q": {"d": 1.0}}), tmp_path / "r.trec", tag="my\x00tag")
    with pytest.raises(FinegrainError, match=r"1,001 characters"):
        write_run(Run.from_dict({"q": {LONG: 1.0}}), tmp_path / "r.trec")
    assert not list(tmp_path.iterdir())


def test_pool_writer_refuses_bad_ids_and_reader_names_the_line(tmp_path: Path) -> None:
    item = PoolItem("q\ud83d", "d1", 0, 1, 1, ("a",))
    with pytest.raises(FinegrainError, match="cannot write query id"):
        write_pool(Pool((item,), depth=1, systems=("a",)), tmp_path / "pool.jsonl")
    assert not list(tmp_path.iterdir())
    p = tmp_path / "pool.jsonl"
    p.write_text(json.dumps({"schema": "finegrain.pool/1", "depth": 1, "systems": ["a"]}) + "\n"
                 + json.dumps({"qid": "q", "doc_id": "", "order": 0, "n_systems": 1, "best_rank": 1}) + "\n",
                 encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"pool.jsonl:2: expected a document id .* \(the id is empty"):
        read_pool(p)


# --------------------------------------------------------------------------- readers name the line


def _w(path: Path, data: str) -> Path:
    path.write_bytes(data.encode("utf-8"))
    return path


@pytest.mark.parametrize("bad, why", [
    ("d\x01", "control character U+0001"),
    ("d\x7f", "control character U+007F"),
    ("d\u0085x", "control character U+0085"),
    ("d\u3000x", "space or separator U+3000"),
    ("d\u00a0x", "space or separator U+00A0"),
    (LONG, "1,001 characters long"),
])
def test_trec_readers_refuse_ids_the_writers_refuse(tmp_path: Path, bad: str, why: str) -> None:
    why = re.escape(why)
    qrels = _w(tmp_path / "qrels", f"q1 0 d1 1\nq1 0 {bad} 0\n")
    with pytest.raises(DataFormatError, match=rf"qrels:2: expected a document id of 1 to 1,000 characters.*{why}"):
        read_qrels(qrels)
    run = _w(tmp_path / "run", f"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n{bad} Q0 d1 1 1.0 t\n")
    with pytest.raises(DataFormatError, match=rf"run:3: expected a query id .*{why}"):
        read_run(run)
    tag = _w(tmp_path / "tagged", f"\nq1 Q0 d1 1 2.0 {bad}\n")
    with pytest.raises(DataFormatError, match=rf"tagged:2: expected a run tag .*{why}"):
        read_run(tag)
    ids = _w(tmp_path / "ids.txt", f"q1\n{bad}\n")
    with pytest.raises(DataFormatError, match=r"ids.txt:2: expected (an id|one id per line)"):
        read_ids(ids)


def test_beir_qrels_reader_refuses_control_characters_but_keeps_spaces(tmp_path: Path) -> None:
    ok = _w(tmp_path / "ok.tsv", "query-id\tcorpus-id\tscore\nq 1\tIMG 1.jpg\t1\n")
    assert read_qrels_tsv(ok).to_dict() == {"q 1": {"IMG 1.jpg": 1}}
    bad = _w(tmp_path / "bad.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td\x0b2\t1\n")
    with pytest.raises(DataFormatError, match=r"bad.tsv:3: expected a corpus id .*control character U\+000B"):
        read_qrels_tsv(bad)


@pytest.mark.parametrize("record, what", [
    ({"_id": "", "text": "x"}, "empty"),
    ({"_id": "  ", "text": "x"}, "blank"),
    ({"_id": LONG, "text": "x"}, "1,001 characters"),
])
def test_json_line_readers_refuse_empty_blank_and_over_long_ids(tmp_path: Path, record: dict, what: str) -> None:
    p = _w(tmp_path / "corpus.jsonl", json.dumps({"_id": "d1", "text": "x"}) + "\n" + json.dumps(record) + "\n")
    with pytest.raises(DataFormatError, match=rf"corpus.jsonl:2: expected a document id .*{what}"):
        list(read_corpus(p).values())
    ids = _w(tmp_path / "ids.jsonl", json.dumps({"id": "a"}) + "\n" + json.dumps({"id": record["_id"]}) + "\n")
    with pytest.raises(DataFormatError, match=rf"ids.jsonl:2: .*{what}"):
        read_ids(ids)


def test_run_jsonl_reader_names_the_line_of_a_bad_id(tmp_path: Path) -> None:
    p = _w(tmp_path / "run.jsonl", '{"format": "finegrain.run/1", "name": "r"}\n{"qid": "q1", "results": [["d", 1]]}\n'
           '{"qid": "q2", "results": [["d", 1], ["", 0.5]]}\n')
    with pytest.raises(DataFormatError, match=r"run.jsonl:3: expected a document id .*empty"):
        read_run_jsonl(p)
    p = _w(tmp_path / "run.jsonl", '{"format": "finegrain.run/1", "name": "r"}\n{"qid": "q1", "results": []}\n'
           f'{{"qid": "{LONG}", "results": []}}\n')
    with pytest.raises(DataFormatError, match=r"run.jsonl:3: expected a query id .*1,001 characters"):
        read_run_jsonl(p)


def test_ranx_json_reader_refuses_an_empty_id_with_its_line(tmp_path: Path) -> None:
    p = _w(tmp_path / "run.json", '{\n "q1": {"d1": 1.0},\n "q2": {"": 0.5}\n}\n')
    with pytest.raises(DataFormatError, match=r"run.json:3: expected a document id .*empty"):
        read_table_file(p, "run")
