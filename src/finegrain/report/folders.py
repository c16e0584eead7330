"""The folders a report is rendered from, sorted by the kind of results they hold.

``finegrain report`` takes, in any order, folders written by ``finegrain eval``
(``results.json`` with schema ``finegrain.results/1``), ``finegrain perturb``
(``finegrain.perturb/1``, with ``perturbations.jsonl`` beside it) and
``finegrain contrast`` (``finegrain.contrast/1``). The kind is read from the
file's schema, never guessed from the folder name; any other schema is an error
naming the file and the accepted kinds.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from finegrain.compare.systems import LabelledResults, load_labelled, unique_labels
from finegrain.errors import DataFormatError, FinegrainError
from finegrain.io._lines import decode, iter_jsonl, parse_json, read_bytes
from finegrain.results.saved import SCHEMA as RESULTS_SCHEMA

EVAL, PERTURB, CONTRAST = RESULTS_SCHEMA, "finegrain.perturb/1", "finegrain.contrast/1"
KINDS = {EVAL: "finegrain eval", PERTURB: "finegrain perturb", CONTRAST: "finegrain contrast"}
ACCEPTED = "; ".join(f"'{tool} --out DIR' ({schema})" for schema, tool in KINDS.items())
PERTURBATIONS_FILE = "perturbations.jsonl"
N_EXAMPLES = 3  # example perturbations kept per family


@dataclass(frozen=True)
class Probe:
    """One perturbation or contrast folder: its label, saved results and (perturb) example perturbations."""

    kind: str
    label: str
    results: Mapping[str, Any]
    path: str
    sha256: str
    examples: Mapping[str, Sequence[Mapping[str, Any]]] = field(default_factory=dict)


@dataclass(frozen=True)
class Folders:
    """Every folder of a report, by kind, each list in the order given."""

    systems: list[LabelledResults]
    perturbs: list[Probe]
    contrasts: list[Probe]


def results_file(d: str | Path) -> Path:
    p = Path(d)
    f = p / "results.json" if p.is_dir() else p
    if not f.is_file():
        raise FinegrainError(f"no results at {str(f)!r}", f"pass folders written by {ACCEPTED}")
    return f


def schema_of(f: Path, data: Any) -> str:
    """The file's schema (one of :data:`KINDS`), else an error naming the file and the accepted kinds."""
    schema = data.get("schema") if isinstance(data, dict) else None
    if schema not in KINDS:
        found = repr(schema) if isinstance(data, dict) else type(data).__name__
        raise FinegrainError(f"{str(f)!r} has results of an unknown kind (schema {found})",
                             f"the report accepts folders written by {ACCEPTED}")
    return str(schema)


def load_folders(dirs: Sequence[str | Path]) -> Folders:
    """Read every folder's ``results.json`` and sort the folders into evaluations, perturbations and contrasts."""
    if not dirs:
        raise FinegrainError("no results folder given", f"pass one or more folders written by {ACCEPTED}")
    eval_dirs: list[str | Path] = []
    probes: list[tuple[str, Path, dict[str, Any], bytes]] = []
    for d in dirs:
        f = results_file(d)
        raw = read_bytes(f)
        data = parse_json(f, None, decode(f, None, raw).removeprefix("\ufeff"))
        kind = schema_of(f, data)
        if kind == EVAL:
            eval_dirs.append(d)
        else:
            probes.append((kind, f, data, raw))
    systems = load_labelled(eval_dirs) if eval_dirs else []
    out: dict[str, list[Probe]] = {PERTURB: [], CONTRAST: []}
    for kind in (PERTURB, CONTRAST):
        mine = [(f, data, raw) for k, f, data, raw in probes if k == kind]
        names = [_name(kind, data) for _, data, _ in mine]
        labels = unique_labels(names, [str(f.parent) for f, _, _ in mine])
        for label, (f, data, raw) in zip(labels, mine):
            examples = read_examples(f.parent / PERTURBATIONS_FILE) if kind == PERTURB else {}
            out[kind].append(Probe(kind, label, data, str(f.parent), hashlib.sha256(raw).hexdigest(), examples))
    return Folders(systems, out[PERTURB], out[CONTRAST])


def _name(kind: str, data: Mapping[str, Any]) -> str:
    if kind == PERTURB:
        return f"{data.get('retriever', '?')} · {data.get('dataset', '?')}"
    enc = data.get("encoder") or {}
    return str(enc.get("spec") or enc.get("model_id") or "?")


def read_examples(path: Path, n: int = N_EXAMPLES) -> dict[str, list[dict[str, Any]]]:
    """The first ``n`` perturbations of each family in ``perturbations.jsonl`` (none when the file is absent)."""
    out: dict[str, list[dict[str, Any]]] = {}
    if not path.is_file():
        return out
    for lineno, rec in iter_jsonl(path):
        if not isinstance(rec.get("family"), str):
            raise DataFormatError(path, lineno, "an object with a 'family'", type(rec).__name__)
        fam = out.setdefault(rec["family"], [])
        if len(fam) < n:
            fam.append(rec)
    return out
