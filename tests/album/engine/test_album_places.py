"""Reverse geocoding on real points (offline gazetteers) and on every album1 GPS point."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("reverse_geocoder", reason="needs the geo extra: pip install 'finegrain[geo]'")
pytest.importorskip("GeoToolCN", reason="needs the geo extra: pip install 'finegrain[geo]'")
pytest.importorskip("pypinyin", reason="needs the geo extra: pip install 'finegrain[geo]'")

from finegrain.album.engine.profile.places import (  # noqa: E402
    Geocoder,
    chinese_level,
    place_vocabulary,
    reverse_geocode,
    reverse_geocode_many,
)
from finegrain.album.engine.profile.records import Place, PlaceKey  # noqa: E402
from finegrain.errors import FinegrainError  # noqa: E402
from finegrain.io.photobench import read_album


def test_keqiao_shaoxing_zhejiang() -> None:
    p = reverse_geocode(30.08, 120.49)
    assert isinstance(p, Place)
    assert (p.country.code, p.country.en, p.country.zh) == ("CN", "China", "中国")
    assert (p.province.zh, p.city.zh, p.district.zh) == ("浙江省", "绍兴市", "柯桥区")
    assert (p.province.en, p.city.en, p.district.en) == ("Zhejiang", "Shaoxing", "Keqiao District")
    assert p.district.code == "330603"
    for alias in ("keqiao", "柯桥", "柯桥区", "keqiao district"):
        assert alias in p.district.aliases
    for alias in ("shaoxing", "绍兴", "绍兴市", "shaoxing city"):
        assert alias in p.city.aliases
    assert {"zhejiang", "浙江", "浙江省", "zhejiang province"} <= set(p.province.aliases)
    assert p.label("zh") == "浙江省绍兴市柯桥区"
    assert p.label("en") == "Keqiao District, Shaoxing, Zhejiang, China"
    assert (p.city_zh, p.district_en, p.country_code) == ("绍兴市", "Keqiao District", "CN")


def test_hangzhou_west_lake() -> None:
    p = reverse_geocode(30.2590, 120.1300)  # by the West Lake
    assert p is not None and p.city is not None
    assert (p.city.zh, p.city.en) == ("杭州市", "Hangzhou")
    assert {"hangzhou", "杭州"} <= set(p.city.aliases)
    assert p.district.zh == "西湖区" and "xihu" in p.district.aliases


def test_shenzhen_nanshan_album1_point() -> None:
    p = reverse_geocode(22.4952, 113.9124)
    assert (p.province.zh, p.city.zh, p.district.zh) == ("广东省", "深圳市", "南山区")
    assert {"nanshan", "shenzhen", "guangdong"} <= set(p.district.aliases + p.city.aliases + p.province.aliases)


def test_municipality_province_is_city() -> None:
    p = reverse_geocode(31.2304, 121.4737)  # Shanghai, People's Square
    assert p.province.zh == p.city.zh == "上海市"
    assert "shanghai" in p.city.aliases


def test_tokyo_and_singapore() -> None:
    tokyo = reverse_geocode(35.6895, 139.6917)
    assert (tokyo.country.code, tokyo.country.en, tokyo.country.zh) == ("JP", "Japan", "日本")
    # GeoNames' centre of Tokyo is the metropolitan government building, in Shinjuku ward
    assert (tokyo.city.en, tokyo.city.zh, tokyo.district.en) == ("Tokyo", "东京", "Shinjuku")
    assert tokyo.source == "geonames"
    sg = reverse_geocode(1.2903, 103.8519)
    assert (sg.country.code, sg.country.zh) == ("SG", "新加坡")
    assert "singapore" in sg.country.aliases and "新加坡" in sg.country.aliases


def test_hong_kong_and_taiwan() -> None:
    hk = reverse_geocode(22.2800, 114.1600)
    assert hk.country.code == "HK" and "香港" in hk.country.aliases and "hong kong" in hk.province.aliases
    tw = reverse_geocode(25.0330, 121.5654)
    assert tw.country.code == "TW" and tw.province.zh == "台湾省"
    assert (tw.city.en, tw.city.zh) == ("Taipei", "台北")  # GeoToolCN stops at the province: the city's area


def test_ocean_point_has_no_place() -> None:
    assert reverse_geocode(0.0, -30.0) is None  # mid-Atlantic, 400 km from the nearest town
    assert reverse_geocode(-40.0, -120.0) is None  # south Pacific


def test_bad_points_are_refused() -> None:
    with pytest.raises(FinegrainError, match="out of range"):
        reverse_geocode(95.0, 10.0)
    with pytest.raises(FinegrainError, match="latitude, longitude"):
        reverse_geocode_many([(1.0,)])
    with pytest.raises(FinegrainError, match="max_km"):
        Geocoder(max_km=0)


def test_batch_equals_single_and_caches() -> None:
    pts = [(30.08, 120.49), (22.4952, 113.9124), (30.08, 120.49), (0.0, -30.0)]
    many = reverse_geocode_many(pts)
    assert many == [reverse_geocode(*p) for p in pts]
    assert many[0] is many[2]


def test_suffix_and_pinyin_rules() -> None:
    gx = chinese_level("province", "广西壮族自治区", "450000")
    assert gx.en == "Guangxi" and {"广西", "guangxi", "广西壮族自治区"} <= set(gx.aliases)
    es = chinese_level("city", "恩施土家族苗族自治州")
    assert "恩施" in es.aliases and "enshi" in es.aliases
    assert chinese_level("province", "陕西省").en == "Shaanxi"
    xa = chinese_level("city", "西安市")
    assert xa.en == "Xi'an" and {"xi'an", "xian", "西安"} <= set(xa.aliases)
    pd = chinese_level("district", "浦东新区")
    assert pd.en == "Pudong New Area" and {"浦东", "pudong"} <= set(pd.aliases)
    zj = chinese_level("district", "诸暨市")  # a county-level city at district level
    assert {"zhuji", "zhuji city", "诸暨"} <= set(zj.aliases)


def test_vocabulary_prefers_broader_levels() -> None:
    places = reverse_geocode_many([(30.08, 120.49), (39.9042, 116.4074), (30.2590, 120.1300), (0.0, -30.0)])
    vocab = place_vocabulary(places)
    assert vocab["keqiao"] == PlaceKey("district", "柯桥区")
    assert vocab["柯桥"] == PlaceKey("district", "柯桥区")
    assert vocab["shaoxing"] == PlaceKey("city", "绍兴市")
    assert vocab["hangzhou"] == PlaceKey("city", "杭州市")
    assert vocab["杭州"] == PlaceKey("city", "杭州市")
    assert vocab["beijing"] == PlaceKey("province", "北京市")  # municipality: province and city share the name
    assert vocab["china"] == vocab["中国"] == PlaceKey("country", "中国")
    assert all(k.level != "locality" for k in vocab.values())
    with_towns = place_vocabulary([*places, reverse_geocode(22.4952, 113.9124)], include_locality=True)
    assert with_towns["shekou"] == PlaceKey("locality", "Shekou")  # the nearest GeoNames town
    assert with_towns["keqiao"] == PlaceKey("district", "柯桥区")  # the town Keqiao loses to the district


def test_every_album1_point_resolves(data_root: Path) -> None:
    folder = data_root / "photobench" / "album1"
    if not folder.is_dir():
        pytest.skip(f"{folder} not found")
    album = read_album(folder)
    points = [(p.latitude, p.longitude) for p in album.photos.values() if p.has_gps]
    assert len(points) == 1047
    places = reverse_geocode_many(points)
    missing = [pt for pt, pl in zip(points, places) if pl is None]
    assert not missing, f"{len(missing)} album1 points resolve to nothing, e.g. {missing[:3]}"
    countries = Counter(p.country.zh for p in places)
    provinces = Counter(p.province.zh for p in places if p.province)
    cities = Counter((p.province.zh, p.city.zh) for p in places if p.city)
    districts = Counter((p.city.zh, p.district.zh) for p in places if p.district)
    print(
        f"\nalbum1: {len(points)} GPS points -> {len(countries)} countries, {len(provinces)} provinces, "
        f"{len(cities)} cities, {len(districts)} districts; top cities: {cities.most_common(5)}"
    )
    assert countries == {"中国": 1047}
    assert all(p.city is not None and p.district is not None for p in places)
    assert len(provinces) >= 5 and len(cities) >= 8 and len(districts) >= 20
    vocab = place_vocabulary(places)
    for alias, key in (("hangzhou", ("city", "杭州市")), ("keqiao", ("district", "柯桥区")), ("济南", ("city", "济南市"))):
        assert vocab[alias] == PlaceKey(*key)
