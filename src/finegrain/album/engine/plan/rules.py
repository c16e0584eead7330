"""The rule-based query planner: ``plan_query(text, vocab) -> Plan``.

Rules, in order; each consumes the text it matched so later rules and the visual
residue do not see it again:

1. **time** (``time_rules.find_times``): dates, festivals, seasons, months, years,
   relative words against the album's latest date, weekends, parts of the day;
2. **people**: the album's nicknames (``vocab.people``, both languages, spacing
   variants such as "Haoge" for "Hao Ge"), "me"/"myself"/"我"/"自己" for the owner, and
   "selfie"/"自拍" (a selfie shows the owner); several people = all must be present. A
   nickname that is a kinship word ("Dad", "wife", "宝宝") is the person in any case and
   position ("dad", "my dad", "Dad's"; "我老公" is "my husband", not the owner); a nickname
   several people share is an ambiguous any-of constraint (``Plan.people_any``, reason
   ``shared_nickname``), reported in the plan, never one of them picked;
   2b. **role words** (:mod:`finegrain.album.engine.plan.people`: "kids", "baby", "parents",
   "my wife", "孩子", "爸妈", "一家人", ...): any person of the album known in that role, by a
   nickname or the user's statement, is an any-of face constraint (reason ``role``); with
   nobody known in the role the plan says so (``no_one_in_role``) and the word stays visual,
   or, for a word that names one relative ("mom", "sister", "老公"), a social role;
3. **social roles** not in the vocabulary ("friends", "best friend", "闺蜜", "同学", ...):
   they need the face/social graph, so the query needs faces (F), with no fixed person;
4. **places**: the album's place aliases (``vocab.places``, any admin level), then known
   places without photos (``vocab.known_places``), then named points of interest
   (a capitalised name + "Mountain", "Lake", "Station", ...; a Chinese place-name token
   + 山/湖/站/路/...), then venue words whose answer is a GPS position (airport, zoo,
   museum, hotel, 机场, 动物园, ...); a venue is also a visible scene, so a query of a
   venue alone is visual as well. A named sight ("Yellow Crane Tower", "Pavilion of
   Prince Teng", "at Sagrada Familia", 黄鹤楼, 清水寺; :mod:`~finegrain.album.engine.plan.landmarks`)
   is kept like a venue no gazetteer lists (M+V); an address or area ("Xinhua Road",
   东华门) is a position (M); a sight's name that spells an album place is that place;
   4b. **unknown mentions**: a name in a person frame ("with Zoe", "me and Zoe", "Zoe's",
   "和张伟的合照") or a place frame ("in Paris", "photos in Yantain", "Changning District",
   "在巴黎的照片") that none of the rules above resolved becomes ``Plan.unknown`` with the
   vocabulary's did-you-mean; it still counts as a face (F) or metadata (M) constraint, and
   the engine answers "no such person/place" instead of searching;
5. **trip and capture words** (trip, travel, boarding, landing, 出发, 旅行, camera model
   words): these are answered from time and place traces, so they count as metadata (M);
6. **event words** (birthday, party, wedding, ..., and the album's own ``vocab.event_words``)
   are kept for the engine; they count as visual unless a time or place also appears;
7. the **visual residue** is what is left after removing the matched text, function
   words ("photos", "taken", "of", "的照片", "拍的", ...) and the words that frame the
   request ("everything", "what I shot", "featuring", "in the same picture", "那边", "翻翻",
   "出镜": :mod:`~finegrain.album.engine.plan.frames`); it is visual (V) when it still holds a
   content word (by part of speech: a pronoun, numeral or particle alone is none). A Chinese
   content word keeps the stop characters inside it (月饼, 和服).

The source type is V if the residue is visual (or a venue was named), M if any time
(other than a part of the day or a season alone, which are visible), place, venue,
trip word or unknown place matched, F if any person, role, selfie or unknown person
matched, or a role word or shared nickname names someone of the album (``V`` when nothing
matched).

Nothing here names album1's people, places or years: people and places come from the
album's vocabulary (its face file and its photos' reverse-geocoded places), known places
without photos from the general gazetteer, relative times and two-digit years from the
album's latest date. The word lists below (roles, venues, trip and event words) are
general words, though several were first met in album1's even-indexed queries ("toll
booth", "卡片机", "sports day"): they cover album1's phrasing better than another album's.
``benchmarks/album_generalisation.py`` checks the planner on generated albums unlike album1
(:mod:`finegrain.album.bench.generated`): other people and nickname styles, cities at home and
abroad, years and holidays, worded from template banks a third of which only held-out albums use.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from typing import Any

from finegrain.album.engine.plan.frames import blank_closed_words, blank_request_words, chinese_content_spans
from finegrain.album.engine.plan.fuzzy import nearest
from finegrain.album.engine.plan.holidays import DEFAULT_HOLIDAY_READING
from finegrain.album.engine.plan.landmarks import (
    LANDMARK_HEADS_EN,
    head_first_spans_en,
    is_landmark,
    landmark_spans_zh,
    locality_head,
    lone_name_en,
    pinyin_shaped,
    place_spellings,
)
from finegrain.album.engine.plan.people import ROLE_WORDS, role_word
from finegrain.album.engine.plan.records import (
    AnyOfPeople,
    ImpossibleTime,
    PeopleReason,
    PersonMatch,
    PlaceKey,
    PlaceMatch,
    Plan,
    TimeRange,
    UnknownMention,
    source_type,
)
from finegrain.album.engine.plan.time_rules import MODIFIER_RULE, NAME_RULE, find_times
from finegrain.album.engine.plan.venues import REASON as VENUE_REASON
from finegrain.album.engine.plan.venues import framed, venue_spans_en, venue_spans_zh
from finegrain.album.engine.plan.vocabulary import AlbumVocabulary
from finegrain.album.engine.profile.cities import area_aliases
from finegrain.album.engine.profile.places import chinese_admin_names
from finegrain.errors import FinegrainError, MissingDependencyError
from finegrain.text.lang import CJK, Lang, detect_lang, has_cjk, parse_lang
from finegrain.text.segment import load_jieba, pos_spans, pos_words
from finegrain.train.rules import spacy_english

_CJK = CJK  # the one definition of a Chinese character (finegrain.text.lang)
_LATIN = re.compile(r"[A-Za-z]")

# social roles that are not kin (kinship and role words are the tables of plan/people.py)
ROLES_EN = (
    "best friends", "best friend", "bestie", "besties", "friends", "friend", "classmates", "classmate", "roommates",
    "roommate", "colleagues", "colleague", "girls", "guys", "buddies", "buddy", "teammates",
)
ROLES_ZH = (
    "闺蜜", "好朋友", "朋友", "同学", "室友", "舍友", "同事", "哥们", "男生", "女生", "俩人", "两人", "我们", "大家", "队友",
    "搭子",
)
SELFIE_EN = ("selfies", "selfie", "self-portrait")
SELFIE_ZH = ("自拍",)

POI_SUFFIX_EN = tuple(dict.fromkeys((
    "Mountain", "Mountains", "Lake", "Spring", "Road", "Street", "Bay", "Station", "Airport", "Temple", "Park",
    "Bridge", "Square", "Hall", "Tower", "Gate", "Island", "Beach", "Village", "Town", "Pagoda", "River",
    "Museum", "Studios", "Memorial", "Center", "Centre", "Zoo",
    # every sight word names a point of interest too ("Kuanzhai Alley", "Fushimi Inari Shrine")
    *(head.title() for head in LANDMARK_HEADS_EN),
)))
POI_SUFFIX_ZH = ("山", "湖", "泉", "路", "街", "湾", "站", "机场", "寺", "公园", "桥", "塔", "广场", "宫", "岛", "镇",
                 "村", "门", "纪念馆", "博物馆", "古城", "景区")
VENUES_EN = (
    "airport", "train station", "railway station", "subway station", "metro station", "high-speed rail",
    "high-speed train", "bullet train", "zoo", "museum", "hotel", "boarding gate", "departure lounge",
    "airport lounge", "heritage market", "library", "memorial hall", "toll booth", "highway service area",
    "subway", "metro", "school field", "sports day", "in the car",
)
VENUES_ZH = (
    "机场", "火车站", "高铁站", "高铁", "地铁", "动物园", "博物馆", "酒店", "宾馆", "候机厅", "登机口", "图书馆",
    "纪念馆", "收费站", "服务区", "集市", "运动会", "操场", "绿皮火车", "车上", "车里",
)
TRIP_EN = (
    "trip", "trips", "travel", "traveling", "travelling", "journey", "tour", "vacation", "visit", "visiting",
    "departing", "departure", "arriving", "arrival", "landing", "boarding", "passing", "on the way", "commute",
    "compact camera", "camera",
)
TRIP_ZH = ("之行", "旅行", "旅游", "游览", "出发", "到达", "抵达", "落地", "下飞机", "登机", "路过", "经过", "途中", "路上",
           "出差", "参观", "卡片机", "相机", "探访", "打卡", "从")
EVENT_EN = ("birthday", "party", "wedding", "graduation", "concert", "dinner party", "gathering", "picnic",
            "festival", "ceremony", "military training", "exhibition", "show")
EVENT_ZH = ("生日", "派对", "聚会", "婚礼", "毕业", "演唱会", "聚餐", "野餐", "典礼", "军训", "展览", "演出", "开幕式")

STOP_EN = frozenset(
    """a an the of in on at to from with and or by for during around near into onto out over under up down
    photo photos picture pictures pic pics image images shot shots shoot taken take took snapped captured
    including include includes together all some my our me i his her their this that these those is are was
    were be been it its as when where while s every any group celebrating celebrate documenting record
    recording before after time day days showing shows featuring appearing them same""".split()
)
STOP_ZH = ("合照", "合影", "的照片", "的相片", "的图片", "照片", "相片", "图片", "拍的", "拍下的", "拍摄的", "拍照", "拍了", "在内",
           "出镜", "包含",
           "有", "在", "和", "跟", "与", "同", "的", "了", "拍", "一起", "里", "时", "时候", "期间", "那天", "的时候",
           "之", "、", "，", ",", "。", "年", "月", "日", "号", "张", "些", "去", "过", "中", "上", "下", "前", "后")


@dataclass
class _Text:
    """The query with a mask of consumed characters."""

    text: str

    def __post_init__(self) -> None:
        self.taken = [False] * len(self.text)

    def free(self, s: int, e: int) -> bool:
        return not any(self.taken[s:e])

    def take(self, s: int, e: int) -> None:
        for i in range(s, e):
            self.taken[i] = True

    def release(self, s: int, e: int) -> None:
        for i in range(s, e):
            self.taken[i] = False

    def residue(self) -> str:
        return "".join(c if not t else " " for c, t in zip(self.text, self.taken))


def _lang(lang: str | None, text: str) -> Lang:
    """``lang`` parsed, or detected from ``text`` when None (any Chinese character makes it ``zh``)."""
    if lang is None:
        return detect_lang(text)
    try:
        return parse_lang(lang)
    except FinegrainError:
        raise FinegrainError(f"unknown query language {lang!r}", "use 'en', 'zh', or leave it out to detect") from None


_FROM_TO_EN = re.compile(r"\b(from)\s+[A-Z][\w' ]*?\s+(to)\s+[A-Z]")
_FROM_TO_ZH = re.compile(r"(从)?[\u4e00-\u9fff]{2,4}(到|去|至)[\u4e00-\u9fff]{2}(?=的|$|火车|高铁|飞机|航班)")
_ZH_OWNER = {"我": re.compile(r"(?<!自)我(?![们])")}


@lru_cache(maxsize=16384)
def _alias_pattern(alias: str, lang: str) -> re.Pattern[str]:
    """The pattern of one vocabulary word (compiled once: an album's vocabulary has more words
    than the ``re`` module's own cache holds)."""
    if alias in _ZH_OWNER:
        return _ZH_OWNER[alias]
    if _CJK.search(alias):
        return re.compile(re.escape(alias))
    parts = [re.escape(p) for p in re.split(r"[\s\-]+", alias) if p]
    body = r"[\s\-]?".join(parts)
    # a Latin name inside Chinese text ("Weiwei的照片") borders Chinese characters, which are \w
    edge = r"[A-Za-z0-9']" if lang == "zh" else r"[\w']"
    return re.compile(rf"(?<!{edge}){body}(?:'s|(?<=s)')?(?!{edge})", re.IGNORECASE)  # "Tom's", "the kids'"


@lru_cache(maxsize=16384)
def _probe(alias: str) -> str | None:
    """A substring every match of ``alias``'s pattern contains (its first part, lower-cased),
    or None when there is none to rely on (non-ASCII letters: case folding may differ)."""
    if alias in _ZH_OWNER:
        return None
    if _CJK.search(alias):
        return alias
    first = next((p for p in re.split(r"[\s\-]+", alias) if p), "")
    return first.lower() if first.isascii() and first else None


def _candidates(words: Iterable[str], lang: str, latin: bool) -> tuple[tuple[str, str | None], ...]:
    """The ``words`` that can match in a query of ``lang`` (English: non-Chinese words; Chinese:
    Chinese words, and Latin words of 3+ letters when ``latin``), longest first (ties by text),
    each with its :func:`_probe`; computed once per word list, language and ``latin``."""
    return _script_words(tuple(words), lang, latin)


@lru_cache(maxsize=256)
def _script_words(words: tuple[str, ...], lang: str, latin: bool) -> tuple[tuple[str, str | None], ...]:
    out = []
    for w in sorted(set(words), key=lambda w: (-len(w), w)):
        cjk = _CJK.search(w) is not None
        if lang == "en" and cjk:
            continue
        if lang == "zh" and not cjk and not (latin and len(w) >= 3):
            continue
        out.append((w, _probe(w)))
    return tuple(out)


def _find_words(
    t: _Text, words: Iterable[str], lang: str, keep: Callable[[str, int, int], bool] | None = None,
    *, cross_script: bool = False,
) -> list[tuple[str, int, int]]:
    """Longest-first matches of ``words`` in the free text: (word, start, end); ``keep(word,
    start, end)`` may turn a match down (it is then left free). ``cross_script``: Latin words of
    3+ letters also match in a Chinese query that has Latin letters (names: "Weiwei的照片")."""
    out = []
    latin = cross_script and lang == "zh" and _LATIN.search(t.text) is not None
    lower = t.text.lower()
    for w, probe in _candidates(words, lang, latin):
        if probe is not None and probe not in lower:  # cannot occur: skip the regex
            continue
        for m in _alias_pattern(w, lang).finditer(t.text):
            if t.free(*m.span()) and (keep is None or keep(w, *m.span())):
                t.take(*m.span())
                out.append((w, *m.span()))
    out.sort(key=lambda x: x[1])
    return out


_PERSON_CONTEXT_EN = re.compile(r"(?:\bwith|\band|&|\bof|\bby)\s*$", re.IGNORECASE)
_PERSON_CONTEXT_ZH = re.compile(r"(?:和|跟|与|同|给|、)$")
_MY_EN = re.compile(r"\b(?:my|our)\s+$", re.IGNORECASE)  # "my sister": a kinship nickname
_LIST_COMMA_EN = re.compile(r",\s*$")
_SUBJECT_EN = re.compile(r"\s+(?:and|&)\s+|\s+[a-z]+ing\b|'s\b")  # "May and Yaoge", "May barging in", "May's"


class _WordBounds:
    """``keep`` for Chinese word lists: a match must start and end on jieba word boundaries
    (a list word inside a longer word or across two words is not that word); every match
    counts when jieba is missing."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._bounds: set[int] | None = None

    def __call__(self, _word: str, s: int, e: int) -> bool:
        if self._bounds is None:
            try:
                words = [w for w, _ in pos_words(self.text)]
            except MissingDependencyError:
                return True
            pos, bounds = 0, {0}
            for w in words:
                pos += len(w)
                bounds.add(pos)
            self._bounds = bounds
        return s in self._bounds and e in self._bounds


class _EnglishNames:
    """Whether a nickname match in an English query is the person. A nickname that is also an
    English word ("Rose", "Sky", "Joy", "Sister") is the person when written with a capital,
    after a person word ("with rose", "rose's", "my sister"), or when spaCy's tagger reads the lower-case word as a
    proper noun ("xiaotong at the beach"); "a pink rose in the garden" is a flower. Without
    spaCy every match counts."""

    def __init__(self, text: str, vocab: AlbumVocabulary) -> None:
        self.text, self.owner = text, vocab.owner_id
        self.vocab = vocab
        self._doc: Any = None

    def __call__(self, alias: str, s: int, e: int) -> bool:
        matched = self.text[s:e]
        if self.vocab.people.get(alias) == self.owner and alias in ("me", "myself") or not matched.islower():
            return True
        if role_word(alias) is not None:  # "dad", "my wife": a kinship nickname is the person anywhere
            return True
        before = self.text[:s]
        if _PERSON_CONTEXT_EN.search(before) or _MY_EN.search(before) or self.text[e:e + 2] == "'s":
            return True
        doc = self._tagged()
        if doc is None:
            return True
        tags = [tok.pos_ for tok in doc if tok.idx < e and tok.idx + len(tok) > s]
        return not tags or "PROPN" in tags

    def _tagged(self) -> Any:
        if self._doc is None:
            try:
                self._doc = spacy_english()(self.text)
            except (MissingDependencyError, ImportError, OSError):
                self._doc = False
        return self._doc or None


def _name_spans(text: str, aliases: Iterable[str], lang: str) -> list[tuple[int, int]]:
    """Where the album's nicknames occur in ``text`` (overlaps allowed)."""
    return [m.span() for a in aliases for m in _alias_pattern(a, lang).finditer(text)]


def _yields_to_name(text: str, span: tuple[int, int], names: list[tuple[int, int]], lang: str) -> bool:
    """A time match at ``span`` is part of a name when a longer nickname covers it ("Jun" in
    "Li Jun"), or when a nickname spells exactly it and a person is expected there: after
    "with"/"and"/"of"/"和"/"、" ("with May"), after a comma that follows another name
    ("Xiaotong, May and me"; not "in the kitchen, May"), or opening the query as its subject
    ("May and Yaoge ...", "May barging into my room", "May's birthday")."""
    s, e = span
    for ns, ne in names:
        if ns <= s and e <= ne and (ne - ns) > (e - s):
            return True
        if (ns, ne) != (s, e):
            continue
        before = text[:s]
        if lang == "zh":
            if _PERSON_CONTEXT_ZH.search(before):
                return True
            continue
        if _PERSON_CONTEXT_EN.search(before) or text[e:e + 2] == "'s":
            return True
        comma = _LIST_COMMA_EN.search(before)
        if comma is not None:
            head = before[: comma.start()].rstrip()
            if any(oe == len(head) for os, oe in names if (os, oe) != (ns, ne)) or head.lower().endswith(" me"):
                return True
        if not before.strip() and _SUBJECT_EN.match(text, e):
            return True
    return False


def plan_query(text: str, vocab: AlbumVocabulary, *, lang: str | None = None,
               holiday: str = DEFAULT_HOLIDAY_READING) -> Plan:
    """Plan ``text`` against the album vocabulary ``vocab`` (language detected when None).

    ``holiday``: a statutory holiday with a year ("National Day 2021") means its official days
    off (``"span"``, the default) or its own day (``"day"``); :mod:`~finegrain.album.engine.plan.holidays`."""
    if not isinstance(text, str) or not text.strip():
        raise FinegrainError(f"cannot plan the query {text!r}", "give a non-empty query text")
    lang = _lang(lang, text)
    t = _Text(text)
    steps: list[tuple[str, str]] = []

    # 1. time; a festival word that modifies a noun ("Christmas tree", "圣诞装饰") stays visual, and
    # a month word inside a nickname ("Jun" in "Li Jun", "with May") is left to the people rule
    # the query's script, and Latin names of 3+ letters in a Chinese query that has Latin letters ("Weiwei的照片")
    mixed = lang == "zh" and _LATIN.search(text) is not None
    aliases = {a: pid for a, pid in vocab.people.items()
               if (lang == "zh") == bool(_CJK.search(a)) or (mixed and len(a) >= 3 and not _CJK.search(a))}
    names = _name_spans(text, aliases, lang)
    # a season or month word inside a capitalised venue or sight name ("Summer Palace", "May Fourth
    # Square", "Spring Lake Park") is part of the name
    venue_names = [(s, e) for s, e in venue_spans_en(text, [True] * len(text)) if text[s].isupper()] if lang == "en" else []
    if lang == "en":
        venue_names += [m.span(1) for m in _POI_EN.finditer(text) if is_landmark(m.group(1), lang)]
        venue_names += head_first_spans_en(text, [True] * len(text))
    ranges, tmatches = find_times(text, lang, vocab.latest_date, modifier=lambda end: _modifies_noun(text, end, lang),
                                  is_name=lambda span: _yields_to_name(text, span, names, lang)
                                  or any(s <= span[0] and span[1] <= e for s, e in venue_names), holiday=holiday)
    impossible: list[ImpossibleTime] = []
    for m in tmatches:
        if m.rule == NAME_RULE:
            continue
        if m.rule == MODIFIER_RULE:
            steps.append((f"time: {m.rule}", m.text))
            continue
        t.take(*m.span)
        if m.impossible is not None:
            impossible.append(ImpossibleTime(m.text, m.impossible))
            steps.append((f"time: no such date ({m.impossible}); no photo can match", m.text))
            continue
        steps.append((f"time: {m.rule}", m.text))
    if vocab.now_note and any(m.rule not in (NAME_RULE, MODIFIER_RULE) for m in tmatches):
        steps.append(("time: 'now' of relative dates", vocab.now_note))
    hard_times = [r for r in ranges if not _soft_time(r)]
    for r in ranges:
        if _soft_time(r):
            steps.append(("time: part of day or season alone (visible; a soft constraint)", r.text))

    # a Chinese list word must be whole jieba words: 车上 is not in 火车上 or 开车上高速
    words_zh = _WordBounds(text) if lang == "zh" else None

    # 2. people (album nicknames, owner words, selfie); "我" before a kin word is "my"
    people: list[PersonMatch] = []
    groups: list[AnyOfPeople] = []
    kin_spans = _my_kin(t, lang, aliases, steps)
    as_name = None if lang == "zh" else _EnglishNames(text, vocab)
    for w, s, e in _find_words(t, aliases, lang, keep=as_name, cross_script=True):
        if w in vocab.shared:
            ids = vocab.shared[w]
            groups.append(AnyOfPeople(text[s:e], PeopleReason.SHARED_NICKNAME, ids, _names(vocab, ids)))
            steps.append((f"person: {groups[-1].describe()}", text[s:e]))
            continue
        people.append(PersonMatch(text[s:e], aliases[w]))
        rule = "person: owner" if aliases[w] == vocab.owner_id else f"person: nickname of {aliases[w]}"
        steps.append((rule, text[s:e]))
    selfie = False
    for _w, s, e in _find_words(t, SELFIE_EN if lang == "en" else SELFIE_ZH, lang):
        selfie = True
        steps.append(("person: a selfie shows the owner", text[s:e]))
        if vocab.owner_id not in {p.person_id for p in people}:
            people.append(PersonMatch(text[s:e], vocab.owner_id))

    # 2b. role and kinship words: any person of the album in that role
    roles = []
    for w, s, e in sorted([*_find_words(t, ROLE_WORDS[lang], lang, keep=words_zh), *kin_spans], key=lambda m: m[1]):
        entry = role_word(w)
        if entry is None:
            continue
        ids = vocab.people_in_role(entry.role)
        noun = entry.role.noun()
        if ids:
            groups.append(AnyOfPeople(text[s:e], PeopleReason.ROLE, ids, _names(vocab, ids), noun))
            steps.append((f"person: {groups[-1].describe()}", text[s:e]))
        elif entry.visual:
            t.taken[s:e] = [False] * (e - s)  # left to the visual residue
            groups.append(AnyOfPeople(text[s:e], PeopleReason.NO_ONE_IN_ROLE, role=noun))
            steps.append((f"person: {groups[-1].describe()} (the word stays visual)", text[s:e]))
        else:
            roles.append(text[s:e])
            steps.append((f"person: social role (needs the face graph); no person in the album is known as a {noun}",
                          text[s:e]))

    # 3. social roles not in the vocabulary
    for _w, s, e in _find_words(t, ROLES_EN if lang == "en" else ROLES_ZH, lang):
        roles.append(text[s:e])
        steps.append(("person: social role (needs the face graph)", text[s:e]))

    # 4. places: named points of interest first ("Shenzhen Bay" before "Shenzhen"), then venues
    # below the district that no gazetteer lists ("the Apple Store", "紫金港校区", "故宫")
    places: list[PlaceMatch] = []
    skip = {*vocab.places, *vocab.known_places}
    venues_unlisted: list[tuple[int, int]] = []
    typos: list[UnknownMention] = []
    for s, e in _poi_spans(t, lang, skip=skip):
        # a sight ("Yellow Crane Tower", "翠湖公园") is seen as well as located: M+V like a venue;
        # an address or area ("Xinhua Road", "东华门") is a position; a name the album knows is its
        # place; a sight's name near an album place's ("青杉湖" for 青山湖) is left to the did-you-mean
        match, rule = _landmark_or_place(text[s:e], lang, vocab)
        if rule == VENUE_REASON and _typo_of_album(vocab, text[s:e], lang):
            near = _place_typo(vocab, text[s:e], lang)
            if near is None:  # near a person's name: the person rules below decide
                t.release(s, e)
            else:
                typos.append(UnknownMention("place", text[s:e], near))
            continue
        places.append(match)
        if rule == VENUE_REASON:
            venues_unlisted.append((s, e))
        steps.append((rule.format(text[s:e]), text[s:e]))
    free = [not x for x in t.taken]
    named = venue_spans_en(text, free) if lang == "en" else venue_spans_zh(text, free, skip | set(VENUES_ZH))
    for s, e in named:
        free[s:e] = [False] * (e - s)
    # sights named by their own words ("Pavilion of Prince Teng", "鼓浪屿", "清水寺") that are no
    # place of the album or the gazetteer and no typo of one (the did-you-mean below answers those)
    sights = head_first_spans_en(text, free) if lang == "en" else landmark_spans_zh(
        text, free, skip | set(VENUES_ZH) | chinese_admin_names())
    named += [(s, e) for s, e in sights if not _typo_of_album(vocab, text[s:e], lang)]
    for s, e in sorted(named):
        t.take(s, e)
        venues_unlisted.append((s, e))
        places.append(PlaceMatch(text[s:e], PlaceKey("poi", text[s:e]), False))
        steps.append((VENUE_REASON.format(text[s:e]), text[s:e]))
    for w, s, e in _find_words(t, vocab.places, lang, cross_script=True):
        places.append(PlaceMatch(text[s:e], vocab.places[w], True))
        steps.append((f"place: album {vocab.places[w].level}", text[s:e]))
    for w, s, e in _find_words(t, vocab.known_places, lang, cross_script=True):
        places.append(PlaceMatch(text[s:e], vocab.known_places[w], False))
        steps.append((f"place: known {vocab.known_places[w].level} without photos", text[s:e]))
    venues = []
    for _w, s, e in _find_words(t, VENUES_EN if lang == "en" else VENUES_ZH, lang, keep=words_zh):
        venues.append(text[s:e])
        steps.append(("place: venue (answered by GPS position)", text[s:e]))

    # 4b. a name in a person or place frame that none of the rules above resolved; a venue frame
    # ("at Starbucks", "在宜家拍的") with no album place near the name is a venue no gazetteer lists
    unknown = typos
    for u, (s, e) in _unknown_mentions(t, lang, vocab, time_spans=[m.span for m in tmatches]):
        if u.kind == "place" and u.suggestion is None and _venue_frame(text, s, e, lang):
            # a bare name in a venue frame: a sight or venue ("at Sagrada Familia", "在星巴克拍的") is
            # seen as well as located (M+V); a Chinese locality ("at Chongwenmen", "东华门") is an area
            # the gazetteer does not list, a place constraint kept as text, not a visual one
            places.append(PlaceMatch(u.text, PlaceKey("poi", u.text), False))
            steps.append((VENUE_REASON.format(u.text), u.text))
            if _sight_by_name(u.text, lang):
                venues_unlisted.append((s, e))
            continue
        unknown.append(u)
    # a name alone ("Sagrada Familia", "the Kiyomizu-dera photos"): a sight, when it is no pinyin
    # (a Chinese place or person) and no typo of the album's people or places
    lone = lone_name_en(text, [not x for x in t.taken]) if lang == "en" else None
    if lone is not None and not _typo_of_album(vocab, text[slice(*lone)], lang):
        rest = t.residue()[: lone[0]] + " " * (lone[1] - lone[0]) + t.residue()[lone[1]:]
        if not _visual_residue(rest, lang):
            t.take(*lone)
            venues_unlisted.append(lone)
            places.append(PlaceMatch(text[slice(*lone)], PlaceKey("poi", text[slice(*lone)]), False))
            steps.append((VENUE_REASON.format(text[slice(*lone)]), text[slice(*lone)]))
    for u in unknown:
        hint = f"; did you mean {u.suggestion!r}?" if u.suggestion else ""
        steps.append((f"{u.kind}: not in the album{hint}", u.text))

    # 5. trip and capture words
    trips = []
    for route in (_FROM_TO_EN if lang == "en" else _FROM_TO_ZH).finditer(text):
        for g in (1, 2):
            if t.free(*route.span(g)):
                t.take(*route.span(g))
        trips.append(route.group(0))
        steps.append(("metadata: a route 'from X to Y'", route.group(0)))
    for _w, s, e in _find_words(t, TRIP_EN if lang == "en" else TRIP_ZH, lang, keep=words_zh):
        trips.append(text[s:e])
        steps.append(("metadata: trip or capture word", text[s:e]))

    # 6. event words (not consumed: they also describe what is seen)
    events = []
    probe = _Text(text)
    probe.taken = list(t.taken)
    for _w, s, e in _find_words(probe, (*(EVENT_EN if lang == "en" else EVENT_ZH), *vocab.event_words), lang,
                                keep=words_zh):
        events.append(text[s:e])
        steps.append(("event word", text[s:e]))

    # 7. visual residue; a venue neither in a place frame nor alone describes what is seen
    # ("Apple Store environment", "甜品店搞怪装饰"): it goes back to the visual text
    for s, e in list(venues_unlisted):
        if framed(text, s, e, lang) or not _visual_residue(t.residue(), lang, text):
            continue
        t.release(s, e)
        venues_unlisted.remove((s, e))
        places = [p for p in places if not (p.place.level == "poi" and p.text == text[s:e])]
        steps = [st for st in steps if st != (VENUE_REASON.format(text[s:e]), text[s:e])]
        steps.append(("visual: a venue beside other visual words is what is seen", text[s:e]))
    visual = _visual_residue(t.residue(), lang, text)
    if visual:
        steps.append(("visual: residual text", visual))
    elif venues:
        # a venue is also a scene: "airport", "subway", "动物园" are seen as well as located
        visual = " ".join(venues)
        steps.append(("visual: a venue is also a visible scene", visual))
    has_m = bool(hard_times or impossible or places or venues or trips or any(u.kind == "place" for u in unknown))
    has_f = bool(people or roles or selfie or any(g.constrains for g in groups)
                 or any(u.kind == "person" for u in unknown))
    # a venue no gazetteer lists is searched as text too: the query needs both M and V
    source = source_type(bool(visual) or bool(venues_unlisted), has_m, has_f)
    steps.append(("source type", source))
    return Plan(
        query=text,
        lang=lang,
        source=source,
        time_ranges=ranges,
        places=tuple(places),
        people=tuple(people),
        roles=tuple(roles),
        event_words=tuple(dict.fromkeys([*venues, *trips, *events])),
        visual_text=visual,
        steps=tuple(steps),
        impossible_times=tuple(impossible),
        unknown=tuple(unknown),
        people_any=tuple(groups),
    )


def _names(vocab: AlbumVocabulary, ids: Iterable[str]) -> tuple[str, ...]:
    return tuple(vocab.names.get(pid, pid) for pid in ids)


_MY_ZH = "我(?:的|家)?"
_ONE_CHAR_KIN_ZH = {"爸": "我爸", "妈": "我妈"}  # "我爸": one character, a kin word only after 我


def _my_kin(t: _Text, lang: str, aliases: dict[str, str], steps: list[tuple[str, str]]) -> list[tuple[str, int, int]]:
    """In a Chinese query, "我" / "我的" / "我家" right before a kin word ("我老公", "我的宝宝",
    "我家孩子") is "my", not the owner: it is consumed here. "我爸" / "我妈" are role words whole
    and returned as ``(word, start, end)`` matches (consumed) for the role rule."""
    if lang != "zh":
        return []
    kin = {w for w in ROLE_WORDS["zh"] if not w.startswith("我")}
    kin.update(a for a in aliases if _CJK.search(a) and role_word(a) is not None)
    kin.update(_ONE_CHAR_KIN_ZH)
    alternatives = "|".join(re.escape(w) for w in sorted(kin, key=lambda w: (-len(w), w)))
    out = []
    for m in re.finditer(f"({_MY_ZH})({alternatives})", t.text):
        if not t.free(*m.span()):
            continue
        word = m.group(2)
        if word in _ONE_CHAR_KIN_ZH:
            t.take(*m.span())
            out.append((_ONE_CHAR_KIN_ZH[word], *m.span()))
        else:
            t.take(*m.span(1))
        steps.append(("person: 'my' before a kin word (not the owner)", m.group(1)))
    return out


# A capitalised name (one to three words) right after a person or a place preposition. The
# frame, not the word, says what kind of name it is; the name itself is then checked against
# the album (a name the rules above resolved is consumed already and never seen here).
_NAME_EN = r"([A-Z][a-z][\w'\-]*(?:\s+[A-Z][a-z][\w'\-]*){0,2})"
_PERSON_FRAME_EN = re.compile(rf"(?:\bwith|\bme and|\band|&|\b(?:photos?|pictures?|pics?) of)\s+{_NAME_EN}(?:'s)?(?![\w'])")
_POSSESSIVE_EN = re.compile(rf"(?:^|\bwith\s+|\bof\s+){_NAME_EN}'s\b")
_PAIR_EN = re.compile(rf"^{_NAME_EN}\s+(?:and|&)\s+[A-Z]")  # "Judy and Nick": the first of a pair of names
# "in"/"near" name a place outright; "at"/"to"/"visiting" also precede venues and events
# ("lunch at Disneyland"), so they count only when nothing visual is left in the query
_PLACE_FRAME_EN = re.compile(rf"(?:\bin|\bnear|\baround)\s+(?:the\s+)?{_NAME_EN}(?![\w'])")
_ADMIN_NAME_EN = re.compile(r"\b((?:[A-Z][a-z][\w'\-]*\s+){1,2}(?:District|County|Province|Prefecture))\b")
_WEAK_PLACE_FRAME_EN = re.compile(rf"(?:\bat|\bto|\bvisiting|\bvisit)\s+(?:the\s+)?{_NAME_EN}(?![\w'])")
# words that open a capitalised phrase without being a name ("with The ...", "in A ...")
_NOT_NAME_EN = frozenset({"the", "a", "an", "my", "our", "his", "her", "their", "me", "i", "we", "this", "that"})
_PERSON_BEFORE_ZH = ("和", "跟", "与", "同", "、", "有")
_PERSON_AFTER_ZH = ("和", "跟", "与", "、", "的", "在内", "一起", "去", "在", "拍", "合")
_PERSON_PUNCT_ZH = " ,，。!！?？;；"
_PLACE_BEFORE_ZH = ("在", "去", "到", "于")
_HAS_ZH = ("有", "带", "含")  # "有X的照片": photos that show X
_ADMIN_SUFFIX_ZH = "区县市旗"
_PLACE_AFTER_ZH = ("拍的", "的照片", "拍摄", "旅行", "之行", "旅游")
_PERSON_FRAME_ZH = re.compile(r"(?:和|跟|与|同|、)([\u4e00-\u9fff]{2,3}?)(?=的照片|的合照|的合影|$|[，,、和])")
# jieba's part-of-speech tags of words that are never a name: numeral, pronoun, adverb, preposition,
# conjunction, particle, position and space words
_NOT_NAME_POS_ZH = frozenset("mrdpcufs")
_PLACE_FRAME_ZH = re.compile(r"(?:在|去|到)([\u4e00-\u9fff]{2,5}?)(?=拍的|的照片|旅行|旅游|玩)")


def _suggest(vocab: AlbumVocabulary, kind: str, text: str) -> str | None:
    """The vocabulary's did-you-mean for ``text`` (None while the vocabulary cannot suggest)."""
    suggest = getattr(vocab, f"suggest_{kind}", None)
    if suggest is None:
        return None
    found = suggest(text)
    return str(found) if found else None


def _unknown_mentions(
    t: _Text, lang: str, vocab: AlbumVocabulary, *, time_spans: list[tuple[int, int]]
) -> list[tuple[UnknownMention, tuple[int, int]]]:
    """People and places the query names that the album does not have (consumed from ``t``),
    each with its span.

    English: a capitalised name after "with", "and", "me and", "of", "," (a person) or
    "in", "at", "near", "to", "from" (a place), and "X's". Chinese: a jieba word tagged as a
    name (nr*), or a word outside jieba's dictionary, between 和/跟/与/、 and 和/、/的照片 (a
    person); a word tagged ns, or outside the dictionary, or ending in an admin suffix, after
    在/去/到/从 or before 拍的/的照片 (a place)."""
    spans = _unknown_spans_en(t) if lang == "en" else _unknown_spans_zh(t, vocab)
    out = []
    for kind, s, e in sorted(spans, key=lambda x: x[1]):
        if not t.free(s, e) or any(ts < e and s < te for ts, te in time_spans):
            continue
        t.take(s, e)
        out.append((UnknownMention(kind, t.text[s:e], _suggest(vocab, kind, t.text[s:e])), (s, e)))
    return out


def _unknown_spans_en(t: _Text) -> list[tuple[str, int, int]]:
    out: list[tuple[str, int, int]] = []
    frames = [("place", _ADMIN_NAME_EN), ("place", _PLACE_FRAME_EN), ("person", _PERSON_FRAME_EN),
              ("person", _POSSESSIVE_EN), ("person", _PAIR_EN)]
    for kind, pattern in (*frames, ("place", _WEAK_PLACE_FRAME_EN)):
        for m in pattern.finditer(t.text):
            if pattern is _WEAK_PLACE_FRAME_EN:
                rest = t.residue()[: m.start()] + " " * (m.end() - m.start()) + t.residue()[m.end():]
                if _visual_residue(rest, "en", t.text):
                    continue
            s, e = m.span(1)
            words = t.text[s:e].split()
            if words[0].casefold() in _NOT_NAME_EN or any(w.casefold() in STOP_EN for w in words):
                continue
            if t.free(s, e) and not any(s < oe and os < e for _, os, oe in out):
                out.append((kind, s, e))
    return out


def _unknown_spans_zh(t: _Text, vocab: AlbumVocabulary) -> list[tuple[str, int, int]]:
    try:
        words = pos_words(t.text)
        jieba = load_jieba()
    except MissingDependencyError:
        return []
    admin_names = chinese_admin_names()
    out: list[tuple[str, int, int]] = []
    pos = 0
    for word, flag in words:
        s, e = pos, pos + len(word)
        pos = e
        # jieba glues a leading 和/有 to a name ("和薇薇"): the name starts after it
        while e - s > 2 and t.text[s] in "和跟与同有" :
            s += 1
        name = t.text[s:e]
        if len(name) < 2 or not all(_CJK.match(c) for c in name) or not t.free(s, e):
            continue
        before, after = t.text[:s].rstrip(), t.text[e:]
        if after and after[0] in _ADMIN_SUFFIX_ZH and name + after[0] in admin_names and t.free(s, e + 1):
            e += 1  # jieba cuts the admin word off a district it does not list: 湟中 + 区
            name, after = t.text[s:e], t.text[e:]
        # a county- or prefecture-level name stands for its place without a frame ("长宁区", "开福区的夜景")
        admin = name in admin_names
        outside = jieba.get_FREQ(name) is None
        ends = not after or after[0] in _PERSON_PUNCT_ZH or after.startswith(_PERSON_AFTER_ZH)
        person_frame = (before.endswith(_PERSON_BEFORE_ZH) and ends) or (not before and after.startswith(("和", "、", "跟")))
        if flag.startswith("nr") and person_frame:
            out.append(("person", s, e))
        elif admin or (flag == "ns" or outside) and (before.endswith(_PLACE_BEFORE_ZH) or (
                after.startswith(_PLACE_AFTER_ZH) and not before.endswith(_HAS_ZH))):
            # "有沙堡的照片" (photos that have a sandcastle): what 有 introduces is seen, not where
            out.append(("place", s, e))
    # frames jieba may cut across ("在盐天拍的" -> 盐/天拍, "和小美" -> 小/美)
    for kind, pattern in (("person", _PERSON_FRAME_ZH), ("place", _PLACE_FRAME_ZH)):
        for m in pattern.finditer(t.text):
            s, e = m.span(1)
            name = m.group(1)
            nicknamed = kind == "person" and (name[0] in "小老阿" or name[-1] in "哥姐" or name[0] == name[-1])
            segmented = pos_words(name)
            flags = {f for _w, f in segmented}
            # one everyday word that is no noun ("在一起": m, "在这里": r, "在海边": s) is no name, however
            # near a place's spelling it is (一起 yiqi, 伊犁 yili)
            ordinary = len(segmented) == 1 and segmented[0][1][:1] in _NOT_NAME_POS_ZH
            namelike = bool(flags & {"nr", "nrfg", "nrt", "ns"}) or (
                not ordinary and _suggest(vocab, kind, name) is not None)
            if (nicknamed or namelike) and t.free(s, e) and not any(s < oe and os < e for _, os, oe in out):
                out.append((kind, s, e))
    return out


_POI_EN = re.compile(
    r"\b((?:[A-Z][\w']+\s+){1,3}(?:" + "|".join(POI_SUFFIX_EN) + r"))\b"
)


_VENUE_FRAME_EN = re.compile(r"\b(?:at|visiting|visit|to)\s+(?:the\s+)?$", re.IGNORECASE)


def _landmark_or_place(name: str, lang: str, vocab: AlbumVocabulary) -> tuple[PlaceMatch, str]:
    """A named point of interest as the album's place when a spelling of it is one ("Qingshan Lake"
    for 青山湖区), else as a sight (``VENUE_REASON``: M+V) or a position (M), with the plan's rule."""
    for spelling in place_spellings(name, lang):
        for table, in_album, kind in ((vocab.places, True, "album"), (vocab.known_places, False, "known")):
            key = table.get(" ".join(spelling.casefold().split()))
            if key is not None:
                return PlaceMatch(name, key, in_album), f"place: {kind} {key.level} (named by its sight word)"
    if is_landmark(name, lang):
        return PlaceMatch(name, PlaceKey("poi", name), False), VENUE_REASON
    return PlaceMatch(name, PlaceKey("poi", name), False), "place: named point of interest"


def _sight_by_name(name: str, lang: str) -> bool:
    """Whether a name in a venue frame that no rule resolved is a sight or venue (M+V) rather than a
    locality (M): its words say so, or it is a foreign name (English: no pinyin) or a Chinese name
    that ends in no address or area word."""
    if is_landmark(name, lang):
        return True
    if locality_head(name, lang):
        return False
    return lang != "en" or not pinyin_shaped(name)


def _typo_of_album(vocab: AlbumVocabulary, name: str, lang: str) -> bool:
    """Whether ``name`` is near one of the album's own people or places (a did-you-mean, not a sight)."""
    return _suggest(vocab, "person", name) is not None or _place_typo(vocab, name, lang) is not None


def _place_typo(vocab: AlbumVocabulary, name: str, lang: str) -> str | None:
    """The album place ``name`` is a typo of, under any of its spellings ("Qingshen Lake" is near
    "qingshanhu", 青杉湖 near 青山湖), as the vocabulary names it; None when none is near."""
    for spelling in place_spellings(name, lang):
        if nearest(spelling, [a for a in vocab.places if has_cjk(a) == has_cjk(spelling)]) is not None:
            return _suggest(vocab, "place", spelling)
    return None


def _venue_frame(text: str, s: int, e: int, lang: str) -> bool:
    """An unknown place said as a venue: after "at"/"visiting"/"to" (en; "in X" names an area), or
    in Chinese a name that is no admin area (no 区/县/市/省 ending, not a county or city name);
    never a large city abroad ("在巴黎", "at Paris")."""
    name = text[s:e]
    if name.casefold() in area_aliases():
        return False
    if lang == "en":
        return _VENUE_FRAME_EN.search(text[:s]) is not None
    return not name.endswith(("区", "县", "市", "省", "旗", "州")) and name not in chinese_admin_names()


def _poi_spans(t: _Text, lang: str, skip: set[str]) -> list[tuple[int, int]]:
    """Named points of interest; a span that is exactly a vocabulary place is left to that rule."""
    out = []
    if lang == "en":
        for m in _POI_EN.finditer(t.text):
            if t.free(*m.span()) and " ".join(m.group(1).casefold().split()) not in skip:
                t.take(*m.span())
                out.append(m.span())
        return out
    for s, e in _jieba_places(t.text):
        # a name that ends in a place word is a point of interest when the name part is there
        # too (泉城湖, 东华门; not the common noun 石桥 "stone bridge")
        ends_poi = e - s >= 3 and any(t.text[s:e].endswith(suf) for suf in POI_SUFFIX_ZH)
        next_poi = any(t.text.startswith(suf, e) for suf in POI_SUFFIX_ZH)
        if t.free(s, e) and (ends_poi or next_poi) and t.text[s:e] not in skip:
            # extend a bare name over the place word that follows (会稽 + 山, 中山南 + 路);
            # a name that has its place word already keeps the rest (会稽山 + 寺门)
            for suf in sorted(POI_SUFFIX_ZH, key=len, reverse=True) if not ends_poi else ():
                if t.text.startswith(suf, e) and t.free(e, e + len(suf)):
                    e += len(suf)
                    break
            t.take(s, e)
            out.append((s, e))
    return out


def _jieba_places(text: str) -> list[tuple[int, int]]:
    """Spans jieba tags as place names (``ns``); empty when jieba is not installed."""
    try:
        words = pos_spans(text)
    except MissingDependencyError:
        return []
    spans = [(s, e) for s, e, word, flag in words if flag == "ns" and len(word) >= 2]
    return spans


def _soft_time(r: TimeRange) -> bool:
    """A part of the day alone, or a season without a year, is visible in the photo itself."""
    part_only = r.every_year and r.start == date(2000, 1, 1) and r.end == date(2000, 12, 31)
    return part_only or (r.every_year and r.rule.startswith("season"))


FESTIVE_OBJECTS_EN = (
    "tree", "trees", "decor", "decoration", "decorations", "light", "lights", "ornament", "ornaments", "hat", "hats",
    "card", "cards", "gift", "gifts", "present", "presents", "market", "theme", "themed", "atmosphere", "wreath",
    "stocking", "stockings", "sweater", "cookie", "cookies", "mooncake", "mooncakes", "lantern", "lanterns",
    "costume", "costumes", "pumpkin", "pumpkins", "display", "window", "windows", "village", "special", "limited",
    "edition", "couplets", "poster", "posters", "cake", "cakes",
)
FESTIVE_OBJECTS_ZH = (
    "树", "装饰", "灯", "彩灯", "帽", "礼物", "礼盒", "贺卡", "老人", "花环", "氛围", "主题", "限定", "市集", "集市",
    "月饼", "灯笼", "对联", "春联", "南瓜", "装扮", "布置", "橱窗", "海报", "蛋糕", "袜",
)


def _modifies_noun(text: str, end: int, lang: str) -> bool:
    """A festival word right before a festive object ("Christmas tree", "圣诞装饰") describes
    what is seen, not when the photo was taken."""
    rest = text[end:]
    if lang == "en":
        word = re.match(r"(?:'s)?\s+([A-Za-z]+)", rest)
        return word is not None and word.group(1).lower() in FESTIVE_OBJECTS_EN
    return any(rest.startswith(w) for w in FESTIVE_OBJECTS_ZH)


def _visual_residue(residue: str, lang: str, text: str | None = None) -> str:
    """The visual words of ``residue`` (the query with matched characters blanked): no stop words
    and, given the query ``text``, no words that frame the request; empty when what is left has
    no content word (only pronouns, numerals, particles, ...: :mod:`.frames`). Given ``text``, a
    Chinese content word keeps the stop characters inside it (月饼, 圆月, 和服: not 月, 和)."""
    if text is None:
        return _residue_words(residue, lang)
    residue = blank_request_words(residue, text, lang)
    whole = chinese_content_spans(residue, text, STOP_ZH) if lang == "zh" else []
    if not _residue_words(blank_closed_words(residue, text, lang), lang, whole):
        return ""
    return _residue_words(residue, lang, whole)


def _residue_words(residue: str, lang: str, whole: list[tuple[int, int]] | None = None) -> str:
    """The words of ``residue`` that are no stop words; ``whole``: spans of Chinese content words
    whose characters no stop word removes."""
    if lang == "en":
        words = re.findall(r"[A-Za-z][A-Za-z'\-]*|\d+", residue)
        keep = [w for w in words if w.lower() not in STOP_EN and not w.isdigit() and len(w) > 1]
        return " ".join(keep)
    # a kept word's characters stand in the private use area while stop words are removed
    chars, hidden = list(residue), {}
    for s, e in whole or ():
        for i in range(s, e):
            mark = chr(0xE000 + len(hidden))
            hidden[mark] = chars[i]
            chars[i] = mark
    chunks = [c for c in re.split(r"[\s,，、。.!?！？:：;；()（）]+", "".join(chars)) if c]
    keep = []
    for c in chunks:
        for sw in sorted(STOP_ZH, key=len, reverse=True):
            c = c.replace(sw, " ")
        for piece in "".join(hidden.get(ch, ch) for ch in c).split():
            if _CJK.search(piece) and len(piece) >= 1 or re.search(r"[A-Za-z]{2,}", piece):
                keep.append(piece)
    text = " ".join(keep)
    # a lone character left between matched names is not a visual description
    return text if len(text.replace(" ", "")) >= 2 else ""
