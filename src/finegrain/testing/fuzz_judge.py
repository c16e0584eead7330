"""The ``judge-pool`` fuzz target: a pool file into ``finegrain judge`` (see :mod:`.fuzz_inputs`).

The pool reader, the judging store, the page model (each shown item's query and highlighted
passage, the grades the annotator may click) and the judgments export, written as TREC and as
BEIR qrels and read back by finegrain's qrels reader. One input in :data:`HTTP_SHARE`, chosen
by a checksum of its bytes, goes through the page's HTTP routes (FastAPI's TestClient) instead
of the in-process page model: building the app for each input costs many times the rest.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

from finegrain.build import judge  # its page (judge.create_app) needs the judge extra: looked up when used
from finegrain.build.judge.export import export_qrels, write_export
from finegrain.build.judge.highlight import highlight, query_terms
from finegrain.build.judge.store import JudgmentStore
from finegrain.build.pool_file import read_pool
from finegrain.errors import FinegrainError
from finegrain.io.files import read_qrels_file
from finegrain.testing.fuzz import Files, Invalid, Target
from finegrain.testing.fuzz_reading import Scratch, is_int64, json_id, json_records, token_ok, tsv_ok

# --------------------------------------------------------------------------- pool files into `judge`

ANNOTATOR = "fuzz"
HTTP_SHARE = 16
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
    spaced = lines({**_POOL_HEADER, "systems": ["run.jsonl"]}, {"query": "q 1", "text": "a cat"},
                   {"doc": "IMG 0001.jpg", "text": "A cat on a mat."},
                   item("q 1", "IMG 0001.jpg", 0, None, ["run.jsonl"]), item("q 1", "IMG 0002.jpg", 1, 2, []))
    return ({"pool.jsonl": zh}, {"pool.jsonl": en}, {"pool.jsonl": spaced})  # the last: no TREC export


def pool_reference(files: Files) -> Any:
    """The pool (``finegrain.pool/1``, :mod:`finegrain.build.pool_file`), judged by one annotator who
    gives the ``i``-th item shown the ``i % n``-th grade of the scale, then exported as TREC qrels
    (None: an id a TREC line cannot hold, so the export is refused) and as BEIR qrels."""
    header: dict[str, Any] | None = None
    queries: dict[str, str] = {}
    texts: dict[str, str] = {}
    items: list[tuple[str, str, int | None]] = []
    for _, obj in json_records(files["pool.jsonl"]):
        if header is None:
            if obj.get("schema") != "finegrain.pool/1":
                raise Invalid("no header")
            header = obj
            continue
        if "query" in obj or "doc" in obj:
            key, into = ("query", queries) if "query" in obj else ("doc", texts)
            rid = json_id(obj[key], numbers=False)
            if not isinstance(obj.get("text"), str) or rid in into:
                raise Invalid(f"{key} text record")
            into[rid] = obj["text"]
            continue
        if "qid" not in obj or "doc_id" not in obj or not all(k in obj for k in ("order", "n_systems", "best_rank")):
            raise Invalid("item fields")
        qid, doc = json_id(obj["qid"], numbers=False), json_id(obj["doc_id"], numbers=False)
        if not all(is_int64(obj[k]) for k in ("order", "n_systems", "best_rank")):
            raise Invalid("item numbers")
        grade = obj.get("grade")
        if grade is not None and not is_int64(grade):
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
        if not is_int64(header.get(key, 0)):
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
    if not isinstance(grades, list) or not all(is_int64(g) for g in grades) or len(set(grades)) != len(grades) \
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
    if not all(tsv_ok(q) and all(tsv_ok(d) for d in docs) for q, docs in judged.items()):
        raise Invalid("an id no qrels line can hold")
    trec = judged if all(token_ok(q, True) and all(token_ok(d, False) for d in docs)
                         for q, docs in judged.items()) else None
    return tuple(scale), views, trec, judged


def _judge_load(p: Path) -> Any:
    """What ``finegrain judge POOL --db DB --serve`` shows and ``finegrain judge export`` writes."""
    spare = Scratch.clear()
    pool = read_pool(p / "pool.jsonl")
    db = spare / "judgments.sqlite"
    if zlib.crc32(p.joinpath("pool.jsonl").read_bytes()) % HTTP_SHARE == 0:
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
