"""Fuzz targets for every saved kind the product reads back: results.json, MTEB files and runs, through the verbs.

Each target drives the library call its command makes, on a folder of fuzzed
files, and renders what the command shows (the HTML page, the terminal
tables, the JSON it prints or writes, encoded as the terminal would):

- ``compare-eval`` / ``report-eval``: an eval ``results.json`` with every
  section (aggregate, per_query, by_type, denominators, curves, queries,
  provenance, errors, taxonomy, judged, passages, cv and its provenance,
  threshold_sweep, files) next to a valid folder, into ``compare`` and
  ``report``;
- ``report-perturb`` / ``report-contrast``: the probes' ``results.json`` (and
  ``perturbations.jsonl``) into ``report``;
- ``compare-mteb``: MTEB result JSON, as ``finegrain eval --format mteb``
  writes it and as mteb itself does (several splits and subsets, scores
  finegrain has no metric for), into ``compare``;
- ``fuse-rrf``: a TREC run and a ``run.jsonl`` fused by RRF, the fused run
  written and read back;
- ``pool``: a results folder's run and a ``run.jsonl`` pooled at depth 3, the
  pool file written and read back;
- ``report-run``: a results folder whose run is fuzzed, rendered by ``report``
  (its drill-down lists). ``results.json`` records the run's size and SHA-256;
  the target updates that record for most inputs, so the run's reader is
  reached, and leaves it stale for the rest, which must be refused.

The seeds are folders the product wrote (``finegrain eval``, ``perturb`` and
``contrast`` on the embedded captions), cut to a few queries
(``seeds/``). The oracles are in :mod:`finegrain.testing.fuzz_refs`.
"""

from __future__ import annotations

import atexit
import hashlib
import io
import json
import re
import shutil
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

from rich.console import Console

from finegrain.atomic import write_bytes, write_text
from finegrain.build.pool import pool_results
from finegrain.build.pool_file import read_pool, write_pool
from finegrain.compare.comparison import load_comparison
from finegrain.errors import DataFormatError, FinegrainError
from finegrain.experiment.imported import import_run
from finegrain.report.compare_table import print_comparison
from finegrain.report.cv_table import print_cv
from finegrain.report.html import write_report
from finegrain.report.table import print_evaluation
from finegrain.report.threshold_table import print_sweep
from finegrain.results.files import read_any_run, save_run
from finegrain.results.saved import SavedResults
from finegrain.retrieve.fusion.methods import fuse
from finegrain.testing import fuzz_refs as ref
from finegrain.testing.fuzz import Files, Invalid, Target

SEEDS = Path(__file__).parent / "seeds"
RESAMPLES = 200  # bootstrap and randomization resamples per comparison: the same code as the default, cheaper
STALE = 16  # of 256: the share of report-run / pool inputs whose results.json keeps the seed's run record
_DRILL = re.compile(r'<script type="application/json" id="drill-data">(.*?)</script>', re.S)

_dirs: dict[str, Path] = {}  # lazily written folders: the valid counterparts and the outputs


def _seed(name: str) -> dict[str, bytes]:
    """The files of one seed folder."""
    folder = SEEDS / name
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _dir(name: str, files: Files | None = None) -> Path:
    """A private folder (written once with ``files``), removed when the process exits."""
    if name not in _dirs:
        d = Path(tempfile.mkdtemp(prefix=f"fuzz-{name}-"))
        atexit.register(shutil.rmtree, d, True)
        for f, data in (files or {}).items():
            write_bytes(d / f, data)
        _dirs[name] = d
    return _dirs[name]


def _valid(name: str) -> Path:
    return _dir(f"valid-{name}", _seed(name))


def _terminal(render: Any) -> None:
    """Render into a terminal-wide console and encode the text as a UTF-8 terminal would."""
    out = io.StringIO()
    render(Console(file=out, width=120, color_system=None))
    out.getvalue().encode("utf-8")


def _echo(text: str) -> None:
    text.encode("utf-8")  # what typer.echo does to stdout: a lone surrogate cannot be printed


# --------------------------------------------------------------------------- results.json of finegrain eval


def _eval_value(saved: SavedResults) -> tuple[dict[str, Any], dict[str, Any]]:
    return dict(saved.aggregate), {k: dict(m.per_query) for k, m in saved.metrics.items() if m.per_query is not None}


def _compare_eval(folder: Path) -> Any:
    saved = SavedResults.load(folder / "results.json")
    cmp = load_comparison([folder / "results.json", _valid("eval-sweep")], n_resamples=RESAMPLES, seed=0)
    text = json.dumps(cmp.to_json_dict(), ensure_ascii=False, indent=1)
    write_text(_dir("out") / "compare.json", text + "\n")
    _echo(text)
    _terminal(lambda c: print_comparison(cmp, c))
    return _eval_value(saved)


def _report_eval(folder: Path) -> Any:
    saved = SavedResults.load(folder / "results.json")
    write_report([folder, _valid("eval-sweep")], _dir("out") / "report.html")

    def tables(console: Console) -> None:
        print_evaluation(saved, title="fuzz", console=console)
        if saved.threshold_sweep is not None:
            print_sweep(saved.threshold_sweep, title="fuzz", console=console)
        if saved.cv is not None and saved.cv_provenance is not None:
            print_cv(saved.cv, saved.cv_provenance, title="fuzz", console=console)

    _terminal(tables)
    return _eval_value(saved)


def _eval_oracle(files: Files) -> Any:
    return ref.eval_results_reference(files["results.json"])


def _eval_targets() -> list[Target]:
    seeds = (_seed("eval-cv"), _seed("eval-sweep"))
    return [
        Target("compare-eval", seeds, _compare_eval, _eval_oracle, mutable=("results.json",)),
        Target("report-eval", seeds, _report_eval, _eval_oracle, mutable=("results.json",)),
    ]


# --------------------------------------------------------------------------- perturb and contrast


def _report_probe(folder: Path, with_eval: bool) -> Any:
    dirs = [folder, _valid("eval-cv")] if with_eval else [folder]
    write_report(dirs, _dir("out") / "probe.html")
    return _probe_value(folder)


def _probe_value(folder: Path) -> Any:
    data = json.loads((folder / "results.json").read_text(encoding="utf-8-sig"))
    if data["schema"] == "finegrain.perturb/1":
        return data["dataset"], data["retriever"], data["n_queries"], tuple(data["families"])
    return data["tool"], data["encoder"]["spec"], tuple(d["direction"] for d in data["directions"])


def _perturb_oracle(files: Files) -> Any:
    if "perturbations.jsonl" in files:
        ref.perturbations_reference(files["perturbations.jsonl"])
    return ref.perturb_reference(files["results.json"])


def _probe_targets() -> list[Target]:
    perturb = (_seed("perturb"), _seed("perturb-caption"))
    return [
        Target("report-perturb", perturb, partial(_report_probe, with_eval=True), _perturb_oracle),
        Target("report-contrast", (_seed("contrast"),), partial(_report_probe, with_eval=False),
               lambda f: ref.contrast_reference(f["results.json"])),
    ]


# --------------------------------------------------------------------------- MTEB result JSON

# mteb's own file for a retrieval task: every cutoff, scores finegrain has no metric for, two splits and subsets
_MTEB_NATIVE = {
    "dataset_revision": "e055902", "task_name": "CapRetrievalEn", "mteb_version": "2.26.24",
    "scores": {
        "dev": [{"hf_subset": "default", "languages": ["eng-Latn"], "main_score": 0.5, "ndcg_at_10": 0.5}],
        "test": [
            {"hf_subset": "zh", "languages": ["cmn-Hans"], "main_score": 0.61, "ndcg_at_10": 0.61, "recall_at_5": 0.7},
            {"hf_subset": "default", "languages": ["eng-Latn"], "main_score": 0.70, "ndcg_at_1": 0.55,
             "ndcg_at_10": 0.70, "map_at_10": 0.62, "recall_at_5": 0.81, "recall_at_1000": 1.0,
             "precision_at_3": 0.31, "mrr_at_10": 0.66, "nauc_ndcg_at_10_max": 12.5, "nauc_map_at_1_std": -3.25,
             "cv_recall_at_10": 0.9},
        ],
    },
    "evaluation_time": 1.25, "kg_co2_emissions": None,
}


_NATIVE, _OURS = "CapRetrievalEn.json", "mteb.json"  # mteb's own file; the one 'finegrain eval --format mteb' writes


def _native_counterpart() -> Path:
    """A valid MTEB file of the same task (another model's scores), compared with a fuzzed native one."""
    other = json.loads(json.dumps(_MTEB_NATIVE))
    other["scores"]["test"][1].update(ndcg_at_10=0.64, main_score=0.64, recall_at_5=0.75)
    return _dir("valid-mteb", {_NATIVE: json.dumps(other, indent=2).encode()}) / _NATIVE


def _compare_mteb(folder: Path) -> Any:
    native = (folder / _NATIVE).is_file()
    path = folder / (_NATIVE if native else _OURS)
    try:
        saved = SavedResults.load(path)
    except DataFormatError as e:
        if "the range of" in e.expected and "a percentage" not in (e.hint or ""):
            raise AssertionError(f"an out-of-range MTEB score refused without the percent hint: {e}") from None
        raise
    other = _native_counterpart() if native else _valid("eval-sweep")
    cmp = load_comparison([path, other], n_resamples=RESAMPLES, seed=0)
    _echo(json.dumps(cmp.to_json_dict(), ensure_ascii=False, indent=1))
    _terminal(lambda c: print_comparison(cmp, c))
    return dict(saved.aggregate)


def _mteb_oracle(files: Files) -> Any:
    return ref.mteb_reference(files[_NATIVE] if _NATIVE in files else files[_OURS])


def _mteb_targets() -> list[Target]:
    seeds = ({_OURS: (SEEDS / "mteb.json").read_bytes()}, {_NATIVE: json.dumps(_MTEB_NATIVE, indent=2).encode()})
    return [Target("compare-mteb", seeds, _compare_mteb, _mteb_oracle)]


# --------------------------------------------------------------------------- runs: fuse, pool, report


def _run_ref(name: str, data: bytes) -> dict[str, dict[str, float]]:
    return ref.run_jsonl_reference(data) if name.endswith(".jsonl") else ref.trec_run(data)


def _rankings(run: Any) -> dict[str, list[str]]:
    return {q: docs for q in run.qids if (docs := run.ranked(q))}


def _fuse(folder: Path) -> Any:
    runs = [import_run(folder / name).run for name in ("a.trec", "b.jsonl")]
    fused = fuse(runs, "rrf")
    out = _dir("out") / "fused"
    path = save_run(out, fused)
    try:
        back = read_any_run(out)
    except FinegrainError as e:
        raise AssertionError(f"the fused run written to {path.name} does not read back: {e}") from None
    got = _rankings(fused)
    if _rankings(back) != got:
        raise AssertionError(f"the fused run written to {path.name} reads back different")
    return got


def _fuse_oracle(files: Files) -> Any:
    return ref.rrf([ref.trec_run(files["a.trec"]), ref.run_jsonl_reference(files["b.jsonl"])])


def _stale(run: bytes) -> bool:
    """Whether an input keeps the seed's run record in results.json (it then must be refused, unless unchanged)."""
    return hashlib.sha256(run).digest()[0] < STALE


def _record_run(folder: Path, name: str) -> None:
    """Record the (fuzzed) run's size and SHA-256 in ``results.json``, as ``finegrain eval`` does, unless stale."""
    run = (folder / name).read_bytes()
    if _stale(run):
        return
    results = folder / "results.json"
    data = json.loads(results.read_text(encoding="utf-8"))
    data["files"][name] = {"size": len(run), "sha256": hashlib.sha256(run).hexdigest()}
    write_text(results, json.dumps(data, ensure_ascii=False, indent=1))


def _checked_record(files: Files, name: str, seed_run: bytes) -> None:
    if _stale(files[name]) and files[name] != seed_run:
        raise Invalid("the run does not match the record in results.json")


def _pool(folder: Path) -> Any:
    _record_run(folder, "run.trec")
    pool = pool_results([folder, folder / "b.jsonl"], depth=3, seed=0)
    path = write_pool(pool, _dir("out") / "pool.jsonl")
    try:
        back = read_pool(path)
    except FinegrainError as e:
        raise AssertionError(f"the pool file written does not read back: {e}") from None
    got = _pooled(pool.items)
    if _pooled(back.items) != got:
        raise AssertionError("the pool file reads back different")
    return got


def _pooled(items: Any) -> dict[str, list[str]]:
    out: dict[str, set[str]] = {}
    for it in items:
        out.setdefault(it.qid, set()).add(it.doc_id)
    return {q: sorted(d) for q, d in out.items()}


def _pool_seed() -> dict[str, bytes]:
    """The eval-cv folder without its dataset name (pooling it would load the dataset for every input)."""
    folder = _seed("eval-cv")
    data = json.loads(folder["results.json"])
    data["provenance"]["dataset"]["name"] = None
    return {"results.json": json.dumps(data, ensure_ascii=False, indent=1).encode(), "run.trec": folder["run.trec"],
            "b.jsonl": _seed("eval-sweep")["run.jsonl"]}


def _pool_oracle(files: Files, seed_run: bytes) -> Any:
    _checked_record(files, "run.trec", seed_run)
    out: dict[str, set[str]] = {}
    for run in (ref.trec_run(files["run.trec"]), ref.run_jsonl_reference(files["b.jsonl"])):
        for q, docs in run.items():
            out.setdefault(q, set()).update(ref.ranked(docs, 3))
    return {q: sorted(d) for q, d in out.items() if d}


def _report_run(folder: Path) -> Any:
    name = "run.trec" if (folder / "run.trec").is_file() else "run.jsonl"
    _record_run(folder, name)
    html = write_report([folder], _dir("out") / "run.html").read_text(encoding="utf-8")
    m = _DRILL.search(html)
    if m is None:
        raise AssertionError("no drill-down data in the page")
    data = json.loads(m.group(1))
    system = data["systems"][0]
    if not system["hasRun"]:
        raise FinegrainError(system["note"])  # the run was refused: the page shows no list
    return {q["qid"]: [it[0] for it in q["lists"][0]["items"]] for q in data["queries"]}


def _report_run_oracle(files: Files, seeds: dict[str, bytes]) -> Any:
    name = "run.trec" if "run.trec" in files else "run.jsonl"
    _checked_record(files, name, seeds[name])
    run = _run_ref(name, files[name])
    queries = json.loads(files["results.json"])["queries"]
    return {q: ref.ranked(run.get(q, {}), 10) for q in queries}


def _run_targets() -> list[Target]:
    cv, sweep = _seed("eval-cv"), _seed("eval-sweep")
    fuse_seed = {"a.trec": cv["run.trec"], "b.jsonl": sweep["run.jsonl"]}
    hostile = {"a.trec": b"q1 Q0 d1 1 2.5 sys\nq1 Q0 d2 2 2.5 sys\nq2 Q0 d3 1 -0.5 sys\n",
               "b.jsonl": ('{"format": "finegrain.run/1", "name": "b 1"}\n'
                           '{"qid": "q1", "results": [["d2", 1e300], ["文档 1", -Infinity], ["d1", 0]]}\n'
                           '{"qid": "q3", "results": []}\n').encode()}
    pool_seed = _pool_seed()
    return [
        Target("fuse-rrf", (fuse_seed, hostile), _fuse, _fuse_oracle),
        Target("pool", (pool_seed,), _pool, partial(_pool_oracle, seed_run=pool_seed["run.trec"]),
               mutable=("run.trec", "b.jsonl")),
        Target("report-run-trec", (cv,), _report_run, partial(_report_run_oracle, seeds=cv), mutable=("run.trec",)),
        Target("report-run-jsonl", (sweep,), _report_run, partial(_report_run_oracle, seeds=sweep),
               mutable=("run.jsonl",)),
    ]


# --------------------------------------------------------------------------- all


def results_targets() -> list[Target]:
    """Every saved kind into the verbs that read it: compare, report, fuse and pool."""
    return [*_eval_targets(), *_probe_targets(), *_mteb_targets(), *_run_targets()]
