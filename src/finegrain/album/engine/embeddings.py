"""The vectors that answer the visual part of album queries: caption and image embeddings.

A photo keeps at most one vector per model id. A text encoder (``e5``, ``st:PATH``, ...)
embeds sidecar captions as passages; an image-text model (``clip:PATH``) embeds the pixels,
and the catalog meta :data:`~finegrain.album.engine.catalog.store.EMBEDDING_KINDS` records it as an
image model (search then uses the text-image threshold, see :mod:`finegrain.album.engine.search`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tqdm.auto import tqdm

from finegrain.album.engine.catalog.store import EMBEDDING_KINDS, CatalogStore
from finegrain.album.engine.files import OutsideFolderError, confined, resolve_roots
from finegrain.errors import FinegrainError


def drop_image_vectors(store: CatalogStore, photo_id: str) -> None:
    """Forget the image vectors of ``photo_id`` (its file changed; they are made again)."""
    for model_id, kind in (store.get_meta(EMBEDDING_KINDS, {}) or {}).items():
        if kind == "image":
            store.delete_embedding(photo_id, model_id)


def embed_caption(store: CatalogStore, encoder: Any, photo_id: str, caption: str | None) -> None:
    if encoder is None:
        return
    if not caption:
        store.delete_embedding(photo_id, encoder.model_id)
        return
    store.put_embedding(photo_id, encoder.model_id, encoder.encode([caption], kind="passage")[0])


def embed_missing_captions(store: CatalogStore, encoder: Any, batch: int = 64) -> None:
    """Embed the captions that have no vector of ``encoder`` yet (indexed before it was configured)."""
    have = set(store.get_embeddings(encoder.model_id)[0])
    todo = [(p.id, p.caption) for p in store.iter_photos() if p.caption and p.id not in have]
    for i in range(0, len(todo), batch):
        chunk = todo[i : i + batch]
        vectors = encoder.encode([c for _, c in chunk], kind="passage")
        with store.transaction():
            for (pid, _), vec in zip(chunk, vectors):
                store.put_embedding(pid, encoder.model_id, vec)


def check_image_encoder(image_encoder: Any, encoder: Any = None) -> None:
    """An image encoder must embed images, and not share its model id with the caption encoder."""
    if image_encoder is None:
        return
    if not callable(getattr(image_encoder, "encode_images", None)):
        raise FinegrainError(
            f"{getattr(image_encoder, 'model_id', image_encoder)!r} cannot embed images",
            "use an image-text model for --image-encoder, e.g. clip:/path/to/clip-model",
        )
    if encoder is not None and getattr(encoder, "model_id", None) == image_encoder.model_id:
        raise FinegrainError(
            f"the caption encoder and the image encoder are the same model ({image_encoder.model_id})",
            "a photo keeps one vector per model: give the model as --image-encoder only "
            "(its text side then answers queries), or use another caption encoder",
        )


def embed_missing_images(
    store: CatalogStore, encoder: Any, warnings: list[tuple[str, str]] | None = None, *,
    batch: int = 32, show_progress: bool = False,
) -> int:
    """Embed the pixels of every photo that has no vector of ``encoder`` yet; returns how many.

    Each batch is one commit, so an interrupted run keeps what it did. A photo whose file cannot
    be read is listed in ``warnings`` and embedded one by one so the rest of its batch still is;
    one whose file links out of the catalog's folders is not read (a warning,
    :func:`~finegrain.album.engine.files.confined`).
    The model is recorded as an image model in the catalog meta ``embedding_kinds``.
    """
    model_id = str(encoder.model_id)
    kinds = dict(store.get_meta(EMBEDDING_KINDS, {}) or {})
    if kinds.get(model_id) != "image":
        kinds[model_id] = "image"
        store.set_meta(EMBEDDING_KINDS, kinds)
    have = set(store.get_embeddings(model_id)[0])
    roots = resolve_roots(store.roots())
    todo: list[tuple[str, str]] = []
    for p in store.iter_photos():
        if p.id in have:
            continue
        try:
            todo.append((p.id, str(confined(p.path, roots))))
        except OutsideFolderError as e:
            if warnings is not None:
                warnings.append((p.id, f"image embedding skipped: {e}"))
        except OSError:
            todo.append((p.id, p.path))  # the encoder says what cannot be read
    chunks = [todo[a : a + batch] for a in range(0, len(todo), batch)]
    if show_progress and chunks:
        chunks = tqdm(chunks, desc="image embeddings", unit="batch")
    done = 0
    for chunk in chunks:
        try:
            vectors = list(encoder.encode_images([path for _, path in chunk]))
            rows = list(zip(chunk, vectors))
        except (OSError, ValueError, FinegrainError):
            rows = []
            for item in chunk:  # find the unreadable file(s); keep the others
                try:
                    rows.append((item, encoder.encode_images([item[1]])[0]))
                except (OSError, ValueError, FinegrainError) as e:
                    if warnings is not None:
                        warnings.append((item[0], f"image embedding failed: {e}"))
        with store.transaction():
            for (pid, _), vec in rows:
                store.put_embedding(pid, model_id, np.asarray(vec, dtype=np.float32))
        done += len(rows)
    return done
