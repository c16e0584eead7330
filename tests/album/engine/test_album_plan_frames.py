"""Request frames are not visual: the words that ask for photos ("anything I snapped in", "pictures
featuring", "in the same picture", "那儿的照片", "出镜", "看一看") leave no visual constraint, while a
content word beside them still does. Synthetic queries on a hand-made vocabulary.

Properties protected:
- a metadata or face query phrased as a request (pronouns, quantifiers, request verbs, a stay
  somewhere, "in them", "in the same picture"; Chinese deixis, browse verbs, 出镜, 同框, 全年) routes
  M / F / MF, not VM / VF / VMF;
- a query with one content word beside such words stays visual ("the same outfit"), and its
  visual text keeps its numerals and negations ("two dogs", "no cars");
- a Chinese content word keeps the stop characters inside it (月饼, 圆月, 和服 are not 月, 和);
- what 有/带 introduces ("有夕阳的照片": photos that have a sunset) is seen, not an unknown place;
- "2022's first half" is a year half, not visual text.
"""

from __future__ import annotations

from datetime import date

import pytest

from finegrain.album.engine.plan import plan_query
from finegrain.album.engine.plan.frames import blank_closed_words, blank_request_words
from finegrain.album.engine.plan.records import PlaceKey
from finegrain.album.engine.plan.vocabulary import AlbumVocabulary
from finegrain.errors import MissingDependencyError
from finegrain.train.rules import spacy_english

pytest.importorskip("jieba", reason="Chinese words are read with jieba")


def _spacy_ready() -> bool:
    try:
        spacy_english()
    except (MissingDependencyError, ImportError, OSError):
        return False
    return True


needs_spacy = pytest.mark.skipif(not _spacy_ready(), reason="closed-class English words are read with spaCy")


@pytest.fixture(scope="module")
def vocab() -> AlbumVocabulary:
    places = {"lyon": PlaceKey("city", "Lyon"), "里昂": PlaceKey("city", "Lyon"),
              "suzhou": PlaceKey("city", "苏州市"), "苏州": PlaceKey("city", "苏州市"), "苏州市": PlaceKey("city", "苏州市"),
              "gusu district": PlaceKey("district", "姑苏区"), "姑苏区": PlaceKey("district", "姑苏区")}
    return AlbumVocabulary.build(people={"1": ["me"], "2": ["Marta", "玛尔塔"], "3": ["Orrin", "欧林"]},
                                 places=places, latest_date=date(2024, 6, 1))


@needs_spacy
@pytest.mark.parametrize(("query", "source"), [
    ("anything I snapped in Lyon", "M"),
    ("whatever we photographed in Gusu District", "M"),
    ("all of my snapshots from March 2022", "M"),
    ("memories from our stay in Suzhou", "M"),
    ("stuff I have from Lyon", "M"),
    ("looking back at March 2022", "M"),
    ("pictures featuring Marta", "F"),
    ("snaps with Orrin in them", "F"),
    ("Marta and Orrin in the same picture", "F"),
    ("Orrin during our stay in Lyon", "MF"),
])
def test_an_english_request_frame_is_not_visual(vocab, query, source):
    plan = plan_query(query, vocab, lang="en")
    assert plan.source == source, plan.explain()
    assert plan.visual_text == ""


@pytest.mark.parametrize(("query", "source"), [
    ("苏州那儿的照片", "M"),
    ("看一看2022年3月的照片", "M"),
    ("2022这一整年的全部照片", "M"),
    ("姑苏区一带留下的相片", "M"),
    ("在里昂那会儿拍的东西", "M"),
    ("欧林出镜的相片", "F"),
    ("包括玛尔塔的相片", "F"),
    ("在里昂那段时间欧林的照片", "MF"),
])
def test_a_chinese_request_frame_is_not_visual(vocab, query, source):
    plan = plan_query(query, vocab, lang="zh")
    assert plan.source == source, plan.explain()
    assert plan.visual_text == ""


@needs_spacy
@pytest.mark.parametrize(("query", "lang", "source", "visual"), [
    ("Marta in the same outfit as Orrin", "en", "VF", "outfit"),
    ("two dogs in Lyon", "en", "VM", "two dogs"),
    ("Lyon streets with no cars", "en", "VM", "streets no cars"),
    ("everything with a red umbrella", "en", "V", "red umbrella"),
    ("玛尔塔和月饼", "zh", "VF", "月饼"),
    ("苏州的圆月", "zh", "VM", "圆月"),
    ("穿和服的欧林", "zh", "VF", "穿和服"),
    ("有夕阳的照片", "zh", "V", "夕阳"),  # what 有/带 introduces is seen, not a place jieba tags ns
    ("带沙堡的照片", "zh", "V", "带沙堡"),
])
def test_content_words_beside_a_frame_stay_visual(vocab, query, lang, source, visual):
    plan = plan_query(query, vocab, lang=lang)
    assert plan.source == source, plan.explain()
    assert visual in plan.visual_text


def test_a_year_half_after_its_year(vocab):
    plan = plan_query("my pictures in 2022's second half", vocab, lang="en")
    assert plan.source == "M", plan.explain()
    ((start, end),) = [(r.start, r.end) for r in plan.time_ranges]
    assert (start, end) == (date(2022, 7, 1), date(2022, 12, 31))


@needs_spacy
def test_blanking_keeps_the_residue_aligned():
    text = "whatever Orrin shot"
    residue = text.replace("Orrin", " " * 5)
    assert blank_request_words(residue, text, "en") == " " * 9 + " " * 5 + " shot"
    assert blank_closed_words(residue, text, "en").strip() == "shot"
    with pytest.raises(ValueError):
        blank_request_words("short", text, "en")
