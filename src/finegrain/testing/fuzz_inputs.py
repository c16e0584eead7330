"""Fuzz targets for the inputs the commands read beyond the dataset loaders.

* ``judge-pool`` (:mod:`.fuzz_judge`): a pool file into ``finegrain judge``: the pool reader,
  the judging store, the page model (each shown item's query and highlighted passage), the
  judgments export written as TREC and as BEIR qrels and read back by finegrain's qrels reader;
  a share of the inputs (chosen by their bytes) goes through the page's HTTP routes;
* ``distant-answers``: an answers file into ``finegrain distant-label``: the qrels it
  writes, read back by finegrain's qrels reader, must hold exactly the labels a brute-force
  span F1 computes;
* ``train-pairs``: a pairs file (and its provenance sidecar) into the reader and the
  held-out split ``finegrain train`` makes before it loads a model;
* ``concepts`` (:mod:`.fuzz_concepts`): the ground-truth and retrieved object files into
  ``finegrain concepts`` (query-agnostic): CA, NCS, CE, SD and SD binary against exact matchings;
* ``album-queries``: a query file into ``finegrain album eval --queries`` (the reader and
  the checks against the album), on a tiny PhotoBench album made once.

Each oracle reads the bytes on its own (:mod:`.fuzz_reading`), from the format descriptions
in the readers' docstrings and the one id rule of :mod:`finegrain.io.ids`. One-time setup (the
album, a folder for the files the commands write) is made lazily, on the first input, and
removed at exit.
"""

from __future__ import annotations

import importlib.util
import json
import tempfile
import unicodedata
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

from finegrain.album.bench.evaluation import _judged_queries
from finegrain.album.bench.query_file import read_query_file
from finegrain.atomic import write_bytes
from finegrain.build.distant import check_threshold, distant_label, read_answers
from finegrain.build.distant import write_qrels as write_distant_qrels
from finegrain.build.textset import read_text_set
from finegrain.errors import FinegrainError
from finegrain.io.files import read_qrels_file
from finegrain.io.photobench import read_album
from finegrain.testing.fuzz import Files, Invalid, Target
from finegrain.testing.fuzz_concepts import concepts_target
from finegrain.testing.fuzz_judge import judge_target
from finegrain.testing.fuzz_reading import Scratch, json_document, json_id, json_records, removed_at_exit, tsv_ok
from finegrain.train.finetune_data import read_pairs, split_by_passage

# --------------------------------------------------------------------------- answers into `distant-label`

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
    passages = [(str(o.get("_id", o.get("id"))), o["text"], o) for _, o in json_records(files["passages.jsonl"])]
    answers: dict[str, list[str]] = {}
    candidates: dict[str, list[str]] = {}
    for _, obj in json_records(files["answers.jsonl"]):
        key = next((k for k in ("query_id", "question_id", "_id", "id") if k in obj), None)
        if key is None:
            raise Invalid("no query id")
        qid = json_id(obj[key])
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
    if not all(tsv_ok(q) and all(tsv_ok(p) for p in docs) for q, docs in out.items()):
        raise Invalid("an id a tab-separated line cannot hold")
    return out


def _distant_load(p: Path) -> Any:
    """``finegrain distant-label PASSAGES --answers ANSWERS --lang L --out qrels.tsv``, its qrels read back."""
    check_threshold(THRESHOLD)
    answers = read_answers(p / "answers.jsonl")
    passages = read_text_set(str(p / "passages.jsonl"), "passages")
    labels = distant_label(passages, answers, threshold=THRESHOLD, lang=(p / "lang").read_text().strip())
    out = Scratch.clear() / "qrels.tsv"
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



# --------------------------------------------------------------------------- pairs into `train`

HELD_OUT = 0.2


def pairs_reference(files: Files) -> Any:
    """The pairs of a pairs file (:mod:`finegrain.train.finetune_data`) and its provenance sidecar."""
    pairs = []
    counts = set()
    for n, obj in json_records(files["pairs.jsonl"]):
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
        key = f"id:{json_id(pid)}" if pid is not None else f"text:{passage}"
        negatives = obj.get("negatives", [])
        if "negatives" in obj and not (
                isinstance(negatives, list) and all(isinstance(t, str) and t.strip() for t in negatives)
                and passage not in negatives and len(set(negatives)) == len(negatives)):
            raise Invalid("negatives")
        counts.add(len(negatives))
        if len(counts) > 1:
            raise Invalid("records with different numbers of negatives")
        pairs.append((query, passage, key, style, n, tuple(negatives)))
    if not pairs:
        raise Invalid("no pair")
    side = files.get("pairs.jsonl.provenance.json")
    return tuple(pairs), (None if side is None else json_document(side))


def _pairs_load(p: Path) -> Any:
    """What ``finegrain train --pairs FILE`` reads and checks before it loads a model: the pairs, the
    sidecar, and the held-out split (whole passages on one side; every pair on exactly one side)."""
    data = read_pairs(p / "pairs.jsonl")
    train, held = split_by_passage(data.pairs, HELD_OUT, 0)
    if sorted(x.line for x in (*train, *held)) != sorted(x.line for x in data.pairs):
        raise AssertionError("the split lost or repeated a pair")
    if {x.key for x in train} & {x.key for x in held}:
        raise AssertionError("a passage is on both sides of the split")
    return tuple((x.query, x.passage, x.key, x.style, x.line, x.negatives) for x in data.pairs), data.provenance


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
    # as finegrain distill writes them: two negatives a record
    hard = [{"query": f"query {i}", "passage": f"passage number {i}", "passage_id": f"p{i}", "style": "kw",
             "negatives": [f"passage number {(i + 1) % 6}", f"passage number {(i + 2) % 6}"],
             "negative_ids": [f"p{(i + 1) % 6}", f"p{(i + 2) % 6}"], "positive_from": "source"} for i in range(6)]
    distilled = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in hard).encode()
    return ({"pairs.jsonl": body}, {"pairs.jsonl": body, "pairs.jsonl.provenance.json": side},
            {"pairs.jsonl": distilled})


def pairs_target() -> Target:
    return Target("train-pairs", _pairs_seeds(), _pairs_load, pairs_reference)



# --------------------------------------------------------------------------- album query files

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
    folder = removed_at_exit(Path(tempfile.mkdtemp(prefix="finegrain-fuzz-album-"))) / "album"
    folder.mkdir()
    for name, data in _album_files().items():
        write_bytes(folder / name, data)
    return read_album(folder)


def album_queries_reference(files: Files) -> Any:
    """A query file (:mod:`finegrain.album.bench.query_file`) and the queries ``album eval --lang en``
    scores from it: ids unused by the album, ground truth among its photos."""
    album = _album()
    doc = json_document(files["queries.json"])
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
        qid = json_id(obj["id"])
        if any(qid == q[0] for q in read):
            raise Invalid("an id twice")
        text, lang = obj.get("text"), obj.get("lang")
        if not isinstance(text, str) or not text.strip() or not isinstance(lang, str):
            raise Invalid("text or lang")
        code = _LANGS.get(lang.strip().lower())
        truth = obj.get("ground_truth")
        if code is None or not isinstance(truth, list):
            raise Invalid("lang or ground truth")
        photos = [json_id(t, numbers=False) for t in truth]
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
