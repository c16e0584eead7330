"""The loaders under fuzzing, each with seed inputs and a reference reading (the oracle).

The oracles are written apart from the readers, from the format descriptions
(trec_eval's ``get_qrels.c`` / ``get_trec_results.c`` for TREC files, the
BEIR and CapRetrieval layouts, Python's own ``json`` for JSON), plainly and
line by line, so that a reader that takes a shortcut (numpy fixed-width ids,
Python's generous ``int``/``float``) disagrees with them. They are slow and
that is fine: they only run here. Ids follow the rule of
:mod:`finegrain.io.ids`, restated here character by character from Unicode
categories (only its length bound is shared).
"""

from __future__ import annotations

import gzip
import json
import re
import unicodedata
from collections.abc import Callable, Iterator
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from finegrain.io.beir import read_beir
from finegrain.io.capretrieval import read_capretrieval
from finegrain.io.ids import MAX_ID_CHARS
from finegrain.io.photobench import read_album
from finegrain.io.run_jsonl import read_run_jsonl
from finegrain.io.trec import read_qrels, read_run
from finegrain.results.files import read_results
from finegrain.results.saved import SavedResults
from finegrain.testing.fuzz import Files, Invalid, Target
from finegrain.testing.fuzz_cli import cli_targets
from finegrain.testing.fuzz_inputs import input_targets
from finegrain.testing.fuzz_photos import photo_targets
from finegrain.testing.fuzz_reading import strict_json
from finegrain.testing.fuzz_results import results_targets

_I64 = (-(1 << 63), (1 << 63) - 1)
_GRADE = re.compile(rb"[+-]?[0-9]+")
_DECIMAL = re.compile(rb"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")
_HEX = re.compile(rb"[+-]?0[xX]([0-9a-fA-F]+(\.[0-9a-fA-F]*)?|\.[0-9a-fA-F]+)([pP][+-]?[0-9]+)?")
_BLANK = b" \t\r\x0b\x0c"


# --------------------------------------------------------------------------- shared pieces


def _content(files: Files, name: str) -> bytes:
    data = files[name]
    if name.endswith(".gz"):
        try:
            data = gzip.decompress(data)
        except Exception as e:  # any broken stream
            raise Invalid(f"broken gzip: {e!r}") from None
    return data[3:] if data.startswith(b"\xef\xbb\xbf") else data


def _lines(data: bytes) -> Iterator[bytes]:
    for line in data.split(b"\n"):
        yield line[:-1] if line.endswith(b"\r") else line


def _utf8(b: bytes) -> str:
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        raise Invalid(f"not UTF-8: {b!r}") from None


def _grade(b: bytes) -> int:
    if not _GRADE.fullmatch(b) or len(b) > 25:  # int64 has at most 19 digits
        raise Invalid(f"grade {b[:30]!r}")
    g = int(b)
    if not _I64[0] <= g <= _I64[1]:
        raise Invalid(f"grade {g} out of int64")
    return g


def _score(b: bytes) -> float:
    if _DECIMAL.fullmatch(b):
        v = float(b.decode("ascii"))
    elif _HEX.fullmatch(b):
        try:
            v = float.fromhex(b.decode("ascii"))
        except OverflowError:
            raise Invalid(f"score {b!r} overflows") from None
    else:
        raise Invalid(f"score {b!r}")
    if v != v or abs(v) == float("inf"):
        raise Invalid(f"score {b!r} not finite")
    return v


def _json(text: str) -> Any:
    return strict_json(text)


def _control(c: str) -> bool:
    return unicodedata.category(c) in ("Cc", "Cs")


def _token_id(b: bytes) -> str:
    """A field of a whitespace-separated line as an id: no whitespace or control character, not over-long."""
    s = _utf8(b)
    if len(s) > MAX_ID_CHARS or any(_control(c) or c.isspace() for c in s):
        raise Invalid(f"id {s[:30]!r}")
    return s


def _tsv_id(b: bytes) -> str:
    """A field of a tab-separated line as an id: not blank, no control character or line separator, not over-long."""
    s = _utf8(b)
    if not s.strip() or len(s) > MAX_ID_CHARS or any(_control(c) or c in "\u2028\u2029" for c in s):
        raise Invalid(f"id {s[:30]!r}")
    return s


def _json_id(s: str) -> str:
    if not s.strip() or len(s) > MAX_ID_CHARS:
        raise Invalid(f"id {s[:30]!r}")
    return s


def _jsonl(data: bytes) -> Iterator[dict[str, Any]]:
    for raw in _lines(data):
        line = _utf8(raw)
        if not line.strip():
            continue
        obj = _json(line)
        if not isinstance(obj, dict):
            raise Invalid("a JSON-lines record that is not an object")
        yield obj


def _id(obj: dict[str, Any], *names: str) -> str:
    for name in names:
        if name in obj:
            v = obj[name]
            if isinstance(v, str):
                return _json_id(v)
            if isinstance(v, int) and not isinstance(v, bool):
                return _json_id(str(v))
            raise Invalid(f"id {v!r}")
    raise Invalid(f"no {names}")


def _text(obj: dict[str, Any], *names: str) -> str:
    for name in names:
        if name in obj:
            value = obj[name]
            if not isinstance(value, str):
                raise Invalid(f"text {value!r}")
            return value
    raise Invalid(f"no {names}")


def _json_int(v: Any) -> int:
    if isinstance(v, bool):
        raise Invalid("a boolean grade")
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if not isinstance(v, int) or not _I64[0] <= v <= _I64[1]:
        raise Invalid(f"grade {v!r}")
    return v


# --------------------------------------------------------------------------- TREC (trec_eval's rules)


def trec_qrels_reference(data: bytes, trec_eval: bool) -> dict[str, dict[str, int]]:
    """``get_qrels.c``: 4 fields; ``#`` as the first character is a comment (compat only)."""
    out: dict[str, dict[str, int]] = {}
    for line in _lines(data):
        if trec_eval and line.startswith(b"#"):
            continue
        parts = line.split()
        if not parts:
            continue
        if b"\x00" in line:
            raise Invalid("NUL")
        if not trec_eval and parts[0].startswith(b"#"):
            raise Invalid("a comment line in strict mode")
        if len(parts) != 4:
            raise Invalid(f"{len(parts)} fields")
        q, _, d = _token_id(parts[0]), _utf8(parts[1]), _token_id(parts[2])
        g = _grade(parts[3])
        if d in out.setdefault(q, {}):
            raise Invalid("duplicate pair")
        out[q][d] = g
    if not out:
        raise Invalid("no judgement")
    return out


def trec_run_reference(data: bytes, trec_eval: bool) -> tuple[str, dict[str, dict[str, float]]]:
    """``get_trec_results.c``: 6 fields (compat: more, ignored); blank and ``#`` lines skipped (compat)."""
    if b"\x00" in data:
        raise Invalid("NUL")
    out: dict[str, dict[str, float]] = {}
    tag: str | None = None
    for line in _lines(data):
        if line.lstrip(_BLANK).startswith(b"#"):
            if trec_eval:
                continue
            raise Invalid("a comment line in strict mode")
        parts = line.split()
        if not parts:
            continue
        if len(parts) < 6 or (len(parts) > 6 and not trec_eval):
            raise Invalid(f"{len(parts)} fields")
        q, d = _token_id(parts[0]), _token_id(parts[2])
        s = _score(parts[4])
        if tag is None:
            tag = _token_id(parts[5])
        if d in out.setdefault(q, {}):
            raise Invalid("duplicate pair")
        out[q][d] = s
    if not out or tag is None:
        raise Invalid("no result line")
    return tag, out


def _trec_targets() -> list[Target]:
    qrels_seeds = (
        b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n",
        b"301 0 FBIS3-10082 1\n301 0 FBIS3-10169 0\n302 Q0 LA010189-0001 -1\n\n302 0 x 3",
        "查询1 0 文档1 2\r\nq\t0\td 1\r\n".encode(),
    )
    run_seeds = (
        b"q1 Q0 d1 1 2.5 sys\nq1 Q0 d2 2 1.0 sys\nq2 Q0 d3 1 -0.5 sys\n",
        b"301 Q0 FBIS3-10082 1 12.25 run-a\n301 Q0 FBIS3-10169 2 12.25 run-a\n302 Q0 LA010189-0001 1 1e-3 run-a",
        "q Q0 文档 1 0x1p-2 t\r\n\r\nq Q0 d\t2\t.5\tt\n".encode(),
    )
    targets = []
    for compat in (False, True):
        mode = "compat" if compat else "strict"
        for gz in (False, True):
            qname = "qrels.txt.gz" if gz else "qrels.txt"
            rname = "run.txt.gz" if gz else "run.txt"
            wrap: Callable[[bytes], bytes] = (lambda b: gzip.compress(b, mtime=0)) if gz else (lambda b: b)
            suffix = f"{'-gz' if gz else ''}-{mode}"
            c = "trec_eval" if compat else None
            targets.append(Target(
                f"trec-qrels{suffix}",
                tuple({qname: wrap(s)} for s in qrels_seeds),
                partial(_load_qrels, name=qname, compat=c),
                partial(_qrels_oracle, name=qname, trec_eval=compat),
            ))
            targets.append(Target(
                f"trec-run{suffix}",
                tuple({rname: wrap(s)} for s in run_seeds),
                partial(_load_run, name=rname, compat=c),
                partial(_run_oracle, name=rname, trec_eval=compat),
            ))
    return targets


def _load_qrels(p: Path, name: str, compat: str | None) -> Any:
    return read_qrels(p / name, compat=compat).to_dict()


def _load_run(p: Path, name: str, compat: str | None) -> Any:
    return _run_value(read_run(p / name, compat=compat))


def _qrels_oracle(files: Files, name: str, trec_eval: bool) -> Any:
    return trec_qrels_reference(_content(files, name), trec_eval)


def _run_oracle(files: Files, name: str, trec_eval: bool) -> Any:
    return trec_run_reference(_content(files, name), trec_eval)


def _run_value(run: Any) -> tuple[str, dict[str, dict[str, float]]]:
    return run.name, run.to_dict()


# --------------------------------------------------------------------------- BEIR


def beir_reference(files: Files) -> Any:
    corpus: dict[str, tuple[str, str]] = {}
    for obj in _jsonl(_content(files, "corpus.jsonl")):
        d = _id(obj, "_id", "id")
        text = _text(obj, "text")
        title = _text(obj, "title") if obj.get("title") is not None else ""
        if d in corpus:
            raise Invalid("duplicate document")
        corpus[d] = (title, text)
    queries: dict[str, str] = {}
    for obj in _jsonl(_content(files, "queries.jsonl")):
        q = _id(obj, "_id", "id")
        if q in queries:
            raise Invalid("duplicate query")
        queries[q] = _text(obj, "text", "query")
    judged: dict[str, dict[str, int]] = {}
    first = True
    for line in _lines(_content(files, "qrels.tsv")):
        parts = line.split(b"\t") if b"\t" in line else line.split()
        if not line.strip():
            continue
        if first:
            first = False
            if len(parts) == 3 and re.fullmatch(rb"[A-Za-z_][A-Za-z0-9_-]*", parts[2]):
                continue
        if len(parts) != 3 or b"\x00" in line:
            raise Invalid("qrels line")
        q, d = _tsv_id(parts[0]), _tsv_id(parts[1])
        g = _grade(parts[2].strip(_BLANK))
        if q not in queries or d not in corpus or d in judged.get(q, {}):
            raise Invalid("unknown id or duplicate")
        judged.setdefault(q, {})[d] = g
    if not judged:
        raise Invalid("no judgement")
    kept = [q for q in queries if q in judged]
    return (
        tuple((d, t, x) for d, (t, x) in corpus.items()),
        tuple((q, queries[q]) for q in kept),
        {q: judged[q] for q in kept},
    )


def _beir_target() -> Target:
    def load(p: Path) -> Any:
        corpus, queries, qrels = read_beir(p)
        return (
            tuple((d.id, d.title, d.text) for d in corpus.values()),
            tuple((q.id, q.text) for q in queries.values()),
            qrels.to_dict(),
        )

    seed = {
        "corpus.jsonl": b'{"_id": "d1", "title": "A cat", "text": "a cat on a mat"}\n{"_id": 2, "text": "dogs", "extra": [1, 2]}\n'
        + '{"id": "d3", "text": "紫色的花", "title": null}\n'.encode(),
        "queries.jsonl": b'{"_id": "q1", "text": "cat"}\n{"_id": "q2", "text": "dog"}\n{"id": 3, "query": "flower"}\n',
        "qrels.tsv": b"query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\t2\t2\n3\td3\t1\nq1\td3\t0\n",
    }
    return Target("beir", (seed,), load, beir_reference)


# --------------------------------------------------------------------------- CapRetrieval


def capretrieval_reference(files: Files) -> Any:
    corpus: dict[str, str] = {}
    for obj in _jsonl(_content(files, "candidates.jsonl")):
        d = _id(obj, "id", "_id")
        if d in corpus:
            raise Invalid("duplicate candidate")
        corpus[d] = _text(obj, "text")
    queries: dict[str, str] = {}
    judged: dict[str, dict[str, int]] = {}
    for obj in _jsonl(_content(files, "queries.jsonl")):
        q = _id(obj, "id", "_id")
        if q in queries:
            raise Invalid("duplicate query")
        queries[q] = _text(obj, "query", "text")
        positives = obj.get("positives", []) if "positives" in obj else []
        if not isinstance(positives, list):
            raise Invalid("positives not a list")
        grades: dict[str, int] = {}
        for p in positives:
            if not isinstance(p, dict):
                raise Invalid("positive not an object")
            d = _id(p, "id", "_id")
            if "score" not in p:
                raise Invalid("no score")
            g = _json_int(p["score"])
            if d in grades or d not in corpus:
                raise Invalid("duplicate or unknown positive")
            grades[d] = g
        judged[q] = grades
    return tuple(corpus.items()), tuple(queries.items()), judged


def _capretrieval_target() -> Target:
    def load(p: Path) -> Any:
        corpus, queries, qrels = read_capretrieval(p, types={})
        return (
            tuple((d.id, d.text) for d in corpus.values()),
            tuple((q.id, q.text) for q in queries.values()),
            qrels.to_dict(),
        )

    seed = {
        "candidates.jsonl": '{"id": "c1", "text": "一只猫在垫子上"}\n{"id": "c2", "text": "fried chicken"}\n{"id": 3, "text": "purple flower"}\n'.encode(),
        "queries.jsonl": '{"id": "q1", "query": "猫", "positives": [{"id": "c1", "score": 2}]}\n'
        '{"id": "q2", "query": "purple flower", "positives": [{"id": 3, "score": 1.0}, {"id": "c2", "score": 0}]}\n'
        '{"id": "q3", "query": "nothing"}\n'.encode(),
    }
    return Target("capretrieval", (seed,), load, capretrieval_reference)


# --------------------------------------------------------------------------- PhotoBench


def photobench_metadata_reference(files: Files) -> dict[str, tuple[Any, Any, Any]]:
    data = _json(_utf8(_content(files, "metadata.json")))
    if not isinstance(data, dict):
        raise Invalid("metadata not an object")
    out = {}
    for name, rec in data.items():
        if not isinstance(rec, dict):
            raise Invalid("photo record not an object")
        lat = _coordinate(rec.get("latitude"), 90.0)
        lon = _coordinate(rec.get("longitude"), 180.0)
        if (lat is None) != (lon is None):
            raise Invalid("one coordinate")
        t = rec.get("time")
        if t is None or t == "":
            when = None
        elif isinstance(t, str):
            try:
                when = datetime.fromisoformat(t)
            except ValueError:
                raise Invalid(f"time {t!r}") from None
        else:
            raise Invalid(f"time {t!r}")
        out[name] = (lat, lon, when)
    return out


def _coordinate(v: Any, limit: float) -> float | None:
    if v is None or v == "":
        return None
    if isinstance(v, bool) or not isinstance(v, int | float) or not -limit <= v <= limit:
        raise Invalid(f"coordinate {v!r}")
    return float(v)


def _photobench_seed() -> dict[str, bytes]:
    metadata = {
        "IMG_0001.jpg": {"latitude": 30.25, "longitude": 120.16, "time": "2025-05-04T16:40:41"},
        "IMG_0002.jpg": {"latitude": None, "longitude": None, "time": "2024-12-31T23:59:59"},
        "IMG_0003.jpg": {"latitude": "", "longitude": "", "time": ""},
    }
    faces = {"image_to_face_ids": {"IMG_0001.jpg": ["1", "2"], "IMG_0002.jpg": ["2"]}}
    queries = [
        {"query_cn": "和妹妹在杭州的照片", "query_en": "photos with my sister in Hangzhou", "Source": "MF",
         "Location": "fact", "Time": None, "Person": "fact", "Object": None, "Concept": None, "Genre": None,
         "ground_truth": ["IMG_0001.jpg"], "ground_truth_count": 1},
        {"query_cn": "去年的雪", "query_en": "snow last year", "Source": "VM",
         "Location": None, "Time": "cognitive", "Person": None, "Object": "fact", "Concept": None, "Genre": None,
         "ground_truth": [], "ground_truth_count": 0},
    ]

    def dump(x: Any) -> bytes:
        return json.dumps(x, ensure_ascii=False, indent=1).encode()

    return {
        "metadata.json": dump(metadata),
        "face_info_en.json": dump({"face_id_to_nicknames": {"1": ["me"], "2": ["sister", "Li"]}, **faces}),
        "face_info_cn.json": dump({"face_id_to_nicknames": {"1": ["我"], "2": ["妹妹"]}, **faces}),
        "samples_query.json": dump(queries),
    }


def _photobench_targets() -> list[Target]:
    seed = _photobench_seed()

    def photos(p: Path) -> Any:
        album = read_album(p)
        return {k: (v.latitude, v.longitude, v.time) for k, v in album.photos.items()}

    def summary(p: Path) -> Any:
        album = read_album(p)
        return len(album.photos), len(album.queries), len(album.people)

    return [
        Target("photobench-metadata", (seed,), photos, photobench_metadata_reference, mutable=("metadata.json",)),
        Target("photobench", (seed,), summary, None),
    ]


# --------------------------------------------------------------------------- saved results


def results_reference(files: Files) -> Any:
    data = _json(_utf8(_content(files, "results.json")))
    if not isinstance(data, dict) or data.get("schema") != "finegrain.results/1":
        raise Invalid("schema")
    agg, per_query = (data.get(section) for section in ("aggregate", "per_query"))
    if not isinstance(agg, dict) or not isinstance(per_query, dict):
        raise Invalid("sections")
    for v in agg.values():
        if v is not None and (isinstance(v, bool) or not isinstance(v, int | float)):
            raise Invalid("aggregate value")
    for per in per_query.values():
        if not isinstance(per, dict):
            raise Invalid("per-query section")
        for v in per.values():
            if v is not None and (isinstance(v, bool) or not isinstance(v, int | float)):
                raise Invalid("per-query value")
    return data


def _results_target() -> Target:
    seed = {
        "schema": "finegrain.results/1",
        "aggregate": {"ndcg@10": 0.5, "recall@10": None},
        "per_query": {"ndcg@10": {"q1": 1.0, "q2": 0.0}, "recall@10": {"q1": None, "q2": 0.5}},
        "by_type": {"entity": {"ndcg@10": {"value": 0.5, "n": 2}}},
        "denominators": {"ndcg@10": {"n_universe": 3, "n_scored": 2, "n_excluded_no_relevant": 1}},
        "curves": {"ndcg": {"1": 0.5, "10": 0.5}},
        "queries": {"q1": {"text": "cat", "type": "entity"}, "q2": {"text": "dog", "type": None}},
        "provenance": {"dataset": {"name": "x"}, "retriever": {"name": "bm25"}},
    }
    files = {"results.json": json.dumps(seed, indent=1).encode()}
    def load(p: Path) -> Any:
        data = read_results(p / "results.json")  # validated by SavedResults: it must read what it accepts
        SavedResults.from_json(data).to_json()
        return data

    return Target("results-json", (files,), load, results_reference)


# --------------------------------------------------------------------------- saved runs (run.jsonl)


def _run_jsonl_target() -> Target:
    seed = (
        '{"format": "finegrain.run/1", "name": "bm25 okapi"}\n'
        '{"qid": "q 1", "results": [["IMG 0001.jpg", 12.5], ["IMG\\t2.jpg", 3], ["文档", -1e-3]]}\n'
        '{"qid": "q2", "results": [["d", Infinity]]}\n'
        '{"qid": "q3", "results": []}\n'
    ).encode()
    return Target(
        "run-jsonl",
        ({"run.jsonl": seed}, {"run.jsonl.gz": gzip.compress(seed, mtime=0)}),
        lambda p: _run_value(read_run_jsonl(next(p.iterdir()))),
        None,
    )


# --------------------------------------------------------------------------- all


def loader_targets() -> list[Target]:
    """Every text-format loader: TREC qrels and runs (plain, gz; strict, compat), BEIR,
    CapRetrieval, PhotoBench, saved results.json and run.jsonl."""
    return [
        *_trec_targets(), _beir_target(), _capretrieval_target(), *_photobench_targets(), _results_target(),
        _run_jsonl_target(),
    ]


def all_targets() -> list[Target]:
    """:func:`loader_targets`, the album's photo reader and sidecars (need Pillow and piexif), the command
    line's option values and paths (:func:`finegrain.testing.fuzz_cli.cli_targets`), the files commands
    read beyond the datasets (:func:`finegrain.testing.fuzz_inputs.input_targets`) and every saved kind
    through the verbs that read it (:func:`finegrain.testing.fuzz_results.results_targets`)."""
    targets = loader_targets()
    try:
        import piexif  # noqa: F401
        import PIL  # noqa: F401
    except ImportError:  # pragma: no cover - without the album extra
        pass
    else:
        targets += photo_targets()
    return [*targets, *cli_targets(), *input_targets(), *results_targets()]
