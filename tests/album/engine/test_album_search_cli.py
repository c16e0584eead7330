"""``finegrain album search`` in the terminal: date, place and people per hit, in the query language
(a catalog file or a ``postgresql://`` URL)."""

from __future__ import annotations

import re
from datetime import datetime

import pytest

from finegrain.album.engine.catalog import open_catalog
from finegrain.album.engine.records import FaceOccurrence, Person, Photo, PhotoPlace
from finegrain.cli.album_search_cmd import place_label
from finegrain.cli.main import main

YANTIAN = PhotoPlace(country_en="China", country_zh="中国", province_en="Guangdong", province_zh="广东省",
                     city_en="Shenzhen", city_zh="深圳市", district_en="Yantian District", district_zh="盐田区",
                     country_code="CN", aliases=(("district", "yantian"), ("district", "盐田")))
PARIS = PhotoPlace(country_en="France", country_zh="法国", city_en="Paris", country_code="FR")


@pytest.fixture
def catalog(catalog_target):
    path = catalog_target
    with open_catalog(path) as s:
        s.put_photo(Photo("a", "/photos/2024/IMG_1.JPG", 1, 1.0, "a", datetime(2024, 10, 5, 17, 34), None, 22.58, 114.27))
        s.put_photo(Photo("b", "/photos/2024/IMG_2.JPG", 1, 1.0, "b", datetime(2024, 10, 6, 9, 5), None, 22.58, 114.27))
        s.put_photo(Photo("c", "/photos/2023/IMG_3.JPG", 1, 1.0, "c", datetime(2023, 5, 1, 12, 0), None, 48.85, 2.35))
        s.set_place("a", YANTIAN)
        s.set_place("b", YANTIAN)
        s.set_place("c", PARIS)
        s.put_person(Person("1", ("me",), is_me=True))
        s.put_person(Person("10", ("Weiwei", "Xiaowei")))
        s.set_faces("b", [FaceOccurrence("b", "10", None, 0), FaceOccurrence("b", "1", None, 1)])
    return str(path)


def _search(catalog, query, capsys):
    code = main(["album", "search", "-c", catalog, query])
    return code, capsys.readouterr().out


def test_hits_show_date_place_people_and_file_not_a_rank_score(catalog, capsys):
    code, out = _search(catalog, "photos in Yantian District", capsys)
    assert code == 0
    hits = [line for line in out.splitlines() if re.match(r"\s+\d+\s", line)]
    assert len(hits) == 2
    assert all("Yantian District, Shenzhen" in h for h in hits)
    assert any("2024-10-06 09:05" in h and "Weiwei, me" in h and "IMG_2.JPG" in h for h in hits)
    assert not any(re.search(r"\b[01]\.\d{3}\b", h) for h in hits)  # no rank-decay score


def test_chinese_queries_get_chinese_place_names_and_aliases(catalog, capsys):
    with open_catalog(catalog, create=False) as s:
        s.add_person_names("10", ["薇薇"])
    code, out = _search(catalog, "薇薇的照片", capsys)
    assert code == 0 and "深圳市盐田区" in out and "薇薇, 我" in out and "2024-10-06" in out


def test_an_abstention_prints_the_reason_and_a_suggestion(catalog, capsys):
    code, out = _search(catalog, "photos in Yantain", capsys)
    assert code == 0 and "no matching photos" in out and "reason:" in out and "did you mean" in out
    assert "Yantian District" in out


def test_place_label_outside_china_names_the_country_and_falls_back_to_english():
    assert place_label(PARIS, "en") == "Paris, France"
    assert place_label(PARIS, "zh") == "Paris, 法国"
    assert place_label(YANTIAN, "zh") == "深圳市盐田区"
    assert place_label(None, "en") == ""
