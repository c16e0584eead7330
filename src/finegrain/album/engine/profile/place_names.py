"""English names of China's administrative divisions: which ending is a level word, and how a name reads.

**The level word.** :func:`split_level` cuts a name into its stem, the ethnic groups of an
autonomous region or county, and the level suffix (柯桥区 -> 柯桥 + 区, 恩施土家族苗族自治州 ->
恩施 + 土家族苗族 + 自治州). A two-character level word is a level word only where the level
exists: 林区 only for China's one forestry district (神农架林区; 万柏林区, 碑林区 are 区 names
whose stem ends in 林), and 新区, 地区, 特区, 矿区 only when a stem of two characters or more is
left (清新区 is 清新 + 区). A one-character stem is kept (单县 -> 单 + 县) for the English name;
:func:`short_zh` never offers it as a Chinese alias, a single character being part of too many words.

**The reading.** Characters with two readings (长 cháng/zhǎng, 单 shàn/dān, 涡 guō/wō) make a
character-by-character reading wrong for place names, so a name is read, in order, by:

1. a conventional English name that is not plain pinyin (Shaanxi, Inner Mongolia, Harbin, Urumqi ...);
2. a reviewed reading where the phrase dictionary is wrong for the place (万柏林 Wanbailin, 石鼓 Shigu),
   each one checked against the place's official English name;
3. CC-CEDICT's reading of the full name, else of the stem: the dictionary lists China's divisions
   as proper nouns with their place-name readings (长治 Changzhi, 涡阳 Guoyang, 单县 Shanxian,
   洪洞 Hongtong). ``pypinyin-dict`` ships it as phrase data; it is read here directly and never
   loaded into pypinyin, so pypinyin's own tables stay as they are for everyone else;
4. pypinyin's phrase reading of the full name, character by character only where no phrase covers.

No offline table of the official romanisations of county-level names (the Ministry of Civil
Affairs' list, GB/T 2260) ships with English: GeoToolCN and the Chinese division packages on
PyPI hold Chinese names and codes only, and GeoNames' alternate names cover prefectures, not
counties.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from finegrain._lazy import require

__all__ = ["ZhName", "EnglishName", "split_level", "short_zh", "english_name", "reading_source"]

# Chinese names whose English name is not their pinyin, or not pypinyin's pinyin; the first is displayed.
CONVENTIONAL_EN: dict[str, tuple[str, ...]] = {
    "陕西": ("Shaanxi",),
    "内蒙古": ("Inner Mongolia", "Nei Mongol", "Neimenggu"),
    "西藏": ("Tibet", "Xizang"),
    "香港": ("Hong Kong", "Xianggang"),
    "澳门": ("Macao", "Macau", "Aomen"),
    "台湾": ("Taiwan",),
    "厦门": ("Xiamen", "Amoy"),
    "中西": ("Central and Western",),
    "哈尔滨": ("Harbin",),
    "乌鲁木齐": ("Urumqi", "Wulumuqi"),
    "呼和浩特": ("Hohhot", "Huhehaote"),
    "拉萨": ("Lhasa",),
    "扎兰屯": ("Zalantun", "Zhalantun"),
}

# Readings of stems where CC-CEDICT's entry is not the place's name, each checked against the place's
# official English name.
REVIEWED_READINGS: dict[str, tuple[str, ...]] = {
    "万柏林": ("wan", "bai", "lin"),  # Wanbailin District, Taiyuan (CC-CEDICT: bo)
    "石鼓": ("shi", "gu"),  # Shigu District, Hengyang (CC-CEDICT: dan, the unit of measure)
    "栖霞": ("qi", "xia"),  # Qixia, Yantai and Nanjing (CC-CEDICT: xi)
    "色达": ("se", "da"),  # Seda (Sertar) County (CC-CEDICT's full name: shai)
    "扎囊": ("zha", "nang"),  # Zhanang (Dranang) County; CC-CEDICT's own gloss says Zhanang
    "麦盖提": ("mai", "gai", "ti"),  # Maigaiti (Makit) County (CC-CEDICT: ge)
    "筠连": ("jun", "lian"),  # Junlian County, Yibin (筠 reads jun in the place name)
    "龙圩": ("long", "xu"),  # Longxu District, Wuzhou (圩 reads xu; not in CC-CEDICT)
    "红寺堡": ("hong", "si", "bu"),  # Hongsibu District, Wuzhong (堡 reads bu in place names)
    "中牟": ("zhong", "mu"),  # Zhongmu County (CC-CEDICT's full name: mou; its stem entry: mu)
    "长子": ("zhang", "zi"),  # Zhangzi County (CC-CEDICT's full name: chang; its stem entry: zhang)
    # new districts CC-CEDICT does not list, where pypinyin reads 都 as dou and 什 as shen
    "信都": ("xin", "du"),
    "襄都": ("xiang", "du"),
    "郫都": ("pi", "du"),
    "康巴什": ("kang", "ba", "shi"),
}

# Level suffixes, longest first. A two-character level word needs a stem of two characters.
_SUFFIXES = ("特别行政区", "自治区", "自治州", "自治县", "自治旗", "新区", "地区", "特区", "矿区",
             "省", "市", "区", "县", "盟", "旗")
_TWO_CHAR_LEVELS = frozenset({"新区", "地区", "特区", "矿区"})
# China's forestry districts (林区): there is one. Any other name ending in 林区 is a 区 whose stem ends in 林.
FORESTRY_DISTRICTS = frozenset({"神农架林区"})
# China's 55 minority groups as autonomous divisions name them (written with or without 族; a
# one-character name only with it), longest first.
_ETHNIC_GROUPS = tuple(sorted((
    "蒙古", "回", "藏", "维吾尔", "苗", "彝", "壮", "布依", "朝鲜", "满", "侗", "瑶", "白", "土家", "哈尼",
    "哈萨克", "傣", "黎", "傈僳", "佤", "畲", "高山", "拉祜", "水", "东乡", "纳西", "景颇", "柯尔克孜", "土",
    "达斡尔", "仫佬", "羌", "布朗", "撒拉", "毛南", "仡佬", "锡伯", "阿昌", "普米", "塔吉克", "怒", "乌孜别克",
    "俄罗斯", "鄂温克", "德昂", "保安", "裕固", "京", "塔塔尔", "独龙", "鄂伦春", "赫哲", "门巴", "珞巴", "基诺",
    "各",  # 龙胜各族自治县: "of the various groups"
), key=len, reverse=True))

# English level words of a district-level name, by suffix.
LEVEL_EN = {
    "区": "District", "县": "County", "旗": "Banner", "新区": "New Area", "林区": "Forestry District",
    "特区": "Special District", "矿区": "Mining District", "自治县": "Autonomous County",
    "自治旗": "Autonomous Banner",
}


@dataclass(frozen=True, slots=True)
class ZhName:
    """A Chinese division name cut into stem, ethnic groups (of an autonomous one) and level suffix."""

    stem: str
    ethnic: str
    suffix: str


@dataclass(frozen=True, slots=True)
class EnglishName:
    """How a stem reads: its English spellings (the first displayed) and its pinyin syllables."""

    spellings: tuple[str, ...]
    syllables: tuple[str, ...]
    source: str  # "conventional" | "reviewed" | "cc-cedict" | "pypinyin"


def split_level(name: str) -> ZhName:
    """柯桥区 -> (柯桥, '', 区); 恩施土家族苗族自治州 -> (恩施, 土家族苗族, 自治州); 单县 -> (单, '', 县);
    万柏林区 -> (万柏林, '', 区); 神农架林区 -> (神农架, '', 林区); a name with no level word -> (name, '', '')."""
    if name in FORESTRY_DISTRICTS:
        return ZhName(name[:-2], "", "林区")
    for suffix in _SUFFIXES:
        stem = name[: -len(suffix)]
        if not name.endswith(suffix) or not stem:
            continue
        if suffix in _TWO_CHAR_LEVELS and len(stem) < 2:
            continue
        if suffix.startswith("自治"):
            head = _strip_ethnic(stem)
            return ZhName(head, stem[len(head):], suffix)
        return ZhName(stem, "", suffix)
    return ZhName(name, "", "")


def _strip_ethnic(stem: str) -> str:
    """The place part of an autonomous division's stem: 恩施土家族苗族 -> 恩施, 新疆维吾尔 -> 新疆; a
    stem that is only a group's name stays (鄂温克族, 鄂伦春)."""
    while True:
        for group in _ETHNIC_GROUPS:
            forms = (group + "族",) if len(group) == 1 else (group + "族", group)
            cut = next((f for f in forms if stem.endswith(f) and len(stem) - len(f) >= 2), None)
            if cut is not None:
                stem = stem[: -len(cut)]
                break
        else:
            return stem


def short_zh(name: str) -> str:
    """The name without its level word as a Chinese alias (柯桥区 -> 柯桥, 广西壮族自治区 -> 广西); the
    name itself when the stem would be one character (单县 stays 单县) or nothing strips."""
    stem = split_level(name).stem
    return stem if len(stem) >= 2 else name


@lru_cache(maxsize=1)
def _cedict() -> dict[str, Any]:
    """CC-CEDICT's phrase readings, as ``pypinyin-dict`` ships them (phrase -> [[reading, ...], ...])."""
    return require("pypinyin_dict.phrase_pinyin_data.cc_cedict", "geo", "pypinyin-dict").phrases_dict  # type: ignore[no-any-return]


def _toneless(syllable: str) -> str:
    tones = require("pypinyin.contrib.tone_convert", "geo", "pypinyin")
    return str(tones.to_normal(syllable)).lower()


def _from_cedict(name: str, stem: str) -> tuple[str, ...] | None:
    table = _cedict()
    for phrase in (name, stem):
        entry = table.get(phrase)
        if entry and len(entry) == len(phrase) and phrase.startswith(stem):
            return tuple(_toneless(r[0]) for r in entry[: len(stem)])
    return None


def _from_pypinyin(name: str, stem: str) -> tuple[str, ...]:
    pypinyin = require("pypinyin", "geo")
    for text in (name, stem):
        sylls = pypinyin.lazy_pinyin(text, errors="ignore")
        if len(sylls) == len(text):
            return tuple(s.lower() for s in sylls[: len(stem)])
    return tuple(s.lower() for s in pypinyin.lazy_pinyin(stem, errors="ignore"))


def reading_source(name: str) -> tuple[tuple[str, ...], str]:
    """The stem's pinyin syllables (tone-less) and which source gave them: "reviewed",
    "cc-cedict" or "pypinyin" (see the module docstring for the order)."""
    zh = split_level(name)
    if zh.stem in REVIEWED_READINGS:
        return REVIEWED_READINGS[zh.stem], "reviewed"
    full = zh.stem + zh.ethnic + zh.suffix
    found = _from_cedict(full, zh.stem)
    if found is not None:
        return found, "cc-cedict"
    return _from_pypinyin(full, zh.stem), "pypinyin"


def join_syllables(sylls: tuple[str, ...] | list[str]) -> str:
    """Pinyin written as one word, with the apostrophe where a syllable starts with a vowel: Xi'an."""
    out = ""
    for s in sylls:
        out += ("'" if out and s[:1] in "aoe" else "") + s
    return out


@lru_cache(maxsize=8192)
def english_name(name: str) -> EnglishName:
    """English spellings of a division's stem (长治市 -> Changzhi, 单县 -> Shan), the first displayed."""
    stem = split_level(name).stem
    sylls, source = reading_source(name)
    if stem in CONVENTIONAL_EN:
        return EnglishName(CONVENTIONAL_EN[stem], sylls, "conventional")
    if not sylls:
        return EnglishName((), (), source)
    return EnglishName((join_syllables(sylls).capitalize(),), sylls, source)
