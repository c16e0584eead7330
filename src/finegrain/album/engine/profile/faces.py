"""Faces: detection and 128-d embeddings with dlib (``face_recognition``), and clustering into people.

Detection uses dlib's HOG frontal-face detector (``model="hog"``, CPU) or its
CNN detector (``model="cnn"``, slow on CPU); each face is embedded with dlib's
ResNet face descriptor, in which two photos of one person are usually within
euclidean distance 0.6 (dlib's own rule of thumb; 0.5 is stricter).

Install: the ``faces`` extra cannot be a plain pip requirement, because
``face-recognition`` requires ``dlib``, which pip would compile from source;
``scripts/install-faces.sh`` installs the prebuilt ``dlib-bin`` first, then
``face-recognition`` without its dependencies.
"""

from __future__ import annotations

import importlib
import os
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from finegrain.album.engine.profile.records import FaceRecord
from finegrain.errors import FinegrainError, MissingDependencyError

__all__ = ["detect_faces", "face_distance", "cluster_faces", "DEFAULT_THRESHOLD"]

DEFAULT_THRESHOLD = 0.5
_INSTALL = "run scripts/install-faces.sh (dlib-bin, face-recognition-models, then face-recognition --no-deps)"


def _face_recognition() -> Any:
    try:
        importlib.import_module("dlib")
        with warnings.catch_warnings():  # face_recognition_models imports the deprecated pkg_resources
            warnings.simplefilter("ignore", UserWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            return importlib.import_module("face_recognition")
    except ImportError as exc:
        err = MissingDependencyError(getattr(exc, "name", None) or "face_recognition", "faces")
        err.hint = _INSTALL
        raise err from exc
    except SystemExit as exc:  # face_recognition exits when face_recognition_models is missing
        raise MissingDependencyError("face_recognition_models", "faces") from exc


def _load_rgb(path: str | os.PathLike[str], max_side: int | None) -> tuple[np.ndarray, float]:
    """The upright RGB pixels (EXIF orientation applied), downscaled so the longer
    side is at most ``max_side``; returns the array and the scale applied."""
    from PIL import Image, ImageOps, UnidentifiedImageError  # Pillow comes with the faces extra

    try:
        with Image.open(path) as im:
            im = ImageOps.exif_transpose(im)
            im = im.convert("RGB")
            scale = 1.0
            if max_side and max(im.size) > max_side:
                scale = max_side / max(im.size)
                im = im.resize((max(1, round(im.width * scale)), max(1, round(im.height * scale))), Image.BILINEAR)
            return np.asarray(im, dtype=np.uint8).copy(), scale
    except FileNotFoundError as exc:
        raise FinegrainError(f"image not found: {os.fspath(path)!r}", "check the path") from exc
    except (UnidentifiedImageError, OSError) as exc:
        raise FinegrainError(f"cannot read image {os.fspath(path)!r}: {exc}", "the file is not an image Pillow can open, or it is corrupt") from exc


def detect_faces(
    image_path: str | os.PathLike[str] | np.ndarray,
    *,
    model: str = "hog",
    upsample: int = 1,
    max_side: int | None = 1600,
    jitters: int = 1,
) -> list[FaceRecord]:
    """The faces in an image, top to bottom then left to right.

    ``image_path`` is a file (EXIF orientation applied) or an RGB uint8 array
    of shape (H, W, 3). Large images are scanned downscaled to ``max_side``
    pixels (None: full size); boxes are ``(top, right, bottom, left)`` in pixels
    of the upright full-size image. ``upsample`` > 0 finds smaller faces (each
    step doubles the image: slower). ``jitters`` > 1 averages the embedding over
    re-sampled crops (slower, slightly more stable).
    """
    if model not in ("hog", "cnn"):
        raise FinegrainError(f"unknown face detector model {model!r}", "use 'hog' (fast, CPU) or 'cnn' (accurate, slow)")
    if isinstance(upsample, bool) or not isinstance(upsample, int) or upsample < 0:
        raise FinegrainError(f"upsample must be a non-negative integer, got {upsample!r}", "use 0, 1 or 2")
    fr = _face_recognition()
    if isinstance(image_path, np.ndarray):
        img = image_path
        if img.ndim != 3 or img.shape[2] != 3 or img.dtype != np.uint8:
            raise FinegrainError(
                f"image array of shape {img.shape} and dtype {img.dtype}", "pass an RGB uint8 array of shape (H, W, 3)"
            )
        img, scale = np.ascontiguousarray(img), 1.0
    else:
        img, scale = _load_rgb(image_path, max_side)
    boxes = fr.face_locations(img, number_of_times_to_upsample=upsample, model=model)
    if not boxes:
        return []
    boxes = sorted(boxes)
    encodings = fr.face_encodings(img, known_face_locations=boxes, num_jitters=jitters)
    out = []
    for (top, right, bottom, left), enc in zip(boxes, encodings, strict=True):
        emb = np.asarray(enc, dtype=np.float32)
        emb.setflags(write=False)
        box = tuple(int(round(v / scale)) for v in (top, right, bottom, left))
        out.append(FaceRecord(box, emb))  # type: ignore[arg-type]
    return out


def face_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Euclidean distances between the rows of ``a`` (n, 128) and ``b`` (m, 128): an (n, m) array."""
    a = np.atleast_2d(np.asarray(a, dtype=np.float64))
    b = np.atleast_2d(np.asarray(b, dtype=np.float64))
    sq = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2.0 * a @ b.T
    return np.sqrt(np.maximum(sq, 0.0))


def cluster_faces(
    embeddings: np.ndarray | Sequence[np.ndarray],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    min_size: int = 2,
) -> np.ndarray:
    """Cluster face embeddings into people: an int label per row, -1 for noise.

    Agglomerative clustering with *average* linkage on euclidean distance, cut
    at ``threshold``: two groups merge while the mean distance between their
    faces is at most ``threshold`` (0.5 by default; dlib's same-person rule is
    0.6). Average linkage does not chain two people together through one
    in-between face the way single linkage (or DBSCAN) does. Clusters of fewer
    than ``min_size`` faces are noise (-1): with the default 2 a face seen only
    once is no person. Labels are 0, 1, ... in the order of each cluster's first
    row, so the result depends only on the input (deterministic).

    Memory is O(n²) (the condensed distance matrix): fine for tens of thousands
    of faces, not for millions.
    """
    x = np.asarray(embeddings, dtype=np.float64)
    if x.ndim == 1 and x.size == 0:
        return np.empty(0, dtype=np.int64)
    if x.ndim != 2 or x.shape[0] and x.shape[1] != 128:
        raise FinegrainError(f"embeddings of shape {x.shape}", "pass an (n, 128) array of dlib face descriptors")
    if not np.isfinite(x).all():
        raise FinegrainError("embeddings contain NaN or infinite values", "drop the faces whose embedding failed")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not threshold > 0:
        raise FinegrainError(f"threshold must be a positive number, got {threshold!r}", "use 0.5-0.6 for dlib embeddings")
    if isinstance(min_size, bool) or not isinstance(min_size, int) or min_size < 1:
        raise FinegrainError(f"min_size must be a positive integer, got {min_size!r}", "use 2 (a person is seen at least twice)")
    n = x.shape[0]
    if n == 0:
        return np.empty(0, dtype=np.int64)
    if n == 1:
        return np.array([0 if min_size <= 1 else -1], dtype=np.int64)
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import pdist

    z = linkage(pdist(x, "euclidean"), method="average")
    raw = fcluster(z, t=float(threshold), criterion="distance")
    sizes = np.bincount(raw)
    labels = np.full(n, -1, dtype=np.int64)
    mapping: dict[int, int] = {}
    for i, c in enumerate(raw):
        if sizes[c] < min_size:
            continue
        if c not in mapping:
            mapping[c] = len(mapping)
        labels[i] = mapping[c]
    return labels
