"""Reference readings of saved results, MTEB files and runs, for the fuzz targets of :mod:`finegrain.testing.fuzz_results`.

Written apart from the readers, from the format descriptions (the module
docstrings of :mod:`finegrain.results.saved`, :mod:`finegrain.results.probes`,
:mod:`finegrain.results.mteb` and :mod:`finegrain.io.run_jsonl`), plainly. Each
raises :class:`~finegrain.testing.fuzz.Invalid` only where the format says a
value is wrong; where it cannot tell (a section this reading does not model)
it accepts, so a stricter reader shows as ``refused``, never as a defect.
Metric ranges are a table here, not the product's: the fraction metrics
finegrain and MTEB both report. The one thing taken from the product is the
vocabulary of metric names (:func:`finegrain.metrics.spec.parse_metric`), to
know which MTEB keys are finegrain metrics and how each is spelled.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

from finegrain.errors import FinegrainError
from finegrain.io.ids import MAX_ID_CHARS
from finegrain.metrics.spec import parse_metric
from finegrain.testing.fuzz import Invalid
from finegrain.testing.fuzz_reading import strict_json

RESULTS_SCHEMA = "finegrain.results/1"
RULES = ("mean", "median", "ratio", "sum", "gmean")
# metrics whose every value is a fraction in [0, 1], as name@k (or the bare name)
_FRACTION = re.compile(r"(ndcg|recall|precision|mrr|map|hit_rate|pair_f1|pair_precision|pair_recall)(@[1-9][0-9]{0,5})?")
_SLACK = 1e-9
_AT = re.compile(r"([a-z][a-z0-9_]*?)_at_(\d+)")
_MTEB_NOT_METRICS = {"hf_subset", "languages", "main_score", "mteb_version", "finegrain_dataset"}


# --------------------------------------------------------------------------- JSON


def strip_bom(data: bytes) -> bytes:
    return data[3:] if data.startswith(b"\xef\xbb\xbf") else data


def json_value(data: bytes, *, infinity: bool = False) -> Any:
    """Strict JSON of UTF-8 text: no NaN (no Infinity unless ``infinity``), no lone surrogate."""
    try:
        text = strip_bom(data).decode("utf-8")
    except UnicodeDecodeError:
        raise Invalid("not UTF-8") from None
    return strict_json(text, infinity=infinity)


def finite(v: Any) -> float:
    """A JSON number (not a bool) that is a finite double."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise Invalid(f"not a number: {v!r:.40}")
    try:
        f = float(v)
    except OverflowError:
        raise Invalid("a number past the double range") from None
    if not math.isfinite(f):
        raise Invalid("not finite")
    return f


def count(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise Invalid(f"not a count: {v!r:.40}")
    return v


def obj(v: Any, what: str) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise Invalid(f"{what} is not an object")
    return v


def in_range(key: str, value: float | None) -> None:
    if value is not None and _FRACTION.fullmatch(key) and not -_SLACK <= value <= 1 + _SLACK:
        raise Invalid(f"{key} = {value} outside [0, 1]")


# --------------------------------------------------------------------------- results.json of finegrain eval


def eval_results_reference(data: bytes) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(aggregate, per_query)`` of a ``finegrain.results/1`` file, each value a float or None."""
    d = obj(json_value(data), "the file")
    if d.get("schema") != RESULTS_SCHEMA:
        raise Invalid("schema")
    agg = {k: None if v is None else finite(v) for k, v in obj(d.get("aggregate"), "aggregate").items()}
    per_query = {k: {q: None if v is None else finite(v) for q, v in obj(pq, "per_query.*").items()}
                 for k, pq in obj(d.get("per_query"), "per_query").items()}
    if set(per_query) - set(agg):
        raise Invalid("per-query values of a metric without an aggregate")
    rules = obj(d.get("aggregation", {}), "aggregation")
    if any(r not in RULES for r in rules.values()) or set(rules) - set(agg):
        raise Invalid("aggregation")
    for pq in obj(d.get("denominators", {}), "denominators").values():
        for v in obj(pq, "denominators.*").values():
            count(v)
    for row in obj(d.get("by_type", {}), "by_type").values():
        for k, cell in obj(row, "by_type.*").items():
            cell = obj(cell, "by_type.*.*")
            in_range(k, None if cell.get("value") is None else finite(cell.get("value")))
            count(cell.get("n", 0))
    for family, curve in obj(d.get("curves", {}), "curves").items():
        for k, v in obj(curve, "curves.*").items():
            if not re.fullmatch(r"[1-9][0-9]{0,8}", k):
                raise Invalid(f"curve cutoff {k!r}")
            in_range(f"{family}@{k}", None if v is None else finite(v))
    for rec in obj(d.get("queries", {}), "queries").values():
        rec = obj(rec, "queries.*")
        if not isinstance(rec.get("text", ""), str) or not isinstance(rec.get("type") or "", str):
            raise Invalid("query record")
    obj(d.get("provenance", {}), "provenance")
    for name in ("errors", "taxonomy", "cv", "threshold_sweep", "passages", "files", "judged"):
        if name in d:
            obj(d[name], name)
    for k, v in agg.items():
        in_range(k, v)
    for k, pq in per_query.items():
        for v in pq.values():
            in_range(k, v)
    return agg, per_query


# --------------------------------------------------------------------------- perturb and contrast


def perturb_reference(data: bytes) -> tuple[Any, ...]:
    """``(dataset, retriever, n_queries, families)`` of a ``finegrain.perturb/1`` file."""
    d = obj(json_value(data), "the file")
    if d.get("schema") != "finegrain.perturb/1":
        raise Invalid("schema")
    for key in ("dataset", "lang", "retriever"):
        if not isinstance(d.get(key), str):
            raise Invalid(key)
    n = count(d.get("n_queries"))
    metrics = d.get("metrics")
    if not isinstance(metrics, list) or not all(isinstance(m, str) for m in metrics):
        raise Invalid("metrics")
    if not 0 < finite(d.get("confidence")) < 1:
        raise Invalid("confidence")
    for v in obj(d.get("original"), "original").values():
        if v is not None:
            finite(v)
    families = obj(d.get("families"), "families")
    for fam in families.values():
        fam = obj(fam, "family")
        count(fam.get("n_perturbed"))
        if not 0 <= finite(fam.get("share_of_queries")) <= 1:
            raise Invalid("share_of_queries")
        cells = obj(fam.get("metrics"), "family metrics")
        if any(m not in cells for m in metrics):
            raise Invalid("a family without a cell for a metric")
    obj(d.get("provenance"), "provenance")
    return d["dataset"], d["retriever"], n, tuple(families)


def _blank(line: bytes) -> bool:
    """A JSON-lines line that is skipped: valid text of whitespace only (Unicode's, as ``str.isspace``)."""
    try:
        return not line.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise Invalid("not UTF-8") from None


def perturbations_reference(data: bytes) -> None:
    """``perturbations.jsonl``: one JSON object per non-blank line, each with a string family."""
    for raw in strip_bom(data).split(b"\n"):
        if _blank(raw):
            continue
        rec = obj(json_value(raw), "a line")
        if not isinstance(rec.get("family"), str):
            raise Invalid("family")


def contrast_reference(data: bytes) -> tuple[Any, ...]:
    """``(tool, encoder spec, directions)`` of a ``finegrain.contrast/1`` file."""
    d = obj(json_value(data), "the file")
    if d.get("schema") != "finegrain.contrast/1":
        raise Invalid("schema")
    for key in ("tool", "version", "metric"):
        if not isinstance(d.get(key), str):
            raise Invalid(key)
    spec = obj(d.get("encoder"), "encoder").get("spec")
    if not isinstance(spec, str):
        raise Invalid("encoder.spec")
    directions = d.get("directions")
    if not isinstance(directions, list):
        raise Invalid("directions")
    names = []
    for x in directions:
        x = obj(x, "direction")
        if x.get("direction") not in ("text->text", "text->image", "image->text"):
            raise Invalid("direction")
        overall = obj(x.get("overall"), "overall")
        if not 0 <= finite(overall.get("fg_cda")) <= 1:
            raise Invalid("fg_cda")
        names.append(x["direction"])
    return d["tool"], spec, tuple(names)


# --------------------------------------------------------------------------- MTEB result JSON


def mteb_key(key: str) -> str | None:
    """The finegrain key of an MTEB score key (``ndcg_at_10`` -> ``ndcg@10``), None for a score finegrain lacks."""
    m = _AT.fullmatch(key)
    text = f"{m.group(1)}@{m.group(2)}" if m else key
    try:
        return parse_metric(text).key
    except FinegrainError:
        return None


def mteb_reference(data: bytes) -> dict[str, float]:
    """The aggregates an MTEB TaskResult gives: one split (or ``test``), one subset (or ``default``)."""
    d = json_value(data)
    if not isinstance(d, dict) or "schema" in d or "scores" not in d or "task_name" not in d:
        raise Invalid("not an MTEB result")
    scores = d["scores"]
    if not isinstance(scores, dict) or not scores or not all(isinstance(v, list) for v in scores.values()):
        raise Invalid("scores")
    split = next(iter(scores)) if len(scores) == 1 else "test" if "test" in scores else None
    if split is None:
        raise Invalid("several splits, none 'test'")
    entries = [e for e in scores[split] if isinstance(e, dict)]
    subsets = [str(e.get("hf_subset", "default")) for e in entries]
    want = subsets[0] if len(subsets) == 1 else "default" if "default" in subsets else None
    entry = next((e for e, s in zip(entries, subsets) if s == want), None)
    if entry is None:
        raise Invalid("no subset")
    out: dict[str, float] = {}
    for k, v in entry.items():
        if k in _MTEB_NOT_METRICS:
            continue
        try:
            f = finite(v)
        except Invalid:
            continue  # not a score: skipped
        key = mteb_key(k)
        if key is not None and key not in out:
            out[key] = f
    if not out:
        raise Invalid("no score")
    for k, v in out.items():
        in_range(k, v)
    return out


# --------------------------------------------------------------------------- runs


def run_jsonl_reference(data: bytes) -> dict[str, dict[str, float]]:
    """``run.jsonl``: a header ``{"format": "finegrain.run/1", "name": id}``, then one query per line."""
    out: dict[str, dict[str, float]] = {}
    header = False
    for raw in strip_bom(data).split(b"\n"):
        if _blank(raw):
            continue
        rec = obj(json_value(raw.removesuffix(b"\r"), infinity=True), "a line")
        if not header:
            name = rec.get("name", "run")
            if rec.get("format") != "finegrain.run/1" or not isinstance(name, str):
                raise Invalid("header")
            _json_id(name)
            header = True
            continue
        qid, results = rec.get("qid"), rec.get("results")
        if not isinstance(qid, str) or not isinstance(results, list) or qid in out:
            raise Invalid("query line")
        _json_id(qid)
        docs: dict[str, float] = {}
        for pair in results:
            if not isinstance(pair, list) or len(pair) != 2 or not isinstance(pair[0], str):
                raise Invalid("pair")
            score = pair[1]
            if isinstance(score, bool) or not isinstance(score, int | float):
                raise Invalid("score")
            try:
                s = float(score)
            except OverflowError:
                raise Invalid("score past the double range") from None
            if s != s or pair[0] in docs:
                raise Invalid("NaN or a document twice")
            docs[_json_id(pair[0])] = s
        out[qid] = docs
    if not header:
        raise Invalid("no header")
    return out


def _json_id(s: str) -> str:
    if not s.strip() or len(s) > MAX_ID_CHARS:
        raise Invalid(f"id {s[:30]!r}")
    return s


_DECIMAL = re.compile(rb"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")
_HEX = re.compile(rb"[+-]?0[xX]([0-9a-fA-F]+(\.[0-9a-fA-F]*)?|\.[0-9a-fA-F]+)([pP][+-]?[0-9]+)?")


def trec_run(data: bytes) -> dict[str, dict[str, float]]:
    """A TREC run as finegrain reads one by default (``get_trec_results.c``, strict): six fields per non-blank
    line (query, Q0, document, rank, score, tag; the first tag names the run), no comment line, a finite decimal or hex score, each
    (query, document) once, at least one line."""
    data = strip_bom(data)
    if b"\x00" in data:
        raise Invalid("NUL")
    out: dict[str, dict[str, float]] = {}
    for line in data.split(b"\n"):
        line = line.removesuffix(b"\r")
        if line.lstrip(b" \t\r\x0b\x0c").startswith(b"#"):
            raise Invalid("a comment line")
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 6:
            raise Invalid(f"{len(parts)} fields")
        q, d = _token(parts[0]), _token(parts[2])
        if not out:
            _token(parts[5])  # the run's tag: the first line's names the run, the others are not read
        docs = out.setdefault(q, {})
        if d in docs:
            raise Invalid("a pair twice")
        docs[d] = _trec_score(parts[4])
    if not out:
        raise Invalid("no result line")
    return out


def _token(b: bytes) -> str:
    try:
        s = b.decode("utf-8")
    except UnicodeDecodeError:
        raise Invalid("not UTF-8") from None
    if len(s) > MAX_ID_CHARS or any(unicodedata.category(c) in ("Cc", "Cs") or c.isspace() for c in s):
        raise Invalid(f"id {s[:30]!r}")
    return s


def _trec_score(b: bytes) -> float:
    try:
        v = float(b.decode("ascii")) if _DECIMAL.fullmatch(b) else float.fromhex(b.decode("ascii")) if _HEX.fullmatch(b) else None
    except OverflowError:
        v = None
    if v is None or not math.isfinite(v):
        raise Invalid(f"score {b[:30]!r}")
    return v


def ranked(docs: Mapping[str, float], k: int | None = None) -> list[str]:
    """Score descending, then document id descending (trec_eval's tie rule)."""
    order = sorted(docs, key=lambda d: (-docs[d], _desc(d)))
    return order if k is None else order[:k]


def _desc(doc: str) -> tuple[int, ...]:
    return tuple(-ord(c) for c in doc) + (1,)  # a longer id with the same prefix sorts first (descending)


def rrf(runs: Iterable[Mapping[str, Mapping[str, float]]], k: float = 60.0) -> dict[str, list[str]]:
    """Reciprocal rank fusion, ``sum 1 / (k + rank)`` over the runs that rank a document, ranked as above."""
    fused: dict[str, dict[str, float]] = {}
    for run in runs:
        for q, docs in run.items():
            acc = fused.setdefault(q, {})
            for r, d in enumerate(ranked(docs), start=1):
                acc[d] = acc.get(d, 0.0) + 1.0 / (k + r)
    return {q: ranked(docs) for q, docs in fused.items() if docs}
