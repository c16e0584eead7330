"""The album engine on real catalogs (PhotoBench album1, en and cn) and a captioned synthetic one, each
in both stores (SQLite and Postgres)."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from album_search_fixtures import KITE
from finegrain.album.engine.catalog import open_catalog
from finegrain.album.engine.outcome import ConstraintKind, OutcomeKind, VisualGap
from finegrain.album.engine.photobench import import_photobench
from finegrain.album.engine.search import SearchContext, calibrate_visual_threshold, search
from finegrain.cli.main import main
from finegrain.errors import FinegrainError


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def catalogs(request, album_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("engine")
    out = {}
    for lang in ("en", "cn"):
        target = (root / f"album1-{lang}.sqlite" if request.param == "sqlite"
                  else request.getfixturevalue("postgres_server").new_database(f"engine_{lang}"))
        s = open_catalog(target)
        import_photobench(album_dir, s, lang=lang)
        out[lang] = s
    yield out
    for s in out.values():
        s.close()


def _with(album, *people):
    return {p.id for p in album.photos.values() if set(people) <= set(p.faces)}


@pytest.mark.parametrize(("lang", "query"), [("en", "photos of Xiao Zhou"), ("cn", "小周的照片")])
def test_a_person(catalogs, album, lang, query):
    r = search(catalogs[lang], query)
    assert not r.abstained and r.photo_ids == _with(album, "10")
    assert r.plan.person_ids == ("10",)


@pytest.mark.parametrize(("lang", "query"), [("en", "photos in Yantian District"), ("cn", "在盐田区的照片")])
def test_a_place_ranked_by_time(catalogs, album, lang, query):
    r = search(catalogs[lang], query)
    expected = {"IMG_6343.JPG", "IMG_6344.JPG", "IMG_6437.JPG", "IMG_6438.JPG", "IMG_6457.JPG", "IMG_6458.JPG"}
    assert r.photo_ids == expected
    times = [album.photos[pid].time for pid, _ in r.ranked]
    assert times == sorted(times)
    scores = [s for _, s in r.ranked]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == len(scores)
    assert r.outcome.kind is OutcomeKind.FOUND and r.outcome.count == 6
    assert r.reason == ("matched place Yantian District" if lang == "en" else "6 张照片符合地点「盐田区」")


@pytest.mark.parametrize(("lang", "query"), [("en", "photos from May 2024"), ("cn", "2024年5月")])
def test_a_month(catalogs, album, lang, query):
    r = search(catalogs[lang], query)
    expected = {p.id for p in album.photos.values() if p.time and (p.time.year, p.time.month) == (2024, 5)}
    assert r.photo_ids == expected == {"IMG_7898.JPG"}


@pytest.mark.parametrize(("lang", "query"), [("en", "photos of Xiao Zhou in Keqiao"), ("cn", "小周在柯桥的照片")])
def test_person_and_place(catalogs, album, lang, query):
    store = catalogs[lang]
    expected = _with(album, "10") & store.ids_at_place("柯桥区")
    assert expected and expected < _with(album, "10")
    r = search(store, query)
    assert r.photo_ids == expected
    assert [c.kind for c in r.outcome.details] == [ConstraintKind.PLACE, ConstraintKind.PERSON]
    assert ("person" in r.reason and "place" in r.reason) if lang == "en" else ("人物" in r.reason and "地点" in r.reason)


@pytest.mark.parametrize(("lang", "query", "name"), [("en", "photos in Tokyo", "Tokyo"), ("cn", "在东京的照片", "东京")])
def test_a_place_with_no_photos_abstains_with_the_reason(catalogs, lang, query, name):
    r = search(catalogs[lang], query)
    assert r.abstained and r.photo_ids == frozenset() and r.ranked == ()
    assert r.outcome.kind is OutcomeKind.NO_PHOTO_AT_PLACE and r.outcome.details[0].text == name
    assert r.reason == (f"no photo matches place {name}: the album has no photo taken there" if lang == "en"
                        else f"相册里没有在地点「{name}」拍的照片")


def test_constraints_that_never_meet_abstain(catalogs):
    r = search(catalogs["en"], "photos of Xiao Zhou in Yantian District")
    assert r.abstained
    assert r.outcome.kind is OutcomeKind.EMPTY_TOGETHER
    assert r.reason == "no photo matches place Yantian District and person Xiao Zhou together"


def test_visual_only_query_without_embeddings_abstains_and_says_why(catalogs):
    r = search(catalogs["en"], "vanilla coke spilled on keyboard")
    assert r.abstained
    assert "cannot be answered" in r.reason and "no caption or image embeddings" in r.reason
    assert r.outcome.kind is OutcomeKind.VISUAL_UNCHECKABLE and r.outcome.gap is VisualGap.NO_EMBEDDINGS


def test_unverified_visual_policy(catalogs, album):
    q = "group photo of Chenyang and Haoge at the library entrance"
    strict = search(catalogs["en"], q)
    assert strict.abstained and "cannot be checked" in strict.reason
    loose = search(catalogs["en"], q, unverified_visual="candidates")
    assert loose.photo_ids == _with(album, "3", "4") and "not checked" in loose.reason
    assert strict.outcome.kind is OutcomeKind.VISUAL_UNCHECKABLE and strict.outcome.count == len(loose.photo_ids)
    assert loose.outcome.kind is OutcomeKind.FOUND_VISUAL_UNCHECKED
    assert search(catalogs["en"], q, unverified_visual="one_day").abstained  # no single day named
    day = search(catalogs["en"], "selfie documenting makeup on November 16, 2025, afternoon", unverified_visual="one_day")
    assert day.photo_ids == {"IMG_1772.JPG", "IMG_1779.JPG", "IMG_1780.JPG"}
    with pytest.raises(FinegrainError, match="unknown unverified_visual policy"):
        search(catalogs["en"], q, unverified_visual="maybe")


def test_selfie_is_not_a_face_constraint(catalogs):
    r = search(catalogs["en"], "selfie on November 16, 2025, afternoon", unverified_visual="candidates")
    assert r.plan.person_ids == ("1",)  # the planner reads "selfie" as the owner ...
    assert r.photo_ids == {"IMG_1772.JPG", "IMG_1779.JPG", "IMG_1780.JPG"}  # ... the engine keeps it visual
    assert "selfie" in r.reason


def test_result_json_and_timings(catalogs):
    r = search(catalogs["en"], "photos in Yucheng")
    d = json.loads(json.dumps(r.to_dict(top=1)))
    assert d["n_photos"] == 2 and len(d["ranked"]) == 1 and d["abstained"] is False
    assert d["plan"]["places"][0]["name"] == "禹城市"
    assert set(r.timings) >= {"plan", "filters", "total"}


# --------------------------------------------------------------------------- visual evidence


def test_visual_query_finds_the_photo_above_the_calibrated_threshold(captioned):
    s, enc = captioned
    ctx = SearchContext(s, encoder=enc)
    r = search(s, "red kite sandy beach", context=ctx)
    assert not r.abstained and r.ranked[0][0] == KITE
    assert r.best_visual == pytest.approx(0.8165, abs=1e-4)
    assert r.best_visual > r.visual_threshold == ctx.visual_threshold
    assert all(score >= r.visual_threshold for _, score in r.ranked)


def test_visual_query_below_threshold_abstains(captioned):
    s, enc = captioned
    r = search(s, "purple submarine", encoder=enc)
    assert r.abstained
    assert r.reason.startswith("best visual score 0.00 < threshold ")


def test_visual_with_hard_constraints(captioned):
    s, enc = captioned
    r = search(s, "red kite sandy beach in Shanghai", encoder=enc)  # the kite photo is in Hangzhou
    assert KITE not in r.photo_ids
    r = search(s, "Anna with a red kite on a sandy beach", encoder=enc, visual_threshold=0.5)
    assert r.photo_ids == {KITE}
    assert "person Anna" in r.reason


def test_calibration_is_deterministic_and_held_out():
    rng = np.random.default_rng(0)
    m = rng.standard_normal((300, 16)).astype(np.float32)
    a, b = calibrate_visual_threshold(m), calibrate_visual_threshold(m.copy())
    assert a == b and -1.0 < a < 1.0
    dup = np.vstack([m, m])  # every row has an identical twin: the leave-one-out best is 1
    assert calibrate_visual_threshold(dup) == pytest.approx(1.0, abs=1e-5)
    order = list(range(300))
    random.Random(1).shuffle(order)
    assert calibrate_visual_threshold(m[order], sample=300) == pytest.approx(calibrate_visual_threshold(m, sample=300))


# --------------------------------------------------------------------------- CLI
def test_cli_search(catalogs, capsys):


    store = catalogs["en"]
    path = str(getattr(store, "path", None) or store.url)  # a file or a postgresql:// URL
    assert main(["album", "search", "-c", path, "photos in Yantian District"]) == 0
    out = capsys.readouterr().out
    assert "6 photos" in out and "IMG_6343.JPG" in out
    assert main(["album", "search", "-c", path, "photos in Tokyo"]) == 0
    out = capsys.readouterr().out
    assert "no matching photos" in out and "reason: no photo matches place Tokyo" in out
    assert main(["album", "search", "-c", path, "photos in Yucheng", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_photos"] == 2
