"""The cross-encoder reranker: a local Hugging Face sequence classifier scoring ``(query, passage)`` pairs,
behind the :class:`Reranker` protocol every reranking scorer implements."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Protocol, runtime_checkable

import numpy as np

from finegrain._lazy import require
from finegrain.errors import FinegrainError
from finegrain.retrieve.dense.encoders.base import local_model_folder


@runtime_checkable
class Reranker(Protocol):
    """Scores passages for one query; a higher score means more relevant.

    ``score`` returns one float per passage, in the order given (an empty list
    gives an empty array). ``name`` and ``config()`` are recorded as provenance.
    """

    name: str

    def config(self) -> dict[str, Any]: ...

    def score(self, query: str, passages: list[str]) -> np.ndarray: ...


# --------------------------------------------------------------------------- cross-encoder adapter


@dataclass(frozen=True)
class CrossEncoderReranker:
    """A local cross-encoder: ``AutoModelForSequenceClassification`` over ``(query, passage)`` pairs.

    ``model_path`` is a directory with a model and its tokenizer saved by
    ``save_pretrained``. The score of a pair is the model's logit when it has
    one label, and ``logit[1] - logit[0]`` (the log-odds of label 1,
    "relevant") when it has two. Pairs are tokenized together and truncated to
    ``max_length`` tokens (the longer side first); ``batch_size`` pairs go
    through the model at once, in eval mode without gradients, so scores are
    deterministic on a given machine. The model is loaded on the first call to
    :meth:`score`.
    """

    model_path: str
    max_length: int = 512
    batch_size: int = 32
    device: str = "cpu"
    name: str = "cross-encoder"

    def __post_init__(self) -> None:
        object.__setattr__(self, "model_path", str(self.model_path))
        local_model_folder(self.model_path, what="cross-encoder", markers=("config.json",),
                           saved_by="model.save_pretrained() and tokenizer.save_pretrained()",
                           example="--set model=/path/to/cross-encoder")
        for key in ("max_length", "batch_size"):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise FinegrainError(f"{key}={v!r} is not a whole number >= 1", f"e.g. {key}=32")
        _backend()  # fail now, not after the first stage ran, when torch/transformers are missing

    def config(self) -> dict[str, Any]:
        cfg: dict[str, Any] = {
            "model_path": self.model_path,
            "max_length": self.max_length,
            "batch_size": self.batch_size,
            "device": self.device,
        }
        if "_loaded" in self.__dict__:  # what was actually run, once known
            model = self._loaded[1]
            cfg["architecture"] = type(model).__name__
            cfg["num_labels"] = int(model.config.num_labels)
        return cfg

    @cached_property
    def _loaded(self) -> tuple[Any, Any]:
        torch, transformers = _backend()
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(self.model_path, local_files_only=True)
            model = transformers.AutoModelForSequenceClassification.from_pretrained(
                self.model_path, local_files_only=True
            )
        except (OSError, ValueError) as e:
            raise FinegrainError(
                f"cannot load a cross-encoder from {self.model_path!r}: {str(e).splitlines()[0]}",
                "the folder must hold a sequence-classification model and its tokenizer (save_pretrained)",
            ) from None
        if int(model.config.num_labels) not in (1, 2):
            raise FinegrainError(
                f"the model in {self.model_path!r} has {model.config.num_labels} labels",
                "a cross-encoder reranker needs num_labels=1 (a relevance logit) or 2 (not relevant / relevant)",
            )
        model.to(torch.device(self.device))
        model.eval()
        return tokenizer, model

    def score(self, query: str, passages: list[str]) -> np.ndarray:
        if not passages:
            return np.empty(0, dtype=np.float64)
        torch, _ = _backend()
        tokenizer, model = self._loaded
        out: list[np.ndarray] = []
        with torch.inference_mode():
            for i in range(0, len(passages), self.batch_size):
                chunk = list(passages[i : i + self.batch_size])
                enc = tokenizer(
                    [query] * len(chunk),
                    chunk,
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                ).to(torch.device(self.device))
                logits = model(**enc).logits.float()
                s = logits[:, 0] if logits.shape[1] == 1 else logits[:, 1] - logits[:, 0]
                out.append(s.cpu().numpy().astype(np.float64))
        return np.concatenate(out)


def _backend() -> tuple[Any, Any]:
    torch = require("torch", "rerank")
    transformers = require("transformers", "rerank")
    return torch, transformers


# --------------------------------------------------------------------------- the pipeline step
