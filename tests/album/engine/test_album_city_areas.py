"""A large city abroad covers its area: the Eiffel Tower is in Paris whatever GeoNames town is
nearest, Times Square in New York and in Manhattan; a point well outside each city is not in it.
Synthetic photos at real coordinates, searched in English and Chinese."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from finegrain.album.engine.catalog import open_catalog
from finegrain.album.engine.outcome import OutcomeKind
from finegrain.album.engine.plan.vocabulary import builtin_gazetteer
from finegrain.album.engine.profile.cities import MAX_KM, MIN_KM, area_radius_km, areas_at, city_areas
from finegrain.album.engine.profile.places import reverse_geocode
from finegrain.album.engine.records import Person, Photo, PhotoPlace
from finegrain.album.engine.search import search

# (name, lat, lon, country, city, borough): famous spots inside a city, and a point well outside it
INSIDE = [
    ("eiffel", 48.8584, 2.2945, "FR", "Paris", None),
    ("westminster", 51.4995, -0.1248, "GB", "London", "Westminster"),
    ("colosseum", 41.8902, 12.4922, "IT", "Rome", None),
    ("times_square", 40.7580, -73.9855, "US", "New York City", "Manhattan"),
    ("shibuya", 35.6595, 139.7005, "JP", "Tokyo", "Shibuya"),
    ("jfk", 40.6413, -73.7781, "US", "New York City", "Queens"),  # New York, not Manhattan
]
OUTSIDE = [
    ("fontainebleau", 48.4047, 2.7016, "FR", "Paris"),
    ("oxford", 51.7520, -1.2577, "GB", "London"),
    ("civitavecchia", 42.0930, 11.7960, "IT", "Rome"),
    ("princeton", 40.3573, -74.6672, "US", "New York City"),
    ("kamakura", 35.3192, 139.5467, "JP", "Tokyo"),
]


@pytest.mark.parametrize("name, lat, lon, cc, city, borough", INSIDE, ids=[r[0] for r in INSIDE])
def test_a_spot_inside_a_city_is_in_its_area(name, lat, lon, cc, city, borough):
    area, ward = areas_at(lat, lon, cc)
    assert area is not None and area.en == city
    assert (ward.en if ward is not None else None) == borough


@pytest.mark.parametrize("name, lat, lon, cc, city", OUTSIDE, ids=[r[0] for r in OUTSIDE])
def test_a_point_well_outside_a_city_is_not_in_it(name, lat, lon, cc, city):
    area, _ = areas_at(lat, lon, cc)
    assert area is None or area.en != city


def test_an_area_stops_at_the_border():
    # Times Square's coordinates, said to be in Canada: New York's circle does not count there
    assert areas_at(40.7580, -73.9855, "CA") == (None, None)


def test_radius_grows_with_population_and_is_clamped():
    assert area_radius_km(0) == MIN_KM and area_radius_km(10**9) == MAX_KM
    assert area_radius_km(500_000) < area_radius_km(2_000_000) < area_radius_km(8_000_000)


def test_table_names_cities_in_both_languages():
    by_en = {a.en: a for a in city_areas() if not a.parent}
    for en, zh in (("London", "伦敦"), ("Paris", "巴黎"), ("Rome", "罗马"), ("New York City", "纽约"),
                   ("Tokyo", "东京")):
        assert by_en[en].zh == zh and zh in by_en[en].aliases and en.lower() in by_en[en].aliases
    boroughs = {a.en: a for a in city_areas() if a.parent}
    assert boroughs["Manhattan"].parent == "New York City" and "曼哈顿" in boroughs["Manhattan"].aliases
    assert len(boroughs["Manhattan"].circles) > 1  # a long island is several circles
    assert all(a.parent in by_en for a in boroughs.values())  # every borough's city is listed


def test_the_planners_abroad_gazetteer_cities_are_areas_with_the_same_chinese_name():
    """A photo's city and the planner's known city must be one key, or "photos in Paris" on an
    album without Paris photos and with them would name two different places."""
    zh = {a.zh for a in city_areas()}
    abroad = [g for g in builtin_gazetteer() if g.level == "city" and not g.name_zh.endswith(("市", "州", "盟", "地区"))
              and not (18 < g.lat < 54 and 73 < g.lon < 135 and g.name_zh not in ("首尔", "釜山", "东京", "大阪", "京都"))]
    missing = [g.name_zh for g in abroad if g.name_zh not in zh and g.name_en != "Bali"]  # Bali: an island
    assert not missing


# --------------------------------------------------------------------------- through the geocoder and the engine

geo = pytest.mark.skipif(
    any(__import__("importlib").util.find_spec(m) is None for m in ("reverse_geocoder", "GeoToolCN", "pypinyin")),
    reason="needs the geo extra: pip install 'finegrain[geo]'",
)


@geo
def test_the_eiffel_tower_is_in_paris_not_the_nearest_towns_department():
    p = reverse_geocode(48.8584, 2.2945)
    assert (p.city.en, p.city.zh) == ("Paris", "巴黎")
    assert {"paris", "巴黎"} <= set(p.city.aliases)
    assert "departement des hauts-de-seine" in p.city.aliases  # the nearest town's area is kept as an alias
    w = reverse_geocode(51.4995, -0.1248)
    assert (w.city.en, w.district.en) == ("London", "Westminster") and "greater london" in w.city.aliases


@pytest.fixture(scope="module")
def abroad_catalog(tmp_path_factory):
    pytest.importorskip("reverse_geocoder")
    pytest.importorskip("GeoToolCN")
    pytest.importorskip("pypinyin")
    store = open_catalog(tmp_path_factory.mktemp("abroad") / "abroad.sqlite")
    store.put_person(Person("1", ("me",), True))
    start = datetime(2023, 5, 1, 10, 0)
    for i, (name, lat, lon, *_rest) in enumerate([*INSIDE, *OUTSIDE]):
        pid = f"{name}.jpg"
        store.put_photo(Photo(id=pid, path=pid, taken_at=start + timedelta(days=i), lat=lat, lon=lon))
        store.set_place(pid, PhotoPlace.from_place(reverse_geocode(lat, lon)))
    yield store
    store.close()


QUERIES = [
    ("photos in Paris", "巴黎的照片", {"eiffel"}),
    ("photos in London", "伦敦的照片", {"westminster"}),
    ("photos in Greater London", None, {"westminster"}),
    ("photos in Rome", "罗马的照片", {"colosseum"}),
    ("photos in Manhattan", "曼哈顿的照片", {"times_square"}),
    ("photos in New York City", "纽约的照片", {"times_square", "jfk"}),
    ("photos in New York", None, {"times_square", "jfk"}),
    ("photos in Tokyo", "东京的照片", {"shibuya"}),
    ("photos in Shibuya", "涩谷的照片", {"shibuya"}),
]


@geo
@pytest.mark.parametrize("en, zh, expected", QUERIES, ids=[q[0] for q in QUERIES])
def test_a_named_city_finds_the_photos_in_its_area(abroad_catalog, en, zh, expected):
    for query in (en, zh):
        if query is None:
            continue
        result = search(abroad_catalog, query)
        assert not result.abstained, (query, result.reason)
        assert {pid.removesuffix(".jpg") for pid in result.photo_ids} == expected, query


@geo
def test_a_city_with_no_photo_in_its_area_still_says_so(abroad_catalog):
    for query in ("photos in Berlin", "柏林的照片"):
        result = search(abroad_catalog, query)
        assert result.abstained and result.outcome.kind is OutcomeKind.NO_PHOTO_AT_PLACE, query


def test_a_catalog_indexed_before_city_areas_finds_the_city_by_position(tmp_path):
    """Stored names from the nearest town only (as the geocoder gave them before city areas): the
    engine must not answer "no photo taken there" while a photo's position is inside Paris."""
    store = open_catalog(tmp_path / "old.sqlite")
    store.put_person(Person("1", ("me",), True))
    old = {"eiffel": (48.8584, 2.2945, "Departement des Hauts-de-Seine"),
           "versailles": (48.8049, 2.1204, "Departement des Yvelines")}
    for i, (name, (lat, lon, admin2)) in enumerate(old.items()):
        store.put_photo(Photo(id=name, path=name, taken_at=datetime(2023, 5, 1 + i), lat=lat, lon=lon))
        store.set_place(name, PhotoPlace(country_en="France", country_zh="法国", country_code="FR",
                                         province_en="Ile-de-France", city_en=admin2))
    for query in ("photos in Paris", "巴黎的照片"):
        result = search(store, query)
        assert set(result.photo_ids) == {"eiffel"}, (query, result.reason)
    assert search(store, "photos in Rome").outcome.kind is OutcomeKind.NO_PHOTO_AT_PLACE
    store.close()
