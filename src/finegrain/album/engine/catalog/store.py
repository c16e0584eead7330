"""The catalog storage boundary: what the indexer, the importer and the search tools need.

:class:`CatalogStore` is a protocol so the embedded SQLite store
(:mod:`finegrain.album.engine.catalog.sqlite`) can later be replaced by a server
database without touching callers. Every write method is atomic on its own
(one short transaction); :meth:`CatalogStore.transaction` groups several
writes into one unit (everything of one photo), so an interrupted run keeps
every unit it completed and nothing of a half-done one.

Times in filters are local wall-clock times (naive datetimes), see
:mod:`finegrain.album.engine.records`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

import numpy as np

from finegrain.album.engine.records import Event, FaceOccurrence, Person, Photo, PhotoPlace
from finegrain.errors import FinegrainError

#: Catalog meta key: ``{model id: "image"}`` for models whose vectors embed the pixels;
#: a model not listed embeds captions.
EMBEDDING_KINDS = "embedding_kinds"
#: Meta keys left out of ``dump()`` (they change on every run, not with the catalog's content).
VOLATILE_META = frozenset({"last_indexed_at"})


@dataclass(frozen=True)
class PhotoFilter:
    """Constraints on photos, all of which must hold: local time in ``[start, end)`` (None
    leaves a side open), any of ``places`` (names, or ``(level, name)`` pairs), all of
    ``people`` (person ids) together, all of the time ``tags``, and the event."""

    start: datetime | None = None
    end: datetime | None = None
    places: tuple[str | tuple[str, str], ...] = ()
    people: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    event_id: str | None = None

    def __post_init__(self) -> None:
        for name in ("places", "people", "tags"):
            value = getattr(self, name)
            if isinstance(value, str):
                raise FinegrainError(f"PhotoFilter {name} is a list of names, got the string {value!r}",
                                     f"pass {name}=[{value!r}]")
            object.__setattr__(self, name, tuple(value))

    def __bool__(self) -> bool:
        """False when no constraint is given (every photo passes)."""
        return any((self.start, self.end, self.places, self.people, self.tags, self.event_id is not None))


class IndexRunningError(FinegrainError):
    """Another index run holds the catalog's index lock (:meth:`CatalogStore.index_lock`)."""

    def __init__(self, catalog: str) -> None:
        super().__init__(
            f"another `finegrain album index` run is indexing into the catalog {catalog}",
            "wait for it to finish or stop it, then run this again; this run changed nothing",
        )
        self.catalog = catalog


@runtime_checkable
class CatalogStore(Protocol):
    """A photo catalog: photos, places, time tags, faces, people, events, embeddings, metadata."""

    # --- lifecycle
    def close(self) -> None: ...
    def transaction(self) -> AbstractContextManager[None]:
        """Group writes into one commit (rolled back on error); nested uses join the outer one."""
    def snapshot(self) -> AbstractContextManager[None]:
        """Run several reads against one consistent state of the catalog; nested uses join the outer one."""
    def index_lock(self) -> AbstractContextManager[None]:
        """Hold the catalog's index lock while the block runs: one index run per catalog at a time
        (two at once would each find the same new photos and both count them as added). Raises
        :class:`IndexRunningError` at once when another run holds it; the lock goes with the
        block's end, the store's connection or the process."""

    # --- photos
    def put_photo(self, photo: Photo) -> None:
        """Insert or replace a photo (keeps its place, tags, faces and embeddings unless replaced)."""
    def get_photo(self, photo_id: str) -> Photo | None: ...
    def find_by_path(self, path: str) -> Photo | None: ...
    def iter_photos(self) -> Iterator[Photo]:
        """All photos in id order."""
    def photo_ids(self) -> list[str]: ...
    def count_photos(self) -> int: ...
    def delete_photo(self, photo_id: str) -> None:
        """Remove a photo and everything attached to it."""

    # --- places and time tags
    def set_place(self, photo_id: str, place: PhotoPlace | None) -> None: ...
    def get_place(self, photo_id: str) -> PhotoPlace | None: ...
    def places(self) -> dict[str, PhotoPlace]:
        """photo id -> place, for every photo that has one."""
    def place_names(self) -> list[tuple[str, str, int]]:
        """Distinct ``(level, name, n_photos)`` of the catalog, for the planner's gazetteer."""
    def set_time_tags(self, photo_id: str, tags: Iterable[str]) -> None: ...
    def get_time_tags(self, photo_id: str) -> tuple[str, ...]: ...

    # --- faces and people
    def set_faces(
        self, photo_id: str, faces: Sequence[FaceOccurrence], embeddings: Sequence[np.ndarray | None] | None = None
    ) -> None:
        """Replace the faces of a photo (with their 128-d embeddings when detected)."""
    def faces(self, photo_id: str | None = None) -> list[FaceOccurrence]: ...
    def face_embeddings(self) -> tuple[list[tuple[str, int]], np.ndarray]:
        """``[(photo id, face index)]`` and the matching ``(n, dim)`` float32 rows of every embedded face."""
    def assign_faces(self, labels: Mapping[tuple[str, int], str | None]) -> None:
        """Set the person of faces ``(photo id, face index) -> person id``."""
    def put_person(self, person: Person) -> None: ...
    def get_person(self, person_id: str) -> Person | None: ...
    def people(self) -> list[Person]: ...
    def person_photo_counts(self) -> dict[str, int]: ...
    def name_person(self, person_id: str, names: Sequence[str]) -> Person:
        """Replace a person's (face cluster's) names; the first is the display name."""
    def add_person_names(self, person_id: str, names: Sequence[str]) -> Person:
        """Add aliases (any language) after the person's existing names, keeping those and
        their order; names already present (case-insensitive) are not added again."""
    def merge_people(self, into_id: str, from_ids: Sequence[str]) -> Person:
        """Move the faces and names of ``from_ids`` to ``into_id`` and delete those people; the
        merged person is "me" when any of them was."""
    def set_me(self, person_id: str) -> Person:
        """Mark one person as the owner (and no one else)."""

    # --- events
    def set_events(self, assignment: Mapping[str, str | None]) -> None:
        """Replace every event: photo id -> event id (None or missing: no event)."""
    def events(self) -> list[Event]: ...

    # --- embeddings
    def put_embedding(self, photo_id: str, model_id: str, vector: np.ndarray) -> None: ...
    def get_embeddings(self, model_id: str) -> tuple[list[str], np.ndarray]:
        """Photo ids and the ``(n, dim)`` float32 matrix of one model, in id order."""
    def delete_embedding(self, photo_id: str, model_id: str) -> None: ...
    def embedding_models(self) -> list[str]: ...

    # --- processing steps (which enrichments ran on a photo, so a later run adds missing ones)
    def mark_done(self, photo_id: str, step: str) -> None: ...
    def is_done(self, photo_id: str, step: str) -> bool: ...
    def clear_done(self, photo_id: str) -> None:
        """Forget every step of a photo (its file changed)."""

    # --- metadata
    def get_meta(self, key: str, default: Any = None) -> Any: ...
    def set_meta(self, key: str, value: Any) -> None:
        """A JSON-able value under ``key``."""
    def roots(self) -> list[str]: ...
    def add_root(self, root: str) -> None: ...
    def latest_time(self) -> datetime | None:
        """The latest local capture time in the album (the "now" of relative dates)."""

    # --- filters (indexed; the metadata and face tools build on these)
    def ids_taken_between(self, start: datetime | None, end: datetime | None) -> set[str]:
        """Photos with local time in ``[start, end)``; None leaves a side open."""
    def ids_at_place(self, name: str, level: str | None = None) -> set[str]:
        """Photos whose place has ``name`` (case-insensitive, either language) at ``level`` or any level."""
    def ids_with_tag(self, tag: str) -> set[str]: ...
    def ids_with_person(self, person_id: str) -> set[str]: ...
    def ids_in_event(self, event_id: str) -> set[str]: ...
    def select_ids(self, where: PhotoFilter) -> set[str] | None:
        """Photos meeting every constraint of ``where``, computed by the store; None when it has none."""

    # --- comparison
    def dump(self) -> dict[str, Any]:
        """Everything stored, as plain JSON-able data in a canonical order (for tests and export)."""


# ---------------------------------------------------------------------- rules every store shares


def natural_key(text: str) -> tuple[Any, ...]:
    """Sort key reading digit runs as numbers (``p2`` before ``p10``); people and events sort by it."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text))


def clean_names(names: Sequence[str]) -> tuple[str, ...]:
    """Stripped, non-empty names, first spelling kept when two differ only in case."""
    return merge_names((), [n.strip() for n in names if n.strip()])


def merge_names(old: Sequence[str], new: Sequence[str]) -> tuple[str, ...]:
    """``old`` then the names of ``new`` not already present (case-insensitive), in order."""
    out = list(old)
    seen = {n.casefold() for n in out}
    for n in new:
        if n.casefold() not in seen:
            seen.add(n.casefold())
            out.append(n)
    return tuple(out)
