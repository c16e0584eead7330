"""Photos inside a named city's area, read from their GPS positions.

A catalog indexed before the geocoder knew city areas (:mod:`finegrain.album.engine.profile.cities`)
names a photo at the Eiffel Tower by its nearest town's department, not Paris, so a place
constraint "Paris" matches none of its photos by name. Before the engine answers "the album has
no photo taken there", :func:`photos_in_areas` looks at the photos' coordinates: a photo whose
position lies in the named city's (or borough's) area is taken there, whatever its stored names
say. A catalog indexed afresh stores the area's names, and then this is never needed.
"""

from __future__ import annotations

from finegrain.album.engine.catalog.store import CatalogStore
from finegrain.album.engine.plan.records import Plan
from finegrain.album.engine.profile.cities import CityArea, area_named, areas_at
from finegrain.album.engine.profile.records import PlaceKey

__all__ = ["photos_in_areas"]


def photos_in_areas(store: CatalogStore, plan: Plan) -> set[str]:
    """Photos whose GPS position lies in the area of a city or borough the plan names (empty when
    it names none); a photo needs a stored country, as the areas stop at borders."""
    wanted: list[CityArea] = []
    for match in plan.places:
        if match.place.level in ("city", "district"):
            area = area_named(PlaceKey(match.place.level, match.place.name))
            if area is not None:
                wanted.append(area)
    if not wanted:
        return set()
    countries = {pid: p.country_code for pid, p in store.places().items() if p.country_code}
    out = set()
    for photo in store.iter_photos():
        cc = countries.get(photo.id)
        if photo.lat is None or photo.lon is None or not cc:
            continue
        city, borough = areas_at(photo.lat, photo.lon, cc)
        if any(a is city or a is borough for a in wanted):
            out.add(photo.id)
    return out
