"""Faces with real dlib on real photos (COCO-mini people); no mocks.

Identity: the same photo rescaled, cropped and mirrored must give embeddings
within dlib's 0.6 of each other, different people must be farther apart than
that spread, and clustering must recover the people.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    pytest.importorskip("face_recognition", reason="needs dlib: bash scripts/install-faces.sh")

from PIL import Image, ImageOps  # noqa: E402

from finegrain.album.engine.profile.faces import cluster_faces, detect_faces, face_distance  # noqa: E402
from finegrain.album.engine.profile.records import FaceRecord  # noqa: E402
from finegrain.errors import FinegrainError  # noqa: E402

# COCO-mini photos with one clear face each (found by scanning every 'person' image).
PEOPLE = (
    "train2017/000000551757.jpg",  # woman cutting an ID card (large face)
    "val2017/000000368212.jpg",  # toddler brushing teeth
    "val2017/000000109313.jpg",  # man with a Wii controller
    "train2017/000000227000.jpg",  # girl by a parking meter
    "train2017/000000084533.jpg",  # woman on a motorcycle
)


@pytest.fixture(scope="module")
def coco(data_root: Path) -> Path:
    root = data_root / "coco_mini"
    if not (root / "coco_mini_joined.jsonl").is_file():
        pytest.skip(f"{root} not found")
    return root


def person_images(coco: Path, n: int) -> list[Path]:
    """The n COCO-mini images whose largest 'person' box covers the most of the image."""
    scored = []
    for line in (coco / "coco_mini_joined.jsonl").read_text().splitlines():
        row = json.loads(line)
        areas = [o["area"] for o in row["objects"] if o["category"] == "person"]
        if areas:
            scored.append((max(areas) / (row["width"] * row["height"]), row["image_path"]))
    scored.sort(reverse=True)
    return [coco / p for _, p in scored[:n]]


def test_detects_faces_on_real_person_photos(coco: Path) -> None:
    images = person_images(coco, 20)
    found = {p.name: detect_faces(p) for p in images}
    with_faces = [name for name, faces in found.items() if faces]
    print(f"\nfaces found in {len(with_faces)} of {len(images)} COCO-mini person photos: {with_faces}")
    assert len(with_faces) >= 3
    for name in with_faces:
        with Image.open(next(p for p in images if p.name == name)) as im:
            w, h = im.size
        for f in found[name]:
            assert isinstance(f, FaceRecord)
            top, right, bottom, left = f.box
            assert -w // 4 <= left < right <= w + w // 4 and -h // 4 <= top < bottom <= h + h // 4
            assert f.embedding.shape == (128,) and f.embedding.dtype == np.float32
            assert not f.embedding.flags.writeable
            assert 0.5 < float(np.linalg.norm(f.embedding)) < 1.5
    big = found["000000551757.jpg"]
    assert len(big) == 1 and big[0].width > 200


def test_box_is_in_full_size_pixels_when_downscaled(coco: Path) -> None:
    path = coco / "images" / PEOPLE[0]
    full = detect_faces(path, max_side=None)[0]
    small = detect_faces(path, max_side=320)[0]
    assert max(abs(a - b) for a, b in zip(full.box, small.box)) <= 20
    assert float(face_distance(full.embedding, small.embedding)[0, 0]) < 0.6


def variants(img: Image.Image) -> list[Image.Image]:
    w, h = img.size
    return [
        img,
        img.resize((int(w * 1.3), int(h * 1.3)), Image.BICUBIC),
        img.crop((int(w * 0.05), int(h * 0.05), int(w * 0.95), int(h * 0.95))),
        ImageOps.mirror(img),
    ]


def test_same_face_close_different_people_far_and_clustered(coco: Path) -> None:
    embs, who = [], []
    for k, rel in enumerate(PEOPLE):
        with Image.open(coco / "images" / rel) as im:
            base = im.convert("RGB")
        for v in variants(base):
            faces = detect_faces(np.asarray(v))
            assert faces, f"no face in a variant of {rel}"
            embs.append(max(faces, key=lambda f: f.width).embedding)
            who.append(k)
    x, y = np.stack(embs), np.array(who)
    d = face_distance(x, x)
    same = d[(y[:, None] == y[None, :]) & ~np.eye(len(y), dtype=bool)]
    diff = d[y[:, None] != y[None, :]]
    print(f"\nsame person: max {same.max():.3f}; different people: min {diff.min():.3f}, mean {diff.mean():.3f}")
    assert same.max() < 0.6
    assert diff.min() > same.max()
    labels = cluster_faces(x)
    assert (labels >= 0).all()
    # one label per person, one person per label
    assert all(len(set(labels[y == k])) == 1 for k in range(len(PEOPLE)))
    assert len(set(labels)) == len(PEOPLE)
    assert labels.tolist() == sorted(labels.tolist())  # numbered by first appearance
    rng = np.random.default_rng(3)
    order = rng.permutation(len(y))
    shuffled = cluster_faces(x[order])
    same_partition = {tuple(sorted(order[shuffled == c])) for c in set(shuffled)}
    assert same_partition == {tuple(np.flatnonzero(labels == c)) for c in set(labels)}


def test_cluster_faces_small_cases() -> None:
    rng = np.random.default_rng(0)
    a = rng.normal(size=128)
    a /= np.linalg.norm(a)
    b = -a
    x = np.stack([a, a + 0.01, b, b + 0.01, rng.normal(size=128)])
    assert cluster_faces(x).tolist() == [0, 0, 1, 1, -1]  # the lone face is noise
    assert cluster_faces(x, min_size=1).tolist() == [0, 0, 1, 1, 2]
    assert cluster_faces(np.empty((0, 128))).tolist() == []
    assert cluster_faces(x[:1]).tolist() == [-1]
    with pytest.raises(FinegrainError, match="128"):
        cluster_faces(np.zeros((3, 5)))
    with pytest.raises(FinegrainError, match="threshold"):
        cluster_faces(x, threshold=0)


def test_no_face_and_bad_files(tmp_path: Path) -> None:
    blank = tmp_path / "blank.png"
    Image.new("RGB", (200, 150), (120, 160, 200)).save(blank)
    assert detect_faces(blank) == []
    bad = tmp_path / "bad.jpg"
    bad.write_bytes(b"not a jpeg")
    with pytest.raises(FinegrainError, match="bad.jpg"):
        detect_faces(bad)
    with pytest.raises(FinegrainError, match="not found"):
        detect_faces(tmp_path / "missing.jpg")
    with pytest.raises(FinegrainError, match="model"):
        detect_faces(blank, model="mtcnn")
