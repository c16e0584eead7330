"""Reading and writing one catalog from several connections at once, on both stores.

An index run commits one photo at a time (its place row first, then the photo that points to
it); a search reading ``places()`` with two SELECTs outside one read transaction could see the
photo but not its place. Every multi-SELECT read runs in one snapshot.

The second test is "several indexers and searchers at once": 4 writer processes (each
its own connection, as ``album index`` runs would be) and 8 reader threads (each its own store, as
searches are) on one catalog, bounded in photos and time: no photo is lost, no read sees half a
photo, no shared read-modify-write (roots, a person's names, shared place rows) loses an update,
and nothing raises.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from finegrain.album.engine.catalog import open_catalog
from finegrain.album.engine.catalog.store import PhotoFilter
from finegrain.album.engine.plan_catalog import vocabulary_from_catalog
from finegrain.album.engine.records import FaceOccurrence, Person, Photo, PhotoPlace

N_PHOTOS = 400
TIME_LIMIT_S = 30.0


def _place(i: int) -> PhotoPlace:
    return PhotoPlace(country_en="China", country_zh="中国", city_en=f"City{i}", city_zh=f"城{i}市", country_code="CN")


def _write(target, stop: threading.Event, errors: list[BaseException]) -> None:
    try:
        with open_catalog(target) as w:
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


def test_reads_stay_consistent_while_another_connection_writes(catalog_target) -> None:
    open_catalog(catalog_target).close()
    stop = threading.Event()
    write_errors: list[BaseException] = []
    writer = threading.Thread(target=_write, args=(catalog_target, stop, write_errors))
    reads = 0
    deadline = time.monotonic() + TIME_LIMIT_S
    with open_catalog(catalog_target, create=False) as r:
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


# ---------------------------------------------------------------------- 4 writer processes, 8 reader threads

WRITERS, READERS = 4, 8
PER_WRITER = 150  # photos each writer commits (bounded loop)
STRESS_LIMIT_S = 45.0  # and a deadline, so a slow machine ends early rather than hanging
SHARED_CITIES = 7  # place rows every writer uses: concurrent first inserts of one place must not fail
DIM = 16


def _stress_writer(target: str | Path, w: int, deadline: float, out: multiprocessing.Queue) -> None:
    """One indexer: photos ``w{w}_{i}`` with place, tags, a face with a descriptor, an embedding and a step,
    one transaction each; every 10th photo deleted again later; every 5th, a root and a name of the shared person."""
    written: list[str] = []
    deleted: list[str] = []
    try:
        with open_catalog(target) as store:
            store.add_root(f"/photos/w{w}")
            rng = np.random.default_rng(w)
            start = datetime(2024, 1, 1) + timedelta(days=w)
            for i in range(PER_WRITER):
                if time.time() > deadline:
                    break
                pid = f"w{w}_{i:04d}.jpg"
                with store.transaction():
                    store.put_photo(Photo(id=pid, path=f"/photos/w{w}/{pid}", taken_at=start + timedelta(minutes=i)))
                    store.set_place(pid, _place(i % SHARED_CITIES))
                    store.set_time_tags(pid, [f"writer:{w}", "year:2024"])
                    store.set_faces(pid, [FaceOccurrence(pid, "shared", (1, 2, 3, 4), 0)],
                                    [rng.standard_normal(128).astype(np.float32)])
                    store.put_embedding(pid, "m", rng.standard_normal(DIM).astype(np.float32))
                    store.mark_done(pid, "exif")
                written.append(pid)
                if i % 10 == 9:
                    gone = f"w{w}_{i - 5:04d}.jpg"
                    store.delete_photo(gone)
                    deleted.append(gone)
                if i % 5 == 0:  # read-modify-write of one row by every writer, often
                    store.add_person_names("shared", [f"alias{w}_{i}"])
                    store.add_root(f"/photos/w{w}/{i}")
        out.put((w, written, deleted, None))
    except BaseException as e:  # noqa: BLE001  (reported by the test)
        out.put((w, written, deleted, f"{type(e).__name__}: {e}"))


def _stress_reader(target: str | Path, stop: threading.Event, errors: list[str], rounds: list[int]) -> None:
    try:
        with open_catalog(target, create=False) as r:
            while not stop.is_set():
                with r.snapshot():  # one state: every photo seen is whole
                    ids = set(r.photo_ids())
                    places = r.places()
                    emb_ids, matrix = r.get_embeddings("m")
                    keys, faces = r.face_embeddings()
                    tagged = r.select_ids(PhotoFilter(tags=["year:2024"], people=["shared"]))
                    done = sum(r.is_done(pid, "exif") for pid in list(ids)[:20])
                assert set(places) == ids and set(emb_ids) == ids, "a photo seen without its place or embedding"
                assert matrix.shape[0] == len(emb_ids) and matrix.dtype == np.float32
                assert not emb_ids or matrix.shape[1] == DIM
                assert faces.shape == (len(keys), 128) and {k[0] for k in keys} == ids
                assert tagged == ids and done == min(20, len(ids))
                r.select_ids(PhotoFilter(places=[("city", "city3")], start=datetime(2024, 1, 2)))
                rounds.append(1)
    except BaseException as e:  # noqa: BLE001  (reported by the test)
        errors.append(f"{type(e).__name__}: {e}")


def test_four_writer_processes_and_eight_reader_threads_lose_nothing(catalog_target) -> None:
    with open_catalog(catalog_target) as setup:  # the shared person exists before the writers name it
        setup.put_person(Person("shared", ("Shared",)))
    ctx = multiprocessing.get_context("spawn")
    out: multiprocessing.Queue = ctx.Queue()
    deadline = time.time() + STRESS_LIMIT_S
    procs = [ctx.Process(target=_stress_writer, args=(catalog_target, w, deadline, out)) for w in range(WRITERS)]
    for p in procs:
        p.start()
    stop = threading.Event()
    read_errors: list[str] = []
    rounds: list[int] = []
    readers = [threading.Thread(target=_stress_reader, args=(catalog_target, stop, read_errors, rounds))
               for _ in range(READERS)]
    for t in readers:
        t.start()
    results = []
    try:
        for _ in procs:
            results.append(out.get(timeout=STRESS_LIMIT_S + 60))
    finally:
        stop.set()
        for t in readers:
            t.join(timeout=30)
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()
    assert [r[3] for r in sorted(results)] == [None] * WRITERS, "a writer failed"
    assert read_errors == [], read_errors[:3]
    assert len(rounds) >= READERS, f"only {len(rounds)} read rounds while {WRITERS} writers wrote"
    expected = {pid for _, written, deleted, _ in results for pid in set(written) - set(deleted)}
    assert sum(len(r[1]) for r in results) >= WRITERS * 20, "the writers wrote almost nothing before the deadline"
    with open_catalog(catalog_target, create=False) as store:
        assert set(store.photo_ids()) == expected  # no lost photo, no deleted one back
        assert set(store.places()) == expected and set(store.get_embeddings("m")[0]) == expected
        assert {k[0] for k in store.face_embeddings()[0]} == expected == store.ids_with_person("shared")
        assert store.ids_with_tag("year:2024") == expected
        subs = [(w, int(pid[3:7])) for w, written, *_ in results for pid in written if int(pid[3:7]) % 5 == 0]
        assert store.roots() == sorted([*(f"/photos/w{w}" for w in range(WRITERS)),
                                        *(f"/photos/w{w}/{i}" for w, i in subs)])  # no lost root
        assert set(store.get_person("shared").names) == {"Shared", *(f"alias{w}_{i}" for w, i in subs)}  # no lost name
        cities = [n for lv, n, _ in store.place_names() if lv == "city" and n.startswith("city")]
        assert len(cities) == len(set(cities)) == min(SHARED_CITIES, PER_WRITER)  # one row per place
        assert len(store.dump()["places"]) == len(expected)


@pytest.fixture(autouse=True)
def _no_leftover_children():
    yield
    for child in multiprocessing.active_children():  # a failed test must not leave writers behind
        child.kill()
