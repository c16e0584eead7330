"""Zero-answer queries: constraint injection with a catalog proof.

Layers: the phrasing rules on their own; a hand-built four-photo album (two
catalogs, en and zh names) whose candidates are checked by hand; PhotoBench
album1 (proofs recomputed from the raw metadata, the planner reading the injected
constraint, the engine abstaining for that reason, determinism); ``album eval``
reading the file alone and mixed; bad input.
"""

from __future__ import annotations

import json
from dataclasses import FrozenInstanceError
from datetime import date, datetime

import pytest

from finegrain.album.bench.evaluation import evaluate_album
from finegrain.album.bench.query_file import read_query_file
from finegrain.album.bench.zero_answer import (
    KINDS,
    ZeroAnswerQuery,
    make_zero_answer,
    parse_langs,
    write_zero_answer,
)
from finegrain.album.bench.zero_answer_phrasing import inject
from finegrain.album.bench.zero_answer_pool import constraint_pool, fits, source_of
from finegrain.album.engine.catalog.sqlite import SqliteCatalog
from finegrain.album.engine.outcome import OutcomeKind
from finegrain.album.engine.photobench import import_photobench
from finegrain.album.engine.plan import plan_query
from finegrain.album.engine.plan.records import PersonMatch
from finegrain.album.engine.plan_catalog import vocabulary_from_catalog
from finegrain.album.engine.records import FaceOccurrence, Person, Photo, PhotoPlace
from finegrain.album.engine.search import SearchContext, search
from finegrain.cli.main import main
from finegrain.errors import DataFormatError, FinegrainError
from finegrain.io.photobench import PhotoQuery, read_album

# --------------------------------------------------------------------------- phrasing


@pytest.mark.parametrize(("text", "role", "words", "lang", "people", "expected"), [
    ("photos in Tianjin", "time", "March 2024", "en", (), ("photos in Tianjin in March 2024", "in March 2024")),
    ("photos of Tongtong", "place", "Tokyo", "en", (), ("photos of Tongtong in Tokyo", "in Tokyo")),
    ("photos in Tianjin", "person", "Chenyang", "en", (), ("photos in Tianjin with Chenyang", "with Chenyang")),
    ("photos with Chen Mingyu in 2025", "person", "Chenyang", "en", ("Chen Mingyu",),
     ("photos with Chen Mingyu and Chenyang in 2025", "and Chenyang")),
    ("在天津市的照片", "time", "2024年3月", "zh", (), ("2024年3月在天津市的照片", "2024年3月")),
    ("我、小周的照片", "place", "东京", "zh", ("我", "小周"), ("我、小周在东京的照片", "在东京")),
    ("有小李在内的照片", "place", "东京", "zh", ("小李",), ("在东京有小李在内的照片", "在东京")),
    ("2025年1月", "place", "东京", "zh", (), ("2025年1月在东京拍的", "在东京拍的")),
    ("我、小周的照片", "person", "晨阳", "zh", ("我", "小周"), ("我、小周、晨阳的照片", "、晨阳")),
    ("有小李在内的照片", "person", "晨阳", "zh", ("小李",), ("有小李和晨阳在内的照片", "和晨阳")),
    ("在天津市的照片", "person", "晨阳", "zh", (), ("在天津市和晨阳的照片", "和晨阳")),
])
def test_inject_follows_the_query_style(text, role, words, lang, people, expected):
    matches = [PersonMatch(p, str(i)) for i, p in enumerate(people)]
    assert inject(text, role, words, lang, matches) == expected


def test_inject_refuses_unknown_role_and_language():
    with pytest.raises(FinegrainError, match="role"):
        inject("photos", "colour", "red", "en")
    with pytest.raises(FinegrainError, match="language"):
        inject("photos", "place", "Tokyo", "fr")


def test_parse_langs():
    assert parse_langs("both") == ("en", "zh")
    assert parse_langs("cn") == ("zh",)
    assert parse_langs(["zh", "en"]) == ("en", "zh")
    with pytest.raises(FinegrainError, match="unknown language 'fr'.*en, zh, both"):
        parse_langs("fr")


# --------------------------------------------------------------------------- a hand-built album
# p1 2023-05-10 Hangzhou: me + Alice    p2 2023-07-01 Hangzhou: Alice
# p3 2024-03-05 Shanghai: Bob           p4 2024-03-06 Shanghai: me + Bob
# Alice and Bob are never together; Alice was never in Shanghai, never photographed in 2024.

HANGZHOU = PhotoPlace(country_en="China", country_zh="中国", province_en="Zhejiang", province_zh="浙江省",
                      city_en="Hangzhou", city_zh="杭州市", country_code="CN")
SHANGHAI = PhotoPlace(country_en="China", country_zh="中国", province_en="Shanghai", province_zh="上海市",
                      city_en="Shanghai", city_zh="上海市", country_code="CN")
PHOTOS = (
    ("p1", datetime(2023, 5, 10, 12), HANGZHOU, (30.27, 120.16), ("1", "2")),
    ("p2", datetime(2023, 7, 1, 9), HANGZHOU, (30.28, 120.15), ("2",)),
    ("p3", datetime(2024, 3, 5, 18), SHANGHAI, (31.23, 121.47), ("3",)),
    ("p4", datetime(2024, 3, 6, 10), SHANGHAI, (31.22, 121.48), ("1", "3")),
)
NAMES = {"en": {"1": ("me",), "2": ("Alice",), "3": ("Bob",)}, "zh": {"1": ("我",), "2": ("爱丽丝",), "3": ("鲍勃",)}}


def _tiny_store(path, lang):
    store = SqliteCatalog(path)
    for pid, names in NAMES[lang].items():
        store.put_person(Person(pid, names, pid == "1"))
    for pid, when, place, (lat, lon), faces in PHOTOS:
        store.put_photo(Photo(pid, pid, taken_at=when, lat=lat, lon=lon))
        store.set_place(pid, place)
        store.set_faces(pid, [FaceOccurrence(pid, f, None, i) for i, f in enumerate(faces)])
    return store


def _q(qid, en, zh, source="F", truth=None):
    return PhotoQuery(qid, en, zh, source, {}, truth)


TINY_QUERIES = (
    _q("qa", "photos of Alice", "爱丽丝的照片"),
    _q("qb", "photos in Shanghai", "在上海市的照片", "M"),
    _q("qc", "photos from March 2024", "2024年3月的照片", "M"),
    _q("qd", "a cat on the sofa", "沙发上的猫", "V"),
    _q("qz", "photos of Alice in Tokyo", "爱丽丝在东京的照片", "MF", ()),
    _q("qw", "photos of Bob", "鲍勃的照片", "F", ("p1",)),  # public truth outside Bob's photos: misread, not a source
)


@pytest.fixture
def tiny(tmp_path):
    stores = {lang: _tiny_store(tmp_path / f"{lang}.sqlite", lang) for lang in ("en", "zh")}
    yield stores
    for s in stores.values():
        s.close()


@pytest.fixture
def tiny_candidates(tiny):
    contexts = {lang: SearchContext(s, vocab=vocabulary_from_catalog(s)) for lang, s in tiny.items()}
    sources = {q.id: s for q in TINY_QUERIES if (s := source_of(q, contexts)) is not None}
    pool = constraint_pool(contexts)
    return sources, pool, {(sid, c.kind, c.value) for sid, s in sources.items() for c in pool if fits(s, c)}


def test_tiny_sources_are_the_answerable_metadata_and_face_queries(tiny_candidates):
    sources, _, _ = tiny_candidates
    assert set(sources) == {"qa", "qb", "qc"}  # not visual, not zero-truth, not misread
    assert sources["qa"].own == {"en": frozenset({"p1", "p2"}), "zh": frozenset({"p1", "p2"})}
    assert sources["qb"].own["zh"] == {"p3", "p4"}


def test_tiny_pool(tiny_candidates):
    _, pool, _ = tiny_candidates
    by_kind = {k: {c.value for c in pool if c.kind == k} for k in KINDS}
    assert by_kind["year"] == {"2023", "2024"}
    assert by_kind["month"] == {"2023-05", "2023-07", "2024-03"}
    assert by_kind["person"] == {"person:1", "person:2", "person:3"}
    assert by_kind["place"] == {"city:杭州市", "province:浙江省", "province:上海市"}
    unvisited = by_kind["unvisited_place"]
    assert {"city:东京", "province:北京市", "province:四川省"} <= unvisited  # Beijing: a province first
    assert not unvisited & {"city:杭州市", "city:上海市", "province:浙江省", "district:西湖区"}  # visited / near


def test_tiny_hand_checked_candidates(tiny_candidates):
    _, _, cands = tiny_candidates
    # a pair never together: Alice (qa) with Bob; not with me (p1)
    assert ("qa", "person", "person:3") in cands and ("qa", "person", "person:1") not in cands
    # a place never visited is proven empty for any source without a place
    assert ("qa", "unvisited_place", "city:东京") in cands and ("qc", "unvisited_place", "city:东京") in cands
    # a place never visited with that person / in that month
    assert ("qa", "place", "province:上海市") in cands and ("qa", "place", "province:浙江省") not in cands
    assert ("qc", "place", "province:浙江省") in cands and ("qc", "place", "province:上海市") not in cands
    # a year or month without photos of that place / person
    assert ("qb", "year", "2023") in cands and ("qb", "year", "2024") not in cands
    assert ("qa", "month", "2024-03") in cands and ("qa", "month", "2023-05") not in cands
    # no second place into a place query, no second time into a time query
    assert not {c for c in cands if c[0] == "qb" and c[1] in ("place", "unvisited_place")}
    assert not {c for c in cands if c[0] == "qc" and c[1] in ("year", "month")}


def test_tiny_make_zero_answer(tiny):
    out = make_zero_answer(tiny, TINY_QUERIES, n=6, seed=3)
    assert len(out) == 12 and all(isinstance(q, ZeroAnswerQuery) and q.ground_truth == () for q in out)
    assert [q.id for q in out[:2]] == ["za0001-en", "za0001-zh"]
    assert len({q.source_id for q in out}) == 3  # every source used before any is used twice
    photos = {pid: (when, place, faces) for pid, when, place, _, faces in PHOTOS}
    for q in out:
        assert q.proof.count == 0 and q.proof.own_count > 0
        assert q.injected.phrase in q.text and q.source_text in (TINY_QUERIES_TEXT[q.source_id])
        # the hand proof: no photo meets the source and the injected constraint
        assert not [pid for pid in _tiny_answer(q.source_id) if _meets(photos[pid], q.injected.kind, q.injected.value)]
    with pytest.raises(FrozenInstanceError):
        out[0].text = "x"  # type: ignore[misc]


TINY_QUERIES_TEXT = {q.id: (q.text_en, q.text_cn) for q in TINY_QUERIES}


def _tiny_answer(qid):
    return {"qa": ("p1", "p2"), "qb": ("p3", "p4"), "qc": ("p3", "p4")}[qid]


def _meets(photo, kind, value):
    when, place, faces = photo
    if kind == "unvisited_place":
        return False
    if kind == "place":
        return value.split(":", 1)[1] in (place.city_zh, place.province_zh)
    if kind == "year":
        return when.year == int(value)
    if kind == "month":
        return (when.year, when.month) == tuple(map(int, value.split("-")))
    return value.split(":", 1)[1] in faces


def test_tiny_is_deterministic_and_seeded(tiny):
    a = make_zero_answer(tiny, TINY_QUERIES, n=8, seed=5)
    assert a == make_zero_answer(tiny, TINY_QUERIES, n=8, seed=5)
    assert a != make_zero_answer(tiny, TINY_QUERIES, n=8, seed=6)


def test_tiny_too_many_is_an_error_saying_how_many(tiny):
    with pytest.raises(FinegrainError, match=r"at most (\d+) zero-answer queries .*ask for --n \1 or fewer"):
        make_zero_answer(tiny, TINY_QUERIES, n=100_000, seed=0)


def test_one_language_and_one_store(tiny):
    out = make_zero_answer(tiny["en"], TINY_QUERIES, n=3, seed=0, langs="en")
    assert {q.lang for q in out} == {"en"} and len(out) == 3


def test_bad_api_input(tiny, tmp_path):
    for n in (0, -1, 1.5, True):
        with pytest.raises(FinegrainError, match="positive number"):
            make_zero_answer(tiny, TINY_QUERIES, n=n)
    with pytest.raises(FinegrainError, match="no catalog given for language zh"):
        make_zero_answer({"en": tiny["en"]}, TINY_QUERIES, n=1)
    with pytest.raises(FinegrainError, match="no catalog at"):
        make_zero_answer(tmp_path / "missing.sqlite", TINY_QUERIES, n=1, langs="en")
    with pytest.raises(FinegrainError, match="PhotoBench queries"):
        make_zero_answer(tiny, ["photos of Alice"], n=1)
    with pytest.raises(FinegrainError, match="given twice"):
        make_zero_answer(tiny, TINY_QUERIES + TINY_QUERIES[:1], n=1)


# --------------------------------------------------------------------------- PhotoBench album1


@pytest.fixture(scope="module")
def album1(album_dir, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("za-album1")
    stores = {}
    for lang in ("en", "zh"):
        stores[lang] = SqliteCatalog(tmp / f"{lang}.sqlite")
        import_photobench(album_dir, stores[lang], lang=lang)
    album = read_album(album_dir)
    queries = make_zero_answer(stores, album.queries, n=100, seed=1)
    yield album, stores, queries
    for s in stores.values():
        s.close()


def test_album1_gives_100_per_language_with_every_kind(album1):
    album, _, queries = album1
    for lang in ("en", "zh"):
        mine = [q for q in queries if q.lang == lang]
        assert len(mine) == 100 and len({q.id for q in mine}) == 100
        assert {q.injected.kind for q in mine} == set(KINDS)
    assert len({q.source_id for q in queries}) == 100  # 117 answerable sources: none used twice
    for en, zh in zip(queries[::2], queries[1::2], strict=True):
        assert en.group == zh.group and en.source_id == zh.source_id and en.injected.value == zh.injected.value
        source = next(q for q in album.queries if q.id == en.source_id)
        assert (en.source_text, zh.source_text) == (source.text_en, source.text_cn)
        assert not source.is_zero_gt and source.source in ("M", "F", "MF", "VF", "VM", "VMF")


def test_album1_proofs_hold_on_the_raw_metadata(album1):
    """Recount each proof from metadata.json / face_info (people, times) and the catalog's places."""
    album, stores, queries = album1
    store, vocab = stores["en"], vocabulary_from_catalog(stores["en"])
    for en, zh in zip(queries[::2], queries[1::2], strict=True):
        assert en.proof.count == zh.proof.count == 0 and en.proof.own_count == zh.proof.own_count > 0
        plan = plan_query(en.source_text, vocab, lang="en")
        own = set(album.photos)
        for pid in plan.person_ids:
            own &= {p.id for p in album.photos.values() if pid in p.faces}
        if plan.time_ranges:  # a photo in any of the ranges, as tools.time_filter ("winter 2025" = Jan-Feb or Dec)
            own &= {p.id for p in album.photos.values() if p.time and any(r.contains(p.time) for r in plan.time_ranges)}
        for place in plan.places:
            own &= store.ids_at_place(place.place.name, place.place.level)
        assert len(own) == en.proof.own_count, en
        kind, value = en.injected.kind, en.injected.value
        if kind == "person":
            hits = [p for p in own if value.split(":")[1] in album.photos[p].faces]
        elif kind in ("year", "month"):
            fmt = "%Y" if kind == "year" else "%Y-%m"
            hits = [p for p in own if album.photos[p].time and album.photos[p].time.strftime(fmt) == value]
        else:
            level, name = value.split(":")
            hits = sorted(own & store.ids_at_place(name, None if kind == "unvisited_place" else level))
            if kind == "unvisited_place":
                assert not store.ids_at_place(name) and en.injected.phrase.removeprefix("in ") != name
        assert hits == [], (en.text, hits)


def test_album1_planner_reads_the_injected_constraint(album1):
    _, stores, queries = album1
    vocabs = {lang: vocabulary_from_catalog(s) for lang, s in stores.items()}
    for q in queries:
        plan = plan_query(q.text, vocabs[q.lang], lang=q.lang)
        kind, value = q.injected.kind, q.injected.value
        if kind in ("place", "unvisited_place"):
            level, name = value.split(":")
            assert [(p.place.level, p.place.name, p.in_album) for p in plan.places] == [
                (level, name, kind == "place")], q
        elif kind == "person":
            assert value.split(":")[1] in plan.person_ids, q
        else:
            y, m = (int(value), None) if kind == "year" else map(int, value.split("-"))
            start = date(y, m or 1, 1)
            assert any(r.start == start and not r.every_year and r.end.year == y and (m is None or r.end.month == m)
                       for r in plan.time_ranges), q


def test_album1_engine_abstains_because_no_photo_matches(album1):
    _, stores, queries = album1
    contexts = {lang: SearchContext(s) for lang, s in stores.items()}
    for q in queries:
        result = search(contexts[q.lang].store, q.text, lang=q.lang, context=contexts[q.lang])
        no_photo = {OutcomeKind.NO_PHOTO_AT_PLACE, OutcomeKind.NO_PHOTO_IN_TIME, OutcomeKind.NO_PHOTO_WITH_PEOPLE,
                    OutcomeKind.EMPTY_TOGETHER}
        assert result.abstained and result.outcome.kind in no_photo, (q.text, result.reason)


def test_album1_file_and_eval(album1, album_dir, tmp_path):
    _, _, queries = album1
    path = tmp_path / "za.json"
    write_zero_answer(path, queries, {"album": "album1", "seed": 1})
    data = json.loads(path.read_text(encoding="utf-8"))
    assert sum(q.get("ground_truth") == [] for q in data["queries"]) == 200
    assert data["provenance"]["seed"] == 1 and data["provenance"]["n_queries"] == 200
    assert read_query_file(path).queries[0].meta["proof"]["count"] == 0

    mixed = evaluate_album(album_dir, "en", query_files=[path])
    assert mixed["n_queries"] == 120 and mixed["n_zero_ground_truth"] == 103 and mixed["n_album_queries"] == 20
    zero = [q for q in mixed["per_query"] if q["n_ground_truth"] == 0]
    rejected_right = sum(q["predicted"] == [] for q in zero)
    rejected_wrong = sum(q["predicted"] == [] for q in mixed["per_query"] if q["n_ground_truth"])
    agg = mixed["aggregate"]
    assert agg["reject_recall"] == pytest.approx(rejected_right / len(zero))
    assert agg["reject_precision"] == pytest.approx(rejected_right / (rejected_right + rejected_wrong))
    assert "zero-answer" in mixed["by_source"]
    assert mixed["by_source"]["zero-answer"]["reject_recall"]["value"] == 1.0

    alone = evaluate_album(album_dir, "cn", query_files=[path], album_queries=False)
    assert alone["n_queries"] == 100 and {q["source"] for q in alone["per_query"]} == {"zero-answer"}
    assert alone["aggregate"]["reject_f1"] == 1.0


# --------------------------------------------------------------------------- the CLI and bad input


def test_cli_zero_answer_and_eval(album_dir, tmp_path, capsys):
    out = tmp_path / "x" / "za.json"
    args = ["album", "zero-answer", "--photobench", str(album_dir), "--n", "5", "--seed", "2", "--out", str(out)]
    assert main([*args, "--lang", "en"]) == 0
    first = out.read_bytes()
    assert main([*args, "--lang", "en"]) == 0 and out.read_bytes() == first  # same seed, same file
    data = json.loads(first)
    assert [q["lang"] for q in data["queries"]] == ["en"] * 5 and data["provenance"]["langs"] == ["en"]
    assert "5 zero-answer queries" in capsys.readouterr().out
    assert main(["album", "eval", "--photobench", str(album_dir), "--lang", "en", "--queries", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "5 queries from" in printed and "Reject-Precision" in printed and "over 25 queries" in printed


@pytest.mark.parametrize(("change", "message"), [
    (("--photobench", "/nonexistent/album"), "is not a PhotoBench album folder"),
    (("--n", "0"), "positive number"),
    (("--n", "-3"), "positive number"),
    (("--lang", "fr"), "unknown language 'fr'"),
])
def test_cli_bad_input_is_one_clear_error(album_dir, tmp_path, capsys, change, message):
    options = {"--photobench": str(album_dir), "--n": "5", "--out": str(tmp_path / "za.json"), "--lang": "en"}
    options[change[0]] = change[1]
    assert main(["album", "zero-answer", *(x for kv in options.items() for x in kv)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1
    assert not (tmp_path / "za.json").exists()


def _write(path, obj):
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def test_eval_refuses_bad_query_files(album_dir, tmp_path):
    ok = {"id": "z1", "text": "photos in Tokyo", "lang": "en", "ground_truth": []}
    with pytest.raises(FinegrainError, match="no query in 'zh'.*only en"):
        evaluate_album(album_dir, "zh", query_files=[_write(tmp_path / "a.json", [ok])])
    with pytest.raises(DataFormatError, match="not used by album album1"):
        evaluate_album(album_dir, "en", query_files=[_write(tmp_path / "b.json", [{**ok, "id": "q000"}])])
    with pytest.raises(DataFormatError, match="'nope.jpg' in query 'z1'"):
        evaluate_album(album_dir, "en", query_files=[_write(tmp_path / "c.json", [{**ok, "ground_truth": ["nope.jpg"]}])])
    with pytest.raises(DataFormatError, match=r"d\.json:\d+: expected a field 'ground_truth'"):
        evaluate_album(album_dir, "en", query_files=[_write(tmp_path / "d.json", {"queries": [
            {k: v for k, v in ok.items() if k != "ground_truth"}]})])
    with pytest.raises(DataFormatError, match="each query id once"):
        read_query_file(_write(tmp_path / "e.json", [ok, ok]))
    with pytest.raises(DataFormatError, match="lang 'en' or 'zh'"):
        read_query_file(_write(tmp_path / "f.json", [{**ok, "lang": "fr"}]))
    with pytest.raises(FinegrainError, match="no query to evaluate"):
        evaluate_album(album_dir, "en", album_queries=False)

