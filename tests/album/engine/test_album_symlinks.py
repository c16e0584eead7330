"""Links in a photo folder: one that stays inside it is a photo like any other; one that leads out
of it is never read, by the indexer (photo or sidecar), by image embeddings, or by the album page
(the file, its thumbnail, face crop and detail: the metadata of an outside file is that file's).

The files are real: JPEGs with EXIF (a camera name that marks the outside photo) and
``os.symlink`` links, indexed by ``index_folder`` and ``finegrain album index``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from album_photo_fixtures import good_fields, jpeg_with
from finegrain.album.engine.catalog import open_catalog
from finegrain.album.engine.embeddings import embed_missing_images
from finegrain.album.engine.indexer import index_folder
from finegrain.album.engine.records import FaceOccurrence, Photo
from finegrain.cli.main import main

SECRET_CAMERA = "Secretcam X1"


def _link(target: Path, link: Path) -> None:
    try:
        os.symlink(target, link)
    except (OSError, NotImplementedError):
        pytest.skip("symlinks are not supported here")


@pytest.fixture
def folder(tmp_path: Path) -> tuple[Path, Path]:
    """(photo folder, a folder outside it): a.jpg; in.jpg linking to a.jpg; out.jpg linking to a
    private photo outside; a.json, a's sidecar, linking to a private caption outside; out_dir, a
    linked folder outside."""
    root, private = tmp_path / "photos", tmp_path / "private"
    root.mkdir()
    private.mkdir()
    (root / "a.jpg").write_bytes(jpeg_with(good_fields()))
    (private / "secret.jpg").write_bytes(jpeg_with({**good_fields(), "make": "Secretcam", "model": "X1"}))
    (private / "secret.json").write_text('{"caption": "the private caption"}', encoding="utf-8")
    _link(root / "a.jpg", root / "in.jpg")
    _link(private / "secret.jpg", root / "out.jpg")
    _link(private / "secret.json", root / "a.json")
    _link(private, root / "out_dir")
    return root, private


def test_the_indexer_skips_a_photo_linking_out_of_the_folder_and_says_so(folder: tuple[Path, Path]) -> None:
    root, private = folder
    with open_catalog(root.parent / "c.sqlite") as store:
        report = index_folder(root, store, faces=False, show_progress=False)
        assert sorted(store.photo_ids()) == ["a.jpg", "in.jpg"]  # the inside link is a photo
        assert all(p.camera != SECRET_CAMERA for p in store.iter_photos())
        assert store.get_photo("a.jpg").caption is None  # its sidecar links out: not read
    assert report.added == 2 and len(report.skipped) == 1
    pid, reason = report.skipped[0]
    assert pid == "out.jpg" and "outside the photo folder" in reason and str(private / "secret.jpg") in reason
    assert any(p == "a.jpg" and "sidecar" in w and "outside the photo folder" in w for p, w in report.warnings)
    assert "skipped out.jpg: links to" in report.summary()


def test_a_photo_catalogued_through_an_outside_link_is_removed_on_the_next_run(folder: tuple[Path, Path]) -> None:
    """A catalog that holds such a photo (indexed by a build that followed the link) loses it, all derived data too."""
    root, private = folder
    with open_catalog(root.parent / "c.sqlite") as store:
        index_folder(root, store, faces=False, show_progress=False)
        store.put_photo(Photo(id="out.jpg", path=str(root / "out.jpg"), camera=SECRET_CAMERA))
        store.set_time_tags("out.jpg", ["year:2023"])
        report = index_folder(root, store, faces=False, show_progress=False)
        assert sorted(store.photo_ids()) == ["a.jpg", "in.jpg"]
        assert store.get_time_tags("out.jpg") == ()
    assert report.removed == 1 and [p for p, _ in report.skipped] == ["out.jpg"]


def test_the_cli_prints_the_skipped_link_and_succeeds(folder: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    root, _ = folder
    assert main(["album", "index", str(root), "--no-faces", "-q"]) == 0
    out = capsys.readouterr().out
    assert "2 added" in out and "1 skipped" in out and "skipped out.jpg: links to" in out


class _Pixels:
    """An image encoder that records the files it reads."""

    model_id = "test-pixels"

    def __init__(self) -> None:
        self.read: list[str] = []

    def encode_images(self, paths: list[str]) -> Any:
        import numpy as np

        self.read.extend(str(p) for p in paths)
        return np.ones((len(paths), 4), dtype=np.float32)


def test_image_embeddings_never_read_a_file_outside_the_folder(folder: tuple[Path, Path]) -> None:
    root, private = folder
    with open_catalog(root.parent / "c.sqlite") as store:
        index_folder(root, store, faces=False, show_progress=False)
        store.put_photo(Photo(id="out.jpg", path=str(root / "out.jpg")))  # a row that reaches outside
        encoder, warnings = _Pixels(), []
        assert embed_missing_images(store, encoder, warnings) == 2
        assert all(Path(p).resolve().is_relative_to(root) for p in encoder.read), encoder.read
        assert [p for p, _ in warnings] == ["out.jpg"] and "outside the photo folder" in warnings[0][1]


def test_the_page_serves_nothing_of_a_photo_linking_out_of_the_folder(folder: tuple[Path, Path], tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("fastapi")
    pytest.importorskip("httpx")
    from fastapi.testclient import TestClient

    from finegrain.album.engine.web.app import create_app

    monkeypatch.setenv("FINEGRAIN_CACHE", str(tmp_path / "cache"))
    root, _ = folder
    catalog = root.parent / "c.sqlite"
    with open_catalog(catalog) as store:
        index_folder(root, store, faces=False, show_progress=False)
        # as a build that followed the link catalogued it: the outside file's EXIF in the row
        store.put_photo(Photo(id="out.jpg", path=str(root / "out.jpg"), camera=SECRET_CAMERA, width=96, height=64))
        store.set_faces("out.jpg", [FaceOccurrence("out.jpg", None, (0, 50, 50, 0), 0)])
    with TestClient(create_app(catalog, engine=lambda *a, **k: None, thumb_cache=False)) as c:
        for url in ["/api/photo/out.jpg", "/photo/out.jpg", "/thumb/out.jpg", "/face/out.jpg?i=0"]:
            r = c.get(url)
            assert r.status_code == 403, (url, r.status_code)
            assert b"Secretcam" not in r.content and b"secret" not in r.content.lower(), url
        inside = c.get("/api/photo/in.jpg")
        assert inside.status_code == 200 and inside.json()["file"] == "present"
        assert c.get("/photo/in.jpg").content == (root / "a.jpg").read_bytes()
