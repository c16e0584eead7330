"""One index run per catalog at a time, on both stores (the ``catalog_target`` fixture): two real
processes racing to index one folder add each photo once between them, the second failing at once
with one ``error:`` line that says what to do; the lock goes with the process that held it.
"""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path
from typing import Any

import pytest

from album_photo_fixtures import good_fields, jpeg_with
from finegrain.album.engine.catalog import open_catalog
from finegrain.album.engine.catalog.store import IndexRunningError
from finegrain.album.engine.indexer import Profiler, index_folder
from finegrain.cli.main import main

N_PHOTOS = 24
WAIT_S = 60


@pytest.fixture
def photos(tmp_path: Path) -> Path:
    root = tmp_path / "photos"
    root.mkdir()
    for i in range(N_PHOTOS):
        (root / f"img_{i:03d}.jpg").write_bytes(jpeg_with({**good_fields(), "time": f"2023:05:01 10:{i:02d}:00"},
                                                          color=(i * 10 % 256, 90, 140)))
    return root


def _slow_place(lat: float, lon: float) -> None:
    """A reverse geocoder that takes its time, as real enrichment (places, faces) does between a
    run's look-up of a photo and its commit: the window in which two runs both find it new."""
    time.sleep(0.02)


def _index_run(root: Path, catalog: Any, start: Any, out: Any) -> None:
    """One ``album index``: open the catalog, wait for the other run, index, report ``(outcome,
    added or message)``."""
    try:
        with open_catalog(catalog) as store:
            start.wait(WAIT_S)
            report = index_folder(root, store, faces=False, show_progress=False,
                                  profiler=Profiler(reverse_geocode=_slow_place))
        out.put(("done", report.added))
    except IndexRunningError as e:
        out.put(("busy", str(e)))
    except BaseException as e:  # noqa: BLE001  (reported to the test)
        out.put(("error", repr(e)))


def test_two_runs_at_once_add_each_photo_once(photos: Path, catalog_target: Any) -> None:
    open_catalog(catalog_target).close()  # both runs open an existing catalog
    ctx = multiprocessing.get_context("spawn")
    start, out = ctx.Barrier(2), ctx.Queue()
    runs = [ctx.Process(target=_index_run, args=(photos, catalog_target, start, out)) for _ in range(2)]
    for p in runs:
        p.start()
    results = [out.get(timeout=WAIT_S * 2) for _ in runs]
    for p in runs:
        p.join(WAIT_S)
    assert [r for r in results if r[0] == "error"] == [], results
    assert sum(n for kind, n in results if kind == "done") == N_PHOTOS, results
    for kind, message in results:
        if kind == "busy":
            assert "another `finegrain album index` run is indexing into the catalog" in message
            assert "wait for it to finish" in message
    with open_catalog(catalog_target, create=False) as store:
        assert store.count_photos() == N_PHOTOS


def _hold_the_lock(catalog: Any, held: Any, release: Any) -> None:
    with open_catalog(catalog) as store, store.index_lock():
        held.set()
        release.wait(WAIT_S)


def test_a_run_while_another_holds_the_catalog_is_one_error_line_and_changes_nothing(
        photos: Path, catalog_target: Any, capsys: pytest.CaptureFixture[str]) -> None:
    open_catalog(catalog_target).close()
    ctx = multiprocessing.get_context("spawn")
    held, release = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold_the_lock, args=(catalog_target, held, release))
    holder.start()
    try:
        assert held.wait(WAIT_S), "the holder did not take the lock"
        argv = ["album", "index", str(photos), "--catalog", str(catalog_target), "--no-faces", "-q"]
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: another `finegrain album index` run"), err
        with open_catalog(catalog_target, create=False) as store:
            assert store.count_photos() == 0 and store.roots() == []
    finally:
        holder.kill()  # killed, not released: the OS drops its lock (the lock file stays)
        holder.join(WAIT_S)
    assert main(argv) == 0
    assert f"{N_PHOTOS} added" in capsys.readouterr().out
