"""``finegrain album migrate``: a catalog copied SQLite -> Postgres -> SQLite is the same catalog
(every part counted, every record and embedding equal bit for bit), and bad copies are refused."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from finegrain.album.engine.catalog import open_catalog
from finegrain.album.engine.catalog.migrate import PARTS, catalog_counts, migrate_catalog
from finegrain.album.engine.photobench import import_photobench
from finegrain.album.engine.records import FaceOccurrence, Person, Photo, PhotoPlace
from finegrain.cli.main import main
from finegrain.errors import FinegrainError

CST = timezone(timedelta(hours=8))
IDS = ["b.jpg", "A.jpg", "a.jpg", "Z/é.jpg", "z/e.jpg", "照片10.jpg", "照片9.jpg", "img_2.jpg", "img_10.jpg"]


def _fill(store) -> None:  # noqa: ANN001
    """A small catalog using every part, with ids whose order depends on collation (case, accents, CJK)."""
    rng = np.random.default_rng(0)
    store.set_meta("source", {"kind": "test", "n": len(IDS)})
    store.set_meta("last_indexed_at", "2024-05-01T10:00:00")
    store.add_root("/photos")
    store.put_person(Person("p1", ("Mum", "妈妈")))
    store.put_person(Person("p2", (), True))
    store.put_person(Person("p10", ("Ten",)))
    for i, pid in enumerate(IDS):
        taken = None if i == 3 else datetime(2023, 1 + i, 2, 9, 30, tzinfo=CST if i % 2 else None)
        store.put_photo(Photo(pid, f"/photos/{pid}", 100 + i, 1.5 * i, f"sha{i}", taken, "+08:00" if i % 2 else None,
                              30.0 + i / 7, 120.0 - i / 3, "Cam", 640, 480, f"caption {i}", ("k1", f"k{i}")))
        if i % 3:
            store.set_place(pid, PhotoPlace(country_en="China", country_zh="中国", city_en=f"City{i % 2}",
                                            city_zh=f"城{i % 2}", aliases=(("city", f"alias{i % 2}"),)))
        store.set_time_tags(pid, ["year:2023", f"month:{i + 1}"])
        faces = [FaceOccurrence(pid, "p1" if i % 2 else None, (1, 2, 3, 4), 0), FaceOccurrence(pid, "p2", None, 1)]
        store.set_faces(pid, faces, [rng.standard_normal(128).astype(np.float32), None])
        store.put_embedding(pid, "text", rng.standard_normal(8).astype(np.float32))
        if i % 2:
            tiny = np.array([1e-38, -3.4e38, 1.0000001, np.float32(1) / 3], np.float32)
            store.put_embedding(pid, "clip:x", tiny)
        store.mark_done(pid, "exif")
    store.set_events({IDS[0]: "e1", IDS[1]: "e1", IDS[5]: "e2"})


def _same_vectors(a, b) -> None:  # noqa: ANN001
    for model in a.embedding_models():
        ids_a, m_a = a.get_embeddings(model)
        ids_b, m_b = b.get_embeddings(model)
        assert ids_a == ids_b and m_a.dtype == m_b.dtype == np.float32 and m_a.tobytes() == m_b.tobytes()
    keys_a, f_a = a.face_embeddings()
    keys_b, f_b = b.face_embeddings()
    assert keys_a == keys_b and f_a.tobytes() == f_b.tobytes()


def test_sqlite_to_postgres_and_back_is_the_same_catalog(tmp_path, postgres_url, capsys) -> None:
    src = tmp_path / "src.sqlite"
    with open_catalog(src) as s:
        _fill(s)
        before = s.dump()
    assert main(["album", "migrate", "--from", str(src), "--to", postgres_url]) == 0
    out = capsys.readouterr().out
    counts = catalog_counts(before)
    assert counts == {"photos": 9, "places": 6, "time_tags": 18, "faces": 18, "face_embeddings": 9, "people": 3,
                      "events": 2, "embeddings": 13, "steps": 9, "meta": 3}  # hand-counted from _fill
    for part in PARTS:
        assert re.search(rf"^ +{part} +{counts[part]}$", out, re.MULTILINE), (part, out)
    back = tmp_path / "back.sqlite"
    report = migrate_catalog(postgres_url, back)
    assert dict(report.counts) == counts
    with open_catalog(src) as a, open_catalog(postgres_url, create=False) as pg, open_catalog(back) as b:
        assert pg.dump() == before == b.dump()
        assert pg.photo_ids() == a.photo_ids() == sorted(IDS)  # byte order in both stores
        assert pg.get_meta("last_indexed_at") == b.get_meta("last_indexed_at") == "2024-05-01T10:00:00"
        assert [p.id for p in pg.people()] == ["p1", "p2", "p10"]
        _same_vectors(a, pg)
        _same_vectors(pg, b)


def test_a_target_that_holds_photos_or_is_the_source_is_refused(tmp_path, postgres_url) -> None:
    src = tmp_path / "src.sqlite"
    with open_catalog(src) as s:
        _fill(s)
    with open_catalog(postgres_url) as t:
        t.put_photo(Photo("x.jpg", "/x.jpg"))
    with pytest.raises(FinegrainError, match=r"not empty \(1 photos"):
        migrate_catalog(src, postgres_url)
    with pytest.raises(FinegrainError, match="same catalog"):
        migrate_catalog(src, tmp_path / "." / "src.sqlite")
    with pytest.raises(FinegrainError, match="no catalog at"):
        migrate_catalog(tmp_path / "missing.sqlite", tmp_path / "new.sqlite")


def test_a_value_postgres_cannot_store_rolls_the_whole_copy_back(tmp_path, postgres_url) -> None:
    src = tmp_path / "src.sqlite"
    with open_catalog(src) as s:
        _fill(s)
        s.put_embedding("img_2.jpg", "text", np.array([np.nan] * 8, np.float32))  # SQLite stores any bytes
    with pytest.raises(FinegrainError, match=r"'text' embedding of photo 'img_2.jpg' has NaN"):
        migrate_catalog(src, postgres_url)
    with open_catalog(postgres_url, create=False) as t:
        assert t.count_photos() == 0 and t.people() == [] and t.embedding_models() == []


def test_a_photobench_album_migrates_with_every_count(album_dir, tmp_path, postgres_url) -> None:
    src = tmp_path / "album1.sqlite"
    with open_catalog(src) as s:
        import_photobench(album_dir, s, lang="en")
        before = s.dump()
    report = migrate_catalog(src, postgres_url)
    assert dict(report.counts) == catalog_counts(before) and dict(report.counts)["photos"] == 1069
    with open_catalog(postgres_url, create=False) as pg:
        assert pg.dump() == before
