"""The profile of a photo: where (places), when (time tags), which event, who (faces).

One module per concept; the heavy libraries load only when a function is called:

- :mod:`.places`: ``reverse_geocode(lat, lon) -> Place | None``, ``reverse_geocode_many``,
  ``place_vocabulary(places) -> {alias: PlaceKey}``  (extra ``geo``)
- :mod:`.timetags`: ``time_tags(t, country="CN") -> TimeTags``, ``festival_dates(name, year)``  (extra ``time``)
- :mod:`.events`: ``cluster_events(times, window_hours=4.0, min_photos=3) -> {photo id: event id}``  (no extra)
- :mod:`.faces`: ``detect_faces(path) -> [FaceRecord]``, ``cluster_faces(embeddings) -> labels``
  (extra ``faces`` plus ``scripts/install-faces.sh``)
- :mod:`.records`: the frozen records ``Place``, ``PlaceLevel``, ``PlaceKey``, ``Tag``, ``TimeTags``, ``FaceRecord``.
"""

from finegrain.album.engine.profile.records import FaceRecord, Place, PlaceKey, PlaceLevel, Tag, TimeTags

__all__ = ["FaceRecord", "Place", "PlaceKey", "PlaceLevel", "Tag", "TimeTags"]
