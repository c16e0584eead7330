"""Landmarks and sights a query names, told apart from areas and addresses.

"Yellow Crane Tower", "Gulangyu Island", "the Pavilion of Prince Teng", "Park Guell", "Sagrada
Familia", "黄鹤楼", "鼓浪屿", "清水寺": a sight is where the photo was taken *and* what it shows. No
offline gazetteer places it (:mod:`finegrain.album.engine.plan.venues` says which data was looked
for), so the planner keeps it like a venue: a place of level ``poi`` and visual text, M+V. A name
that ends in an address or area word ("Xinhua Road", "Beijing Station", "新华路", "东华门", a 镇 or
村) is a position the catalog may know: metadata alone, as before.

Which names are landmarks:

1. **The place wins.** A name the album or the gazetteer knows as a district, town, city or
   province is that place, whatever word it ends in (青山湖区 "Qingshanhu District", 鼓浪屿 when the
   album has a place of that name); so is a Chinese name translated word for word when its pinyin
   is such a place ("Qingshan Lake" for 青山湖). The caller checks its vocabulary
   (:func:`place_spellings` gives the spellings to look up).
2. **Head words.** A name whose last word (Chinese: longest suffix) is a sight word — Tower, Temple,
   Beach, Island, Alley, Park, Bridge, Lake, Gate, Square, Museum, Church, Palace, Garden, Shrine,
   Pavilion ...; 楼, 塔, 岛, 屿, 巷, 海滩, 寺, 桥, 湖, 广场, 博物馆, 教堂, 宫, 园, 阁, 堂 ... — is a
   landmark; an address or area word — Road, Street, Avenue, Station, Airport, Town, Village, Bay,
   Mountain; 路, 街, 道, 站, 机场, 镇, 村, 门, 湾, 山 — is not (a street is an address; a Chinese name
   in 门 or 山 is as often a neighbourhood, a station or a city as a gate or a peak: 东华门, 崇文门,
   黄山, 佛山). A compound sight word wins over the address word it ends in ("Pedestrian Street",
   "Ancient Town", 步行街, 古镇).
3. **Head first.** English also puts the sight word first: "Pavilion of Prince Teng", "Temple of
   Heaven", "Park Guell". Without "of", the name after it must not read as pinyin ("Park Jimin" is
   a person).
4. **A name alone.** A name with no head word, in a venue frame ("at", "visiting", "my visit to") or
   as the whole query ("Sagrada Familia", "the Kiyomizu-dera"), that is no place of the album, no
   person and no typo of either, is a landmark unless it reads as pinyin: a Chinese place written
   in Latin letters ("Chongwenmen", "Donghuamen") is a locality the gazetteer does not list (M).
   Alone (no frame), capitalised words are not enough ("Emma", "Daisy Duck", "Officer Bogo" are
   people and characters as often): it takes "the" before the name or a hyphenated word
   ("the Sagrada Familia", "Kiyomizu-dera").

Nothing here names a particular landmark: the lists are word classes.
"""

from __future__ import annotations

import re

from finegrain.errors import MissingDependencyError
from finegrain.text.lang import CJK
from finegrain.text.segment import load_jieba, load_posseg, pos_spans

__all__ = [
    "LANDMARK_HEADS_EN",
    "LANDMARK_HEADS_ZH",
    "LOCALITY_HEADS_EN",
    "LOCALITY_HEADS_ZH",
    "head_first_spans_en",
    "is_landmark",
    "landmark_spans_zh",
    "lone_name_en",
    "pinyin_shaped",
    "place_spellings",
]

# sights: seen as well as located (English words are compared case-folded, last word(s) of a name)
LANDMARK_HEADS_EN = (
    "tower", "towers", "temple", "beach", "island", "islands", "alley", "park", "bridge", "lake", "gate", "square",
    "museum", "church", "cathedral", "basilica", "chapel", "abbey", "mosque", "monastery", "palace", "garden",
    "gardens", "shrine", "pavilion", "pagoda", "hall", "memorial", "mausoleum", "tomb", "monument", "statue",
    "castle", "fort", "fortress", "citadel", "lighthouse", "pier", "wharf", "falls", "waterfall", "canyon", "gorge",
    "cave", "caves", "grotto", "grottoes", "studios", "zoo", "aquarium", "spring", "springs", "river", "opera house",
    "pedestrian street", "old street", "ancient street", "ancient town", "old town", "water town", "wall", "dam",
    "plaza", "base", "centre", "center", "reserve", "wetland", "scenic area", "forest park",
)
# addresses and areas: a position, not a sight
LOCALITY_HEADS_EN = (
    "road", "street", "avenue", "lane", "boulevard", "station", "airport", "terminal", "town", "village", "bay",
    "mountain", "mountains", "district", "county", "city", "province", "prefecture", "subdistrict", "township",
)
LANDMARK_HEADS_ZH = (
    "楼", "塔", "岛", "屿", "巷", "巷子", "胡同", "海滩", "沙滩", "寺", "庙", "桥", "大桥", "湖", "广场", "博物馆", "博物院",
    "教堂", "大教堂", "宫", "园", "公园", "阁", "堂", "亭", "祠", "陵", "大社", "神社", "古城", "古镇", "古街", "老街",
    "步行街", "景区", "风景区", "瀑布", "峡谷", "石窟", "故居", "纪念馆", "纪念碑", "城堡", "大剧院", "歌剧院", "泉", "潭",
    "洞", "湿地", "基地",
)
LOCALITY_HEADS_ZH = ("路", "街", "大街", "大道", "道", "站", "机场", "镇", "乡", "村", "门", "湾", "山", "区", "县", "市", "省")
# the first word of "Pavilion of Prince Teng", "Park Guell": sight words that also lead a name
_HEAD_FIRST_EN = (
    "Temple", "Palace", "Pavilion", "Museum", "Church", "Cathedral", "Basilica", "Chapel", "Abbey", "Mosque",
    "Monastery", "Shrine", "Tower", "Tomb", "Mausoleum", "Castle", "Fort", "Fortress", "Park", "Lake", "Gate",
    "Garden", "Gardens", "Square", "Bridge", "Hall", "Island", "Beach", "Monument", "Statue",
)
# Chinese common nouns in a sight word that jieba tags as a name ("宿舍楼" nr) or whose first part
# is a dictionary noun anyway: a building, not a sight
_GENERIC_ZH = frozenset({
    "宿舍楼", "教学楼", "办公楼", "实验楼", "图书楼", "居民楼", "写字楼", "住宅楼", "商务楼", "综合楼", "大楼", "高楼", "阁楼",
    "人工湖", "电视塔", "水塔", "灯塔", "宝塔", "食堂", "礼堂", "课堂", "教堂", "寺庙", "庙宇", "小岛", "海岛", "岛屿", "小巷",
    "巷子", "海滩", "沙滩", "公园", "花园", "校园", "家园", "乐园", "果园", "菜园", "庄园", "广场", "凉亭", "亭子", "桥", "大桥",
    "天桥", "石桥", "小桥", "湖", "湖泊", "楼", "塔", "岛", "宫", "园", "阁", "堂", "泉", "潭", "山洞", "洞", "基地", "湿地",
})
_NAME_FLAGS_ZH = ("ns", "nr", "nrfg", "nrt", "nz", "nt")
_NOT_NAME_POS_ZH = frozenset("mrdpcufs")  # numeral, pronoun, adverb, preposition, conjunction, particle, position, space
_FRAME_CHARS_ZH = frozenset("在去到逛游于从和跟与的了是拍")

# English sight word -> the pinyin of its Chinese character, for "Qingshan Lake" = 青山湖
_PINYIN_OF_HEAD = {
    "lake": ("hu",), "island": ("dao", "yu"), "gate": ("men",), "tower": ("lou", "ta"), "pagoda": ("ta",),
    "temple": ("si", "miao"), "bridge": ("qiao",), "park": ("yuan", "gongyuan"), "garden": ("yuan",),
    "spring": ("quan",), "palace": ("gong",), "hall": ("tang", "guan"), "pavilion": ("ge", "ting"),
    "beach": ("tan",), "river": ("he", "jiang"), "alley": ("xiang",), "square": ("guangchang",),
    "bay": ("wan",), "mountain": ("shan",), "street": ("jie",), "road": ("lu",), "town": ("zhen",),
    "village": ("cun",),
}

# every syllable of Mandarin pinyin without tones (ü as v); the interjections m, n, ng, hm, hng left out
_PINYIN_SYLLABLES = """a ai an ang ao ba bai ban bang bao bei ben beng bi bian biao bie bin bing bo bu ca cai can cang
    cao ce cen ceng cha chai chan chang chao che chen cheng chi chong chou chu chua chuai chuan chuang chui chun chuo ci
    cong cou cu cuan cui cun cuo da dai dan dang dao de dei den deng di dia dian diao die ding diu dong dou du duan dui
    dun duo e ei en eng er fa fan fang fei fen feng fo fou fu ga gai gan gang gao ge gei gen geng gong gou gu gua guai
    guan guang gui gun guo ha hai han hang hao he hei hen heng hong hou hu hua huai huan huang hui hun huo ji jia jian
    jiang jiao jie jin jing jiong jiu ju juan jue jun ka kai kan kang kao ke kei ken keng kong kou ku kua kuai kuan kuang
    kui kun kuo la lai lan lang lao le lei leng li lia lian liang liao lie lin ling liu lo long lou lu luan lun luo lv lve
    lue ma mai man mang mao me mei men meng mi mian miao mie min ming miu mo mou mu na nai nan nang nao ne nei nen neng ni
    nian niang niao nie nin ning niu nong nou nu nuan nun nuo nv nve nue o ou pa pai pan pang pao pei pen peng pi pian
    piao pie pin ping po pou pu qi qia qian qiang qiao qie qin qing qiong qiu qu quan que qun ran rang rao re ren reng ri
    rong rou ru rua ruan rui run ruo sa sai san sang sao se sen seng sha shai shan shang shao she shei shen sheng shi
    shou shu shua shuai shuan shuang shui shun shuo si song sou su suan sui sun suo ta tai tan tang tao te teng ti tian
    tiao tie ting tong tou tu tuan tui tun tuo wa wai wan wang wei wen weng wo wu xi xia xian xiang xiao xie xin xing
    xiong xiu xu xuan xue xun ya yan yang yao ye yi yin ying yo yong you yu yuan yue yun za zai zan zang zao ze zei zen
    zeng zha zhai zhan zhang zhao zhe zhei zhen zheng zhi zhong zhou zhu zhua zhuai zhuan zhuang zhui zhun zhuo zi zong
    zou zu zuan zui zun zuo""".split()
_PINYIN_WORD = re.compile("(?:" + "|".join(sorted(_PINYIN_SYLLABLES, key=len, reverse=True)) + ")+")
_WORD_SPLIT = re.compile(r"[\s'’\-]+")

_NAME_WORD_EN = r"[A-Z][\w'’\-]*"
_HEAD_FIRST_RE = re.compile(
    rf"\b((?:{'|'.join(_HEAD_FIRST_EN)})\s+(?:(of\s+(?:the\s+)?)?)({_NAME_WORD_EN}(?:\s+{_NAME_WORD_EN}){{0,2}}))(?![\w'’])"
)
# one to four capitalised words (or one hyphenated word), optionally after "the"
_LONE_NAME_EN = re.compile(rf"(?<![\w'’])({_NAME_WORD_EN}(?:\s+{_NAME_WORD_EN}){{0,3}})(?![\w'’])")
_PERSON_BEFORE_EN = re.compile(r"(?:\bwith|\bme and|\band|&|\bof)\s+$", re.IGNORECASE)


def pinyin_shaped(name: str) -> bool:
    """Whether every word of ``name`` spells Mandarin syllables ("Chongwenmen", "Xi'an", "Fan Yutong"):
    a Chinese place or person written in Latin letters, not a foreign name ("Montmartre")."""
    words = [w for w in _WORD_SPLIT.split(name.casefold()) if w]
    return bool(words) and all(_PINYIN_WORD.fullmatch(w) is not None for w in words)


def _head(name: str, lang: str) -> tuple[str, str] | None:
    """``(kind, head)`` of the longest head word ``name`` ends in: kind "landmark" or "locality"."""
    if lang == "en":
        low = " ".join(name.casefold().split())
        heads = [("landmark", h) for h in LANDMARK_HEADS_EN] + [("locality", h) for h in LOCALITY_HEADS_EN]
        found = [(k, h) for k, h in heads if low == h or low.endswith(" " + h)]
    else:
        heads = [("landmark", h) for h in LANDMARK_HEADS_ZH] + [("locality", h) for h in LOCALITY_HEADS_ZH]
        found = [(k, h) for k, h in heads if name.endswith(h)]
    return max(found, key=lambda kh: len(kh[1]), default=None)


def is_landmark(name: str, lang: str) -> bool:
    """Whether ``name`` is a sight by its words: a landmark head word last, or (English) a sight word
    first ("Pavilion of Prince Teng") with no address word last."""
    head = _head(name, lang)
    if head is not None:
        return head[0] == "landmark" and len(name) > len(head[1])
    if lang == "en":
        return _HEAD_FIRST_RE.fullmatch(name) is not None
    return False


def locality_head(name: str, lang: str) -> bool:
    """Whether ``name`` ends in an address or area word ("Xinhua Road", "东华门", "新镇")."""
    head = _head(name, lang)
    return head is not None and head[0] == "locality"


def place_spellings(name: str, lang: str) -> tuple[str, ...]:
    """The names under which ``name`` may be a place the album knows (rule 1), case-folded: the name
    itself, a Chinese name with an admin word added (鼓浪屿镇, 青山湖区), and an English name whose
    sight word is the pinyin of its Chinese character ("Qingshan Lake" -> "qingshanhu")."""
    if lang != "en":
        return (name, *(name + s for s in ("区", "县", "市", "镇", "乡", "街道")))
    words = name.casefold().split()
    out = [" ".join(words)]
    if len(words) >= 2:
        stem = "".join(words[:-1])
        out.extend(stem + py for py in _PINYIN_OF_HEAD.get(words[-1], ()))
    return tuple(out)


def head_first_spans_en(text: str, free: list[bool]) -> list[tuple[int, int]]:
    """"Pavilion of Prince Teng", "Temple of Heaven", "Park Guell": a capitalised sight word, then
    "of" and a name, or a name that does not read as pinyin; in characters not yet matched, and
    not where a person is expected ("with Park Jimin")."""
    out = []
    for m in _HEAD_FIRST_RE.finditer(text):
        s, e = m.span(1)
        tail = m.group(3)
        if not m.group(2) and (pinyin_shaped(tail) or locality_head(tail, "en")):
            continue
        if _PERSON_BEFORE_EN.search(text[:s]) or not all(free[s:e]):
            continue
        out.append((s, e))
    return out


def lone_name_en(text: str, free: list[bool]) -> tuple[int, int] | None:
    """The one capitalised name left in ``text`` (characters ``free``) when it is a landmark by rule
    4: a name after "the" or with a hyphenated word, that does not read as pinyin. The caller checks
    that nothing else is left to describe what is seen."""
    left = "".join(c if f else " " for c, f in zip(text, free, strict=True))
    names = [m for m in _LONE_NAME_EN.finditer(left) if m.group(1).casefold() not in ("i", "the")]
    names = [m for m in names if not m.group(1).startswith(("The ", "My "))] or names
    if len(names) != 1:
        return None
    s, e = names[0].span(1)
    name = text[s:e]
    after_the = re.search(r"\bthe\s+$", text[:s], re.IGNORECASE) is not None
    if not ("-" in name or after_the) or pinyin_shaped(name):
        return None
    return s, e


def _jieba_tag(word: str) -> str | None:
    """jieba's part-of-speech tag of a dictionary word (None for a word outside the dictionary)."""
    tag = load_posseg().dt.word_tag_tab.get(word)
    return None if tag is None else str(tag)


def _name_word_zh(word: str, flag: str, head: str) -> bool:
    """Whether one jieba word that ends in the sight word ``head`` is a name (黄鹤楼, 鼓浪屿, 圣家堂),
    not a common noun (教学楼, 灯塔): jieba tags it as a name or does not know it, or the part before
    the head is itself a name; never a word of the generic list, never a one-character name part."""
    if word in _GENERIC_ZH or len(word) - len(head) < 2:
        return False
    if flag.startswith(_NAME_FLAGS_ZH) or load_jieba().get_FREQ(word) is None:
        return True
    part = _jieba_tag(word[: -len(head)])
    return part is None or part.startswith(_NAME_FLAGS_ZH)


_FRAME_BEFORE_ZH = ("在", "去", "到", "逛", "游", "于", "游览", "参观")
_FRAME_AFTER_ZH = ("拍", "打卡", "的照片", "的相片", "的合影", "的合照", "留影", "旅游", "游玩", "之旅", "玩")


def _framed_zh(text: str, s: int, e: int) -> bool:
    """Whether ``text[s:e]`` is said as where the photo was taken: after 在/去/逛/游 ..., before
    拍/打卡/的照片 ..."""
    return text[:s].rstrip().endswith(_FRAME_BEFORE_ZH) or text[e:].startswith(_FRAME_AFTER_ZH)


def landmark_spans_zh(text: str, free: list[bool], skip: frozenset[str] | set[str]) -> list[tuple[int, int]]:
    """Sights named in a Chinese query (jieba words; empty without jieba): one word that ends in a
    sight word and is a name (黄鹤楼, 埃菲尔铁塔, 鼓浪屿), or a sight word (寺, 海滩, 巷子, 大社) after a
    name part: a noun, adjective or name of two or more characters (清水 + 寺, 邦迪 + 海滩, 宽窄 +
    巷子) or a run of single characters (伏见稻荷 + 大社); a noun, an adjective or single characters
    only in a place frame (在清水寺拍的, 游宽窄巷子; not 蓝色海滩). ``skip``: names another rule answers (the
    album's places, admin names); a span whose :func:`place_spellings` meet ``skip`` is a place."""
    try:
        spans = pos_spans(text)
    except MissingDependencyError:
        return []
    out: list[tuple[int, int]] = []
    for i, (s, e, w, flag) in enumerate(spans):
        if not CJK.match(w):
            continue
        head = _head(w, "zh")
        if head is None or head[0] != "landmark":
            continue
        start = s
        if w == head[1]:  # a sight word alone: the name is before it
            j = i
            if j > 0 and len(spans[j - 1][2]) >= 2:
                ps, _pe, pw, pflag = spans[j - 1]
                if not CJK.match(pw) or pflag[:1] in _NOT_NAME_POS_ZH or pflag.startswith("v") or pw in skip:
                    continue
                start = ps
                # a name (邦迪 + 海滩) needs no frame; a noun or adjective (清水 + 寺, 宽窄 + 巷子) is a
                # name only where a place is expected: 蓝色海滩 is a blue beach
                proper = pflag.startswith(_NAME_FLAGS_ZH) or load_jieba().get_FREQ(pw) is None
                if not proper and not _framed_zh(text, start, e):
                    continue
            else:
                while j > 0 and len(spans[j - 1][2]) == 1 and spans[j - 1][2] not in _FRAME_CHARS_ZH \
                        and CJK.match(spans[j - 1][2]) and spans[j - 1][3][:1] not in _NOT_NAME_POS_ZH:
                    j -= 1
                if i - j < 2 or not _framed_zh(text, spans[j][0], e):
                    continue
                start = spans[j][0]
        elif not _name_word_zh(w, flag, head[1]):
            continue
        name = text[start:e]
        if any(p in skip for p in place_spellings(name, "zh")) or not all(free[start:e]):
            continue
        out.append((start, e))
    return out
