"""Where judgements come from when a verb expects qrels: a file, a dataset folder or a dataset name.

One rule (:func:`resolve_qrels`), used by ``finegrain evaluate QRELS RUN`` and ``finegrain fuse --qrels``:
a path that exists is read (a file as TREC, BEIR tsv or a qrels table; a folder as a dataset in a
known format); else the text is a dataset name (``capretrieval/zh``, ``irds:...``); else one error
naming both readings.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from finegrain.datasets.dataset import Dataset
from finegrain.datasets.irds import PREFIX
from finegrain.datasets.registry import dataset_names, load_dataset
from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.io.files import QrelsFormat, read_qrels_file
from finegrain.io.trec import Compat
from finegrain.settings import Settings
from finegrain.types import Qrels


@dataclass(frozen=True)
class QrelsSource:
    """Judgements and where they came from: a file (``fmt``) or a dataset (``dataset``)."""

    qrels: Qrels
    label: str  # what was read, for a report line: the file format, or "dataset NAME"
    dataset: Dataset | None = None
    fmt: QrelsFormat | None = None


def resolve_qrels(
    spec: str | Path,
    settings: Settings | None = None,
    *,
    compat: Compat | str | None = None,
    qrels_format: QrelsFormat | str = "auto",
    split: str | None = None,
) -> QrelsSource:
    """The qrels ``spec`` names (see the module docstring). ``compat`` and ``qrels_format`` apply to a
    file, ``split`` to a BEIR dataset (``qrels/<split>.tsv``)."""
    text = str(spec)
    path = Path(text).expanduser()
    if path.is_file():
        if split is not None:
            raise FinegrainError(f"--split chooses the qrels of a BEIR dataset; {text!r} is a qrels file",
                                 "leave --split out, or give the dataset folder")
        qrels, fmt = read_qrels_file(path, compat=compat, qrels_format=qrels_format)
        return QrelsSource(qrels, f"{fmt.value} ({fmt.label})", fmt=fmt)
    if path.is_dir() or text in dataset_names() or text.startswith(PREFIX):
        ds = load_dataset(path if path.is_dir() else text, settings, split=split)
        return QrelsSource(ds.qrels, f"dataset {ds.name}", dataset=ds)
    known = UnknownNameError("dataset", text, dataset_names())
    raise FinegrainError(
        f"{text!r} is neither a qrels file (no such file) nor a dataset name (known: {', '.join(dataset_names())})",
        known.hint or "give the path of a qrels file (TREC or BEIR tsv), a dataset folder or a dataset name",
    )


__all__ = ["QrelsSource", "resolve_qrels"]
