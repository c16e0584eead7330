"""Id lists, BEIR folders, CapRetrieval folders and PhotoBench albums on tiny hand-made fixtures."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from finegrain.errors import DataFormatError, DuplicateIdError, FinegrainError
from finegrain.io._lines import iter_jsonl
from finegrain.io.beir import read_beir, read_qrels_tsv, write_beir
from finegrain.io.capretrieval import (
    normalize_query,
    read_capretrieval,
    read_queries_with_positives,
    read_types,
    type_assignment,
    write_capretrieval,
)
from finegrain.io.idlist import read_ids
from finegrain.io.photobench import read_album
from finegrain.types import Corpus, Document, Qrels, Queries, Query


def _jsonl(path: Path, rows: list) -> Path:
    text = "".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in rows)
    if path.suffix == ".gz":
        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _err(fn, *args, **kw) -> DataFormatError:
    with pytest.raises(DataFormatError) as e:
        fn(*args, **kw)
    return e.value


# --------------------------------------------------------------------------- json lines


def test_iter_jsonl_bad_json_and_non_object(tmp_path: Path) -> None:
    p = _jsonl(tmp_path / "x.jsonl", [{"id": "a"}, "", '{"id": "b",'])
    err = _err(list, iter_jsonl(p))
    assert err.line == 3 and f"{p}:3" in str(err) and "JSON object" in str(err)
    p = _jsonl(tmp_path / "y.jsonl", [{"id": "a"}, "[1, 2]"])
    assert _err(list, iter_jsonl(p)).line == 2


# --------------------------------------------------------------------------- id lists


def test_read_ids_plain_and_jsonl(tmp_path: Path) -> None:
    p = tmp_path / "ids.txt"
    p.write_text("a\n\n  b  \nc\n")
    assert read_ids(p) == ["a", "b", "c"]
    j = _jsonl(tmp_path / "ids.jsonl", [{"id": "x"}, {"_id": 7}, {"id": "y", "other": 1}])
    assert read_ids(j) == ["x", "7", "y"]
    sniffed = _jsonl(tmp_path / "ids.dat", [{"_id": "m"}, {"_id": "n"}])
    assert read_ids(sniffed) == ["m", "n"]
    gz = _jsonl(tmp_path / "ids.jsonl.gz", [{"id": "g"}])
    assert read_ids(gz) == ["g"]


def test_read_ids_errors(tmp_path: Path) -> None:
    p = tmp_path / "ids.txt"
    p.write_text("a\nb\n\na\n")
    err = _err(read_ids, p)
    assert isinstance(err, DuplicateIdError)
    assert err.line == 4 and f"{p}:4" in str(err) and "first at line 1" in str(err)
    p.write_text("a\nb c\n")
    assert _err(read_ids, p).line == 2
    j = _jsonl(tmp_path / "ids.jsonl", [{"id": "x"}, {"name": "y"}])
    err = _err(read_ids, j)
    assert err.line == 2 and "'id' or '_id'" in str(err)


# --------------------------------------------------------------------------- BEIR


def _beir_fixture() -> tuple[Corpus, Queries, Qrels]:
    corpus = Corpus(
        [
            Document("p0", "第一段文字", "标题"),
            Document("p1", "second passage", ""),
            Document("p2", "third", "t", {"url": "http://x"}),
        ]
    )
    queries = Queries([Query("q0", "问题一"), Query("q1", "question two")])
    qrels = Qrels.from_dict({"q0": {"p0": 1, "p2": 0}, "q1": {"p1": 2}})
    return corpus, queries, qrels


@pytest.mark.parametrize("split", [None, "test", "dev"])
def test_beir_round_trip(tmp_path: Path, split: str | None) -> None:
    corpus, queries, qrels = _beir_fixture()
    write_beir(tmp_path, corpus, queries, qrels, split=split)
    c, q, r = read_beir(tmp_path, split=split)
    assert list(c) == list(corpus) and [d.text for d in c.values()] == [d.text for d in corpus.values()]
    assert c["p0"].title == "标题" and c["p2"].meta["url"] == "http://x"
    assert list(q) == ["q0", "q1"] and q["q0"].text == "问题一"
    assert r == qrels


def test_beir_header_optional_and_queries_limited_to_split(tmp_path: Path) -> None:
    _jsonl(tmp_path / "corpus.jsonl.gz", [{"_id": "d1", "text": "x"}, {"_id": 2, "title": None, "text": "y"}])
    _jsonl(tmp_path / "queries.jsonl", [{"_id": "a", "text": "qa"}, {"_id": "b", "text": "qb"}])
    (tmp_path / "qrels.tsv").write_text("a\td1\t1\na\t2\t0\n")
    corpus, queries, qrels = read_beir(tmp_path)
    assert list(corpus) == ["d1", "2"] and corpus["2"].title == ""
    assert list(queries) == ["a"]  # "b" has no judgement in this split
    assert qrels.to_dict() == {"a": {"d1": 1, "2": 0}}


def test_beir_errors(tmp_path: Path) -> None:
    _jsonl(tmp_path / "corpus.jsonl", [{"_id": "d1", "text": "x"}])
    _jsonl(tmp_path / "queries.jsonl", [{"_id": "a", "text": "qa"}])
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\na\td1\t1\na\td9\t1\n")
    err = _err(read_beir, tmp_path)
    assert err.line == 3 and f"{qrels}:3" in str(err) and "corpus.jsonl" in str(err) and "d9" in str(err)
    qrels.write_text("a\td1\t1\nz\td1\t1\n")
    assert _err(read_beir, tmp_path).line == 2
    qrels.write_text("a\td1\n")
    err = _err(read_beir, tmp_path)
    assert err.line == 1 and "3 tab-separated fields" in str(err)
    qrels.write_text("query-id\tcorpus-id\tscore\na\td1\tyes\n")
    assert "integer" in str(_err(read_qrels_tsv, qrels))
    qrels.write_text("a\td1\t1\na\td1\t0\n")
    err = _err(read_qrels_tsv, qrels)
    assert isinstance(err, DuplicateIdError) and err.line == 2
    qrels.write_text("a\td1\t1\n")
    _jsonl(tmp_path / "corpus.jsonl", [{"_id": "d1", "text": "x"}, {"_id": "d2"}])
    err = _err(read_beir, tmp_path)
    assert err.line == 2 and "corpus.jsonl:2" in str(err) and "'text'" in str(err)
    _jsonl(tmp_path / "corpus.jsonl", [{"_id": "d1", "text": "x"}, {"_id": "d1", "text": "y"}])
    err = _err(read_beir, tmp_path)
    assert isinstance(err, DuplicateIdError) and err.line == 2 and "first at line 1" in str(err)
    _jsonl(tmp_path / "corpus.jsonl", [{"_id": "d1", "text": "x"}, '{"_id": "d2", "text": }'])
    assert _err(read_beir, tmp_path).line == 2


def test_beir_split_choice(tmp_path: Path) -> None:
    corpus, queries, qrels = _beir_fixture()
    write_beir(tmp_path, corpus, queries, qrels, split="dev")
    write_beir(tmp_path, corpus, queries, qrels, split="train")
    with pytest.raises(FinegrainError, match="several qrels splits"):
        read_beir(tmp_path)
    with pytest.raises(FinegrainError, match="available splits: dev, train"):
        read_beir(tmp_path, split="test")


# --------------------------------------------------------------------------- CapRetrieval


def _cap_folder(root: Path, types: dict | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    _jsonl(
        root / "candidates.jsonl",
        [{"id": "c1", "text": "white cat"}, {"id": "c2", "text": "black dog"}, {"id": "c3", "text": "cat and dog"}],
    )
    _jsonl(
        root / "queries.jsonl",
        [
            {"id": "q1", "query": "cat", "positives": [{"id": "c1", "score": 2}, {"id": "c3", "score": 2}]},
            {"id": "q2", "query": "dog cat", "positives": [{"id": "c3", "score": 2}, {"id": "c2", "score": 1}]},
            {"id": "q3", "query": "giraffe", "positives": []},
        ],
    )
    if types is not None:
        (root / "types.json").write_text(json.dumps(types, ensure_ascii=False, indent=2), encoding="utf-8")
    return root


def test_capretrieval_reads_grades_types_and_zero_answer_queries(tmp_path: Path) -> None:
    folder = _cap_folder(tmp_path / "zh", {"entity": ["cat", "q3"], "conjunction": ["dog+cat"]})
    corpus, queries, qrels = read_capretrieval(folder)
    assert list(corpus) == ["c1", "c2", "c3"]
    assert [q.type for q in queries.values()] == ["entity", "conjunction", "entity"]
    assert qrels.to_dict() == {"q1": {"c1": 2, "c3": 2}, "q2": {"c3": 2, "c2": 1}, "q3": {}}
    assert "q3" in qrels and not qrels.has_relevant("q3")


def test_capretrieval_types_by_id_travel_to_another_language(tmp_path: Path) -> None:
    zh = _cap_folder(tmp_path / "zh", {"entity": ["cat", "giraffe"], "conjunction": ["dog cat"]})
    en = _cap_folder(tmp_path / "en")
    assignment = type_assignment(zh / "types.json", zh / "queries.jsonl")
    _, queries, _ = read_capretrieval(en, types=assignment)
    assert queries.types() == {"q1": "entity", "q2": "conjunction", "q3": "entity"}
    _, untyped, _ = read_capretrieval(zh, types={})
    assert set(untyped.types().values()) == {None}


def test_capretrieval_unmatched_type_entries_are_reported_not_fatal(tmp_path: Path) -> None:
    folder = _cap_folder(tmp_path / "zh", {"entity": ["cat", "computer"], "conjunction": ["dog cat"]})
    queries, _ = read_queries_with_positives(folder / "queries.jsonl")
    a = read_types(folder / "types.json", queries)
    assert a.unmatched == (("entity", "computer"),)
    assert dict(a.types) == {"q1": "entity", "q2": "conjunction"}
    assert a.entries == 3


def test_capretrieval_type_conflict_and_wrong_file_are_errors(tmp_path: Path) -> None:
    folder = _cap_folder(tmp_path / "a", {"entity": ["cat"], "event": ["dog", "q1"]})
    err = _err(read_capretrieval, folder)
    assert "one type" in str(err) and "'entity'" in str(err) and "'event'" in str(err)
    assert err.line == 7 and f"{folder / 'types.json'}:7" in str(err)  # the "q1" entry
    folder = _cap_folder(tmp_path / "b", {"entity": ["spaceship", "rocket"]})
    assert "none of its 2 entries" in str(_err(read_capretrieval, folder))
    folder = _cap_folder(tmp_path / "c", {"entity": "cat"})
    assert "a list of query strings" in str(_err(read_capretrieval, folder))


def test_capretrieval_bad_lines(tmp_path: Path) -> None:
    folder = _cap_folder(tmp_path / "x")
    q = folder / "queries.jsonl"
    _jsonl(q, [{"id": "q1", "query": "cat", "positives": [{"id": "c9", "score": 2}]}])
    err = _err(read_capretrieval, folder)
    assert err.line == 1 and f"{q}:1" in str(err) and "c9" in str(err)
    _jsonl(q, [{"id": "q1", "query": "cat", "positives": []}, {"id": "q2", "positives": []}])
    err = _err(read_capretrieval, folder)
    assert err.line == 2 and "'query'" in str(err)
    _jsonl(q, [{"id": "q1", "query": "cat", "positives": [{"id": "c1", "score": "high"}]}])
    assert "integer" in str(_err(read_capretrieval, folder))
    _jsonl(q, [{"id": "q1", "query": "cat", "positives": [{"id": "c1", "score": 2}, {"id": "c1", "score": 1}]}])
    assert "once per query" in str(_err(read_capretrieval, folder))
    _jsonl(q, [{"id": "q1", "query": "cat"}, {"id": "q1", "query": "dog"}])
    err = _err(read_capretrieval, folder)
    assert isinstance(err, DuplicateIdError) and err.line == 2
    _jsonl(q, ['{"id": "q1", "query": "cat", "positives": [}'])
    err = _err(read_capretrieval, folder)
    assert err.line == 1 and "JSON" in str(err)


def test_capretrieval_round_trip(tmp_path: Path) -> None:
    folder = _cap_folder(tmp_path / "src", {"entity": ["cat", "giraffe"], "conjunction": ["q2"]})
    corpus, queries, qrels = read_capretrieval(folder)
    write_capretrieval(tmp_path / "out", corpus, queries, qrels)
    c2, q2, r2 = read_capretrieval(tmp_path / "out")
    assert list(c2) == list(corpus) and r2 == qrels
    assert q2.types() == queries.types() and [q.text for q in q2.values()] == [q.text for q in queries.values()]


def test_normalize_query() -> None:
    assert normalize_query("连衣裙+草地") == normalize_query("连衣裙 草地") == "连衣裙 草地"
    assert normalize_query("  Purple  FLOWERS ") == "purple flowers"
    assert normalize_query("ＡＢＣ") == "abc"


# --------------------------------------------------------------------------- PhotoBench


def _album(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    meta = {
        "IMG_1.JPG": {"latitude": 22.5, "longitude": 113.9, "time": "2025-10-04T16:40:41"},
        "IMG_2.JPG": {"latitude": None, "longitude": None, "time": ""},
        "IMG_3.JPG": {"latitude": 36.7, "longitude": 116.9, "time": "2024-05-01T08:00:00"},
    }
    (root / "metadata.json").write_text(json.dumps(meta, indent=2))
    for lang, names in (("en", {"1": ["me"], "2": ["Xiaotong", "Tongtong"]}), ("cn", {"1": ["我"], "2": ["晓彤"]})):
        face = {"face_id_to_nicknames": names, "image_to_face_ids": {"IMG_1.JPG": ["1", "2"], "IMG_3.JPG": ["2"]}}
        (root / f"face_info_{lang}.json").write_text(json.dumps(face, ensure_ascii=False, indent=2))
    dims = {d: None for d in ("Location", "Time", "Person", "Object", "Concept", "Genre")}
    protected = [
        {"query_cn": "猫", "query_en": "cat", **dims, "Object": "fact", "Source": "V"},
        {"query_cn": "我和晓彤", "query_en": "me and Xiaotong", **dims, "Person": "fact", "Source": "F"},
        {"query_cn": "2023年的雪", "query_en": "snow in 2023", **dims, "Time": "fact", "Source": "VM"},
    ]
    (root / "protected_query.json").write_text(json.dumps(protected, ensure_ascii=False, indent=2))
    samples = [
        {**protected[1], "ground_truth": ["IMG_1.JPG"], "ground_truth_count": 1},
        {**protected[2], "ground_truth": [], "ground_truth_count": 0},
    ]
    (root / "samples_query.json").write_text("[\n" + ",\n".join(json.dumps(s, ensure_ascii=False) for s in samples) + "\n]\n")
    return root


def test_read_album(tmp_path: Path) -> None:
    album = read_album(_album(tmp_path / "album"))
    assert album.name == "album" and len(album.photos) == 3 and list(album.people) == ["1", "2"]
    p1, p2 = album.photos["IMG_1.JPG"], album.photos["IMG_2.JPG"]
    assert p1.faces == ("1", "2") and p1.time is not None and p1.time.hour == 16 and p1.has_gps
    assert p2.faces == () and p2.time is None and not p2.has_gps
    assert album.people["1"].is_owner and album.people["2"].names("zh") == ("晓彤",)
    assert [q.id for q in album.queries] == ["q000", "q001", "q002"]
    q0, q1, q2 = album.queries
    assert q0.ground_truth is None and not q0.has_ground_truth
    assert q1.ground_truth == ("IMG_1.JPG",) and q1.source == "F" and q1.dimensions["Person"] == "fact"
    assert q2.is_zero_gt
    queries, qrels = album.queries_and_qrels("en")
    assert list(queries) == ["q001", "q002"] and queries["q001"].text == "me and Xiaotong"
    assert queries["q001"].type == "F"
    assert qrels.to_dict() == {"q001": {"IMG_1.JPG": 1}, "q002": {}}
    zq, _ = album.queries_and_qrels("zh")
    assert zq["q002"].text == "2023年的雪"
    all_q, all_r = album.queries_and_qrels("en", judged_only=False)
    assert len(all_q) == 3 and "q000" not in all_r
    corpus = album.corpus("en")
    assert corpus["IMG_1.JPG"].meta["people"] == ("me", "Xiaotong") and corpus["IMG_1.JPG"].text == ""
    with pytest.raises(Exception):
        album.photos["IMG_9.JPG"] = p1  # type: ignore[index]


def _edit_json(path: Path, fn) -> None:
    data = json.loads(path.read_text())
    fn(data)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2))


def test_album_errors(tmp_path: Path) -> None:
    root = _album(tmp_path / "a")
    _edit_json(root / "samples_query.json", lambda d: d[0].update(ground_truth=["IMG_9.JPG"]))
    err = _err(read_album, root)
    assert "IMG_9.JPG" in str(err) and err.path.endswith("samples_query.json") and err.line == 3

    root = _album(tmp_path / "b")
    _edit_json(root / "samples_query.json", lambda d: d[0].update(ground_truth_count=3))
    assert "ground_truth_count" in str(_err(read_album, root))

    root = _album(tmp_path / "c")
    _edit_json(root / "protected_query.json", lambda d: d[1].update(Source="XY"))
    err = _err(read_album, root)
    assert "'Source'" in str(err) and "'XY'" in str(err) and err.line is not None

    root = _album(tmp_path / "d")
    _edit_json(root / "metadata.json", lambda d: d["IMG_3.JPG"].update(time="yesterday"))
    err = _err(read_album, root)
    assert "ISO date-time" in str(err) and err.line == 12 and f"{root / 'metadata.json'}:12" in str(err)

    root = _album(tmp_path / "e")
    _edit_json(root / "face_info_cn.json", lambda d: d["image_to_face_ids"].update({"IMG_2.JPG": ["1"]}))
    assert "the same faces" in str(_err(read_album, root))

    root = _album(tmp_path / "f")
    _edit_json(root / "face_info_en.json", lambda d: d["image_to_face_ids"].update({"IMG_2.JPG": ["7"]}))
    assert "face ids" in str(_err(read_album, root))

    root = _album(tmp_path / "g")
    (root / "metadata.json").write_text('{"IMG_1.JPG": {"latitude": 1,}}')
    err = _err(read_album, root)
    assert err.line == 1 and "valid JSON" in str(err)

    with pytest.raises(FinegrainError, match="not a PhotoBench album"):
        read_album(tmp_path / "nothing")
