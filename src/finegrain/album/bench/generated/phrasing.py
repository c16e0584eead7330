"""How a generated album's queries are worded, in PhotoBench's style, in English and Chinese.

PhotoBench's queries are short search phrases ("photos in Suzhou", "在苏州市的照片",
"photos with Mingyu in August 2025", "2025年8月和明宇的照片", "2025年国庆节拍的",
"浩哥大鼻孔, 2019"). A query here is a **frame** (what it constrains: a place, people and a
time, a scene and a place, ...) filled with **phrases** (a place name, a list of people, a time
expression). Every frame and every kind of time expression has a bank of templates per language;
:func:`templates` gives the ones an album of a split may use (:mod:`.split`: about a third of
each bank is held out for test albums).

Slots: ``{place}`` ``{venue}`` ``{people}`` ``{scene}`` and ``{time}`` (a bare time: "June 2019",
"2019年6月") or ``{time_p}`` (with its preposition: "in June 2019", "on June 3, 2019").
"""

from __future__ import annotations

from finegrain.album.bench.generated.split import for_split

# frame -> language -> templates
FRAMES: dict[str, dict[str, tuple[str, ...]]] = {
    "place": {
        "en": ("photos in {place}", "photos taken in {place}", "pictures from {place}", "{place} photos",
               "shots from {place}", "my photos in {place}", "what I shot in {place}", "photos from my time in {place}",
               "images taken in {place}", "everything from {place}", "photos I took in {place}", "{place} pictures"),
        "zh": ("在{place}的照片", "{place}拍的", "{place}", "在{place}拍的照片", "{place}的照片", "{place}的相片",
               "{place}那会儿拍的", "在{place}拍的", "{place}那边的照片", "去{place}拍的照片", "{place}的所有照片", "在{place}时拍的"),
    },
    "venue": {
        "en": ("photos at {venue}", "photos taken at {venue}", "at {venue}", "{venue}", "visiting {venue}",
               "my visit to {venue}", "pictures from {venue}", "{venue} photos", "the day at {venue}"),
        "zh": ("在{venue}拍的", "{venue}", "{venue}的照片", "逛{venue}", "去{venue}的照片", "在{venue}的照片",
               "游{venue}", "参观{venue}", "{venue}打卡"),
    },
    "time": {
        "en": ("photos from {time}", "photos taken {time_p}", "{time} photos", "pictures from {time}",
               "what I shot {time_p}", "my photos {time_p}", "everything I took {time_p}", "{time}", "shots {time_p}"),
        "zh": ("{time}的照片", "{time}拍的", "{time}", "{time}拍的照片", "{time}的相片", "{time}那会儿的照片",
               "{time}留下的照片", "{time}的所有照片", "翻翻{time}的照片"),
    },
    "person": {
        "en": ("photos of {people}", "photos with {people}", "photos including {people}", "pictures of {people}",
               "shots with {people} in them", "photos where {people} appear", "{people}'s photos", "photos showing {people}",
               "all photos of {people}"),
        "zh": ("{people}的照片", "有{people}在内的照片", "有{people}的照片", "拍到{people}的照片", "{people}的相片",
               "{people}出镜的照片", "所有{people}的照片", "关于{people}的照片", "包含{people}的照片"),
    },
    "people": {
        "en": ("photos of {people}", "photos with {people}", "group photo of {people}", "{people} together",
               "photos of {people} together", "pictures with {people}", "photos including {people}",
               "{people} in the same photo", "shots of {people}"),
        "zh": ("{people}的照片", "{people}的合照", "和{people}的合影", "{people}一起的照片", "有{people}在内的照片",
               "{people}同框", "{people}的合影", "拍到{people}的照片", "{people}在一起的照片"),
    },
    "people_place": {
        "en": ("photos with {people} in {place}", "{people} in {place}", "photos of {people} taken in {place}",
               "pictures of {people} in {place}", "{place} photos with {people}", "{people} during our time in {place}",
               "photos of {people} from {place}"),
        "zh": ("在{place}和{people}的合影", "{people}在{place}的照片", "在{place}拍的{people}的照片", "和{people}在{place}的照片",
               "{place}拍的{people}", "在{place}的{people}", "{people}{place}的照片"),
    },
    "people_time": {
        "en": ("photos with {people} {time_p}", "{people}, {time}", "photos of {people} from {time}",
               "{time} photos with {people}", "pictures of {people} {time_p}", "{people} {time_p}",
               "photos with {people} taken {time_p}"),
        "zh": ("{time}和{people}的照片", "{time}{people}的照片", "{time}跟{people}的合影", "{people}{time}的照片",
               "{time}拍的{people}", "{time}有{people}的照片", "{time}和{people}一起拍的"),
    },
    "scene": {
        "en": ("{scene}", "photos of {scene}", "{scene} pictures", "that {scene} shot", "the {scene} photo",
               "pictures showing {scene}", "a shot of {scene}"),
        "zh": ("{scene}", "{scene}的照片", "拍的{scene}", "那张{scene}", "{scene}照片", "有{scene}的照片", "一张{scene}"),
    },
    "scene_place": {
        "en": ("{scene} in {place}", "{place} {scene}", "{scene}, {place}", "{scene} I saw in {place}", "{scene} at {place}"),
        "zh": ("{place}的{scene}", "在{place}拍的{scene}", "{scene} {place}", "{place}拍到的{scene}", "在{place}看到的{scene}"),
    },
    "scene_time": {
        "en": ("{scene}, {time}", "{scene} {time_p}", "{time} {scene}", "{scene} photographed {time_p}", "{scene} from {time}"),
        "zh": ("{time} {scene}", "{time}拍的{scene}", "{scene}, {time}", "{time}的{scene}", "{time}看到的{scene}"),
    },
    "scene_people": {
        "en": ("{scene} with {people}", "{people} and the {scene}", "{people} with {scene}", "{scene} together with {people}",
               "{people} by the {scene}"),
        "zh": ("和{people}的{scene}", "{people}和{scene}", "{people}与{scene}合影", "跟{people}一起的{scene}", "{people}在{scene}旁"),
    },
    "scene_people_place": {
        "en": ("{scene} with {people} in {place}", "{people} and the {scene} in {place}", "{place}: {scene} with {people}"),
        "zh": ("在{place}和{people}的{scene}", "{people}在{place}的{scene}", "{place}跟{people}一起的{scene}"),
    },
    "scene_people_time": {
        "en": ("{scene} with {people}, {time}", "{scene} with {people} {time_p}", "{time}: {people} and the {scene}"),
        "zh": ("{time}和{people}的{scene}", "{time} {people}和{scene}", "{people}的{scene}, {time}"),
    },
}

# Time expressions: kind -> language -> templates with {Y} (year), {Month}, {m} (month number), {d} (day),
# {Season}/{season_zh}, {Half}/{half_zh}; English ones as "bare|with preposition".
TIMES: dict[str, dict[str, tuple[str, ...]]] = {
    "month": {
        "en": ("{Month} {Y}|in {Month} {Y}", "{Month} of {Y}|in {Month} of {Y}", "{Month} {Y}|during {Month} {Y}"),
        "zh": ("{Y}年{m}月", "{Y}年{m}月份", "{Y}年的{m}月"),
    },
    "day": {
        "en": ("{Month} {d}, {Y}|on {Month} {d}, {Y}", "{d} {Month} {Y}|on {d} {Month} {Y}", "{Month} {d} {Y}|on {Month} {d} {Y}"),
        "zh": ("{Y}年{m}月{d}日", "{Y}年{m}月{d}号", "{Y}年{m}月{d}日当天"),
    },
    "season": {
        "en": ("{Season} {Y}|in {Season} {Y}", "the {Season} of {Y}|in the {Season} of {Y}", "{Season} {Y}|during {Season} {Y}"),
        "zh": ("{Y}年{season_zh}天", "{Y}年{season_zh}季", "{Y}年的{season_zh}天"),
    },
    "half": {
        "en": ("the {Half} half of {Y}|in the {Half} half of {Y}", "the {Half} half of {Y}|during the {Half} half of {Y}",
               "{Y}'s {Half} half|in {Y}'s {Half} half"),
        "zh": ("{Y}年{half_zh}半年", "{Y}年的{half_zh}半年", "{Y}{half_zh}半年"),
    },
    "year": {
        "en": ("{Y}|in {Y}", "the year {Y}|in the year {Y}", "{Y}|during {Y}"),
        "zh": ("{Y}年", "{Y}年全年", "{Y}这一年"),
    },
    # holidays: {H} an English name ("National Day"), {HZ} a Chinese name (国庆节, 国庆), {HS} the span's name (国庆假期)
    "holiday_day": {
        "en": ("{H} {Y} itself|on {H} {Y} itself", "the day of {H} {Y}|on the day of {H} {Y}",
               "{H} day in {Y}|on {H} day in {Y}", "the very day of {H} {Y}|on the very day of {H} {Y}"),
        "zh": ("{Y}年{HZ}当天", "{Y}年{HZ}那天", "{Y}年{HZ}当日", "{Y}年{HZ}的那一天"),
    },
    "holiday_span": {
        "en": ("the {H} holiday of {Y}|during the {H} holiday in {Y}", "the {Y} {H} holiday|over the {Y} {H} holiday",
               "the {H} break in {Y}|over the {H} break in {Y}", "the {Y} {H} days off|during the {Y} {H} days off"),
        "zh": ("{Y}年{HS}", "{Y}年{HZ}放假期间", "{Y}年{HZ}放假那几天", "{Y}年{HZ}假期里"),
    },
    "holiday_plain": {
        "en": ("{H} {Y}|during {H} {Y}", "{H} in {Y}|at {H} in {Y}", "{Y} {H}|during {Y} {H}"),
        "zh": ("{Y}年{HZ}", "{Y}年过{HZ}", "{Y}年的{HZ}"),
    },
}
# how names are listed: "A and B", "A, B, and C" / "A、B", "A和B"
JOINS_EN = ("and", "oxford")
JOINS_ZH = ("、", "和")


def _bank_key(frame: str, lang: str) -> str:
    return f"phrasing/{frame}/{lang}"


def templates(frame: str, lang: str, split: str) -> tuple[str, ...]:
    """The templates of query frame ``frame`` in ``lang`` ('en', 'zh') an album of ``split`` uses."""
    return for_split(FRAMES[frame][lang], split, _bank_key(frame, lang))


def time_templates(kind: str, lang: str, split: str) -> tuple[str, ...]:
    """The templates of time expression ``kind`` in ``lang`` an album of ``split`` uses."""
    return for_split(TIMES[kind][lang], split, _bank_key("time-" + kind, lang))


def all_banks() -> dict[str, tuple[str, ...]]:
    """Every bank by its split namespace (for checking the split)."""
    out = {_bank_key(f, lang): tuple(by[lang]) for f, by in FRAMES.items() for lang in by}
    out.update({_bank_key("time-" + k, lang): tuple(by[lang]) for k, by in TIMES.items() for lang in by})
    return out


def join_en(names: list[str], style: str) -> str:
    if len(names) == 1:
        return names[0]
    if len(names) == 2:
        return f"{names[0]} and {names[1]}"
    if style == "oxford":
        return ", ".join(names[:-1]) + ", and " + names[-1]
    return ", ".join(names[:-1]) + " and " + names[-1]


def join_zh(names: list[str], style: str) -> str:
    if style == "和" and len(names) == 2:
        return "和".join(names)
    return "、".join(names)
