"""Fuzz targets for the command line's option values and paths, each against a reference reading.

A seed is a few small files: the option's name (kept as is) and its value
(mutated), the value's bytes read as Python reads ``sys.argv`` (UTF-8 with
``surrogateescape``; a NUL cannot be an argument, so such an input is refused
on both sides). Each input goes through the layer the verb uses to read the
option (click's parsing of the ``finegrain`` command with the number grammar
on every ``int``/``float`` option, ``--set`` against the declared parameters,
``-m`` through the metric grammar, ``--cv`` and ``--sweep`` through their
parsers), and a fixed share of inputs (:data:`WHOLE_SHARE`, chosen by a hash
of the input) runs the whole ``finegrain eval`` in this process on the
embedded caption set with BM25, where the value that reached the results file
(``results.json``, read back by :class:`~finegrain.results.saved.SavedResults`)
must be the one the reference reads. Paths go through the whole
``finegrain evaluate QRELS RUN`` every time (it is cheap).

The references are written from the documented grammars, apart from the
parsers: an integer is ``[+-]?[0-9]+`` in ASCII within int64 and the
declared bounds; a float is a finite C decimal or hexadecimal literal; a
``--set`` value converts by its declared type (read from the entry's
:class:`~finegrain.registry.Param` declarations, the specification); a metric
follows the grammar of :mod:`finegrain.metrics.spec`'s documentation. A
command ends cleanly when it exits 0, or exits 2 with one ``error:`` line (or
click's usage error) and no traceback.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import sys
import tempfile
import zlib
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

import typer.main

from finegrain.cli import options as opt
from finegrain.cli.app import build_cli
from finegrain.cli.eval_cmd import cv_spec
from finegrain.errors import FinegrainError
from finegrain.experiment.tuning.threshold import parse_sweep
from finegrain.registry import Param
from finegrain.results.saved import SavedResults
from finegrain.retrieve.fusion.methods import fusion_options
from finegrain.retrieve.registry import FUSIONS, RETRIEVERS
from finegrain.testing.fuzz import Files, Invalid, Target

#: One input in this many (by a hash of its bytes) runs the whole ``finegrain eval`` besides the parsing.
WHOLE_SHARE = 64
DATASET = "embedded/captions-en"
_I64 = (-(1 << 63), (1 << 63) - 1)
_INT = re.compile(r"[+-]?[0-9]+")
_DEC = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")
_HEXF = re.compile(r"[+-]?0[xX]([0-9a-fA-F]+(\.[0-9a-fA-F]*)?|\.[0-9a-fA-F]+)([pP][+-]?[0-9]+)?")


# --------------------------------------------------------------------------- driving the command line


def _arg(files: Files, name: str) -> str:
    """The file's bytes as one command-line argument: as Python decodes ``sys.argv``; one trailing newline
    is the file's, not the argument's. An argument cannot hold NUL (the OS passes C strings)."""
    data = files[name]
    data = data[:-1] if data.endswith(b"\n") else data
    if b"\x00" in data:
        raise Invalid("NUL in an argument")
    return data.decode("utf-8", "surrogateescape")


def _read_arg(folder: Path, name: str) -> str:
    try:
        return _arg({name: (folder / name).read_bytes()}, name)
    except Invalid:
        raise FinegrainError("a command-line argument cannot hold NUL") from None


_CLI: list[Any] = []  # the click group of ``finegrain``, built once on first use (typer builds it per call)


def _group() -> Any:
    if not _CLI:
        _CLI.append(typer.main.get_command(build_cli()))
    return _CLI[0]


def _parse(verb: str, args: list[str]) -> dict[str, Any]:
    """The verb's parameters as click and the number grammar read ``args``; a usage error is a clean error."""
    try:
        with _group().commands[verb].make_context(verb, args) as ctx:
            return dict(ctx.params)
    except Exception as e:
        if _usage_error(e):
            raise FinegrainError(f"usage: {e.format_message()}") from None  # type: ignore[attr-defined]
        raise


def _usage_error(e: BaseException) -> bool:
    """Whether ``e`` is click's usage error (typer ships its own copy of click, so it is told by its API)."""
    return callable(getattr(e, "format_message", None)) and isinstance(getattr(e, "exit_code", None), int)


def run_cli(args: list[str]) -> tuple[int, str, str]:
    """``finegrain ARGS`` in this process, as :func:`finegrain.cli.main.main` runs it (on a group built once):
    exit code, stdout, stderr. stdout is strict UTF-8 and stderr UTF-8 with backslash escapes, as Python sets
    them up in a UTF-8 terminal; stdin is empty."""
    out, err = io.BytesIO(), io.BytesIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8", errors="strict", write_through=True)
    stderr = io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", write_through=True)
    saved_in = sys.stdin
    sys.stdin = io.StringIO("")
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                _group().main(args=args, prog_name="finegrain", standalone_mode=True)
                code = 0
            except FinegrainError as e:
                print(f"error: {e}", file=sys.stderr)
                code = e.exit_code
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        sys.stdin = saved_in
    return code, out.getvalue().decode("utf-8", "replace"), err.getvalue().decode("utf-8", "replace")


def _outcome(code: int, stdout: str, stderr: str) -> None:
    """Nothing for a clean success; FinegrainError for a clean refusal; RuntimeError (a crash) otherwise."""
    if "Traceback" in stdout or "Traceback" in stderr:
        raise RuntimeError(f"a traceback in the output: {stderr[-500:]}")
    if code == 0:
        return
    lines = [line for line in stderr.splitlines() if line.strip()]
    usage = stderr.startswith("Usage: ")  # click's usage error (no such option, a missing argument)
    if code == 2 and lines and (lines[-1].startswith("error: ") or usage):
        raise FinegrainError(lines[-1])
    raise RuntimeError(f"exit {code} without one error line: {stderr[-500:]!r}")


def _whole(folder: Path, *names: str) -> bool:
    """Whether this input also runs the whole command (a fixed share, by a hash of the files' bytes)."""
    crc = 0
    for name in names:
        crc = zlib.crc32((folder / name).read_bytes(), crc)
    return crc % WHOLE_SHARE == 0


def eval_saved(extra: list[str]) -> dict[str, Any]:
    """``finegrain eval -d embedded/captions-en -r bm25 ... EXTRA`` in this process; its results.json read
    back by SavedResults (a file our own reader refuses is a crash here)."""
    with tempfile.TemporaryDirectory(prefix="fuzz-cli-eval-") as tmp:
        out = Path(tmp) / "out"
        code, stdout, stderr = run_cli(["eval", "-d", DATASET, "-o", str(out), "-q", *extra])
        _outcome(code, stdout, stderr)
        saved = SavedResults.load(out)
        return {"provenance": dict(saved.provenance), "metrics": list(saved.metrics)}


# --------------------------------------------------------------------------- the number grammar (reference)


def ref_int(text: str, lo: float | None = None, hi: float | None = None) -> int:
    """An integer: ASCII ``[+-]?[0-9]+`` after surrounding white space, within int64 and ``[lo, hi]``."""
    s = text.strip()
    if not s.isascii() or not _INT.fullmatch(s):
        raise Invalid(f"not an integer: {text[:40]!r}")
    if len(s.lstrip("+-").lstrip("0")) > 19:
        raise Invalid("past int64")
    v = int(s)
    if not _I64[0] <= v <= _I64[1] or (lo is not None and v < lo) or (hi is not None and v > hi):
        raise Invalid(f"{v} out of range")
    return v


def ref_float(text: str, lo: float | None = None, hi: float | None = None, hexadecimal: bool = True) -> float:
    """A finite C decimal (or hexadecimal) floating-point literal after surrounding white space, in ``[lo, hi]``."""
    s = text.strip()
    if not s.isascii():
        raise Invalid(f"not ASCII: {text[:40]!r}")
    if _DEC.fullmatch(s):
        v = float(s)
    elif hexadecimal and _HEXF.fullmatch(s):
        try:
            v = float.fromhex(s)
        except OverflowError:
            raise Invalid("overflows") from None
    else:
        raise Invalid(f"not a number: {text[:40]!r}")
    if not math.isfinite(v) or (lo is not None and v < lo) or (hi is not None and v > hi):
        raise Invalid(f"{v} out of range")
    return v


def ref_param(p: Param, raw: str) -> Any:
    """``raw`` (a ``--set`` value as written) read by the declaration ``p``: its type, choices and range."""
    s = raw.strip()
    if s.lower() in ("none", "null") and p.type is not str:
        if p.nullable:
            return None
        raise Invalid("none for a parameter that needs a value")
    if p.type is bool:
        if s.lower() not in ("true", "false"):
            raise Invalid("not a boolean")
        value: Any = s.lower() == "true"
    elif p.type is int:
        value = ref_int(s, p.min, p.max)
    elif p.type is float:
        value = ref_float(s, p.min, p.max)
    elif p.type is list and p.item is float:
        value = tuple(ref_float(x, p.min, p.max) for x in s.split(","))
    elif p.type is list:
        value = tuple(x.strip() for x in s.split(","))
        if any(not x for x in value):
            raise Invalid("an empty name")
    else:
        value = s
    choices = p.allowed()
    if choices is not None and value not in choices:
        raise Invalid(f"{value!r} is not a choice")
    return value


def ref_set(params: Mapping[str, Param], items: list[str]) -> dict[str, Any]:
    """``--set`` items: each ``KEY=VALUE`` (split at the first ``=``, the key not blank), each key once and
    declared, each value read by its declaration."""
    out: dict[str, Any] = {}
    for item in items:
        if "=" not in item:
            raise Invalid(f"{item!r} is not KEY=VALUE")
        key, raw = item.split("=", 1)
        key = key.strip()
        if not key or key in out or key not in params:
            raise Invalid(f"key {key!r}")
        out[key] = ref_param(params[key], raw)
    return out


# --------------------------------------------------------------------------- --set


def _set_items(files: Files) -> list[str]:
    text = _arg(files, "set.txt")
    return text.split("\n") if text else []


def _set_load(folder: Path) -> Any:
    kind, _, name = _read_arg(folder, "entry.txt").partition(" ")
    items = _read_arg(folder, "set.txt")
    given = items.split("\n") if items else []
    if kind == "fusion":
        return fusion_options(name, opt.parse_set(given))
    checked = opt.retriever_options(name, given)
    if _whole(folder, "entry.txt", "set.txt"):
        saved = eval_saved(["-r", name, *[a for item in given for a in ("--set", item)]])
        retriever = saved["provenance"]["retriever"]
        reached = {k: (tuple(v) if isinstance(v, list) else v) for k, v in retriever.items() if k in checked}
        if reached != checked:
            return {"the value that reached the retriever": reached}
    return checked


def _set_oracle(files: Files) -> Any:
    kind, _, name = _arg(files, "entry.txt").partition(" ")
    params = (FUSIONS if kind == "fusion" else RETRIEVERS).params(name)
    assert params is not None
    return ref_set(params, _set_items(files))


def _set_target() -> Target:
    seeds = (
        {"entry.txt": b"retriever bm25", "set.txt": b"k1=1.2\nb=0.75"},
        {"entry.txt": b"retriever bm25", "set.txt": b"variant=okapi\nepsilon=0.25\nthreshold=none\ndefault_k=50"},
        {"entry.txt": b"retriever bm25", "set.txt": b"ties=doc-id\ntokenizer=default\nk1=0x1.8p0"},
        {"entry.txt": b"retriever bm25-okapi", "set.txt": b"b=1\nk1=2.5e0\nthreshold=-1e-3"},
        {"entry.txt": b"fusion rrf", "set.txt": b"k=60\nweights=1,2.5\ndepth=100"},
        {"entry.txt": b"fusion convex", "set.txt": b"weights=0.3,0.7\nnorm=zscore"},
        {"entry.txt": b"fusion combmnz", "set.txt": b"norm=minmax\ndepth=none"},
    )
    return Target("cli-set", seeds, _set_load, _set_oracle, mutable=("set.txt",))


# --------------------------------------------------------------------------- -m / --metric (reference grammar)

# From the grammar of finegrain.metrics.spec's documentation: name -> (cutoff: "optional" | "required" |
# "none", takes rel, default cutoff).
_METRICS: dict[str, tuple[str, bool, int | None]] = {
    **{n: ("optional", True, None) for n in (
        "ndcg", "recall", "hit_rate", "mrr", "map", "median_rank", "set_precision", "set_recall", "set_f1",
        "set_f2", "set_fbeta", "pair_precision", "pair_recall", "pair_f1", "hits")},
    "precision": ("required", True, None),
    "fail_rate": ("optional", True, 1),
    "judged": ("optional", False, None),
    "err": ("optional", False, None),
    **{n: ("none", True, None) for n in (
        "r_precision", "reject_precision", "reject_recall", "reject_f1", "bpref", "infap", "gm_map", "num_rel",
        "num_rel_ret")},
    "num_ret": ("none", False, None),
    **{f"iprec_at_recall_{x / 10:.2f}": ("none", True, None) for x in range(11)},
}
# Other libraries' spellings of the same measures (trec_eval, ir_measures, ranx), lower case.
_SAME: dict[str, str] = {
    "p": "precision", "prec": "precision", "r": "recall", "hitrate": "hit_rate", "rr": "mrr",
    "recip_rank": "mrr", "reciprocal_rank": "mrr", "ap": "map", "rprec": "r_precision", "r-precision": "r_precision",
    "medr": "median_rank", "set_p": "set_precision", "setp": "set_precision", "set_r": "set_recall",
    "setr": "set_recall", "set_f": "set_f1", "setf": "set_f1", "rej_p": "reject_precision", "rej_r": "reject_recall",
    "rej_f1": "reject_f1", "numret": "num_ret", "numrel": "num_rel", "numrelret": "num_rel_ret",
}
# Only with a cutoff: trec_eval's cutoff lists without one are not one measure.
_WITH_CUTOFF = {"ndcg_cut": "ndcg", "map_cut": "map", "success": "hit_rate"}
_NEVER = {"hit", "numq", "num_q"}
_TREC_LISTED = ("p", "recall", "ndcg_cut", "map_cut", "success")
_MAX_K = 10**9


def _spaces(s: str) -> str:
    return s.strip()


def ref_metric(text: str) -> str:
    """The canonical key of one metric, or Invalid."""
    s = _spaces(text)
    low = s.lower()
    if re.fullmatch(r"set_f[._]([0-9]+(\.[0-9]*)?|\.[0-9]+)", low):
        raise Invalid("trec_eval's set_F.x needs --compat trec_eval")
    # name, then (params) and @k in either order (at most one parameter list)
    m = re.fullmatch(r"([A-Za-z][A-Za-z0-9_.\-]*?)\s*(\(([^()]*)\))?\s*(@\s*([^()\s]*))?\s*(\(([^()]*)\))?", s)
    if m is None or (m[2] is not None and m[6] is not None):
        raise Invalid("not name@k(params)")
    name, k_raw = m[1].lower(), m[5]
    params_raw = m[3] if m[3] is not None else m[7]
    cut = re.fullmatch(r"(p|recall|ndcg_cut|map_cut|success)[._]([0-9]+)", name)
    level = re.fullmatch(r"iprec_at_recall[._]([0-9]*\.?[0-9]+)", name)
    if cut and k_raw is None:
        name, k_raw = cut[1], cut[2]
    elif level:
        name = _level(level[1])
    elif name == "iprec" and k_raw is not None:
        name, k_raw = _level(k_raw), None
    if name in _NEVER or (name in _WITH_CUTOFF and k_raw is None):
        raise Invalid(f"{name} is refused")
    params: dict[str, str] = {}
    if params_raw is not None:
        for item in params_raw.split(","):
            if "=" not in item:
                raise Invalid("a parameter without =")
            key, value = item.split("=", 1)
            key, value = key.strip().lower(), value.strip()
            if not key or not value or key in params:
                raise Invalid("a bad parameter")
            params[key] = value
    canonical = _WITH_CUTOFF.get(name) or _SAME.get(name, name)
    if name == "numret" and "rel" in params:
        canonical = "num_rel_ret"
    if name in ("set_f", "setf") and "beta" in params:
        if ref_float(params.pop("beta"), hexadecimal=True) != 1:
            raise Invalid("SetF(beta != 1) is trec_eval's set_F.x")
    if canonical not in _METRICS:
        raise Invalid(f"unknown metric {name!r}")
    cutoff, takes_rel, default_k = _METRICS[canonical]
    k: int | None = None
    if k_raw is not None:
        if not re.fullmatch(r"[0-9]+", k_raw) or not k_raw.isascii():
            raise Invalid("cutoff not ASCII digits")
        if len(k_raw.lstrip("0")) > 10 or not 1 <= int(k_raw) <= _MAX_K:
            raise Invalid("cutoff out of range")
        k = int(k_raw)
    elif default_k is not None:
        k = default_k
    if cutoff == "none" and k is not None:
        raise Invalid("takes no cutoff")
    if cutoff == "required" and k is None:
        raise Invalid("needs a cutoff")
    rel, beta = 1, None
    for key, value in params.items():
        if key == "rel" and takes_rel:
            rel = ref_int(value, 1)
        elif key == "beta" and canonical == "set_fbeta":
            beta = ref_float(value, None, 1e6)
            if beta <= 0:
                raise Invalid("beta <= 0")
        else:
            raise Invalid(f"no parameter {key!r}")
    if canonical == "set_fbeta" and beta is None:
        raise Invalid("set_fbeta needs beta")
    key_text = canonical if k is None else f"{canonical}@{k}"
    shown = [f"rel={rel}"] if rel != 1 else []
    if beta is not None:
        shown.append("beta=" + (str(int(beta)) if beta == int(beta) else repr(beta)))
    return key_text + (f"({','.join(shown)})" if shown else "")


def _level(raw: str) -> str:
    """One of trec_eval's 11 recall levels (0, 0.1, ..., 1) as its measure name."""
    try:
        x = ref_float(raw, hexadecimal=False)
    except Invalid:
        raise Invalid("not a recall level") from None
    for i in range(11):
        if abs(x - i / 10) < 1e-9:
            return f"iprec_at_recall_{i / 10:.2f}"
    raise Invalid("not one of the 11 recall levels")


def ref_metrics(text: str) -> tuple[str, ...]:
    """The keys of one ``-m`` value: a comma list (commas inside parentheses do not split; a bare number
    continues the trec_eval cutoff list before it: ``P.5,10``), in order, repeats dropped."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    parts = [_spaces(p) for p in parts if _spaces(p)]
    if not parts:
        raise Invalid("no metric")
    keys: list[str] = []
    head: str | None = None
    for part in parts:
        if head is not None and re.fullmatch(r"[0-9]*\.?[0-9]+", part):
            part = head + part
        else:
            lead = re.match(r"(p|recall|ndcg_cut|map_cut|success|iprec_at_recall)\.", part, re.IGNORECASE)
            head = lead[0] if lead else None
        key = ref_metric(part)
        if key not in keys:
            keys.append(key)
    return tuple(keys)


def _metric_load(folder: Path) -> Any:
    value = _read_arg(folder, "metric.txt")
    keys = opt.metric_keys([value])
    if _whole(folder, "metric.txt"):
        try:
            saved = eval_saved(["-r", "bm25", "-m", value])
        except FinegrainError:
            return keys  # a metric this dataset cannot score (a clean refusal); the parse is what is compared
        if tuple(saved["metrics"]) != keys:
            return {"metrics in results.json": saved["metrics"]}
    return keys


def _metric_target() -> Target:
    seeds = tuple({"metric.txt": s.encode()} for s in (
        "ndcg@10", "P.5,10", "ndcg_cut.5,10,recall_100", "nDCG@10(rel=2),R@50,RR", "map_cut_100,Rprec,set_F",
        "P(rel=2)@5", "iprec_at_recall.0,.5,IPrec@0.1", "set_fbeta(beta=0.5),judged@10,hits@10, err@20",
        "success_1,recip_rank,bpref,infAP,gm_map,num_rel_ret,NumRet(rel=2)", "mrr@10 (rel=2)",
    ))
    return Target("cli-metric", seeds, _metric_load, lambda f: ref_metrics(_arg(f, "metric.txt")))


# --------------------------------------------------------------------------- numeric options, --cv, --sweep

# option -> (verb, parameter, reference reading); every case also needs the verb's required options
_EVAL_BASE = ["-d", DATASET, "-o", "out"]


def ref_cv(text: str) -> str:
    """``--cv K`` (``K`` folds, at least 2), or the retired ``K,metric=M,seed=S[,parts=fixed|tuned]``: the spec
    string."""
    head, *rest = text.split(",")
    folds = ref_int(head, 2)
    given: dict[str, str] = {}
    for part in rest:
        if "=" not in part:
            raise Invalid("a part without =")
        key, value = part.split("=", 1)
        key = key.strip().lower()
        if key not in ("metric", "seed", "parts") or key in given:
            raise Invalid(f"part {key!r}")
        given[key] = value.strip()
    parts = given.get("parts", "fixed").lower()
    if parts not in ("fixed", "tuned"):
        raise Invalid("parts")
    metric = ""
    if "metric" in given:
        keys = ref_metrics(given["metric"])
        if len(keys) != 1:
            raise Invalid("one metric")
        metric = f",metric={keys[0]}"
    return f"{folds}{metric},seed={ref_int(given.get('seed', '0'), 0)}" + (",parts=tuned" if parts == "tuned" else "")


def ref_sweep(text: str) -> tuple[Any, ...]:
    """``threshold=START:STOP:STEP[,norm=none|minmax|zscore][,folds=K][,seed=S]``: decimal numbers, STEP > 0,
    STOP >= START, at most 2001 thresholds, folds >= 2, seed >= 0, each part once."""
    head, *rest = text.split(",")
    key, eq, spans = head.partition("=")
    if key.strip() != "threshold" or not eq:
        raise Invalid("no threshold=")
    bounds = spans.split(":")
    if len(bounds) != 3:
        raise Invalid("not START:STOP:STEP")
    start, stop, step = (ref_float(b, hexadecimal=False) for b in bounds)
    if step <= 0 or stop < start:
        raise Invalid("empty range")
    steps = (stop - start) / step + 1e-9
    if not math.isfinite(steps) or math.floor(steps) + 1 > 2001:
        raise Invalid("too many thresholds")
    given: dict[str, str] = {}
    for part in rest:
        if "=" not in part:
            raise Invalid("a part without =")
        k, v = part.split("=", 1)
        k = k.strip().lower()
        if k not in ("norm", "folds", "seed") or k in given:
            raise Invalid(f"part {k!r}")
        given[k] = v.strip()
    norm = given.get("norm", "none").lower()
    if norm not in ("none", "minmax", "zscore"):
        raise Invalid("norm")
    return start, stop, step, norm, ref_int(given.get("folds", "5"), 2), ref_int(given.get("seed", "0"), 0)


_OPTIONS: dict[str, tuple[str, Callable[[dict[str, Any]], Any], Callable[[str], Any]]] = {
    "--top-k": ("eval", lambda p: p["top_k"], partial(ref_int, lo=1)),
    "--seed": ("eval", lambda p: p["seed"], partial(ref_int, lo=0)),
    "--batch-size": ("caption-corpus", lambda p: p["batch_size"], partial(ref_int, lo=1)),
    "--cv": ("eval", lambda p: cv_spec(p["cv"], None, None), ref_cv),
    "--sweep": ("eval", lambda p: _sweep_value(p["sweep"]), ref_sweep),
}
_BASE = {"eval": _EVAL_BASE, "caption-corpus": ["-d", DATASET, "-e", "minilm", "-o", "out"]}


def _sweep_value(text: str) -> tuple[Any, ...]:
    s = parse_sweep(text)
    return s.start, s.stop, s.step, s.norm, s.folds, s.seed


def _number_load(folder: Path) -> Any:
    flag, value = _read_arg(folder, "option.txt"), _read_arg(folder, "value.txt")
    verb, read, _ = _OPTIONS[flag]
    with contextlib.redirect_stderr(io.StringIO()):  # the retired --cv spelling's warning line
        got = read(_parse(verb, [*_BASE[verb], flag, value]))
    if flag == "--top-k" and _whole(folder, "value.txt"):
        saved = eval_saved(["-r", "bm25", "-m", "ndcg@10", "-k", value])
        if saved["provenance"].get("top_k") != got:
            return {"top_k in results.json": saved["provenance"].get("top_k")}
    return got


def _number_oracle(files: Files) -> Any:
    return _OPTIONS[_arg(files, "option.txt")][2](_arg(files, "value.txt"))


def _number_target() -> Target:
    seeds = tuple({"option.txt": flag.encode(), "value.txt": value.encode()} for flag, value in (
        ("--top-k", "10"), ("--top-k", "9223372036854775807"), ("--seed", "3"), ("--batch-size", "32"),
        ("--cv", "5"), ("--cv", " 3,metric=ndcg@10,seed=2"), ("--sweep", "threshold=0:1:0.1,norm=minmax,folds=3,seed=1"),
        ("--sweep", "threshold = -2.5 : 3e1 : .5"),
    ))
    return Target("cli-numbers", seeds, _number_load, _number_oracle, mutable=("value.txt",))


# --------------------------------------------------------------------------- paths


_QRELS = b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"
_RUN = b"q1 Q0 d1 1 2.5 sys\nq1 Q0 d2 2 1.0 sys\nq2 Q0 d3 1 -0.5 sys\n"
_QNAME, _RNAME = "q rels #1.txt", "文档 run;$x'.txt"


def _paths_args(files: Files) -> tuple[str, str]:
    text = _arg(files, "args.txt")
    parts = text.split("\n")
    if len(parts) != 2:
        raise Invalid("two paths, one a line")
    return parts[0], parts[1]


def _paths_load(folder: Path) -> Any:
    try:
        qrels, run = _paths_args({"args.txt": (folder / "args.txt").read_bytes()})
    except Invalid as e:
        raise FinegrainError(str(e)) from None
    here = os.getcwd()
    os.chdir(folder)  # the paths are relative to the working folder, as typed in a shell there
    try:
        code, stdout, stderr = run_cli(["evaluate", qrels, run, "-m", "ndcg@10", "--json"])
    finally:
        os.chdir(here)
    _outcome(code, stdout, stderr)
    return json.loads(stdout)["ndcg@10"] is not None


def _paths_oracle(files: Files) -> Any:
    for path in _paths_args(files):
        name = path.encode("utf-8", "surrogateescape")
        # Python's paths drop a trailing "/" ("run.txt/" is run.txt), where the shell's tools say "not a
        # folder"; the same file is read either way, so that leniency is allowed here.
        if not name or name.startswith(b"-") or not name.rstrip(b"/"):
            raise Invalid(f"{path!r} is not a file name")
        real = os.path.normpath(name)
        if real.startswith(b"/") or real.startswith(b".."):
            raise Invalid("outside the folder")
        if real.decode("utf-8", "surrogateescape") not in files or real == b"args.txt":
            raise Invalid(f"no file {path!r}")
    qrels, run = (os.path.normpath(p) for p in _paths_args(files))
    if (qrels, run) != (_QNAME, _RNAME):
        raise Invalid("not the qrels and the run")
    return True


def _paths_target() -> Target:
    def seed(args: str) -> dict[str, bytes]:
        return {_QNAME: _QRELS, _RNAME: _RUN, "args.txt": args.encode()}

    seeds = (
        seed(f"{_QNAME}\n{_RNAME}"), seed(f"./{_QNAME}\n{_RNAME}"), seed(f"{_QNAME}\n.//{_RNAME}"),
        seed(f".\n{_RNAME}"), seed(f"{_QNAME}\nmissing.txt"),
    )
    return Target("cli-paths", seeds, _paths_load, _paths_oracle, mutable=("args.txt",))


def cli_targets() -> list[Target]:
    """The command line's option values (``--set``, ``-m``, numbers, ``--cv``, ``--sweep``) and paths."""
    return [_set_target(), _metric_target(), _number_target(), _paths_target()]
