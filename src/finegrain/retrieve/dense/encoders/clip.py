"""A CLIP model in a local folder (``clip:/path/to/model``): texts and images into one unit-vector space.

The folder is one written by ``CLIPModel.save_pretrained`` plus
``CLIPProcessor.save_pretrained`` (config, weights, tokenizer and image
processor files), loaded with transformers' ``CLIPModel`` / ``CLIPProcessor``
with ``local_files_only=True``: finegrain never downloads weights, and a path
that is not such a folder is a :class:`~finegrain.errors.FinegrainError` with
the fix. (open_clip checkpoints are not read: convert them to the
transformers layout, or add an adapter, when open_clip is installed.)

The adapter is an :class:`~finegrain.retrieve.dense.encoders.base.Encoder` for texts
(``kind`` is ignored: CLIP encodes queries and passages alike) and adds
:meth:`CLIPEncoder.encode_images`, which reads image files with Pillow
(converted to RGB) and returns rows in the same space. Both return
C-contiguous float32 rows of L2 norm 1, so a dot product is the cosine
similarity CLIP is trained for (the logit scale is a constant factor and does
not change any comparison).

The ``model_id`` is ``clip:<name>@<fingerprint>`` (the folder fingerprint of
:class:`~finegrain.retrieve.dense.encoders.base.LocalFolderEncoder`), so the embedding
cache can key CLIP text vectors too.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from finegrain.errors import FinegrainError, MissingDependencyError
from finegrain.retrieve.dense.encoders.base import (
    Kind,
    LocalFolderEncoder,
    as_unit_rows,
    check_kind,
    check_texts,
    load_error,
)


class CLIPEncoder(LocalFolderEncoder):
    """Text and image encoder over a local transformers CLIP folder."""

    scheme = "clip"
    adapter = "transformers-clip"
    folder = {"what": "CLIP", "markers": ("config.json",),
              "saved_by": "CLIPModel.save_pretrained and CLIPProcessor.save_pretrained",
              "example": "--encoder clip:/models/clip-vit-base-patch32"}

    def __init__(self, path: str | Path, *, name: str | None = None, batch_size: int = 32, device: str = "cpu") -> None:
        super().__init__(path, name=name, batch_size=batch_size, device=device)
        self._processor: Any = None

    @property
    def dim(self) -> int:
        """The shared embedding width (``projection_dim`` of the model config)."""
        if self._dim is None:
            self._dim = int(self._load()[0].config.projection_dim)
        return self._dim

    def encode(self, texts: Sequence[str], *, kind: Kind) -> np.ndarray:
        """Unit rows for ``texts`` (``kind`` is checked but does not change the vectors)."""
        check_kind(kind)
        texts = check_texts(texts)
        if not texts:
            return np.empty((0, self.dim), dtype=np.float32)
        import torch

        model, processor = self._load()
        tokenizer = getattr(processor, "tokenizer", processor)
        max_len = int(model.config.text_config.max_position_embeddings)
        out = []
        with torch.inference_mode():
            for a in range(0, len(texts), self.batch_size):
                batch = tokenizer(texts[a : a + self.batch_size], padding=True, truncation=True,
                                  max_length=max_len, return_tensors="pt")
                batch = {k: v.to(self.device) for k, v in batch.items() if k in ("input_ids", "attention_mask")}
                out.append(_features(model.get_text_features(**batch)))
        return as_unit_rows(np.concatenate(out), len(texts), self.dim, self.model_id)

    def encode_images(self, paths: Sequence[str | Path]) -> np.ndarray:
        """Unit rows for the image files ``paths`` (read with Pillow, converted to RGB)."""
        if isinstance(paths, (str, Path)):
            raise FinegrainError("encode_images() got one path, not a list of paths", "pass [path]")
        paths = list(paths)
        if not paths:
            return np.empty((0, self.dim), dtype=np.float32)
        import torch

        model, processor = self._load()
        image_processor = getattr(processor, "image_processor", processor)
        out = []
        with torch.inference_mode():
            for a in range(0, len(paths), self.batch_size):
                images = [load_image(p) for p in paths[a : a + self.batch_size]]
                pixels = image_processor(images=images, return_tensors="pt")["pixel_values"].to(self.device)
                out.append(_features(model.get_image_features(pixel_values=pixels)))
        return as_unit_rows(np.concatenate(out), len(paths), self.dim, self.model_id)

    def _load(self) -> tuple[Any, Any]:
        if self._model is None:
            try:
                from transformers import CLIPModel, CLIPProcessor
            except ImportError:
                raise MissingDependencyError("transformers", "clip") from None
            try:
                model: Any = CLIPModel.from_pretrained(str(self.path), local_files_only=True)
                processor = CLIPProcessor.from_pretrained(str(self.path), local_files_only=True)
            except Exception as e:
                raise load_error("CLIP model", self.path, e,
                                 "the folder needs config.json, the weights, the tokenizer files and "
                                 "preprocessor_config.json (save both CLIPModel and CLIPProcessor into it)") from e
            model.eval()
            model.to(self.device)
            self._model, self._processor = model, processor
        return self._model, self._processor


def load_image(path: str | Path) -> Any:
    """The image at ``path`` as an RGB ``PIL.Image``; a missing or unreadable file is a FinegrainError."""
    try:
        from PIL import Image, UnidentifiedImageError
    except ImportError:
        raise MissingDependencyError("Pillow", "clip") from None
    p = Path(path)
    if not p.is_file():
        raise FinegrainError(f"image file not found: {str(p)!r}", "check the image path (relative paths are resolved "
                             "against the pairs file's folder)")
    try:
        with Image.open(p) as im:
            return im.convert("RGB")
    except (UnidentifiedImageError, OSError) as e:
        raise FinegrainError(f"cannot read image {str(p)!r}: {e}", "give a JPEG or PNG file") from None


def _features(output: Any) -> np.ndarray:
    """Projected features as float32 numpy: transformers 4 returns a tensor, 5 an output with ``pooler_output``."""
    tensor = output if hasattr(output, "detach") else output.pooler_output
    return np.asarray(tensor.detach().to("cpu").float().numpy())
