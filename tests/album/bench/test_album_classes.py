"""Query classes: the optional ``Class`` field of a PhotoBench query, classes read off a plan,
and the per-class table of ``finegrain album eval`` (built on a hand-made album, not album1).

Properties protected:
- a ``Class`` field is read, checked (one error naming the file, the query and the bad tag)
  and kept apart from the Source label;
- without it, classes are derived from the plan (place level, people by name / role / shared
  nickname, holiday vs other time, zero) and the table says "derived"; with it, "gold";
- each class row counts its queries and gives routing accuracy, set P/R/F1 over the normal
  queries and the reject rate, computed by hand here;
- results.json holds the table and ``ClassTable`` reads it back (and refuses a damaged one);
- the CLI prints the table.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from finegrain.album.bench.classes import ClassTable, derive_classes, read_class_table
from finegrain.album.bench.evaluation import evaluate_album
from finegrain.album.bench.routing import evaluate_routing
from finegrain.album.engine.plan.records import PersonMatch, PlaceKey, PlaceMatch, Plan, TimeRange
from finegrain.cli.main import main
from finegrain.errors import DataFormatError
from finegrain.io.photobench import read_album

# ---------------------------------------------------------------------- a hand-made album

PHOTOS = {
    # Lily on 3 days, Dad on 2 (one with Lily), nobody on the rest
    "a.jpg": ("2021-10-01T10:00:00", ["1", "2"]),
    "b.jpg": ("2021-10-03T11:00:00", ["2"]),
    "c.jpg": ("2021-10-05T12:00:00", ["2", "3"]),
    "d.jpg": ("2021-05-20T09:00:00", ["3"]),
    "e.jpg": ("2021-05-21T09:00:00", []),
    "f.jpg": ("2021-07-01T09:00:00", []),
}
PEOPLE_EN = {"1": ["me"], "2": ["Lily"], "3": ["Dad"]}
PEOPLE_CN = {"1": ["我"], "2": ["莉莉"], "3": ["爸爸"]}


def _query(en: str, cn: str, source: str, gt: list[str], classes: list[str] | None = None) -> dict:
    q = {"query_en": en, "query_cn": cn, "Source": source, "Location": None, "Time": None, "Person": None,
         "Object": None, "Concept": None, "Genre": None, "ground_truth": gt, "ground_truth_count": len(gt)}
    if classes is not None:
        q["Class"] = classes
    return q


QUERIES = [
    _query("photos of Lily", "莉莉的照片", "F", ["a.jpg", "b.jpg", "c.jpg"], ["people:name"]),
    _query("photos with Dad", "和爸爸的照片", "F", ["c.jpg", "d.jpg"], ["people:role"]),
    _query("National Day photos from 2021", "2021年国庆节的照片", "M", ["a.jpg", "b.jpg", "c.jpg"], ["holiday"]),
    _query("photos from May 2021", "2021年5月的照片", "M", ["d.jpg", "e.jpg"], ["time"]),
    # labelled MF, routed MF; Dad's photos of 2021 are c and d (gold says e too): P 1, R 2/3, F1 0.8
    _query("photos with Dad in 2021", "2021年和爸爸的照片", "MF", ["c.jpg", "d.jpg", "e.jpg"], ["people:role", "time"]),
    # children by a role word the planner's lists lack: read as visual (V), nothing to check it with,
    # so rejected; only the gold class puts it in people:role
    _query("kids at the beach", "孩子们在海边", "VF", ["e.jpg"], ["people:role"]),
    # nobody called Zoe: the engine rejects it, and it is a zero query
    _query("photos with Zoe", "和Zoe的照片", "F", [], ["zero"]),
]


def write_album(root: Path, queries: list[dict]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    meta = {name: {"latitude": None, "longitude": None, "time": t} for name, (t, _) in PHOTOS.items()}
    faces = {name: ids for name, (_, ids) in PHOTOS.items() if ids}
    (root / "metadata.json").write_text(json.dumps(meta), encoding="utf-8")
    for lang, people in (("en", PEOPLE_EN), ("cn", PEOPLE_CN)):
        (root / f"face_info_{lang}.json").write_text(
            json.dumps({"face_id_to_nicknames": people, "image_to_face_ids": faces}, ensure_ascii=False), encoding="utf-8")
    (root / "samples_query.json").write_text(json.dumps(queries, ensure_ascii=False, indent=1), encoding="utf-8")
    return root


# ---------------------------------------------------------------------- the Class field


def test_class_field_is_read_and_optional(tmp_path: Path) -> None:
    queries = [*QUERIES, _query("cat on the sofa", "沙发上的猫", "V", [])]
    album = read_album(write_album(tmp_path / "tiny", queries))
    by_text = {q.text_en: q for q in album.queries}
    assert by_text["photos with Dad in 2021"].classes == ("people:role", "time")
    assert by_text["photos with Zoe"].classes == ("zero",)
    assert by_text["cat on the sofa"].classes is None
    queries_, _ = album.queries_and_qrels("en")
    assert queries_[by_text["photos of Lily"].id].meta["classes"] == ("people:name",)
    assert "classes" not in queries_[by_text["cat on the sofa"].id].meta


@pytest.mark.parametrize(("value", "found"), [
    (["place:town"], "'place:town'"),
    (["holidays"], "'holidays'"),
    ("holiday", "'holiday'"),
    (["time", "time"], "'time'"),
])
def test_a_bad_class_names_file_query_and_value(tmp_path: Path, value, found: str) -> None:
    bad = [*QUERIES[:2], {**QUERIES[2], "Class": value}]
    root = write_album(tmp_path / "bad", bad)
    with pytest.raises(DataFormatError) as e:
        read_album(root)
    text = str(e.value)
    assert "samples_query.json:" in text and "National Day photos from 2021" in text and found in text
    if value == ["holidays"]:
        assert "did you mean 'holiday'" in (e.value.hint or "")


def test_a_bad_class_is_one_error_line_on_the_command_line(tmp_path: Path, capsys) -> None:
    root = write_album(tmp_path / "bad", [{**QUERIES[0], "Class": ["people:nickname"]}])
    assert main(["album", "eval", "--photobench", str(root), "--lang", "en"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "people:nickname" in err and "Traceback" not in err


def test_files_must_agree_on_a_querys_classes(tmp_path: Path) -> None:
    root = write_album(tmp_path / "two", QUERIES[:1])
    (root / "protected_query.json").write_text(json.dumps([{**QUERIES[0], "Class": ["people:role"]}]), encoding="utf-8")
    with pytest.raises(DataFormatError, match="the same 'Class'"):
        read_album(root)


# ---------------------------------------------------------------------- classes read off a plan


def _plan(**kw) -> Plan:
    return Plan("q", "en", kw.pop("source", "M"), **kw)


def test_derived_classes_by_hand() -> None:
    day = date(2021, 10, 1)
    holiday = TimeRange(day, day, "National Day 2021", "holiday national_day 2021: the official days off")
    month = TimeRange(day, day, "May 2021", "month of 2021")
    assert derive_classes(_plan(time_ranges=(holiday,)), zero=False) == ("holiday",)
    assert derive_classes(_plan(time_ranges=(holiday, month)), zero=True) == ("holiday", "time", "zero")
    places = (PlaceMatch("Yantian", PlaceKey("district", "盐田区")), PlaceMatch("Shenzhen", PlaceKey("city", "深圳市")),
              PlaceMatch("Shandong", PlaceKey("province", "山东省")), PlaceMatch("Paris", PlaceKey("city", "Paris")),
              PlaceMatch("France", PlaceKey("country", "法国")), PlaceMatch("Expo Garden", PlaceKey("poi", "Expo Garden")))
    assert derive_classes(_plan(places=places), zero=False) == (
        "place:district", "place:city", "place:province", "place:abroad", "place:venue")
    assert derive_classes(_plan(places=(PlaceMatch("China", PlaceKey("country", "中国")),)), zero=False) == ()
    assert derive_classes(_plan(event_words=("zoo",)), zero=False) == ("place:venue",)
    named = (PersonMatch("Lily", "2"), PersonMatch("me", "1"))
    assert derive_classes(_plan(people=named, source="F"), zero=False) == ("people:name",)
    role = (PersonMatch("Lily", "2"), PersonMatch("dad", "3"))
    assert derive_classes(_plan(people=role, source="F"), zero=False) == ("people:name", "people:role")
    assert derive_classes(_plan(people=(PersonMatch("爸爸", "3"),), source="F"), zero=False) == ("people:role",)
    assert derive_classes(_plan(roles=("friends",), source="F"), zero=False) == ("people:role",)
    shared = (PersonMatch("Bao", "4"), PersonMatch("Bao", "5"))
    assert derive_classes(_plan(people=shared, source="F"), zero=False) == ("people:name", "people:shared")
    assert derive_classes(_plan(people=(PersonMatch("selfie", "1"),), source="F"), zero=False) == ()


# ---------------------------------------------------------------------- the table


@pytest.fixture(scope="module")
def gold(tmp_path_factory) -> tuple[dict, Path]:
    root = write_album(tmp_path_factory.mktemp("gold") / "tiny", QUERIES)
    out = tmp_path_factory.mktemp("gold-out")
    return evaluate_album(root, "en", out), out


def test_gold_table_by_hand(gold) -> None:
    result, out = gold
    table = read_class_table(result["classes"], "results.json")
    assert (table.origin, table.n_gold, table.n_derived) == ("gold", 7, 0)
    assert [r.tag for r in table.rows] == ["people:name", "people:role", "holiday", "time", "zero", "all"]
    # "photos with Dad" (exact), "... Dad in 2021" (P 1, R 2/3, F1 0.8), "kids at the beach" (routed V, rejected)
    role = table.row("people:role")
    assert (role.n_queries, role.n_zero_ground_truth) == (3, 0)
    assert role.routing.value == pytest.approx(2 / 3) and role.routing.n == 3
    assert (role.set_precision.value, role.set_precision.n) == (pytest.approx(1.0), 2)  # over those that returned photos
    assert role.set_recall.value == pytest.approx((1 + 2 / 3 + 0) / 3) and role.set_recall.n == 3
    assert role.set_f1.value == pytest.approx((1 + 0.8 + 0) / 3) and role.set_f1.n == 3
    assert role.reject_rate.value == pytest.approx(1 / 3) and role.reject_rate.n == 3
    holiday = table.row("holiday")  # Oct 1, 3, 5: all inside 2021's official days off (Oct 1-7)
    assert holiday.n_queries == 1 and holiday.set_f1.value == pytest.approx(1.0)
    zero = table.row("zero")  # rejected: no set metric is defined over it
    assert zero.n_zero_ground_truth == 1 and zero.set_f1.n == 0 and zero.set_f1.value is None
    assert zero.reject_rate.value == 1.0
    everything = table.row("all")
    assert everything.n_queries == 7 and everything.routing.n == 7 and everything.set_f1.n == 6
    saved = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert ClassTable.read(saved["classes"], "results.json") == table
    lily = next(q for q in saved["per_query"] if q["query"] == "photos of Lily")
    assert lily["classes"] == ["people:name"] and lily["class_origin"] == "gold"


def test_a_damaged_class_table_is_refused(gold) -> None:
    damaged = json.loads(json.dumps(gold[0]["classes"]))
    damaged["rows"][0]["set_f1"]["value"] = 1.5
    with pytest.raises(DataFormatError, match=r"classes\.rows\.0\.set_f1\.value"):
        read_class_table(damaged, "results.json")


def test_without_class_fields_the_table_is_derived(tmp_path: Path) -> None:
    plain = [{k: v for k, v in q.items() if k != "Class"} for q in QUERIES]
    result = evaluate_album(write_album(tmp_path / "plain", plain), "en")
    table = read_class_table(result["classes"], "results.json")
    assert (table.origin, table.n_gold, table.n_derived) == ("derived", 0, 7)
    assert table.row("people:role").n_queries == 2 and table.row("(none)").n_queries == 1
    per = {q["query"]: q for q in result["per_query"]}
    assert per["photos of Lily"]["classes"] == ["people:name"] and per["photos of Lily"]["class_origin"] == "derived"
    assert per["photos with Dad"]["classes"] == ["people:role"]
    assert per["National Day photos from 2021"]["classes"] == ["holiday"]
    assert per["photos with Dad in 2021"]["classes"] == ["people:role", "time"]
    assert per["photos with Zoe"]["classes"] == ["zero"]
    assert per["kids at the beach"]["classes"] == []


def test_cli_prints_the_class_table(tmp_path: Path, capsys) -> None:
    root = write_album(tmp_path / "tiny", QUERIES)
    assert main(["album", "eval", "--photobench", str(root), "--lang", "en", "--by", "class"]) == 0
    out = capsys.readouterr().out
    assert "by query class" in out and "gold" in out
    for tag in ("people:name", "people:role", "holiday", "zero"):
        assert tag in out


# ---------------------------------------------------------------------- routing by class


def test_routing_report_by_class(tmp_path: Path, capsys) -> None:
    plain = [{k: v for k, v in q.items() if k != "Class"} for q in QUERIES[:2]]
    root = write_album(tmp_path / "mixed", [*plain, *QUERIES[2:]])
    report = evaluate_routing(read_album(root), "en")
    assert report.class_origin == "mixed"
    # derived: Lily (name), Dad (role); gold: the rest. "kids at the beach" (VF) is routed V
    assert report.by_class["people:role"] == (2, 3) and report.by_class["people:name"] == (1, 1)
    assert report.by_class["holiday"] == (1, 1) and report.by_class["zero"] == (1, 1)
    assert report.to_dict()["by_class"]["people:role"] == {"correct": 2, "n": 3, "accuracy": pytest.approx(2 / 3)}
    assert main(["album", "eval-routing", "--photobench", str(root), "--lang", "en"]) == 0
    assert "by query class (mixed): people:name 1.000 (1/1); people:role 0.667 (2/3)" in capsys.readouterr().out
