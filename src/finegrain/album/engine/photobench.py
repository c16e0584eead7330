"""Build an album catalog from a PhotoBench album folder (no images needed).

``import_photobench(album_dir, store, lang="en")`` reads the album with
:func:`finegrain.io.photobench.read_album` and stores what an index run over
the real photos would: one :class:`~finegrain.album.engine.records.Photo` per entry of
``metadata.json`` (id = path = file name, no size or hash; the times are
naive local times, no time zone), places and time tags from the profile
functions when installed, the people of ``face_info_<lang>.json`` (person id =
face id, names = nicknames in ``lang``, face ``"1"`` is "me") with one
:class:`~finegrain.album.engine.records.FaceOccurrence` per listed face (no box),
and events recomputed over the album. Re-importing replaces the same rows,
so it is idempotent.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from finegrain.album.engine.catalog.store import CatalogStore
from finegrain.album.engine.indexer import Profiler, recompute_events
from finegrain.album.engine.profile.datum import claim_input_datum, parse_datum, to_wgs84
from finegrain.album.engine.records import FaceOccurrence, Person, Photo
from finegrain.io.photobench import OWNER_FACE_ID, photobench_lang, read_album


@dataclass(frozen=True)
class ImportReport:
    album: str
    lang: str
    photos: int
    no_gps: int
    no_time: int
    people: int
    photos_with_faces: int
    face_occurrences: int
    places: int
    events: int
    notes: tuple[str, ...] = ()

    def summary(self) -> str:
        text = (
            f"{self.album} ({self.lang}): {self.photos} photos ({self.no_gps} without GPS, {self.no_time} without time), "
            f"{self.people} people, {self.photos_with_faces} photos with faces, {self.face_occurrences} faces, "
            f"{self.places} photos with a place, {self.events} events"
        )
        return "\n".join([text, *(f"  note: {n}" for n in self.notes)])


def import_photobench(
    album_dir: str | Path,
    store: CatalogStore,
    *,
    lang: str = "en",
    profiler: Profiler | None = None,
    show_progress: bool = False,
    datum: str = "wgs84",
) -> ImportReport:
    """Fill ``store`` from the PhotoBench album at ``album_dir`` (see the module docstring).

    ``datum``: of the album's coordinates, "wgs84" (PhotoBench's, see
    :mod:`finegrain.album.engine.profile.datum`) or "gcj02" (converted to WGS-84 on the way in)."""

    lang = photobench_lang(lang)
    datum = parse_datum(datum)
    album = read_album(album_dir)
    prof = profiler if profiler is not None else Profiler.load(faces=False)
    people = [
        Person(pid, tuple(p.names(lang)) or tuple(p.names("en" if lang == "cn" else "cn")), pid == OWNER_FACE_ID)
        for pid, p in album.people.items()
    ]
    photos = sorted(album.photos.values(), key=lambda p: p.id)
    with store.transaction():
        store.add_root(str(Path(album_dir).resolve()))
        store.set_meta("source", {"kind": "photobench", "album": album.name, "lang": lang})
        claim_input_datum(store, datum)
        for person in people:
            store.put_person(person)
    for p in _progress(photos, show_progress):
        lat, lon = to_wgs84(p.latitude, p.longitude, datum)
        photo = Photo(id=p.id, path=p.id, taken_at=p.time, lat=lat, lon=lon)
        place = prof.place(lat, lon)
        tags = prof.tags(p.time, place.country_code if place else None)
        with store.transaction():
            store.put_photo(photo)
            store.set_place(p.id, place)
            store.set_time_tags(p.id, tags)
            store.set_faces(p.id, [FaceOccurrence(p.id, fid, None, i) for i, fid in enumerate(p.faces)])
    events = recompute_events(store, prof)
    return ImportReport(
        album=album.name, lang=lang, photos=len(photos),
        no_gps=sum(1 for p in photos if not p.has_gps), no_time=sum(1 for p in photos if p.time is None),
        people=len(people), photos_with_faces=sum(1 for p in photos if p.faces),
        face_occurrences=sum(len(p.faces) for p in photos), places=len(store.places()), events=events,
        notes=tuple(prof.notes),
    )


def _progress(items: list[Any], show: bool) -> Iterable[Any]:
    if not show:
        return items

    return tqdm(items, desc="importing", unit="photo")
