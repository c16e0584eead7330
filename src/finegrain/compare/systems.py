"""Labelled results and the one baseline rule, shared by ``compare`` and ``report``.

:class:`LabelledResults` is one system to show or compare: its
:class:`~finegrain.results.saved.SavedResults`, a unique display label and
where it came from. :func:`unique_labels` names systems (the retriever's name,
with the folder added where two share one); :func:`resolve_baseline` reads a
``baseline=`` / ``--baseline`` (an index, a folder or a label) the same way
for every verb.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from finegrain.errors import FinegrainError
from finegrain.results.saved import RESULTS_FILE, SavedResults


@dataclass(frozen=True)
class LabelledResults:
    """One system: a display label, its saved results, and where they came from (folder, file hash)."""

    label: str
    results: SavedResults
    path: str | None = None
    sha256: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.results, SavedResults):
            object.__setattr__(self, "results", SavedResults.coerce(self.results))


def unique_labels(names: Sequence[str | None], sources: Sequence[str]) -> list[str]:
    """Display labels: each name (the source's base name when None), made unique.

    Where two share a name the source's base name is added (``e5 (dense_a)``),
    then the whole source, then the position (``e5 #2``).
    """
    base = [str(n) if n else (Path(src).name or src) for n, src in zip(names, sources)]
    out = list(base)
    attempts: tuple[Callable[[int], str], ...] = (
        lambda i: f"{base[i]} ({Path(sources[i]).name or sources[i]})",
        lambda i: f"{base[i]} ({sources[i]})",
        lambda i: f"{base[i]} #{i}",
    )
    for attempt in attempts:
        dup = {n for n in out if out.count(n) > 1}
        if not dup:
            break
        out = [attempt(i) if out[i] in dup else out[i] for i in range(len(out))]
    return out


def label_results(results: Sequence[SavedResults], sources: Sequence[str] | None = None) -> list[str]:
    """Labels of several results: retriever names, made unique with their sources (default ``#0``, ``#1``, ...)."""
    srcs = list(sources) if sources is not None else [f"#{i}" for i in range(len(results))]
    if len(srcs) != len(results):
        raise FinegrainError(f"{len(srcs)} folder labels for {len(results)} results", "give one label per result")
    return unique_labels([r.retriever_name for r in results], srcs)


def resolve_baseline(baseline: int | str | Path | None, labels: Sequence[str],
                     paths: Sequence[str | None] | None = None) -> int:
    """The baseline's index: None -> 0; an index (0 = the first); one of ``paths``; or one of ``labels``."""
    n = len(labels)
    if baseline is None:
        return 0
    if isinstance(baseline, bool):
        raise FinegrainError(f"baseline must be an index, a folder or a name, got {baseline!r}", "e.g. --baseline 0")
    if isinstance(baseline, int) or str(baseline).strip().isdigit():
        i = int(str(baseline).strip())
        if 0 <= i < n:
            return i
        raise FinegrainError(f"baseline index {i} is out of range for {n} results",
                             f"use 0..{n - 1} (0 = the first folder), a folder or a system name")
    text = str(baseline).strip()
    for i, p in enumerate(paths or ()):
        if p is not None and Path(p).resolve() == Path(text).resolve():
            return i
    for pool in (labels, [str(p) for p in (paths or ())]):
        if text in pool:
            return pool.index(text)
    raise FinegrainError(f"unknown baseline {text!r}: none of the results folders or systems ({', '.join(labels)})",
                         "give an index (0 = first), a system name or one of the folders")


def load_labelled(dirs: Sequence[str | Path]) -> list[LabelledResults]:
    """Read each folder's ``results.json`` (or an MTEB result JSON) and label it by retriever name (made unique)."""
    if not dirs:
        raise FinegrainError("no results folder given", "pass one or more folders written by 'finegrain eval --out DIR'")
    loaded: list[tuple[str, SavedResults, str]] = []
    for d in dirs:
        p = Path(d)
        results = SavedResults.load(p)
        f = p / RESULTS_FILE if p.is_dir() else p
        loaded.append((str(p), results, hashlib.sha256(f.read_bytes()).hexdigest()))
    labels = label_results([r for _, r, _ in loaded], [p for p, _, _ in loaded])
    return [LabelledResults(label, r, path, sha) for label, (path, r, sha) in zip(labels, loaded)]


def labelled(items: Sequence[Any], sources: Sequence[str] | None = None) -> list[LabelledResults]:
    """Label results given as SavedResults, Evaluations, folders or dicts (folders keep their path)."""
    results = [SavedResults.coerce(x) for x in items]
    if sources is None:
        srcs = []
        for i, (x, r) in enumerate(zip(items, results)):
            if isinstance(x, (str, Path)):
                srcs.append(str(x))
            else:
                srcs.append(r.source or f"#{i}")
    else:
        srcs = list(sources)
    labels = label_results(results, srcs)
    return [LabelledResults(lab, r, src) for lab, r, src in zip(labels, results, srcs)]
