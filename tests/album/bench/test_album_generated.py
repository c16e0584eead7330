"""Generated albums (finegrain.album.bench.generated): deterministic per seed, labelled by
construction (every M/F/MF ground truth is recomputed here from metadata.json and the face files,
with this file's own geometry and calendar), the dev/test split of every bank holds, and the
PhotoBench reader reads the folders."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from finegrain.album.bench.generated import make_generated_album
from finegrain.album.bench.generated.phrasing import FRAMES, TIMES, all_banks, templates, time_templates
from finegrain.album.bench.generated.split import held_out
from finegrain.album.bench.generated.world import CHINESE_CITIES, CITIES_ABROAD, HOLIDAY_DATES
from finegrain.errors import FinegrainError
from finegrain.io.photobench import read_album

GeoToolCN = pytest.importorskip("GeoToolCN")

DEV, TEST = (1, 2), (1001,)


@pytest.fixture(scope="module")
def albums(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    root = tmp_path_factory.mktemp("generated")
    return {s: make_generated_album(root / str(s), s, "dev" if s < 1000 else "test").path for s in (*DEV, *TEST)}


def _load(folder: Path, name: str) -> Any:
    return json.loads((folder / name).read_text(encoding="utf-8"))


# ------------------------------------------------------------------ determinism


def test_same_seed_same_album_other_seed_other_album(tmp_path: Path, albums: dict[int, Path]) -> None:
    again = make_generated_album(tmp_path / "again", 1, "dev").path
    for name in ("metadata.json", "face_info_en.json", "face_info_cn.json", "samples_query.json",
                 "protected_query.json", "generated.json"):
        assert (again / name).read_bytes() == (albums[1] / name).read_bytes(), name
    assert _load(albums[2], "metadata.json") != _load(albums[1], "metadata.json")


def test_same_seed_same_album_in_another_process(tmp_path: Path, albums: dict[int, Path]) -> None:
    """Nothing depends on the process's string hashing (set order) or on earlier albums."""
    code = "import sys; from finegrain.album.bench.generated import make_generated_album as m; m(sys.argv[1], 1, 'dev')"
    for hash_seed in ("1", "2"):
        out = tmp_path / hash_seed
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        subprocess.run([sys.executable, "-c", code, str(out)], check=True, env=env)
        assert (out / "generated.json").read_bytes() == (albums[1] / "generated.json").read_bytes()


def test_seeds_belong_to_one_split(tmp_path: Path) -> None:
    with pytest.raises(FinegrainError, match="test seed"):
        make_generated_album(tmp_path / "x", 1001, "dev")
    with pytest.raises(FinegrainError, match="dev seed"):
        make_generated_album(tmp_path / "x", 5, "test")
    with pytest.raises(FinegrainError, match="unknown split"):
        make_generated_album(tmp_path / "x", 5, "train")
    with pytest.raises(FinegrainError, match="neither"):
        make_generated_album(tmp_path / "x", 1000, "dev")


# ------------------------------------------------------------------ labels by construction


def _km(a: tuple[float, float], b: tuple[float, float]) -> float:
    p1, p2 = math.radians(a[0]), math.radians(b[0])
    h = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(math.radians(b[1] - a[1]) / 2) ** 2
    return 2 * 6371.0 * math.asin(math.sqrt(h))


def _recompute(folder: Path, constraint: dict[str, Any], geo: Any) -> set[str]:
    """The photos meeting ``constraint``, from the album's files alone."""
    meta = _load(folder, "metadata.json")
    faces = _load(folder, "face_info_en.json")["image_to_face_ids"]
    scenes = _load(folder, "generated.json")["scenes"]
    venues = {v.en: (v.lat, v.lon) for c in CHINESE_CITIES for v in c.venues}
    venues.update({v.en: (v.lat, v.lon) for c in CITIES_ABROAD for v in c.landmarks})
    out = set()
    for name, rec in meta.items():
        if constraint["place"]:
            level, key = constraint["place"]
            if rec["latitude"] is None:
                continue
            point = (rec["latitude"], rec["longitude"])
            if level in ("district", "city", "province"):
                r = geo.reverse(*point)
                region = getattr(r, level, None) if r is not None else None
                if region is None or region.code != key:
                    continue
            elif level in ("abroad", "country"):
                cities = [c for c in CITIES_ABROAD if (c.en if level == "abroad" else c.country_en) == key]
                if geo.reverse(*point) is not None and geo.reverse(*point).province is not None:
                    continue
                if not any(_km(point, (c.lat, c.lon)) <= c.radius_km for c in cities):
                    continue
            elif _km(point, venues[key]) > 0.2:
                continue
        if constraint["days"]:
            if not rec["time"]:
                continue
            day = datetime.fromisoformat(rec["time"]).date().isoformat()
            if not any(a <= day <= b for a, b in constraint["days"]):
                continue
        here = set(faces.get(name, ()))
        if not set(constraint["all_of"]) <= here or (constraint["any_of"] and not set(constraint["any_of"]) & here):
            continue
        if constraint["scene"] is not None and scenes[name] != constraint["scene"]:
            continue
        out.add(name)
    return out


@pytest.mark.parametrize("seed", [*DEV, *TEST])
def test_every_ground_truth_is_the_photos_meeting_its_constraint(albums: dict[int, Path], seed: int) -> None:
    folder = albums[seed]
    geo = GeoToolCN.GeoTool()
    record = {(q["query_cn"], q["query_en"]): q for q in _load(folder, "generated.json")["queries"]}
    queries = _load(folder, "samples_query.json")
    assert len(queries) >= 250
    for q in queries:
        c = record[(q["query_cn"], q["query_en"])]["constraint"]
        assert set(q["ground_truth"]) == _recompute(folder, c, geo), q["query_en"]
        assert ("zero" in q["Class"]) == (not q["ground_truth"]) or q["Source"] not in ("M", "F", "MF")
        # the Source says what the constraint uses; a venue has no gazetteer entry, so it is also visual
        venue = bool(c["place"]) and c["place"][0] == "venue"
        uses = ("V" if c["scene"] or venue else "") + ("M" if c["place"] or c["days"] else "") + \
               ("F" if c["all_of"] or c["any_of"] else "")
        assert q["Source"] == uses, q["query_en"]


def test_zero_answer_and_every_class_are_present(albums: dict[int, Path]) -> None:
    classes = {c for s in DEV for q in _load(albums[s], "samples_query.json") for c in q["Class"]}
    assert classes == {"place:district", "place:city", "place:province", "place:abroad", "place:venue", "people:name",
                       "people:role", "people:shared", "holiday", "time", "zero"}


def test_holiday_wording_decides_day_or_span(tmp_path: Path, albums: dict[int, Path]) -> None:
    def spans(folder: Path) -> list[tuple[str, str, int]]:
        out = []
        for q in _load(folder, "generated.json")["queries"]:
            days = q["constraint"]["days"]
            if q["kind"] == "holiday":
                a, b = (date.fromisoformat(d) for d in days[0])
                out.append((q["query_en"], q["query_cn"], (b - a).days + 1))
        return out

    default = spans(albums[1])
    assert default
    for en, zh, n in default:
        if re.search(r"itself|the day of|\bday in|当天|那天|当日|那一天", en + zh):
            assert n == 1, en
        elif re.search(r"holiday|break|days off|假期|放假", en + zh):
            assert n > 1 or "Qingming" not in en, en
    plan = {"holiday": 40}
    by_day = spans(make_generated_album(tmp_path / "day", 1, "dev", holiday_reading="day", plan=plan).path)
    plain = [n for en, zh, n in by_day if not re.search(r"itself|the day|\bday in|holiday|break|days off", en)]
    assert plain and all(n == 1 for n in plain)
    with pytest.raises(FinegrainError, match="holiday reading"):
        make_generated_album(tmp_path / "bad", 1, "dev", holiday_reading="week")


def test_holiday_table_matches_the_official_calendar() -> None:
    """Each span is a run of official days off bounded by working days, and holds the named day."""
    cc = pytest.importorskip("chinese_calendar")
    lunardate = pytest.importorskip("lunardate")
    lunar = {"spring_festival": (1, 1), "dragon_boat": (5, 5), "mid_autumn": (8, 15)}
    for (key, year), (named, first, last) in HOLIDAY_DATES.items():
        day = first
        while day <= last:
            assert cc.is_holiday(day), (key, day)
            day += timedelta(days=1)
        assert cc.is_workday(first - timedelta(days=1)) and cc.is_workday(last + timedelta(days=1)), (key, year)
        assert first <= named <= last
        if key in lunar:
            assert lunardate.LunarDate(year, *lunar[key]).to_solar_date() == named
        elif key in ("labour_day", "national_day"):
            assert (named.month, named.day) == ((5, 1) if key == "labour_day" else (10, 1))


def test_district_names_are_those_of_the_boundary_data() -> None:
    geo = GeoToolCN.GeoTool()
    cities = {r.name: r for r in geo.list_regions("city")}
    districts = geo.list_regions("district")
    for city in CHINESE_CITIES:
        code = cities[city.zh].code
        names = {d.name for d in districts if d.code[:4] == code[:4]}
        assert {d.zh for d in city.districts} <= names, city.zh
        for v in city.venues:  # a venue stands inside its city
            r = geo.reverse(v.lat, v.lon)
            assert r is not None and r.city is not None and r.city.name == city.zh, v.en


# ------------------------------------------------------------------ dev / test split


def _pattern(template: str) -> re.Pattern[str]:
    parts = re.split(r"\{[A-Za-z_]+\}", template)
    return re.compile(".+?".join(re.escape(p) for p in parts), re.DOTALL)


def test_every_bank_holds_out_about_a_third() -> None:
    for name, bank in all_banks().items():
        out = held_out(bank, name)
        assert 1 <= len(out) <= len(bank) // 3 + 1 and len(out) < len(bank), name
    for frame in FRAMES:
        for lang in ("en", "zh"):
            assert not set(templates(frame, lang, "dev")) & set(held_out(FRAMES[frame][lang], f"phrasing/{frame}/{lang}"))
            assert templates(frame, lang, "test") == FRAMES[frame][lang]
    for kind in TIMES:
        assert len(time_templates(kind, "en", "dev")) < len(time_templates(kind, "en", "test"))


def _held_out(bank: str, lang: str) -> set[str]:
    source = FRAMES[bank][lang] if bank in FRAMES else TIMES[bank.removeprefix("time-")][lang]
    return set(held_out(source, f"phrasing/{bank}/{lang}"))


def test_dev_albums_never_use_held_out_templates_and_test_albums_do(albums: dict[int, Path]) -> None:
    def used(seed: int) -> list[tuple[dict[str, Any], str, str, str]]:
        return [(q, *t) for q in _load(albums[seed], "generated.json")["queries"] for t in q["templates"]]

    for seed in DEV:
        for q, bank, lang, template in used(seed):
            assert template not in _held_out(bank, lang), (q["query_en"], template)
    for seed in (*DEV, *TEST):  # the record is the wording: each frame template reads its query
        for q, bank, lang, template in used(seed):
            if bank in FRAMES:
                text = q["query_en"] if lang == "en" else q["query_cn"]
                assert _pattern(template).fullmatch(text), (text, template)
    test_only = [t for _, bank, lang, t in used(1001) if t in _held_out(bank, lang)]
    assert len(test_only) >= 50


def test_dev_records_avoid_held_out_places(albums: dict[int, Path]) -> None:
    cities = {c.zh for c in held_out(CHINESE_CITIES, "places/chinese-cities", key=lambda c: c.zh)}
    abroad = {c.en for c in held_out(CITIES_ABROAD, "places/abroad", key=lambda c: c.zh)}
    for seed in DEV:
        rec = _load(albums[seed], "generated.json")
        assert not ({rec["home"], *rec["trips"]} & cities) and not set(rec["abroad"]) & abroad


# ------------------------------------------------------------------ the reader


def test_the_photobench_reader_reads_a_generated_album(albums: dict[int, Path]) -> None:
    folder = albums[1]
    album = read_album(folder)
    samples = _load(folder, "samples_query.json")
    assert len(album.queries) == len(album.judged_queries) == len(samples)
    assert len(album.photos) == len(_load(folder, "metadata.json")) >= 800
    assert album.people["1"].names_en[0] == "me" and album.people["1"].names_cn[0] == "我"
    assert any(p.latitude is None for p in album.photos.values()) and any(p.time is None for p in album.photos.values())
    rec = _load(folder, "generated.json")
    shared = rec["shared_nickname"]
    assert all(shared["en"] in album.people[i].names_en and shared["cn"] in album.people[i].names_cn for i in shared["ids"])
    roles = {n for p in album.people.values() for n in p.names_en}
    assert roles & {"Dad", "Mom"} and roles & {"wife", "husband", "Boyfriend", "Girlfriend"}
