"""Weight averaging of encoders fine-tuned from one base: model soups and WiSE-FT (``finegrain soup``).

Models fine-tuned from the same weights often lie in one basin of the loss, so the weighted mean of
their parameters is itself a good model, and often better than each: a *model soup* (Wortsman et al.,
2022, "Model soups", the uniform soup). With the untouched base as one member, the mean interpolates
between the zero-shot and the fine-tuned model (Wortsman et al., 2022, WiSE-FT), which keeps part of
the base's generality when fine-tuning overfits its own pairs. Both are one operation here: every
floating-point tensor of the members' weights is replaced by the weighted mean (computed in float64,
stored in the tensor's own dtype); every other tensor (integer buffers such as position ids) must be
equal in all members. The weights are the folder's ``model.safetensors``, or each module folder's
where the model keeps several (an asymmetric model, ``finegrain train --query-only``: one per route),
and the members must keep the same files.

The members must be one architecture with one tokenizer: the same tensor names, shapes and dtypes,
the same module stack (``modules.json``) and tokenizer vocabulary (``tokenizer.json``), and they must embed with the same query and passage
prefixes (:func:`finegrain.train.bases.folder_defaults`). Anything else is refused before a file is
written, naming the first difference. The soup is written into a temporary folder beside ``out`` and
renamed into place when complete, so ``out`` is either the whole soup or absent.

``out/finegrain_training.json`` records the members (spec, folder, weight, weights' sha256, their own
training records' transductive labels), so a soup of a model trained on an evaluation dataset's
passages stays TRANSDUCTIVE for that dataset (:func:`finegrain.train.finetune.transductive_dataset`),
and its ``hyperparameters`` are the first member's declared settings, so ``st:OUT`` as a base for
``finegrain train`` keeps the members' temperature and prefixes.
"""

from __future__ import annotations

import contextlib
import json
import math
import shutil
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from finegrain._lazy import require
from finegrain.atomic import atomic_folder, require_empty_folder, write_text
from finegrain.errors import FinegrainError
from finegrain.io.checksum import sha256_of
from finegrain.machine import run_environment
from finegrain.train.bases import BaseModel, resolve_base
from finegrain.train.finetune import PROVENANCE

FORMAT = "finegrain-soup/1"
WEIGHTS = "model.safetensors"


@dataclass(frozen=True)
class Member:
    """One ingredient: the model ``spec`` names (as ``--base`` takes it) and its weight in the mean."""

    spec: str
    weight: float


@dataclass(frozen=True)
class SoupResult:
    """What :func:`soup` wrote: the folder (``st:OUT``), its members with normalised weights, the record."""

    out: Path
    members: tuple[Member, ...]
    tensors: int
    averaged: int
    record: Mapping[str, Any]


def parse_mix(text: str | None, n: int) -> tuple[float, ...] | None:
    """``--mix`` as numbers, one per member (comma-separated); ``None`` is the uniform soup."""
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",")]
    values: list[float] = []
    for p in parts:
        try:
            values.append(float(p))
        except ValueError:
            raise FinegrainError(f"--mix {text!r}: {p!r} is not a number", _weights_fix(n)) from None
    return normalise(values, n, shown=f"--mix {text!r}")


def normalise(weights: Sequence[float] | None, n: int, *, shown: str | None = None) -> tuple[float, ...]:
    """``weights`` (one per member, finite, none negative, not all zero) scaled to sum 1; ``None``: equal weights."""
    if weights is None:
        return tuple(1.0 / n for _ in range(n))
    what = shown or f"the weights {list(weights)}"
    if len(weights) != n:
        raise FinegrainError(f"{what} give {len(weights)} weight(s) for {n} models", _weights_fix(n))
    bad = next((w for w in weights if not math.isfinite(w) or w < 0), None)
    if bad is not None:
        raise FinegrainError(f"{what}: {bad!r} is not a finite non-negative number", _weights_fix(n))
    total = math.fsum(weights)
    if total <= 0:
        raise FinegrainError(f"{what} are all zero", _weights_fix(n))
    return tuple(float(w) / total for w in weights)


def _weights_fix(n: int) -> str:
    return f"give {n} non-negative numbers, one per model, e.g. --mix {','.join(['1'] * n)}"


def soup(specs: Sequence[str], out: str | Path, weights: Sequence[float] | None = None) -> SoupResult:
    """Write the weighted mean of the models ``specs`` name (``e5``, ``minilm``, ``st:PATH``) to ``out``.

    ``weights`` (one per model, normalised to sum 1; default uniform) must be non-negative. ``out``
    must not exist or be an empty folder.
    """
    if len(specs) < 2:
        raise FinegrainError(f"a soup needs at least two models, got {len(specs)}",
                             "name two or more: finegrain soup st:A st:B -o OUT (st:A e5 for WiSE-FT)")
    w = normalise(weights, len(specs))
    out = require_empty_folder(out)  # before any work; atomic_folder checks again when it writes
    bases = [resolve_base(s) for s in specs]
    rels = _weight_files(bases[0])
    for b in bases[1:]:
        if (theirs := _weight_files(b)) != rels:
            raise FinegrainError(f"{b.spec}: its weight files ({', '.join(theirs)}) differ from "
                                 f"{bases[0].spec}'s ({', '.join(rels)})", "soup models fine-tuned from one base")
    _check_same_files(bases, rels)
    _check_prefixes(bases)
    st = require("safetensors.torch", "train")
    safetensors = require("safetensors", "train")
    torch = require("torch", "train")
    mixed: dict[str, dict[str, Any]] = {}
    tensors = averaged = 0
    for rel in rels:
        mixed[rel], n = _mix(bases, rel, w, safetensors, torch)
        tensors, averaged = tensors + len(mixed[rel]), averaged + n
    members = tuple(Member(s, wi) for s, wi in zip(specs, w))
    record = _record(bases, members, rels, averaged, tensors)
    _write(out, bases[0].path, mixed, record, st)
    return SoupResult(out, members, tensors, averaged, record)


def _weight_files(b: BaseModel) -> tuple[str, ...]:
    """The member's safetensors weights, relative to its folder: ``model.safetensors``, else each module
    folder's (an asymmetric model keeps one per route, e.g. ``query_0_Transformer/model.safetensors``)."""
    if (b.path / WEIGHTS).is_file():
        return (WEIGHTS,)
    found = tuple(sorted(p.relative_to(b.path).as_posix() for p in b.path.glob(f"*/{WEIGHTS}")
                         if p.is_file() and p.parent.name != "checkpoints"))
    if not found:
        raise FinegrainError(f"{b.spec}: {b.path} holds no {WEIGHTS}",
                             "a soup reads safetensors weights; save the model with safe_serialization=True")
    return found


def _mix(bases: Sequence[BaseModel], rel: str, w: Sequence[float], safetensors: Any,
         torch: Any) -> tuple[dict[str, Any], int]:
    """The weighted mean of the members' weight file ``rel``, and how many of its tensors were averaged."""
    with contextlib.ExitStack() as stack:
        files = [stack.enter_context(_open(safetensors, b, rel)) for b in bases]
        for b, f in zip(bases[1:], files[1:]):
            _check_tensors(bases[0], files[0], b, f)
        mixed: dict[str, Any] = {}
        averaged = 0
        for k in sorted(files[0].keys()):  # one tensor at a time: memory is the soup plus one float64 tensor
            first = _read(files[0], k, bases[0], rel)
            if first.is_floating_point():
                total = first.to(torch.float64) * w[0]
                for b, f, wi in zip(bases[1:], files[1:], w[1:]):
                    total += _read(f, k, b, rel).to(torch.float64) * wi
                mixed[k] = total.to(first.dtype).contiguous()
                averaged += 1
                continue
            for b, f in zip(bases[1:], files[1:]):
                if k in f.keys() and not torch.equal(first, _read(f, k, b, rel)):
                    raise FinegrainError(f"{b.spec}: tensor {k!r} ({first.dtype}) differs from {bases[0].spec}'s and "
                                         "is not floating-point, so it cannot be averaged",
                                         "soup models fine-tuned from one base")
            mixed[k] = first
    return mixed, averaged


# --------------------------------------------------------------------------- checks


def _check_same_files(bases: Sequence[BaseModel], rels: Sequence[str]) -> None:
    """One module stack, and one tokenizer beside each weight file (a tokenizer lives in the module folder of
    a model that keeps its weights there)."""
    def vocabularies(folder: Path) -> list[Any]:
        return [_vocabulary((folder / rel).parent) for rel in rels]

    for what, read in (("module stack (modules.json)", _modules), ("tokenizer vocabulary", vocabularies)):
        want = read(bases[0].path)
        for b in bases[1:]:
            if read(b.path) != want:
                raise FinegrainError(f"{b.spec}: its {what} differs from {bases[0].spec}'s",
                                     "soup models fine-tuned from one base (same modules and tokenizer)")


def _modules(folder: Path) -> list[tuple[str, str]] | None:
    """Each module's folder and class name (sentence-transformers versions write one class under several
    module paths, so only the class name counts)."""
    listed = _json_any(folder / "modules.json")
    if not isinstance(listed, list):
        return None
    return [(str(m.get("path")), str(m.get("type", "")).rsplit(".", 1)[-1]) for m in listed if isinstance(m, dict)]


def _vocabulary(folder: Path) -> Any:
    """The tokenizer's model (its type and vocabulary) from ``tokenizer.json``, else the ``vocab.txt`` text."""
    tok = _json_any(folder / "tokenizer.json")
    if isinstance(tok, dict) and "model" in tok:
        return tok["model"]
    try:
        return (folder / "vocab.txt").read_text(encoding="utf-8")
    except OSError:
        return None


def _check_prefixes(bases: Sequence[BaseModel]) -> None:
    ref = bases[0].defaults
    for b in bases[1:]:
        d = b.defaults
        if (d.query_prefix, d.passage_prefix) != (ref.query_prefix, ref.passage_prefix):
            raise FinegrainError(
                f"{b.spec} embeds with prefixes {d.query_prefix!r} / {d.passage_prefix!r}, {bases[0].spec} with "
                f"{ref.query_prefix!r} / {ref.passage_prefix!r}",
                "soup models that embed texts the same way (fine-tuned from one base with its prefixes)")


def _check_tensors(ref: BaseModel, a: Any, other: BaseModel, b: Any) -> None:
    """Every floating-point tensor of either member is in both, of one shape and dtype (read from the files'
    headers). An integer buffer that only one of them saved (``position_ids``: transformers versions
    differ) is no difference: the soup keeps the first member's buffers, so it loads as the first member does."""
    ka, kb = set(a.keys()), set(b.keys())
    for k in sorted(ka | kb):
        if k not in ka or k not in kb:
            side, f = (ref, a) if k in ka else (other, b)
            if _dtype(f, k) in _FLOAT_DTYPES:
                raise FinegrainError(f"tensor {k!r} is in {side.spec} only ({ref.spec} vs {other.spec})",
                                     "soup models of one architecture (fine-tuned from one base)")
            continue
        sa, sb = a.get_slice(k), b.get_slice(k)
        if (list(sa.get_shape()), sa.get_dtype()) != (list(sb.get_shape()), sb.get_dtype()):
            raise FinegrainError(
                f"tensor {k!r} is {tuple(sa.get_shape())} {sa.get_dtype()} in {ref.spec} but {tuple(sb.get_shape())} "
                f"{sb.get_dtype()} in {other.spec}", "soup models of one architecture (fine-tuned from one base)")


#: safetensors' names of floating-point dtypes (the tensors a soup averages).
_FLOAT_DTYPES = frozenset({"F64", "F32", "F16", "BF16", "F8_E4M3", "F8_E5M2"})


def _dtype(f: Any, k: str) -> str:
    return str(f.get_slice(k).get_dtype())


@contextlib.contextmanager
def _open(safetensors: Any, b: BaseModel, rel: str) -> Iterator[Any]:
    """``b``'s weights file ``rel`` opened for reading tensor by tensor; an unreadable file is a
    :class:`FinegrainError`."""
    path = b.path / rel
    try:
        cm = safetensors.safe_open(str(path), framework="pt", device="cpu")
        f = cm.__enter__()
    except Exception as e:  # safetensors raises its own error type (and OSError) for a broken file
        raise FinegrainError(f"{b.spec}: cannot read {path}: {e}", "check that the folder holds a whole model") from None
    try:
        yield f
    finally:
        cm.__exit__(None, None, None)


def _read(f: Any, k: str, b: BaseModel, rel: str) -> Any:
    try:
        return f.get_tensor(k)
    except Exception as e:  # a truncated file is found only when its tensor is read
        raise FinegrainError(f"{b.spec}: cannot read tensor {k!r} of {b.path / rel}: {e}",
                             "check that the folder holds a whole model") from None


# --------------------------------------------------------------------------- the record and the folder


def _member_record(b: BaseModel, m: Member, rels: Sequence[str]) -> dict[str, Any]:
    own = _json(b.path / PROVENANCE)
    files = {rel: sha256_of(b.path / rel) for rel in rels}
    return {"spec": m.spec, "name": b.name, "path": str(b.path), "weight": m.weight,
            "weights_sha256": files.get(WEIGHTS), "weights_files": files,
            "format": own.get("format") if own else None,
            "transductive_dataset": own.get("transductive_dataset") if own and own.get("transductive") else None}


def _record(bases: Sequence[BaseModel], members: Sequence[Member], rels: Sequence[str], averaged: int,
            tensors: int) -> dict[str, Any]:
    entries = [_member_record(b, m, rels) for b, m in zip(bases, members)]
    datasets = sorted({e["transductive_dataset"] for e in entries if e["transductive_dataset"]})
    d = bases[0].defaults
    return {
        "format": FORMAT,
        "method": "weighted mean of every floating-point tensor (float64 sums, stored in the tensor's dtype); "
                  "other tensors equal in every member and copied",
        "members": entries,
        "tensors": tensors,
        "averaged": averaged,
        "hyperparameters": {"temperature": d.temperature, "lr": d.lr, "query_prefix": d.query_prefix,
                            "passage_prefix": d.passage_prefix,
                            "source": f"the first member's declared settings ({d.source})"},
        "transductive": bool(datasets),
        "transductive_dataset": ", ".join(datasets) if datasets else None,
        "transductive_datasets": datasets,
        "environment": run_environment(),
    }


def _json_any(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _json(path: Path) -> dict[str, Any] | None:
    value = _json_any(path)
    return value if isinstance(value, dict) else None


def _write(out: Path, template: Path, tensors: Mapping[str, Mapping[str, Any]], record: Mapping[str, Any],
           st: Any) -> None:
    """The template folder's files (its config, tokenizer and modules), the mixed weight files (``tensors``:
    each file's, by its path in the folder) and the record, in a temporary folder renamed onto ``out`` once
    whole (:func:`finegrain.atomic.atomic_folder`)."""
    mixed = {(template / rel).resolve() for rel in tensors}

    def not_copied(folder: str, names: list[str]) -> list[str]:
        return [n for n in names if (Path(folder) / n).resolve() in mixed]

    with atomic_folder(out) as tmp:
        try:
            for src in template.iterdir():
                if src.name in (WEIGHTS, PROVENANCE, "checkpoints") or src.name.startswith("."):
                    continue
                if src.is_dir():
                    shutil.copytree(src, tmp / src.name, ignore=not_copied)
                else:
                    shutil.copy2(src, tmp / src.name)
            for rel, file_tensors in tensors.items():
                st.save_file(dict(file_tensors), str(tmp / rel), metadata={"format": "pt"})
        except OSError as e:
            raise FinegrainError(f"cannot write {out}: {e.strerror or e}",
                                 "choose a writable -o with free space") from None
        write_text(tmp / PROVENANCE, json.dumps(record, indent=2, ensure_ascii=False) + "\n")
