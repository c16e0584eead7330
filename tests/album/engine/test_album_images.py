"""Image embeddings in the album: a tiny random CLIP model (built here) embeds real COCO-mini
JPEGs at index time; text queries are answered against the pixels through its text side."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("transformers")
pytest.importorskip("piexif")

from tests.album.engine.test_album_indexer import album  # noqa: E402,F401  (the fixture: real JPEGs with EXIF)

from dense_fakes import BagOfWordsEncoder  # noqa: E402
from finegrain.album.engine.catalog import open_catalog  # noqa: E402
from finegrain.album.engine.catalog.store import EMBEDDING_KINDS  # noqa: E402
from finegrain.album.engine.indexer import embed_missing_images, index_folder  # noqa: E402
from finegrain.album.engine.search import IMAGE_TEXT_THRESHOLD, SearchContext, search  # noqa: E402
from finegrain.cli.main import main  # noqa: E402
from finegrain.errors import FinegrainError  # noqa: E402
from finegrain.retrieve.dense.encoders.clip import CLIPEncoder  # noqa: E402
from tiny_clip import make_tiny_clip  # noqa: E402

PHOTOS = ["IMG_0001.jpg", "IMG_0002.jpg", "IMG_0003.jpg", "scan.jpg", "screenshot.png",
          "trip/IMG_0100.jpg", "trip/IMG_0101.jpg"]


@pytest.fixture(scope="module")
def clip_dir(tmp_path_factory):
    return make_tiny_clip(tmp_path_factory.mktemp("clip") / "tiny-clip")


@pytest.fixture
def clip(clip_dir):
    return CLIPEncoder(clip_dir)


def _index(root, catalog, **kw):
    with open_catalog(catalog) as store:
        report = index_folder(root, store, faces=False, show_progress=False, **kw)
        ids, matrix = store.get_embeddings(kw["image_encoder"].model_id) if "image_encoder" in kw else ([], None)
        return report, store.get_meta(EMBEDDING_KINDS), ids, matrix


def test_every_readable_photo_gets_the_vector_of_its_pixels(album, tmp_path, clip):
    report, kinds, ids, matrix = _index(album, tmp_path / "c.sqlite", image_encoder=clip)
    assert sorted(ids) == PHOTOS and [p for p, _ in report.skipped] == ["broken.jpg"]
    assert kinds == {clip.model_id: "image"}
    expected = clip.encode_images([album / pid for pid in ids])  # the same pixels, encoded directly
    np.testing.assert_allclose(matrix, expected, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)


def test_resumes_and_refreshes_changed_photos(album, tmp_path, clip):
    catalog = tmp_path / "c.sqlite"
    _, _, _, first = _index(album, catalog, image_encoder=clip)
    with open_catalog(catalog) as store:  # as if the run stopped after some batches
        for pid in PHOTOS[:3]:
            store.delete_embedding(pid, clip.model_id)
    # a photo whose content changed loses its old vector and gets the new one
    (album / "scan.jpg").write_bytes((album / "IMG_0003.jpg").read_bytes())
    report, _, ids, again = _index(album, catalog, image_encoder=clip)
    assert report.updated == 1 and sorted(ids) == PHOTOS
    by_id = dict(zip(ids, again))
    np.testing.assert_allclose(by_id["scan.jpg"], by_id["IMG_0003.jpg"], atol=1e-6)
    assert not np.allclose(dict(zip(ids, first))["scan.jpg"], by_id["scan.jpg"])
    with open_catalog(catalog) as store:
        assert embed_missing_images(store, clip) == 0  # nothing left to do


def test_text_queries_are_scored_against_the_pixels(album, tmp_path, clip):
    catalog = tmp_path / "c.sqlite"
    _, _, ids, matrix = _index(album, catalog, image_encoder=clip)
    with open_catalog(catalog) as store:
        visual = search(store, "a photo of a dog", lang="en", encoder=clip, visual_threshold=-1.0).plan.visual_text
        assert "dog" in visual
        q = clip.encode([visual], kind="query")[0]
        scores = dict(zip(ids, matrix @ q))
        ordered = sorted(scores.values())
        threshold = float((ordered[3] + ordered[4]) / 2)  # between two photos: no float ties at the cut
        result = search(store, "a photo of a dog", lang="en", encoder=clip, visual_threshold=threshold)
        expected = {pid for pid, s in scores.items() if s >= threshold}
        assert set(result.photo_ids) == expected and not result.abstained
        assert [pid for pid, _ in result.ranked] == sorted(expected, key=lambda p: (-scores[p], p))
        # without a given threshold, image embeddings use the LAION text-image cut, not a leave-one-out one
        assert SearchContext(store, encoder=clip).visual_threshold == IMAGE_TEXT_THRESHOLD
        nothing = search(store, "a photo of a dog", lang="en", encoder=clip, visual_threshold=1.01)
        assert nothing.abstained and "threshold" in nothing.reason


def test_bad_encoder_choices_are_refused(album, tmp_path, clip):
    with open_catalog(tmp_path / "c.sqlite") as store:
        with pytest.raises(FinegrainError, match="cannot embed images"):
            index_folder(album, store, faces=False, show_progress=False, image_encoder=BagOfWordsEncoder())
        with pytest.raises(FinegrainError, match="same model"):
            index_folder(album, store, faces=False, show_progress=False, encoder=clip, image_encoder=clip)


def test_cli_index_with_an_image_encoder(album, tmp_path, clip_dir, capsys):
    catalog = tmp_path / "cli.sqlite"
    assert main(["album", "index", str(album), "--catalog", str(catalog), "--no-faces", "-q",
                 "--image-encoder", f"clip:{clip_dir}"]) == 0
    with open_catalog(catalog) as store:
        assert len(store.get_embeddings(CLIPEncoder(clip_dir).model_id)[0]) == len(PHOTOS)
    assert main(["album", "index", str(album), "--catalog", str(catalog), "--no-faces", "-q",
                 "--image-encoder", "e5"]) == 2
    assert "cannot embed images" in capsys.readouterr().err
