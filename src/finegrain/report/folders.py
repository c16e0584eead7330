"""The folders a report is rendered from, sorted by the kind of results they hold.

``finegrain report`` takes, in any order, folders written by ``finegrain eval``
(``results.json`` with schema ``finegrain.results/1``), ``finegrain perturb``
(``finegrain.perturb/1``, with ``perturbations.jsonl`` beside it) and
``finegrain contrast`` (``finegrain.contrast/1``). The kind is read from the
file's schema, never guessed from the folder name; any other schema is an error
naming the file and the accepted kinds. Perturbation and contrast results are
validated on load (:mod:`finegrain.results.probes`), so a damaged file is one
error naming the file and the JSON path, before anything is rendered.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from finegrain.compare.systems import LabelledResults, load_labelled, unique_labels
from finegrain.errors import DataFormatError, FinegrainError
from finegrain.io._lines import decode, iter_jsonl, parse_json, read_bytes
from finegrain.results.probes import (
    CONTRAST_SCHEMA,
    PERTURB_SCHEMA,
    ContrastResults,
    PerturbationRecord,
    PerturbResults,
)
from finegrain.results.saved import SCHEMA as RESULTS_SCHEMA

EVAL, PERTURB, CONTRAST = RESULTS_SCHEMA, PERTURB_SCHEMA, CONTRAST_SCHEMA
KINDS = {EVAL: "finegrain eval", PERTURB: "finegrain perturb", CONTRAST: "finegrain contrast"}
ACCEPTED = "; ".join(f"'{tool} --out DIR' ({schema})" for schema, tool in KINDS.items())
PERTURBATIONS_FILE = "perturbations.jsonl"
N_EXAMPLES = 3  # example perturbations kept per family


R = TypeVar("R", PerturbResults, ContrastResults)


@dataclass(frozen=True)
class Probe(Generic[R]):
    """One perturbation or contrast folder: its label, saved results (validated on load) and (perturb) the
    first example perturbations of each family."""

    kind: str
    label: str
    results: R
    path: str
    sha256: str
    examples: Mapping[str, Sequence[PerturbationRecord]] = field(default_factory=dict)


@dataclass(frozen=True)
class Folders:
    """Every folder of a report, by kind, each list in the order given."""

    systems: list[LabelledResults]
    perturbs: list[Probe[PerturbResults]]
    contrasts: list[Probe[ContrastResults]]


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
    perturbs = [(f, PerturbResults.read(data, f), raw) for k, f, data, raw in probes if k == PERTURB]
    contrasts = [(f, ContrastResults.read(data, f), raw) for k, f, data, raw in probes if k == CONTRAST]
    perturb_labels = unique_labels([f"{r.retriever} · {r.dataset}" for _, r, _ in perturbs],
                                   [str(f.parent) for f, _, _ in perturbs])
    contrast_labels = unique_labels([c.encoder.spec or c.encoder.model_id or "?" for _, c, _ in contrasts],
                                    [str(f.parent) for f, _, _ in contrasts])
    return Folders(
        systems,
        [Probe(PERTURB, label, r, str(f.parent), _sha256(raw), read_examples(f.parent / PERTURBATIONS_FILE))
         for label, (f, r, raw) in zip(perturb_labels, perturbs)],
        [Probe(CONTRAST, label, c, str(f.parent), _sha256(raw))
         for label, (f, c, raw) in zip(contrast_labels, contrasts)],
    )


def _sha256(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def read_examples(path: Path, n: int = N_EXAMPLES) -> dict[str, list[PerturbationRecord]]:
    """The first ``n`` perturbations of each family in ``perturbations.jsonl`` (none when the file is absent).

    Each record kept is validated (a wrong one is an error naming the file and line); of the others only the
    family is read.
    """
    out: dict[str, list[PerturbationRecord]] = {}
    if not path.is_file():
        return out
    for lineno, rec in iter_jsonl(path):
        family = rec.get("family")
        if not isinstance(family, str):
            raise DataFormatError(path, lineno, "family to be a valid string", json.dumps(family, ensure_ascii=False))
        fam = out.setdefault(family, [])
        if len(fam) < n:
            try:
                fam.append(PerturbationRecord.read(rec, path))
            except DataFormatError as e:
                raise DataFormatError(path, lineno, e.expected, e.found, e.hint) from None
    return out
