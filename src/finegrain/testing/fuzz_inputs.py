"""Fuzz targets for the inputs the commands read beyond the dataset loaders.

* ``judge-pool``: a pool file into ``finegrain judge``: the pool reader, the judging
  store, the page model (each shown item's query and highlighted passage, the grades the
  annotator may click), and the judgments export read back by finegrain's TREC qrels reader;
  a share of the inputs (chosen by their bytes) also goes through the page's HTTP routes;
* ``distant-answers``: an answers file into ``finegrain distant-label``: the qrels it
  writes, read back by finegrain's qrels reader, must hold exactly the labels a brute-force
  span F1 computes;
* ``train-pairs``: a pairs file (and its provenance sidecar) into the reader and the
  held-out split ``finegrain train`` makes before it loads a model;
* ``concepts``: the ground-truth and retrieved object files into ``finegrain concepts``
  (query-agnostic): CA, NCS, CE, SD and SD binary against brute-force matchings;
* ``album-queries``: a query file into ``finegrain album eval --queries`` (the reader and
  the checks against the album), on a tiny PhotoBench album made once.

Each oracle reads the bytes on its own, from the format descriptions in the readers'
docstrings and the one id rule of :mod:`finegrain.io.ids` (restated here from Unicode
categories; only its length bound is shared). WordNet itself (nltk's reader) is the
reference for synset names and path similarity. One-time setup (the album, a folder for
the files the commands write) is made lazily, on the first input.
"""

from __future__ import annotations

import atexit
import importlib.util
import io
import itertools
import json
import math
import os
import shutil
import tempfile
import unicodedata
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

from finegrain.album.bench.evaluation import _judged_queries
from finegrain.album.bench.query_file import read_query_file
from finegrain.build import judge  # its page (judge.create_app) needs the judge extra: looked up when used
from finegrain.build.distant import check_threshold, distant_label, read_answers
from finegrain.build.distant import write_qrels as write_distant_qrels
from finegrain.build.judge.export import export_qrels, write_export
from finegrain.build.judge.highlight import highlight, query_terms
from finegrain.build.judge.store import JudgmentStore
from finegrain.build.pool_file import read_pool
from finegrain.build.textset import read_text_set
from finegrain.diagnose.concepts.objects import read_object_set
from finegrain.diagnose.concepts.report import local_report, render_local
from finegrain.errors import FinegrainError
from finegrain.io.files import read_qrels_file
from finegrain.io.ids import MAX_ID_CHARS
from finegrain.io.photobench import read_album
from finegrain.lexicons.wordnet import wordnet
from finegrain.testing.fuzz import Files, Invalid, Target
from finegrain.train.finetune_data import read_pairs, split_by_passage

_INT64 = (-(1 << 63), (1 << 63) - 1)


# --------------------------------------------------------------------------- reference reading


def _utf8(b: bytes) -> str:
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        raise Invalid(f"not UTF-8: {b[:40]!r}") from None


def _json(text: str) -> Any:
    """Strict JSON: no NaN or Infinity, no lone surrogate; anything Python cannot parse is invalid."""

    def constant(name: str) -> Any:
        raise Invalid(f"{name} is not JSON")

    try:
        value = json.loads(text, parse_constant=constant)
    except Invalid:
        raise
    except (ValueError, RecursionError) as e:
        raise Invalid(f"not JSON: {type(e).__name__}") from None
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise Invalid("a lone surrogate") from None
    return value


def _document(data: bytes) -> Any:
    """A whole JSON file (a UTF-8 byte-order mark at its start is not part of it)."""
    return _json(_utf8(data[3:] if data.startswith(b"\xef\xbb\xbf") else data))


def _records(data: bytes) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line, object)`` of a JSON-lines file: lines end at ``\\n`` (a ``\\r`` before it is dropped),
    a byte-order mark may open the file, lines holding only whitespace are skipped."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    for n, raw in enumerate(data.split(b"\n"), 1):
        line = _utf8(raw[:-1] if raw.endswith(b"\r") else raw)
        if not line.strip():
            continue
        obj = _json(line)
        if not isinstance(obj, dict):
            raise Invalid(f"line {n} is not an object")
        yield n, obj


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and _INT64[0] <= v <= _INT64[1]


def _control(c: str) -> bool:
    return unicodedata.category(c) in ("Cc", "Cs")


def _json_id(v: Any, *, numbers: bool = True) -> str:
    """An id of a JSON format: a string (or an integer, its decimal form), not blank, not over-long."""
    if numbers and isinstance(v, int) and not isinstance(v, bool):
        v = str(v)
    if not isinstance(v, str) or not v.strip() or len(v) > MAX_ID_CHARS:
        raise Invalid(f"id {v!r:.40}")
    return v


def _tsv_ok(s: str) -> bool:
    """Whether a tab-separated field can hold ``s``: no control character, line or paragraph separator."""
    return not any(_control(c) or c in "\u2028\u2029" for c in s)


def _token_ok(s: str, first: bool) -> bool:
    """Whether a whitespace-separated field can hold ``s`` (a query id opening a line: no leading ``#``)."""
    return not any(_control(c) or c.isspace() for c in s) and not (first and s.startswith("#"))


def _removed_at_exit(folder: Path) -> Path:
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


class _Spare:
    """Folders for the files the commands write (never the fuzzer's input folder, which it empties)."""

    @staticmethod
    @cache
    def root() -> Path:
        base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None  # no fsync cost
        return _removed_at_exit(Path(tempfile.mkdtemp(prefix="finegrain-fuzz-inputs-", dir=base)))

    @staticmethod
    def clear() -> Path:
        root = _Spare.root()
        for p in root.iterdir():
            if p.is_file():
                p.unlink()
        return root


# --------------------------------------------------------------------------- 1. pool files into `judge`

ANNOTATOR = "fuzz"
_POOL_HEADER = {"schema": "finegrain.pool/1", "depth": 10, "systems": ["bm25", "e5"], "seed": 0,
                "dataset": "dureader/mini", "lang": "zh", "grades": [0, 1, 2], "provenance": {"k": 10}}


def _pool_seeds() -> tuple[dict[str, bytes], ...]:
    def lines(*objs: Any) -> bytes:
        return "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objs).encode()

    def item(q: str, d: str, order: int, grade: int | None, systems: list[str]) -> dict[str, Any]:
        return {"qid": q, "doc_id": d, "order": order, "n_systems": len(systems), "best_rank": order + 1,
                "systems": systems, "grade": grade}

    zh = lines(_POOL_HEADER, {"query": "q1", "text": "紫色的花"}, {"query": "q2", "text": "how to fry chicken"},
               {"doc": "d7", "text": "一朵紫色的花在花瓶里。"}, {"doc": "d8", "text": "Fried chicken, crisp."},
               item("q1", "d7", 0, None, ["bm25", "e5"]), item("q1", "d8", 1, 0, ["e5"]),
               item("q2", "d8", 2, None, ["bm25"]), item("q2", "d7", 3, None, ["bm25", "e5"]))
    en = lines({**_POOL_HEADER, "lang": "en", "grades": [0, 1], "dataset": None, "provenance": None},
               {"query": "301", "text": "purple flowers in a vase"},
               {"doc": "FBIS3-10082", "text": "A purple flower in a vase. Flowers, purple!"},
               item("301", "FBIS3-10082", 0, None, ["run-a"]), item("301", "LA010189-0001", 1, 1, ["run-a"]),
               item("302", "FBIS3-10082", 2, None, []))
    return ({"pool.jsonl": zh}, {"pool.jsonl": en})


def pool_reference(files: Files) -> Any:
    """The pool (``finegrain.pool/1``, :mod:`finegrain.build.pool_file`), judged by one annotator who
    gives the ``i``-th item shown the ``i % n``-th grade of the scale, then exported as TREC qrels
    (None: an id a TREC line cannot hold, so the export is refused) and as BEIR qrels."""
    header: dict[str, Any] | None = None
    queries: dict[str, str] = {}
    texts: dict[str, str] = {}
    items: list[tuple[str, str, int | None]] = []
    for _, obj in _records(files["pool.jsonl"]):
        if header is None:
            if obj.get("schema") != "finegrain.pool/1":
                raise Invalid("no header")
            header = obj
            continue
        if "query" in obj or "doc" in obj:
            key, into = ("query", queries) if "query" in obj else ("doc", texts)
            rid = _json_id(obj[key], numbers=False)
            if not isinstance(obj.get("text"), str) or rid in into:
                raise Invalid(f"{key} text record")
            into[rid] = obj["text"]
            continue
        if "qid" not in obj or "doc_id" not in obj or not all(k in obj for k in ("order", "n_systems", "best_rank")):
            raise Invalid("item fields")
        qid, doc = _json_id(obj["qid"], numbers=False), _json_id(obj["doc_id"], numbers=False)
        if not all(_is_int(obj[k]) for k in ("order", "n_systems", "best_rank")):
            raise Invalid("item numbers")
        grade = obj.get("grade")
        if grade is not None and not _is_int(grade):
            raise Invalid("item grade")
        systems = obj.get("systems", [])
        if not isinstance(systems, list) or not all(isinstance(s, str) for s in systems):
            raise Invalid("item systems")
        if any((qid, doc) == (q, d) for q, d, _ in items):
            raise Invalid("an item twice")
        items.append((qid, doc, grade))
    if header is None:
        raise Invalid("empty")
    for key in ("depth", "seed"):
        if not _is_int(header.get(key, 0)):
            raise Invalid(key)
    systems = header.get("systems")
    if not isinstance(systems, list) or not all(isinstance(s, str) for s in systems):
        raise Invalid("systems")
    for key in ("dataset", "lang"):
        if header.get(key) is not None and not isinstance(header[key], str):
            raise Invalid(key)
    if header.get("provenance") is not None and not isinstance(header["provenance"], dict):
        raise Invalid("provenance")
    grades = header.get("grades", [0, 1, 2])
    if not isinstance(grades, list) or not all(_is_int(g) for g in grades) or len(set(grades)) != len(grades) \
            or len(grades) < 2:
        raise Invalid("grades")
    scale = sorted(grades)
    shown = [(q, d) for q, d, g in items if g is None]
    views = tuple((q, d, queries.get(q), texts.get(d)) for q, d in shown)
    judged: dict[str, dict[str, int]] = {}
    given = {pair: scale[i % len(scale)] for i, pair in enumerate(shown)}
    for q, d, g in items:
        grade = given.get((q, d), g)
        if grade is not None:
            judged.setdefault(q, {})[d] = grade
    if not judged:
        raise Invalid("nothing to export")
    if not all(_tsv_ok(q) and all(_tsv_ok(d) for d in docs) for q, docs in judged.items()):
        raise Invalid("an id no qrels line can hold")
    trec = judged if all(_token_ok(q, True) and all(_token_ok(d, False) for d in docs)
                         for q, docs in judged.items()) else None
    return tuple(scale), views, trec, judged


def _judge_load(p: Path) -> Any:
    """What ``finegrain judge POOL --db DB --serve`` shows and ``finegrain judge export`` writes."""
    spare = _Spare.clear()
    pool = read_pool(p / "pool.jsonl")
    db = spare / "judgments.sqlite"
    if zlib.crc32(p.joinpath("pool.jsonl").read_bytes()) % 16 == 0:
        scale, views = _judge_over_http(pool, db)
    else:
        scale, views = _judge_in_process(pool, db)
    with JudgmentStore.open(db, pool, create=False) as store:
        result = export_qrels(store, pool=pool)
    if result.n_items == 0:  # what `finegrain judge export` refuses
        raise FinegrainError("the store holds no grade yet, so there is nothing to export")
    try:  # --out qrels.trec; a TREC line cannot hold every id of a pool, and the error says to use .tsv
        trec = _read_back(write_export(result, spare / "qrels.trec"))
    except FinegrainError:
        trec = None
    return scale, views, trec, _read_back(write_export(result, spare / "qrels.tsv"))


def _read_back(path: Path) -> Any:
    """The qrels file as ``finegrain evaluate`` reads it, or why it cannot (then it differs from the reference)."""
    try:
        return read_qrels_file(path)[0].to_dict()
    except FinegrainError as e:
        return "the export cannot be read back", str(e)


def _judge_in_process(pool: Any, db: Path) -> tuple[tuple[int, ...], tuple[Any, ...]]:
    """The store and page model without a server: each shown item's view, then a grade for it."""
    items = pool.unjudged()  # the items the page shows (without --all)
    views = []
    with JudgmentStore.open(db, pool, pool_name="pool.jsonl") as store:
        scale = store.scale
        name = store.login(ANNOTATOR)
        for i, it in enumerate(items):
            query, passage = pool.queries.get(it.qid), pool.texts.get(it.doc_id)
            pieces = highlight(passage, query_terms(query or "")) if passage is not None else []
            views.append((it.qid, it.doc_id, query, "".join(t for t, _ in pieces) if passage is not None else None))
            store.record(name, it.qid, it.doc_id, scale.grades[i % len(scale.grades)])
        store.progress(name, [(it.qid, it.doc_id) for it in items])
    return scale.grades, tuple(views)


def _judge_over_http(pool: Any, db: Path) -> tuple[tuple[int, ...], tuple[Any, ...]]:
    """The same through the page's routes (FastAPI's TestClient): a 5xx, or a 4xx to a request the
    page itself would send, is a defect."""
    from fastapi.testclient import TestClient  # the judge extra; only this share of inputs needs it

    def ok(response: Any) -> Any:
        if response.status_code != 200:
            raise AssertionError(f"{response.request.url.path}: {response.status_code} {response.text[:200]}")
        return response.json()

    views = []
    with TestClient(judge.create_app(pool, db, title="pool.jsonl")) as client:
        if client.get("/").status_code != 200:
            raise AssertionError("the page did not load")
        config = ok(client.get("/api/config"))
        grades = tuple(g["grade"] for g in config["grades"])
        state = ok(client.post("/api/login", json={"annotator": ANNOTATOR}))
        for i in range(config["total"]):
            view = ok(client.get("/api/item", params={"annotator": ANNOTATOR, "position": i}))
            passage = "".join(t for t, _ in view["passage"]) if view["has_passage"] else None
            views.append((view["qid"], view["doc_id"], view["query"], passage))
            state = ok(client.post("/api/judgments", json={"annotator": ANNOTATOR, "qid": view["qid"],
                                                         "doc_id": view["doc_id"], "grade": grades[i % len(grades)]}))
        if state["next"] is not None or state["progress"]["judged"] != config["total"]:
            raise AssertionError(f"every item graded, yet the state is {state}")
        ok(client.get("/api/team"))
    return grades, tuple(views)


def judge_target() -> Target:
    return Target("judge-pool", _pool_seeds(), _judge_load, pool_reference)


# --------------------------------------------------------------------------- 2. answers into `distant-label`

THRESHOLD = 0.5
_CJK = ("\u3400", "\u9fff"), ("\uf900", "\ufaff")


def _is_cjk(c: str) -> bool:
    return any(a <= c <= b for a, b in _CJK)


def _units(text: str, lang: str) -> list[str]:
    """Units (:mod:`finegrain.build.units`): zh a Chinese character, or a run of other word
    characters; en a run of word characters (letters, digits of any script, ``_``); NFKC, case-folded."""
    out: list[str] = []
    run = ""
    for c in text:
        word = c.isalnum() or c == "_"
        if lang == "zh" and _is_cjk(c):
            if run:
                out.append(run)
                run = ""
            out.append(c)
        elif word:
            run += c
        elif run:
            out.append(run)
            run = ""
    if run:
        out.append(run)
    return [unicodedata.normalize("NFKC", u).casefold() for u in out]


def _best_f1_reaches(passage: list[str], answer: list[str], threshold: float) -> bool:
    """Whether some contiguous span of ``passage`` has bag-of-units F1 ``2c / (|s| + |a|) >= threshold``."""
    need = Counter(answer)
    for i in range(len(passage)):
        have: Counter[str] = Counter()
        c = 0
        for j in range(i, len(passage)):
            u = passage[j]
            have[u] += 1
            if have[u] <= need[u]:
                c += 1
            if c and 2 * c >= threshold * (j - i + 1 + len(answer)):
                return True
    return False


def _passage_document(obj: dict[str, Any], pid: str) -> str:
    doc = obj.get("doc_id")
    if isinstance(doc, str) or (isinstance(doc, int) and not isinstance(doc, bool)):
        return str(doc)
    head, sep, tail = pid.rpartition("#p")
    return head if sep and tail and all("0" <= c <= "9" for c in tail) else pid


def distant_reference(files: Files) -> dict[str, dict[str, int]]:
    """The qrels ``finegrain distant-label`` must write for these answers: grade 1 where a span of the
    passage reaches F1 0.5 with an answer, 0 for the other candidates named by ``doc_ids``."""
    lang = files["lang"].decode().strip()
    passages = [(str(o.get("_id", o.get("id"))), o["text"], o) for _, o in _records(files["passages.jsonl"])]
    answers: dict[str, list[str]] = {}
    candidates: dict[str, list[str]] = {}
    for _, obj in _records(files["answers.jsonl"]):
        key = next((k for k in ("query_id", "question_id", "_id", "id") if k in obj), None)
        if key is None:
            raise Invalid("no query id")
        qid = _json_id(obj[key])
        if qid in answers:
            raise Invalid("a query twice")
        if not isinstance(obj.get("answers"), list) or not all(isinstance(a, str) for a in obj["answers"]):
            raise Invalid("answers")
        answers[qid] = obj["answers"]
        docs = obj.get("doc_ids")
        if docs is not None:
            if not isinstance(docs, list) or not all(
                    isinstance(d, str) or (isinstance(d, int) and not isinstance(d, bool)) for d in docs):
                raise Invalid("doc_ids")
            candidates[qid] = [str(d) for d in docs]
    if not answers:
        raise Invalid("no record")
    units = {pid: _units(text, lang) for pid, text, _ in passages}
    out: dict[str, dict[str, int]] = {}
    for qid, texts in answers.items():
        usable = [u for u in (_units(a, lang) for a in texts) if u]
        if not usable:
            continue
        allowed = None if qid not in candidates else set(candidates[qid])
        for pid, _, obj in passages:
            if allowed is not None and _passage_document(obj, pid) not in allowed:
                continue
            if any(_best_f1_reaches(units[pid], a, THRESHOLD) for a in usable):
                out.setdefault(qid, {})[pid] = 1
            elif allowed is not None:
                out.setdefault(qid, {})[pid] = 0
    if not out:
        raise Invalid("no judgement to write")
    if not all(_tsv_ok(q) and all(_tsv_ok(p) for p in docs) for q, docs in out.items()):
        raise Invalid("an id a tab-separated line cannot hold")
    return out


def _distant_load(p: Path) -> Any:
    """``finegrain distant-label PASSAGES --answers ANSWERS --lang L --out qrels.tsv``, its qrels read back."""
    check_threshold(THRESHOLD)
    answers = read_answers(p / "answers.jsonl")
    passages = read_text_set(str(p / "passages.jsonl"), "passages")
    labels = distant_label(passages, answers, threshold=THRESHOLD, lang=(p / "lang").read_text().strip())
    out = _Spare.clear() / "qrels.tsv"
    write_distant_qrels(labels, out)
    try:
        qrels, _ = read_qrels_file(out)
    except FinegrainError as e:
        return "the qrels written cannot be read back", str(e)
    return qrels.to_dict()


def _distant_seeds() -> tuple[dict[str, bytes], ...]:
    def lines(*objs: Any) -> bytes:
        return "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objs).encode()

    zh_passages = lines(
        {"_id": "d1#p0", "doc_id": "d1", "text": "北京是中国的首都，也是一座历史名城。"},
        {"_id": "d1#p1", "doc_id": "d1", "text": "上海位于长江入海口。"},
        {"_id": "d2#p0", "text": "首都北京有故宫和长城，oracle 时间格式"},
    )
    zh_answers = lines(
        {"query_id": "q1", "answers": ["北京是中国的首都"], "doc_ids": ["d1", "d2"]},
        {"question_id": 2, "answers": ["长江", "没有"]},
        {"query_id": "q 3", "answers": ["ORACLE 时间"], "doc_ids": ["d2", "nope"]},
        {"id": "q4", "answers": ["。。。"], "doc_ids": ["d1"]},
    )
    en_passages = lines(
        {"_id": "p1", "text": "The capital of France is Paris, a city on the Seine."},
        {"_id": "p2", "text": "Paris Hilton is not a city."},
        {"_id": "doc9#p12", "text": "It's 3.5 km from the Eiffel Tower to the Louvre."},
    )
    en_answers = lines(
        {"query_id": "capital", "answers": ["Paris is the capital of France"]},
        {"query_id": "distance", "answers": ["3.5 km", "about four kilometres"], "doc_ids": ["doc9", "p2"]},
    )
    solo = lines({"query_id": "solo", "answers": ["上海位于长江"]})  # one label: an edit can leave none
    return ({"passages.jsonl": zh_passages, "answers.jsonl": zh_answers, "lang": b"zh"},
            {"passages.jsonl": en_passages, "answers.jsonl": en_answers, "lang": b"en"},
            {"passages.jsonl": zh_passages, "answers.jsonl": solo, "lang": b"zh"})


def distant_target() -> Target:
    return Target("distant-answers", _distant_seeds(), _distant_load, distant_reference, mutable=("answers.jsonl",))


# --------------------------------------------------------------------------- 3. pairs into `train`

HELD_OUT = 0.2


def pairs_reference(files: Files) -> Any:
    """The pairs of a pairs file (:mod:`finegrain.train.finetune_data`) and its provenance sidecar."""
    pairs = []
    for n, obj in _records(files["pairs.jsonl"]):
        cols = next((c for c in (("query", "passage"), ("query", "positive"), ("anchor", "positive"))
                     if c[0] in obj and c[1] in obj), None)
        if cols is None:
            raise Invalid("no query and passage")
        query, passage = obj[cols[0]], obj[cols[1]]
        if not all(isinstance(t, str) and t.strip() for t in (query, passage)):
            raise Invalid("texts")
        pid, style = obj.get("passage_id"), obj.get("style")
        if style is not None and not isinstance(style, str):
            raise Invalid("style")
        key = f"id:{_json_id(pid)}" if pid is not None else f"text:{passage}"
        pairs.append((query, passage, key, style, n))
    if not pairs:
        raise Invalid("no pair")
    side = files.get("pairs.jsonl.provenance.json")
    return tuple(pairs), (None if side is None else _document(side))


def _pairs_load(p: Path) -> Any:
    """What ``finegrain train --pairs FILE`` reads and checks before it loads a model: the pairs, the
    sidecar, and the held-out split (whole passages on one side; every pair on exactly one side)."""
    data = read_pairs(p / "pairs.jsonl")
    train, held = split_by_passage(data.pairs, HELD_OUT, 0)
    if sorted(x.line for x in (*train, *held)) != sorted(x.line for x in data.pairs):
        raise AssertionError("the split lost or repeated a pair")
    if {x.key for x in train} & {x.key for x in held}:
        raise AssertionError("a passage is on both sides of the split")
    return tuple((x.query, x.passage, x.key, x.style, x.line) for x in data.pairs), data.provenance


def _pairs_seeds() -> tuple[dict[str, bytes], ...]:
    rows = [
        {"query": "purple flower", "passage": "A purple flower in a vase.", "passage_id": "d1", "style": "kw",
         "source": "gen"},
        {"query": "紫色的花", "passage": "一朵紫色的花", "passage_id": 7, "style": "sm"},
        {"query": "fried chicken", "positive": "Crisp fried chicken at a night market."},
        {"anchor": "night market", "positive": "Crisp fried chicken at a night market.", "style": None},
    ] + [{"query": f"query {i}", "passage": f"passage number {i}", "passage_id": f"p{i % 5}"} for i in range(9)]
    body = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()
    side = json.dumps({"transductive": True, "transductive_dataset": "capretrieval/zh", "n": [1, 2.5, None]}).encode()
    return ({"pairs.jsonl": body}, {"pairs.jsonl": body, "pairs.jsonl.provenance.json": side})


def pairs_target() -> Target:
    return Target("train-pairs", _pairs_seeds(), _pairs_load, pairs_reference)


# --------------------------------------------------------------------------- 4. object files into `concepts`

TD = 1.0
BOX_LIMIT, MIN_SIDE = 1e7, 1e-7  # the box rule of diagnose/concepts/objects.py, restated
_TOLERANCE = 1e-9
_MAX_SIDE = 14  # the most objects of one synset (or non-common synsets) the exact matching here takes


@cache
def _canonical(name: str) -> bool:
    """Whether ``name`` is the name of a WordNet 3.0 synset (its own name, not another way to reach it)."""
    try:
        return bool(wordnet().synset(name).name() == name)
    except Exception:  # any failure to find it: not a synset name
        return False


@cache
def _path_similarity(a: str, b: str) -> float:
    a, b = min(a, b), max(a, b)
    value = wordnet().synset(a).path_similarity(wordnet().synset(b))
    return 0.0 if value is None else float(value)


def _objects(data: bytes) -> list[tuple[str, float]]:
    doc = _document(data)
    if not isinstance(doc, dict) or not isinstance(doc.get("objects"), list):
        raise Invalid("objects")
    out = []
    for item in doc["objects"]:
        if not isinstance(item, dict) or not isinstance(item.get("synset"), str) or "bbox" not in item:
            raise Invalid("object")
        box = item["bbox"]
        if not isinstance(box, list) or len(box) != 4 or not all(
                isinstance(v, int | float) and not isinstance(v, bool) for v in box):
            raise Invalid("bbox")
        if any(isinstance(v, float) and not math.isfinite(v) for v in box):
            raise Invalid("bbox not finite")
        if any(abs(v) > BOX_LIMIT for v in box) or min(box[2], box[3]) < MIN_SIDE:
            raise Invalid("bbox range")
        if not _canonical(item["synset"]):
            raise Invalid("synset")
        out.append((item["synset"], float(box[2]) * float(box[3])))
    return out


class _Scores:
    """The expected scores: floats within a relative tolerance; SD binary, which depends on which of
    several optimal size matchings is taken, as the set of values the optimal matchings give."""

    def __init__(self, exact: tuple[Any, ...], floats: tuple[float | None, ...] | None,
                 binary: frozenset[float] | None) -> None:
        self.exact, self.floats, self.binary = exact, floats, binary  # floats None: not checked

    def __eq__(self, got: object) -> bool:
        if not isinstance(got, tuple) or len(got) != 3:
            return False
        exact, floats, binary = got
        if exact != self.exact:
            return False
        if self.floats is None:
            return True
        if len(floats) != len(self.floats):
            return False
        for a, b in zip(floats, self.floats, strict=True):
            if (a is None) != (b is None):
                return False
            if a is not None and b is not None and not math.isclose(a, b, rel_tol=_TOLERANCE, abs_tol=_TOLERANCE):
                return False
        if self.binary is None:
            return binary is None
        return binary is not None and any(math.isclose(binary, b, abs_tol=_TOLERANCE) for b in self.binary)

    def __ne__(self, got: object) -> bool:
        return not self == got

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"({self.exact!r}, {self.floats!r}, one of {sorted(self.binary or ())!r})"


def _least_costs(cost: list[list[float]], flagged: Callable[[float], bool]) -> dict[int, float]:
    """Over every matching that pairs each node of the smaller side of ``cost`` (rows x columns): for each
    number ``k`` of matched pairs whose cost is ``flagged``, the least total cost of such a matching.

    Exact, by dynamic programming over the rows and the set of columns already taken.
    """
    if len(cost) > len(cost[0]):
        cost = [list(col) for col in zip(*cost, strict=True)]
    states: dict[int, dict[int, float]] = {0: {0: 0.0}}
    for row in cost:
        nxt: dict[int, dict[int, float]] = {}
        for mask, by_k in states.items():
            for j, c in enumerate(row):
                if mask >> j & 1:
                    continue
                slot = nxt.setdefault(mask | 1 << j, {})
                add = 1 if flagged(c) else 0
                for k, total in by_k.items():
                    if total + c < slot.get(k + add, math.inf):
                        slot[k + add] = total + c
        states = nxt
    out: dict[int, float] = {}
    for by_k in states.values():
        for k, total in by_k.items():
            out[k] = min(out.get(k, math.inf), total)
    return out


def concepts_reference(files: Files) -> _Scores:
    """CA, NCS, CE, SD and SD binary (:mod:`finegrain.diagnose.concepts.metrics`), the matchings solved
    exactly over every full matching."""
    gt, rt = _objects(files["gt.json"]), _objects(files["retrieved.json"])
    vg, vr = {s for s, _ in gt}, {s for s, _ in rt}
    common = vg & vr
    dg, dr = sorted(vg - common), sorted(vr - common)
    cg, cr = Counter(s for s, _ in gt), Counter(s for s, _ in rt)
    exact = (sum(abs(cg[u] - cr[u]) for u in common), tuple(sorted(common)), tuple(dg), tuple(dr))
    if max(len(dg), len(dr), *(max(cg[u], cr[u]) for u in common), 0) > _MAX_SIDE:
        return _Scores(exact, None, None)  # past what the exact matching here solves quickly: names and CE only
    ca = len(common) / len(vg) if vg else None
    ncs = None
    if dg and dr:
        least = _least_costs([[-_path_similarity(a, b) for b in dr] for a in dg], lambda c: False)
        ncs = -least[0] / min(len(dg), len(dr))
    sd = 0.0
    counts: list[set[int]] = []
    n_pairs = 0
    for u in sorted(common):
        ag, ar = [a for s, a in gt if s == u], [a for s, a in rt if s == u]
        least = _least_costs([[abs(x - y) / min(x, y) for y in ar] for x in ag], lambda da: da >= TD)
        low = min(least.values())
        sd += low / min(len(ag), len(ar))
        counts.append({k for k, total in least.items() if total <= low + _TOLERANCE * max(1.0, abs(low))})
        n_pairs += min(len(ag), len(ar))
    binary = None
    if n_pairs:
        binary = frozenset(sum(combo) / n_pairs for combo in itertools.product(*counts))
    return _Scores(exact, (ca, ncs, sd), binary)


def _concepts_load(p: Path) -> Any:
    """``finegrain concepts -g GT --retrieved R`` (query-agnostic, TD 1): the scores and the tables it prints."""
    from rich.console import Console  # rich renders the tables; the CLI prints them the same way

    gt = read_object_set(p / "gt.json")
    rt = read_object_set(p / "retrieved.json")
    report = local_report(gt, rt, None, td=TD)
    console = Console(file=io.StringIO(), width=120)
    for table in render_local(report):
        console.print(table)
    json.dumps(report.comparison.scores.to_dict(), allow_nan=False)  # what --json prints must be JSON
    c, s = report.comparison, report.comparison.scores
    return (s.ce, c.common, c.gt_only, c.retrieved_only), (s.ca, s.ncs, s.sd), s.sd_binary


def _concepts_seeds() -> tuple[dict[str, bytes], ...]:
    def objs(*rows: tuple[str, list[float]]) -> bytes:  # one object a line: line edits keep the JSON valid
        body = ",\n".join(json.dumps({"synset": s, "bbox": b}) for s, b in rows)
        return ('{"objects": [\n' + body + "\n]}\n").encode()

    zebra_gt = objs(("zebra.n.01", [10, 10, 50, 40]), ("zebra.n.01", [70, 12, 20, 20]), ("hill.n.01", [0, 0, 300, 80]),
                    ("tree.n.01", [200, 5, 30, 90]), ("sky.n.01", [0, 0, 640, 100]))
    zebra_rt = objs(("zebra.n.01", [5, 5, 60, 40]), ("grassland.n.01", [0, 100, 640, 200]),
                    ("grass.n.01", [0, 300, 100, 10]), ("zebra.n.01", [100, 50, 1e-7, 1e7]),
                    ("zebra.n.01", [-1e7, 1e7, 2.5, 0.4]))
    tiny_gt = objs(("dog.n.01", [0, 0, 1e-7, 1e-7]), ("dog.n.01", [1, 1, 1e7, 1e7]), ("man.n.01", [0.5, 0.5, 1, 1]))
    tiny_rt = objs(("dog.n.01", [0, 0, 2, 2]), ("car.n.01", [3, 3, 1, 1]))
    return ({"gt.json": zebra_gt, "retrieved.json": zebra_rt}, {"gt.json": tiny_gt, "retrieved.json": tiny_rt})


def concepts_target() -> Target:
    return Target("concepts", _concepts_seeds(), _concepts_load, concepts_reference)


# --------------------------------------------------------------------------- 5. album query files

EVAL_LANG = "en"
_LANGS = {"en": "en", "english": "en", "en-us": "en", "zh": "zh", "cn": "zh", "zh-cn": "zh", "zh-hans": "zh",
          "chinese": "zh"}


def _album_files() -> dict[str, bytes]:
    def dump(x: Any) -> bytes:
        return json.dumps(x, ensure_ascii=False, indent=1).encode()

    metadata = {
        "IMG_0001.jpg": {"latitude": 30.25, "longitude": 120.16, "time": "2025-05-04T16:40:41"},
        "IMG_0002.jpg": {"latitude": None, "longitude": None, "time": "2024-12-31T23:59:59"},
        "IMG 0003.jpg": {"latitude": 35.68, "longitude": 139.69, "time": ""},
    }
    faces = {"image_to_face_ids": {"IMG_0001.jpg": ["1", "2"], "IMG_0002.jpg": ["2"]}}
    queries = [{"query_cn": "和妹妹在杭州的照片", "query_en": "photos with my sister in Hangzhou", "Source": "MF",
                "Location": "fact", "Time": None, "Person": "fact", "Object": None, "Concept": None, "Genre": None,
                "ground_truth": ["IMG_0001.jpg"], "ground_truth_count": 1}]
    return {
        "metadata.json": dump(metadata),
        "face_info_en.json": dump({"face_id_to_nicknames": {"1": ["me"], "2": ["sister"]}, **faces}),
        "face_info_cn.json": dump({"face_id_to_nicknames": {"1": ["我"], "2": ["妹妹"]}, **faces}),
        "samples_query.json": dump(queries),
    }


@cache
def _album() -> Any:
    """The album query files are checked against (written and read once)."""
    folder = _removed_at_exit(Path(tempfile.mkdtemp(prefix="finegrain-fuzz-album-"))) / "album"
    folder.mkdir()
    for name, data in _album_files().items():
        (folder / name).write_bytes(data)
    return read_album(folder)


def album_queries_reference(files: Files) -> Any:
    """A query file (:mod:`finegrain.album.bench.query_file`) and the queries ``album eval --lang en``
    scores from it: ids unused by the album, ground truth among its photos."""
    album = _album()
    doc = _document(files["queries.json"])
    extra: dict[str, Any] = {}
    if isinstance(doc, dict):
        if "queries" not in doc:
            raise Invalid("no queries")
        extra = {k: v for k, v in doc.items() if k != "queries"}
        doc = doc["queries"]
    if not isinstance(doc, list) or not doc:
        raise Invalid("no list of queries")
    read: list[tuple[str, str, str, tuple[str, ...], str]] = []
    for obj in doc:
        if not isinstance(obj, dict) or "id" not in obj:
            raise Invalid("query object")
        qid = _json_id(obj["id"])
        if any(qid == q[0] for q in read):
            raise Invalid("an id twice")
        text, lang = obj.get("text"), obj.get("lang")
        if not isinstance(text, str) or not text.strip() or not isinstance(lang, str):
            raise Invalid("text or lang")
        code = _LANGS.get(lang.strip().lower())
        truth = obj.get("ground_truth")
        if code is None or not isinstance(truth, list):
            raise Invalid("lang or ground truth")
        photos = [_json_id(t, numbers=False) for t in truth]
        kind = obj.get("type", "file")
        if not isinstance(kind, str):
            raise Invalid("type")
        read.append((qid, text, code, tuple(sorted(set(photos))), kind or "file"))
    scored = [q for q in read if q[2] == EVAL_LANG]
    if not scored:
        raise Invalid("no query in the language evaluated")
    taken = {q.id for q in album.queries}
    for q in scored:
        if q[0] in taken or any(t not in album.photos for t in q[3]):
            raise Invalid("an album query id, or a photo not in the album")
    return tuple(read), extra, tuple((q[0], q[1], q[4], q[3]) for q in scored)


def _album_queries_load(p: Path) -> Any:
    """``finegrain album eval --queries FILE --no-album-queries``: the file read, then the queries the
    evaluation takes from it, checked against the album (the search itself is not run)."""
    album = _album()
    qf = read_query_file(p / "queries.json")
    queries, gt, _ = _judged_queries(album, EVAL_LANG, [p / "queries.json"], False)
    read = tuple((q.id, q.text, q.lang, tuple(sorted(set(q.ground_truth))), q.type) for q in qf.queries)
    return read, dict(qf.extra), tuple((q.id, q.text, q.type, tuple(gt[q.id])) for q in queries)


def _album_query_seeds() -> tuple[dict[str, bytes], ...]:
    listed: list[dict[str, Any]] = [
        {"id": "z1", "text": "photos in Tokyo", "lang": "en", "ground_truth": []},
        {"id": "z2", "text": "my sister in Hangzhou", "lang": "en", "ground_truth": ["IMG_0001.jpg", "IMG 0003.jpg"],
         "type": "MF", "dimensions": {"Person": "fact"}},
        {"id": 3, "text": "东京的照片", "lang": "cn", "ground_truth": ["IMG_0002.jpg"]},
    ]
    wrapped = {"queries": [{**listed[1], "id": "w1", "lang": "EN"}, {**listed[2], "id": "w2", "lang": "zh"}],
               "provenance": {"made_by": "finegrain album zero-answer", "n": 2}}
    return ({"queries.json": json.dumps(listed, ensure_ascii=False, indent=1).encode()},
            {"queries.json": json.dumps(wrapped, ensure_ascii=False, indent=1).encode()})


def album_queries_target() -> Target:
    return Target("album-queries", _album_query_seeds(), _album_queries_load, album_queries_reference)


# --------------------------------------------------------------------------- all


def input_targets() -> list[Target]:
    """The command inputs beyond the dataset loaders: pools (judge; with the judge extra), answers
    (distant-label), training pairs (train), object files (concepts) and album query files (album eval)."""
    judging = [judge_target()] if importlib.util.find_spec("fastapi") is not None else []
    return [*judging, distant_target(), pairs_target(), concepts_target(), album_queries_target()]


__all__ = ["input_targets"]
