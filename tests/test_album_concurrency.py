"""Reading a catalog while another connection writes to it (issue 10, defect 3).

An index run commits one photo at a time (its place row first, then the photo that points to
it); a search reading ``places()`` with two SELECTs outside one read transaction could see the
photo but not its place and fail with KeyError. Every multi-SELECT read now runs in one
snapshot. The writer and the reader here use separate connections (as ``album index`` and
``album serve`` do), bounded in count and time.
"""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta

from finegrain.album.catalog.sqlite import SqliteCatalog
from finegrain.album.catalog.store import PhotoFilter
from finegrain.album.plan_catalog import vocabulary_from_catalog
from finegrain.album.records import FaceOccurrence, Person, Photo, PhotoPlace

N_PHOTOS = 400
TIME_LIMIT_S = 30.0


def _place(i: int) -> PhotoPlace:
    return PhotoPlace(country_en="China", country_zh="中国", city_en=f"City{i}", city_zh=f"城{i}市", country_code="CN")


def _write(path, stop: threading.Event, errors: list[BaseException]) -> None:
    try:
        with SqliteCatalog(path) as w:
            w.put_person(Person("p1", ("Anna",)))
            start = datetime(2024, 1, 1)
            for i in range(N_PHOTOS):
                if stop.is_set():
                    break
                pid = f"img_{i:04d}.jpg"
                with w.transaction():  # as the indexer does: one commit per photo, new place included
                    w.put_photo(Photo(id=pid, path=pid, taken_at=start + timedelta(hours=i)))
                    w.set_place(pid, _place(i))
                    w.set_time_tags(pid, [f"year:{2024}", f"n:{i}"])
                    w.set_faces(pid, [FaceOccurrence(pid, "p1", None, 0)])
                if i % 50 == 49:  # a deletion too, as a re-index that drops a vanished file
                    w.delete_photo(f"img_{i - 25:04d}.jpg")
    except BaseException as e:  # noqa: BLE001  (reported by the test)
        errors.append(e)
    finally:
        stop.set()


def test_reads_stay_consistent_while_another_connection_writes(tmp_path) -> None:
    path = tmp_path / "c.sqlite"
    SqliteCatalog(path).close()
    stop = threading.Event()
    write_errors: list[BaseException] = []
    writer = threading.Thread(target=_write, args=(path, stop, write_errors))
    reads = 0
    deadline = time.monotonic() + TIME_LIMIT_S
    with SqliteCatalog(path, create=False) as r:
        writer.start()
        try:
            while not stop.is_set() and time.monotonic() < deadline:
                places = r.places()
                # every photo with a place has a whole one, and only photos that exist have one
                assert all(p.city_en and p.city_en.startswith("City") for p in places.values())
                with r.snapshot():
                    ids = set(r.photo_ids())
                    in_one_read = r.places()
                    assert set(in_one_read) <= ids
                    tagged = r.select_ids(PhotoFilter(tags=["year:2024"]))
                    assert tagged is None or tagged <= ids
                some = r.select_ids(PhotoFilter(places=[("city", "城1市"), ("city", "城7市")], people=["p1"], tags=["year:2024"]))
                assert some is not None and some <= {"img_0001.jpg", "img_0007.jpg"}
                vocabulary_from_catalog(r)
                dump = r.dump()
                assert set(dump["places"]) <= {p["id"] for p in dump["photos"]}
                reads += 1
        finally:
            stop.set()
            writer.join(timeout=TIME_LIMIT_S)
        assert not writer.is_alive()
        assert write_errors == []
        assert reads >= 5, f"only {reads} read rounds ran while the writer wrote"
        assert len(r.places()) == r.count_photos() > 0
