"""Index a folder of photos into a catalog: file identity, EXIF, sidecars, places, time tags, faces, events.

``index_folder(root, store)`` walks ``root`` (sorted, skipping hidden folders
such as ``.finegrain``) for images Pillow can read (jpg, jpeg, png; heic when
``pillow-heif`` is installed) and, for each one, commits in one transaction:

* identity: id (path relative to ``root``, POSIX form), absolute path, size, mtime, SHA-256;
* EXIF (Pillow): ``DateTimeOriginal`` (else ``DateTime``) with ``OffsetTimeOriginal``
  (else ``OffsetTime``) as the time zone, the GPS IFD as decimal degrees, Make/Model;
* a sidecar caption and keywords: ``IMG.xmp`` / ``IMG.JPG.xmp`` (``dc:description``,
  ``dc:subject``) or ``IMG.json`` / ``IMG.JPG.json`` (``"caption"``, ``"keywords"``);
* place names and time tags from :mod:`finegrain.album.engine.profile` (when installed);
* faces (boxes and 128-d embeddings) when ``faces=True`` and the face module works;
* a caption embedding when an ``encoder`` is given;
* an image embedding (the pixels, through e.g. a CLIP model: ``clip:/path``) when an
  ``image_encoder`` is given, after the walk, in committed batches (so it resumes too).

At the end faces are clustered into people (names given earlier are kept by
majority overlap) and events are recomputed over the whole catalog.

One run per catalog at a time: a run holds the catalog's index lock
(:meth:`~finegrain.album.engine.catalog.store.CatalogStore.index_lock`) from before its first
write to its end, and a second run fails at once with
:class:`~finegrain.album.engine.catalog.store.IndexRunningError`, having changed nothing.

Incremental: a file whose path, size and mtime are unchanged, or whose
content hash is unchanged, is not re-read. Resumable: every photo is its own
commit, so an interrupted run keeps all completed photos and the next run
finishes the rest; the end steps (face clusters, events) depend only on what
is stored, so interrupted-then-resumed equals one uninterrupted run.

Links. A file (or sidecar) that is a symlink is read only when its real path lies inside the
photo folder (:func:`finegrain.album.engine.files.confined`); a photo linking out of it is not
catalogued, is listed in :attr:`IndexReport.skipped` with where it leads, and a photo of it
catalogued before is removed (counted in ``removed``); a sidecar linking out of it is not read
(a warning). Symlinked folders are not walked.

Unreadable files (the container or the pixels cannot be decoded,
:func:`finegrain.album.engine.files.read_photo`) are listed in :attr:`IndexReport.skipped` with
the reason; a catalogued photo whose file has become unreadable is removed with everything
derived from it (place link, time tags, faces, embeddings, event) and listed in
:attr:`IndexReport.unreadable_removed`. A readable photo with malformed metadata is
catalogued without the fields that could not be read (each field on its own: time, GPS,
camera, orientation) and listed in :attr:`IndexReport.metadata_problems`; readable files
without EXIF are catalogued and listed in :attr:`IndexReport.no_exif`. None stops the run.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import numpy as np
from tqdm.auto import tqdm

from finegrain.album.engine.catalog.store import CatalogStore
from finegrain.album.engine.embeddings import (  # noqa: F401  (check_image_encoder, embed_missing_images: re-exported)
    check_image_encoder,
    drop_image_vectors,
    embed_caption,
    embed_missing_captions,
    embed_missing_images,
)
from finegrain.album.engine.files import (  # noqa: F401  (read_sidecar, ImageInfo: re-exported)
    IMAGE_SUFFIXES,
    ImageInfo,
    OutsideFolderError,
    UnreadableImageError,
    confined,
    iter_images,
    read_photo,
    read_sidecar,
    register_heif,
    sidecar_for,
)
from finegrain.album.engine.profile.datum import claim_input_datum, parse_datum, to_wgs84
from finegrain.album.engine.records import FaceOccurrence, Person, Photo, PhotoPlace
from finegrain.errors import FinegrainError, MissingDependencyError
from finegrain.io.checksum import sha256_of

FACE_MODEL = "dlib-128"


@dataclass(frozen=True)
class IndexReport:
    """What one index run did. ``skipped`` and ``warnings`` are ``(path, reason)`` pairs;
    ``metadata_problems`` are ``(photo id, field, reason)`` of photos catalogued without
    those fields; ``unreadable_removed`` are ``(photo id, reason)`` of catalogued photos
    whose file became unreadable and were removed (also counted in ``removed``)."""

    root: str
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    skipped: tuple[tuple[str, str], ...] = ()
    no_exif: tuple[str, ...] = ()
    warnings: tuple[tuple[str, str], ...] = ()
    faces_found: int = 0
    people: int = 0
    events: int = 0
    notes: tuple[str, ...] = ()
    seconds: float = 0.0
    metadata_problems: tuple[tuple[str, str, str], ...] = ()
    unreadable_removed: tuple[tuple[str, str], ...] = ()

    @property
    def seen(self) -> int:
        return self.added + self.updated + self.unchanged + len(self.skipped)

    def summary(self) -> str:
        text = (
            f"{self.root}: {self.added} added, {self.updated} updated, {self.unchanged} unchanged, "
            f"{self.removed} removed, {len(self.skipped)} skipped, {len(self.no_exif)} without EXIF, "
            f"{self.faces_found} faces, {self.people} people, {self.events} events in {self.seconds:.1f}s"
        )
        lines = [text]
        fields: dict[str, list[str]] = {}
        for pid, name, _ in self.metadata_problems:
            if name not in fields.setdefault(pid, []):
                fields[pid].append(name)
        if fields:
            shown = [f"{pid} ({', '.join(names)})" for pid, names in list(fields.items())[:10]]
            more = f" and {len(fields) - 10} more" if len(fields) > 10 else ""
            lines.append(f"{len(fields)} photo{'s' if len(fields) != 1 else ''} had unreadable metadata fields "
                         f"(catalogued without them): {', '.join(shown)}{more}")
        removed = {p for p, _ in self.unreadable_removed}
        lines += _capped([f"  skipped {p}: {r}" for p, r in self.skipped if p not in removed])
        lines += _capped([f"  removed {p}: its file is no longer a readable image ({r})" for p, r in self.unreadable_removed])
        lines += _capped([f"  metadata {p}: {name}: {r}" for p, name, r in self.metadata_problems])
        lines += _capped([f"  warning {p}: {r}" for p, r in self.warnings])
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)


SUMMARY_LINES = 20  # detail lines of one kind in the summary; the report object keeps them all


def _capped(lines: list[str], n: int = SUMMARY_LINES) -> list[str]:
    return lines if len(lines) <= n else [*lines[:n], f"  ... and {len(lines) - n} more of these"]


# --------------------------------------------------------------------------- profile adapter


@dataclass
class Profiler:
    """The enrichment functions of :mod:`finegrain.album.engine.profile`, loaded lazily.

    A function whose module is not installed (or whose dependency is missing)
    is None and the reason is in ``notes``; the catalog then simply lacks that
    layer. ``place`` and ``tags`` convert the profile records to what the
    catalog stores.
    """

    reverse_geocode: Callable[[float, float], Any] | None = None
    time_tags: Callable[..., Any] | None = None  # (local time[, country=ISO code])
    cluster_events: Callable[..., dict[str, str]] | None = None
    detect_faces: Callable[[Any], list[Any]] | None = None
    cluster_faces: Callable[[Any], Sequence[int]] | None = None
    notes: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, *, faces: bool = True, places: bool = True, tags: bool = True, events: bool = True) -> Profiler:
        prof = cls()
        wanted = [("places", "reverse_geocode", places), ("timetags", "time_tags", tags),
                  ("events", "cluster_events", events), ("faces", "detect_faces", faces),
                  ("faces", "cluster_faces", faces)]
        for module, name, on in wanted:
            if not on:
                continue
            try:
                mod = __import__(f"finegrain.album.engine.profile.{module}", fromlist=[name])
                setattr(prof, name, getattr(mod, name))
            except (ImportError, AttributeError, FinegrainError) as e:
                prof._note(f"{name} unavailable ({type(e).__name__}: {e})")
        return prof

    def _note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def _disable(self, name: str, error: BaseException) -> None:
        setattr(self, name, None)
        self._note(f"{name} disabled: {error}")

    def place(self, lat: float | None, lon: float | None) -> PhotoPlace | None:
        if self.reverse_geocode is None or lat is None or lon is None:
            return None
        try:
            found = self.reverse_geocode(lat, lon)
        except (ImportError, MissingDependencyError) as e:
            self._disable("reverse_geocode", e)
            return None
        return None if found is None else PhotoPlace.from_place(found)

    def tags(self, t: datetime | None, country: str | None = None) -> tuple[str, ...]:
        """Time tags of local time ``t``; public holidays of ``country`` (ISO code) when known, else China's."""
        if self.time_tags is None or t is None:
            return ()
        try:
            if country:
                try:
                    return tags_of(self.time_tags(t, country=country))
                except TypeError:  # a time_tags without the country parameter
                    pass
            return tags_of(self.time_tags(t))
        except (ImportError, MissingDependencyError) as e:
            self._disable("time_tags", e)
            return ()

    def faces(self, path: Path) -> tuple[list[tuple[int, int, int, int] | None], list[np.ndarray | None]] | None:
        if self.detect_faces is None:
            return None
        try:
            found = self.detect_faces(path)
        except (ImportError, MissingDependencyError) as e:
            self._disable("detect_faces", e)
            return None
        # any other FinegrainError (an image dlib cannot decode) goes to the caller
        boxes: list[tuple[int, int, int, int] | None] = []
        embs: list[np.ndarray | None] = []
        for f in found:
            box = getattr(f, "box", None)
            boxes.append(None if box is None else cast("tuple[int, int, int, int]", tuple(int(v) for v in box)))
            emb = getattr(f, "embedding", None)
            embs.append(None if emb is None else np.asarray(emb, dtype=np.float32))
        return boxes, embs


def tags_of(value: Any) -> tuple[str, ...]:
    """Time tags as sorted strings.

    For the profile's ``TimeTags``: ``year:2023``, ``month:3``, ``<kind>:<key>`` of
    each tag (``season:summer``, ``weekday:saturday``, ``part_of_day:evening``,
    ``festival:mid_autumn``, ``statutory_holiday:national_day``...), ``weekend``
    and ``day_off`` when true. Other shapes: ``field:value`` per field of a
    dataclass or mapping (true booleans as the bare field name).
    """
    if value is None:
        return ()
    if callable(getattr(value, "tags", None)) and hasattr(value, "year"):
        out = {f"year:{value.year}", f"month:{value.month}"}
        out.update(f"{t.kind}:{t.key}" for t in value.tags())
        if getattr(value, "is_weekend", False):
            out.add("weekend")
        if getattr(value, "is_day_off", False):
            out.add("day_off")
        return tuple(sorted(out))
    if isinstance(value, (list, tuple, set, frozenset)):
        return tuple(sorted({str(t) for t in value}))
    if hasattr(value, "__dataclass_fields__"):
        items = [(k, getattr(value, k)) for k in value.__dataclass_fields__]
    elif isinstance(value, dict):
        items = list(value.items())
    else:
        return (str(value),)
    out = set()
    for k, v in items:
        if v is None or v is False:
            continue
        if v is True:
            out.add(str(k))
        elif isinstance(v, (list, tuple, set, frozenset)):
            out.update(f"{k}:{x}" for x in v)
        else:
            out.add(f"{k}:{v}")
    return tuple(sorted(out))


ProgressCallback = Callable[[str, str], None]
"""Called after each file with its photo id and status (added, updated, unchanged, skipped)."""


def photo_folder(root: str | Path) -> Path:
    """``root`` resolved, or an error when it is not an existing folder (checked before any catalog is opened,
    since the default catalog lives inside it and opening it would create the folder)."""
    base = Path(root).expanduser().resolve()
    if not base.is_dir():
        raise FinegrainError(f"photo folder {str(root)!r} does not exist or is not a folder", "pass a folder of photos")
    return base


def index_folder(
    root: str | Path,
    store: CatalogStore,
    *,
    faces: bool = True,
    captions: bool = True,
    show_progress: bool = True,
    encoder: Any = None,
    image_encoder: Any = None,
    on_photo: ProgressCallback | None = None,
    profiler: Profiler | None = None,
    datum: str = "wgs84",
) -> IndexReport:
    """Index the images under ``root`` into ``store`` (see the module docstring); returns what it did.

    ``encoder`` (a :class:`finegrain.retrieve.dense.encoders.base.Encoder`) embeds
    captions as passages under its ``model_id``; ``image_encoder`` (an encoder with
    ``encode_images(paths)``, e.g. :class:`finegrain.retrieve.dense.encoders.clip.CLIPEncoder`)
    embeds the images under its ``model_id``. ``on_photo`` is called after
    each file is committed (an exception raised there stops the run after
    that commit). ``profiler`` replaces the default enrichment functions. ``datum``: of the
    photos' GPS coordinates, "wgs84" (a GPS fix, the default) or "gcj02" (written by a Chinese
    map SDK; converted to WGS-84, see :mod:`finegrain.album.engine.profile.datum`).
    """

    datum = parse_datum(datum)
    started = time.perf_counter()
    check_image_encoder(image_encoder, encoder)
    base = photo_folder(root)
    register_heif()
    prof = profiler if profiler is not None else Profiler.load(faces=faces)
    if faces and prof.detect_faces is None:
        prof._note("faces were requested but face detection is unavailable: install 'finegrain[faces]'")
    with store.index_lock():  # one run per catalog: another would take the same new photos for its own
        return _index_locked(base, store, prof, faces=faces, captions=captions, show_progress=show_progress,
                             encoder=encoder, image_encoder=image_encoder, on_photo=on_photo, datum=datum,
                             started=started)


def _index_locked(
    base: Path, store: CatalogStore, prof: Profiler, *, faces: bool, captions: bool, show_progress: bool,
    encoder: Any, image_encoder: Any, on_photo: ProgressCallback | None, datum: str, started: float,
) -> IndexReport:
    """The run of :func:`index_folder` once it holds the catalog's index lock."""
    _claim_root(store, base)
    claim_input_datum(store, datum)
    counts: Counter[str] = Counter()
    skipped: list[tuple[str, str]] = []
    warnings: list[tuple[str, str]] = []
    no_exif: list[str] = []
    problems: list[tuple[str, str, str]] = []
    gone: list[tuple[str, str]] = []
    files = iter_images(base)
    seen_ids: set[str] = set()
    bar = _progress(files, show_progress)
    try:
        for path in bar:
            photo_id = path.relative_to(base).as_posix()
            real = _inside(path, base, photo_id, skipped)
            if real is None:  # links out of the folder: not catalogued (a photo of it catalogued before goes below)
                status = "skipped"
            else:
                seen_ids.add(photo_id)
                status = _index_one(path, real, photo_id, store, prof, base=base, faces=faces, captions=captions,
                                    encoder=encoder, datum=datum, skipped=skipped, warnings=warnings,
                                    no_exif=no_exif, problems=problems, gone=gone)
            counts[status] += 1
            if on_photo is not None:
                on_photo(photo_id, status)
    finally:
        if hasattr(bar, "close"):
            bar.close()
    removed = len(gone)
    prefix = str(base) + os.sep
    for p in list(store.iter_photos()):
        if p.id not in seen_ids and p.path.startswith(prefix):
            store.delete_photo(p.id)
            removed += 1
    if encoder is not None:
        embed_missing_captions(store, encoder)
    if image_encoder is not None:
        embed_missing_images(store, image_encoder, warnings, show_progress=show_progress)
    n_people = _cluster_people(store, prof) if faces else len(store.people())
    n_events = recompute_events(store, prof)
    store.set_meta("last_indexed_at", datetime.now(UTC).isoformat(timespec="seconds"))
    return IndexReport(
        root=str(base), added=counts["added"], updated=counts["updated"], unchanged=counts["unchanged"],
        removed=removed, skipped=tuple(skipped), no_exif=tuple(no_exif), warnings=tuple(warnings),
        faces_found=len(store.faces()), people=n_people, events=n_events, notes=tuple(prof.notes),
        seconds=time.perf_counter() - started, metadata_problems=tuple(problems), unreadable_removed=tuple(gone),
    )


def _inside(path: Path, base: Path, photo_id: str, skipped: list[tuple[str, str]]) -> Path | None:
    """The real path to read ``path`` by, or None (listed in ``skipped``) when it links out of the
    photo folder ``base``; a path that does not resolve is returned as it is (reading it says why)."""
    try:
        return confined(path, [base])
    except OutsideFolderError as e:
        skipped.append((photo_id, f"{e.message.removeprefix(f'{path}: ')}; not indexed ({e.hint})"))
        return None
    except OSError:
        return path


def _read_sidecar(path: Path, base: Path, photo_id: str,
                  warnings: list[tuple[str, str]]) -> tuple[str | None, tuple[str, ...]]:
    """Caption and keywords of the sidecar of ``path`` (none when it has none, or it links out of
    ``base`` or is malformed: those two are warnings)."""
    side = sidecar_for(path)
    if side is None:
        return None, ()
    try:
        return read_sidecar(confined(side, [base]))
    except OutsideFolderError as e:
        warnings.append((photo_id, f"sidecar {e.message}; not read ({e.hint})"))
    except FinegrainError as e:
        warnings.append((photo_id, str(e)))
    except OSError as e:
        warnings.append((photo_id, f"sidecar {side}: could not be read ({e.strerror or type(e).__name__})"))
    return None, ()


def _index_one(
    path: Path, real: Path, photo_id: str, store: CatalogStore, prof: Profiler, *, base: Path, faces: bool,
    captions: bool, encoder: Any, datum: str = "wgs84", skipped: list[tuple[str, str]],
    warnings: list[tuple[str, str]], no_exif: list[str], problems: list[tuple[str, str, str]],
    gone: list[tuple[str, str]],
) -> str:
    """Index the photo at ``path`` (its id ``photo_id``, the path the catalog keeps), reading its
    bytes from ``real``, the path :func:`_inside` resolved; returns its status."""
    try:
        st = real.stat()
    except OSError as e:
        skipped.append((photo_id, f"cannot read the file: {e}"))
        return "skipped"
    caption, keywords = _read_sidecar(path, base, photo_id, warnings) if captions else (None, ())
    old = store.get_photo(photo_id)
    if old is not None and old.size == st.st_size:
        # unchanged: same path, size and mtime; or the same bytes (touched, or the folder moved)
        same = old.path == str(path) and old.mtime == st.st_mtime
        if not same:
            same = sha256_of(real) == old.sha256
        if same:
            changed = (old.caption, old.keywords) != (caption, keywords)
            if changed or old.mtime != st.st_mtime or old.path != str(path):
                with store.transaction():
                    store.put_photo(
                        replace(old, path=str(path), mtime=st.st_mtime, caption=caption, keywords=keywords)
                    )
                    if changed:
                        embed_caption(store, encoder, photo_id, caption)
            if faces and prof.detect_faces is not None and not store.is_done(photo_id, FACE_STEP):
                _add_faces(store, prof, real, photo_id, warnings)  # faces were off when the photo was indexed
            return "updated" if changed else "unchanged"
    try:
        info = read_photo(real)
    except MissingDependencyError:
        raise
    except FinegrainError as e:  # read_photo's contract: an unreadable file is a FinegrainError
        reason = e.message.removeprefix(f"{real}: ")
        skipped.append((photo_id, reason))
        if old is not None and isinstance(e, UnreadableImageError):  # no longer a photo: drop all derived
            # (a PhotoAccessError says nothing about the content: the catalogued photo stays)
            store.delete_photo(photo_id)
            gone.append((photo_id, reason))
        return "skipped"
    if not info.has_exif:
        no_exif.append(photo_id)
    problems.extend((photo_id, p.field, p.reason) for p in info.problems)

    lat, lon = to_wgs84(info.lat, info.lon, datum)
    photo = Photo(
        id=photo_id, path=str(path), size=st.st_size, mtime=st.st_mtime, sha256=sha256_of(real),
        taken_at=info.taken_at, tz=info.tz, lat=lat, lon=lon, camera=info.camera,
        width=info.width, height=info.height, caption=caption, keywords=keywords,
        event_id=old.event_id if old is not None else None,
    )
    place = prof.place(photo.lat, photo.lon)
    tags = prof.tags(photo.local_time, place.country_code if place else None)
    found = _detect(prof, real, photo_id, warnings) if faces else None
    with store.transaction():
        store.put_photo(photo)
        store.clear_done(photo_id)
        store.set_place(photo_id, place)
        store.set_time_tags(photo_id, tags)
        store.set_faces(photo_id, [])
        if found is not None:
            _store_faces(store, photo_id, found)
        embed_caption(store, encoder, photo_id, caption)
        if old is not None:  # new content: its image vectors are stale (re-made after the walk)
            drop_image_vectors(store, photo_id)
    return "added" if old is None else "updated"


FACE_STEP = "faces"


def _detect(prof: Profiler, path: Path, photo_id: str, warnings: list[tuple[str, str]]) -> Any:
    try:
        return prof.faces(path)
    except FinegrainError as e:
        warnings.append((photo_id, f"face detection failed: {e}"))
        return None


def _store_faces(store: CatalogStore, photo_id: str, found: Any) -> None:
    boxes, embs = found
    with store.transaction():
        store.set_faces(photo_id, [FaceOccurrence(photo_id, None, b, i) for i, b in enumerate(boxes)], embs)
        store.mark_done(photo_id, FACE_STEP)


def _add_faces(store: CatalogStore, prof: Profiler, path: Path, photo_id: str, warnings: list[tuple[str, str]]) -> None:
    found = _detect(prof, path, photo_id, warnings)
    if found is not None:
        _store_faces(store, photo_id, found)


def recompute_events(store: CatalogStore, prof: Profiler) -> int:
    """Cluster all photos of the catalog into events (4-hour window, at least 3 photos); returns the count."""
    if prof.cluster_events is None:
        return len(store.events())
    times = [(p.id, p.local_time) for p in store.iter_photos()]
    assignment = prof.cluster_events(times, window_hours=4.0, min_photos=3)
    store.set_events(dict(assignment))
    return len(store.events())


def _cluster_people(store: CatalogStore, prof: Profiler) -> int:
    """Cluster face embeddings into people; a new cluster keeps the id (and names) of the
    existing person most of its faces had, else gets the next free ``p<n>`` id."""
    if prof.cluster_faces is None:
        return len(store.people())
    keys, matrix = store.face_embeddings()
    if not keys:
        return len(store.people())
    labels = [int(x) for x in prof.cluster_faces(matrix)]
    previous = {(f.photo_id, f.index): f.person_id for f in store.faces()}
    by_label: dict[int, list[tuple[str, int]]] = {}
    for key, label in zip(keys, labels):
        if label >= 0:
            by_label.setdefault(label, []).append(key)
    taken: set[str] = set()
    chosen: dict[int, str] = {}
    # the largest clusters claim their previous person first
    for label, members in sorted(by_label.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        votes = Counter(p for k in members if (p := previous.get(k)) is not None)
        for person, _ in sorted(votes.items(), key=lambda kv: (-kv[1], kv[0])):
            if person not in taken:
                chosen[label] = person
                taken.add(person)
                break
    existing = {p.id for p in store.people()}
    next_n = 1 + max((int(i[1:]) for i in existing | taken if i.startswith("p") and i[1:].isdigit()), default=0)
    for label in sorted(by_label, key=lambda lb: (min(by_label[lb]), lb)):
        if label not in chosen:
            chosen[label] = f"p{next_n}"
            next_n += 1
    with store.transaction():
        for person in sorted(set(chosen.values()) - existing):
            store.put_person(Person(person))
        store.assign_faces({k: (chosen[lb] if lb >= 0 else None) for k, lb in zip(keys, labels)})
    return len(store.people())


def _claim_root(store: CatalogStore, base: Path) -> None:
    """Make ``base`` the catalog's photo folder. Photo ids are paths relative to it, so one
    catalog holds one folder; a folder that moved (the old one is gone) takes its place."""
    others = [r for r in store.roots() if r != str(base) and Path(r).is_dir()]
    if others:
        raise FinegrainError(
            f"this catalog already indexes the folder {others[0]!r}, not {str(base)!r}",
            "index each photo folder into its own catalog (--catalog FILE), or index the common parent folder",
        )
    store.set_meta("roots", [str(base)])


def _progress(items: list[Path], show: bool) -> Any:
    if not show:
        return items

    return tqdm(items, desc="indexing", unit="photo")
