"""Unseen albums made from a PhotoBench album: the same photos, other people, cities and years.

The query planner is judged on albums it has never seen, but only one album is public.
``make_heldout(src, dst, spec)`` writes a PhotoBench album folder (same five files) that
is ``src`` moved to a new life:

- **people** get other names, consistently in both languages: every Chinese name character
  of a nickname (李, 晓, 彤 in 李晓彤; 小/老/阿/大/哥/姐 are kept as nickname affixes) is
  replaced by a character of another name (surnames by surnames), and its pinyin in the
  English nickname aligned with it by the new pinyin ("Li Xiaotong" -> "Cao Ruiqi",
  "Little Li" -> "Little Cao", "Tongtong" -> "Qiqi"); a nickname shared by two people
  stays shared;
- **places** move to other cities: each district with photos is moved, with its photos'
  positions relative to its centroid, to a district of a city in another province (checked
  with the offline reverse geocoder; points are pulled towards the new centroid until they
  fall inside it); district, city and province names in the queries follow, in their long
  and short forms, in both languages;
- **years** shift by a multiple of 28 (the Gregorian weekday and leap-year cycle, so
  weekends and February 29 survive; lunar festivals do not — queries naming one are listed
  in ``heldout.json`` under ``lunar_queries``), in the photos' times and the queries' years
  ("2023", "2023年", "23年").

Query texts are rewritten with one longest-first pass over the original text (people and
places) and one over years; the ground truth (photo file names) is unchanged. ``heldout.json``
in the new folder records the spec and every rename, so a test can check consistency.
"""

from __future__ import annotations

import json
import random
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from finegrain._lazy import require
from finegrain.album.engine.profile.places import _short_zh, reverse_geocode_many
from finegrain.atomic import write_text
from finegrain.errors import FinegrainError
from finegrain.text.lang import CJK

# Nickname affixes that are words, not name characters (小李 = Little Li, 阳哥 = Yang Ge).
_AFFIXES = frozenset("小老阿大哥姐")
# Name characters to draw from; pinyin that is an English word or a month is left out below.
_SURNAMES = "吴郑冯许韩唐梁谢罗郭曹彭董袁邓蒋沈杜程苏丁薛田任姚方石余顾秦魏钱严蔡孔邹熊崔龚廖邱侯卢傅钟"
_GIVEN = "睿琪瑶萱皓铭煜翊霖珂昕岚筠璐朗泽祺钰菲婧晗玥珊蕾彦舒雯茜婷柏楠凯斌峰磊畅逸诺熙涵妍"
_NOT_PINYIN = frozenset({"sun", "he", "tan", "fan", "may", "jun", "an", "bo", "pan", "song", "ye", "man", "long",
                         "hang", "bang", "gang", "ban", "den", "fang", "ding", "shi", "yu", "ren", "xie"})
_MUNICIPALITIES = ("11", "12", "31", "50")  # province adcodes that are cities
_SPECIAL = ("71", "81", "82")  # Taiwan, Hong Kong, Macao
_YEAR_CYCLE = 28
_LUNAR = re.compile(r"spring festival|chinese new year|lunar new year|mid-autumn|dragon boat|qixi|lantern festival|"
                    r"春节|过年|除夕|年三十|中秋|端午|七夕|元宵|大年", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class HeldoutSpec:
    """One transformed album: its ``name``, the random ``seed`` of its renames and moves, its
    ``year_shift`` (a non-zero multiple of 28), and how many people get an English nickname
    (``english_names``) in place of their given name in English, drawn from names that are
    also words of time ("May", "Summer", "Dawn", "Eve") or of things ("Sky", "Rose")."""

    name: str
    seed: int
    year_shift: int
    english_names: int = 0

    def __post_init__(self) -> None:
        if self.year_shift == 0 or self.year_shift % _YEAR_CYCLE:
            raise FinegrainError(
                f"year shift {self.year_shift} of held-out album {self.name!r} is not a non-zero multiple of 28",
                "use e.g. -28, 28 or -56: weekdays and leap years repeat every 28 years",
            )


DEFAULT_SPECS = (
    HeldoutSpec("unseen-a", 1, -28),
    HeldoutSpec("unseen-b", 2, 28, english_names=3),
    HeldoutSpec("unseen-c", 3, -56, english_names=5),
)
ENGLISH_NAMES = ("April", "May", "June", "Summer", "Autumn", "Dawn", "Eve", "Sky", "Joy", "Grace", "Jack", "Lily",
                 "Rose", "Max", "Leo", "Hope")


@dataclass(frozen=True)
class HeldoutAlbum:
    """What ``make_heldout`` wrote: the folder, the spec and the renames it applied."""

    path: Path
    spec: HeldoutSpec
    people: Mapping[str, str]  # old nickname -> new nickname (both languages)
    places: Mapping[str, str]  # old place name -> new place name (long and short forms, both languages)
    districts: Mapping[str, str]  # old district adcode -> new district adcode
    lunar_queries: tuple[int, ...]  # indexes (in protected_query.json) of queries naming a lunar festival


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FinegrainError(f"no {path.name} in {path.parent}", "give a PhotoBench album folder") from None


def _pinyin(char: str) -> str:
    pypinyin = require("pypinyin", "geo")
    return str(pypinyin.lazy_pinyin(char)[0]).lower()


# ------------------------------------------------------------------------------------ people


def _name_chars(en: Mapping[str, Sequence[str]], cn: Mapping[str, Sequence[str]]) -> dict[str, tuple[str, bool]]:
    """Name character -> (its pinyin, is a surname), from the nickname pairs (en[i], cn[i])."""
    chars: dict[str, tuple[str, bool]] = {}
    for pid, zh_names in cn.items():
        en_names = en.get(pid, ())
        if len(en_names) != len(zh_names):
            raise FinegrainError(
                f"person {pid} has {len(en_names)} English and {len(zh_names)} Chinese nicknames",
                "the face files must list the same nicknames in the same order in both languages",
            )
        for e, z in zip(en_names, zh_names):
            flat = re.sub(r"[\s\-]", "", e).lower()
            for i, c in enumerate(z):
                if CJK.match(c) and c not in _AFFIXES and _pinyin(c) in flat:
                    surname = len(z) == 3 and i == 0
                    old = chars.get(c)
                    chars[c] = (_pinyin(c), surname or (old is not None and old[1]))
    return chars


def _char_map(chars: Mapping[str, tuple[str, bool]], rng: random.Random) -> dict[str, tuple[str, str, str]]:
    """Old name character -> (new character, old pinyin, new pinyin): injective, new pinyin
    distinct and never an old one."""
    old_py = {py for py, _ in chars.values()}
    pools: dict[bool, list[str]] = {}
    for surname, chars_of in ((True, _SURNAMES), (False, _GIVEN)):
        cands = [c for c in chars_of if c not in chars and _pinyin(c) not in _NOT_PINYIN and _pinyin(c) not in old_py]
        rng.shuffle(cands)
        pools[surname] = cands
    used_py: set[str] = set()
    out = {}
    for c in sorted(chars):
        py, surname = chars[c]
        pool: list[str] = pools[surname] or pools[not surname]
        while pool and _pinyin(pool[0]) in used_py:
            pool.pop(0)
        if not pool:
            raise FinegrainError("ran out of new name characters", "the album has more name characters than the pool")
        new = pool.pop(0)
        used_py.add(_pinyin(new))
        out[c] = (new, py, _pinyin(new))
    return out


def _rename_zh(name: str, cmap: Mapping[str, tuple[str, str, str]]) -> str:
    return "".join(cmap[c][0] if c in cmap else c for c in name)


def _rename_en(en: str, zh: str, cmap: Mapping[str, tuple[str, str, str]]) -> str:
    """``en`` with each word that spells the pinyin of a run of ``zh``'s characters (in order)
    respelled with the new pinyin of its name characters ("Xiaotong" of 晓彤, "Li" of 小李,
    not the "Li" of "Little"); affixes (小 xiao, 哥 ge) and translated words stay."""
    sylls = [(c, cmap[c][1] if c in cmap else _pinyin(c)) for c in zh if CJK.match(c)]
    words = re.split(r"(\s+|-)", en)
    at = 0
    for w_i, word in enumerate(words):
        if not word.strip() or word == "-":
            continue
        low = word.lower()
        for start in range(at, len(sylls)):
            if any(c not in _AFFIXES for c, _ in sylls[at:start]):
                break
            end, spelled = start, ""
            while end < len(sylls) and len(spelled) < len(low):
                spelled += sylls[end][1]
                end += 1
            if spelled == low:
                parts = [cmap[c][2] if c in cmap else py for c, py in sylls[start:end]]
                new = "".join(parts)
                words[w_i] = new.capitalize() if word[0].isupper() else new
                at = end
                break
    return "".join(words)


def rename_people(
    en: Mapping[str, Sequence[str]], cn: Mapping[str, Sequence[str]], rng: random.Random
) -> tuple[dict[str, list[str]], dict[str, list[str]], dict[str, tuple[str, str, str]]]:
    """New nickname lists (en, cn) and the character map used."""
    cmap = _char_map(_name_chars(en, cn), rng)
    new_cn = {pid: [_rename_zh(z, cmap) for z in names] for pid, names in cn.items()}
    new_en = {pid: [_rename_en(e, z, cmap) for e, z in zip(names, cn.get(pid, ()))] for pid, names in en.items()}
    return new_en, new_cn, cmap


def english_nicknames(
    en: Mapping[str, Sequence[str]], cn: Mapping[str, Sequence[str]], cmap: Mapping[str, tuple[str, str, str]],
    count: int, rng: random.Random,
) -> dict[str, tuple[str, str]]:
    """For ``count`` people (never the owner): person id -> (the English nickname to replace,
    an English given name). The replaced nickname is the one that spells a two-character
    given name ("Xiaotong" of 晓彤), so "Li Xiaotong" and "Little Li" keep their pinyin."""
    cands = []
    for pid, names in en.items():
        given = [e for e, z in zip(names, cn.get(pid, ()))
                 if len(z) == 2 and all(c in cmap for c in z) and z[0] != z[1] and " " not in e]
        if pid != "1" and given:
            cands.append((pid, given[0]))
    rng.shuffle(cands)
    pool = list(ENGLISH_NAMES)
    rng.shuffle(pool)
    return {pid: (old, pool[i]) for i, (pid, old) in enumerate(sorted(cands[:count]))}


# ------------------------------------------------------------------------------------ places


def _short_en(name: str) -> str:
    for suffix in (" District", " New Area", " City", " County", " Province"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _forms(level: Any) -> list[tuple[str, str]]:
    """(lang, text) forms of a geocoder place level a query may use."""

    return [("zh", level.zh), ("zh", _short_zh(level.zh)), ("en", level.en), ("en", _short_en(level.en))]


def _regions() -> Any:
    return require("GeoToolCN", "geo", "geotool-cn").GeoTool()


def move_places(
    points: Mapping[str, tuple[float, float]], rng: random.Random
) -> tuple[dict[str, tuple[float, float]], dict[str, str], dict[str, str]]:
    """New positions of the photos (``photo id -> (lat, lon)``), old -> new place names, and
    old -> new district adcodes."""

    ids = sorted(points)
    # a photo's district as the plan vocabulary sees it (points rounded to 3 decimals), so that
    # every district name the planner knows for the album is renamed
    places = reverse_geocode_many([(round(points[i][0], 3), round(points[i][1], 3)) for i in ids])
    by_district: dict[str, list[str]] = defaultdict(list)
    level_of: dict[str, Any] = {}
    for pid, place in zip(ids, places):
        if place is None or place.district is None or place.city is None or place.province is None:
            continue
        by_district[place.district.code].append(pid)
        for lv in (place.province, place.city, place.district):
            level_of[lv.code] = lv
    geo = _regions()
    districts = geo.list_regions("district")
    cities = [c for c in geo.list_regions("city") if c.code[:2] not in (*_MUNICIPALITIES, *_SPECIAL)]
    old_provinces = {code[:2] for code in by_district}
    old_cities: dict[str, list[str]] = defaultdict(list)  # old city adcode prefix -> old district codes
    for code in sorted(by_district):
        old_cities[code[:4]].append(code)
    provinces = sorted({c.code[:2] for c in cities} - old_provinces)
    rng.shuffle(provinces)
    target_province: dict[str, str] = {}
    for i, p in enumerate(sorted(old_provinces)):
        target_province[p] = provinces[i % len(provinces)]
    used_cities: set[str] = set()
    # a new name must not be another new place's name (吉林市 in 吉林省) nor an old one
    taken_names = {_short(r.name) for r in geo.list_regions("province")}
    taken_names |= {_short(lv.zh) for lv in level_of.values()}
    moved: dict[str, tuple[float, float]] = {}
    renames: dict[str, str] = {}
    new_levels: dict[str, Any] = {}
    for city4, old_ds in sorted(old_cities.items()):
        prov = target_province[city4[:2]]
        cands = [c for c in cities if c.code[:2] == prov and c.code not in used_cities]
        cands += [c for c in cities if c.code[:2] not in old_provinces and c.code[:2] != prov
                  and c.code not in used_cities]
        for city in cands:
            if _short(city.name) in taken_names:
                continue
            pool = [d for d in districts if d.code[:4] == city.code[:4]
                    and _short(d.name) not in taken_names | {_short(city.name)}]
            if len(pool) < len(old_ds):
                continue
            result = _move_city(old_ds, by_district, points, pool, geo, rng)
            if result is not None:
                used_cities.add(city.code)
                taken_names.add(_short(city.name))
                taken_names.update(_short(geo.get_region(code).name) for code in result[1].values())
                moved.update(result[0])
                renames.update(result[1])
                break
        else:
            raise FinegrainError(f"found no city to move the photos of {city4}00 to", "try another seed")
    # the new levels' names, from geocoding the moved points
    new_ids = sorted(moved)
    for new_place in reverse_geocode_many([moved[i] for i in new_ids]):
        for new_lv in (new_place.province, new_place.city, new_place.district) if new_place else ():
            if new_lv is not None:
                new_levels[new_lv.code] = new_lv
    names: dict[str, str] = {}
    # provinces first: a municipality's city (上海 the city) overrides its province (上海 the province)
    for old_code, new_code in sorted(renames.items()):
        pairs = [(level_of[old_code[:2] + "0000"], new_levels[new_code[:2] + "0000"]),
                 (_city(level_of, old_code), _city(new_levels, new_code)),
                 (level_of[old_code], new_levels[new_code])]
        for old, new in pairs:
            if old is None or new is None:
                continue
            for (la, a), (lb, b) in zip(_forms(old), _forms(new)):
                if la == lb and a and b and len(a) >= 2:
                    names[a] = b
    return moved, names, renames


def _short(zh: str) -> str:
    return str(_short_zh(zh))


def _city(levels: Mapping[str, Any], district_code: str) -> Any:
    return levels.get(district_code[:4] + "00") or levels.get(district_code[:2] + "0000")


def _move_city(
    old_ds: list[str], by_district: Mapping[str, list[str]], points: Mapping[str, tuple[float, float]],
    pool: list[Any], geo: Any, rng: random.Random,
) -> tuple[dict[str, tuple[float, float]], dict[str, str]] | None:
    """Move each old district's photos into a distinct district of ``pool`` (None when they do not fit)."""
    pool = list(pool)
    rng.shuffle(pool)
    moved: dict[str, tuple[float, float]] = {}
    renames: dict[str, str] = {}
    for old in old_ds:
        src = geo.get_region(old)
        for target in [d for d in pool if d.code not in renames.values()]:
            placed = _place_into(by_district[old], points, src, target, geo)
            if placed is not None:
                moved.update(placed)
                renames[old] = target.code
                break
        else:
            return None
    return moved, renames


def _place_into(
    ids: list[str], points: Mapping[str, tuple[float, float]], src: Any, target: Any, geo: Any
) -> dict[str, tuple[float, float]] | None:
    out = {}
    for pid in ids:
        lat, lon = points[pid]
        for scale in (1.0, 0.5, 0.25, 0.1, 0.0):
            p = (round(target.latitude + (lat - src.latitude) * scale, 6),
                 round(target.longitude + (lon - src.longitude) * scale, 6))
            found = geo.reverse(*p)
            if found.district is not None and found.district.code == target.code:
                out[pid] = p
                break
        else:
            return None
    return out


# ------------------------------------------------------------------------------------ text


def _pattern(old: str) -> str:
    if CJK.search(old):
        return re.escape(old)
    parts = [re.escape(p) for p in re.split(r"[\s\-]+", old) if p]
    return r"(?<![A-Za-z])" + r"[\s\-]?".join(parts) + r"(?![a-z])"


def _styled(matched: str, new: str) -> str:
    """``new`` in the spacing and case of ``matched`` ("haoge" for "Hao Ge")."""
    if CJK.search(new):
        return new
    if " " not in matched and " " in new:
        head, *rest = new.split()
        new = head + "".join(w.lower() for w in rest)
    if matched.islower():
        new = new.lower()
    return new


_OPEN, _CLOSE = "\x02", "\x03"  # around replaced text while later passes run


class Rewriter:
    """Replace many names at once, longest first, never inside text already replaced.

    ``mark=True`` wraps each replacement in control characters (see :func:`_unmark`) so a
    later pass can leave it alone."""

    def __init__(self, table: Mapping[str, str]) -> None:
        self.table = {k: v for k, v in table.items() if k and k != v}
        keys = sorted(self.table, key=lambda k: (-len(k), k))
        self._re = re.compile("|".join(f"({_pattern(k)})" for k in keys), re.IGNORECASE) if keys else None
        self._keys = keys

    def __call__(self, text: str, *, mark: bool = False) -> str:
        if self._re is None:
            return text

        def sub(m: re.Match[str]) -> str:
            key = self._keys[m.lastindex - 1] if m.lastindex else m.group(0)
            new = _styled(m.group(0), self.table[key])
            return f"{_OPEN}{new}{_CLOSE}" if mark else new

        return self._re.sub(sub, text)


def _unmark(text: str) -> str:
    return text.replace(_OPEN, "").replace(_CLOSE, "")


def _leftover_names(en: str, zh: str, cn_aliases: Iterable[str], cmap: Mapping[str, tuple[str, str, str]]) -> str:
    """Pinyin of part of a nickname the Chinese query uses, spelled another way in the English
    query ("Hao" for 浩哥, "Chen Yang" for 晨阳): capitalised words outside the replaced text
    that spell a run of name characters of such a nickname get the new pinyin."""
    spell: dict[str, str] = {}
    for alias in cn_aliases:
        if alias not in zh:
            continue
        chars = [c for c in alias if c in cmap]
        for i in range(len(chars)):
            for j in range(i + 1, len(chars) + 1):
                spell.setdefault("".join(cmap[c][1] for c in chars[i:j]), "".join(cmap[c][2] for c in chars[i:j]))
    if not spell:
        return en
    out, depth, word = [], 0, ""
    for ch in en + " ":
        if ch == _OPEN:
            depth += 1
        elif ch == _CLOSE:
            depth -= 1
        if depth == 0 and ch.isalpha() and ch not in (_OPEN, _CLOSE):
            word += ch
            continue
        if word:
            new = spell.get(word.lower()) if word[0].isupper() else None
            out.append(new.capitalize() if new else word)
            word = ""
        out.append(ch)
    return "".join(out)[:-1]


def shift_years_text(text: str, shift: int, lang: str) -> str:
    """Years in ``text`` moved by ``shift``: "2023", "2023年", and in Chinese "23年"."""
    text = re.sub(r"(?<![\d-])((?:19|20)\d\d)(?![\d])", lambda m: str(int(m[1]) + shift), text)
    if lang == "zh":
        text = re.sub(r"(?<!\d)(\d\d)(?=年)", lambda m: f"{(int(m[1]) + shift) % 100:02d}", text)
    else:
        text = re.sub(r"'(\d\d)\b", lambda m: f"'{(int(m[1]) + shift) % 100:02d}", text)
    return text


def _shift_time(value: str | None, shift: int) -> str | None:
    if not value:
        return value
    t = datetime.fromisoformat(value)
    return t.replace(year=t.year + shift).isoformat()


# ------------------------------------------------------------------------------------ album


def make_heldout(src: str | Path, dst: str | Path, spec: HeldoutSpec) -> HeldoutAlbum:
    """Write ``src`` (a PhotoBench album folder) transformed by ``spec`` to ``dst``."""
    src, dst = Path(src), Path(dst)
    rng = random.Random(spec.seed)
    meta = _read(src / "metadata.json")
    face_en, face_cn = _read(src / "face_info_en.json"), _read(src / "face_info_cn.json")
    new_en, new_cn, cmap = rename_people(face_en["face_id_to_nicknames"], face_cn["face_id_to_nicknames"], rng)
    english = english_nicknames(face_en["face_id_to_nicknames"], face_cn["face_id_to_nicknames"], cmap,
                                spec.english_names, rng)
    for pid, (old, name) in english.items():
        at = face_en["face_id_to_nicknames"][pid].index(old)
        new_en[pid][at] = name
    people: dict[str, str] = {}
    for old_lists, new_lists in ((face_en["face_id_to_nicknames"], new_en), (face_cn["face_id_to_nicknames"], new_cn)):
        for pid, names in old_lists.items():
            for old, new in zip(names, new_lists[pid]):
                people.setdefault(old, new)
    points = {k: (v["latitude"], v["longitude"]) for k, v in meta.items()
              if v.get("latitude") is not None and v.get("longitude") is not None}
    moved, places, districts = move_places(points, rng)
    new_meta = {}
    for k, v in meta.items():
        lat, lon = moved.get(k, (v.get("latitude"), v.get("longitude")))
        new_meta[k] = {**v, "latitude": lat, "longitude": lon, "time": _shift_time(v.get("time"), spec.year_shift)}
    rewrite = Rewriter({**places, **people})  # a nickname wins over a place spelled the same
    cn_aliases = [a for names in face_cn["face_id_to_nicknames"].values() for a in names]

    def query(q: dict[str, Any]) -> dict[str, Any]:
        en = _unmark(_leftover_names(rewrite(q["query_en"], mark=True), q["query_cn"], cn_aliases, cmap))
        return {**q, "query_en": shift_years_text(en, spec.year_shift, "en"),
                "query_cn": shift_years_text(rewrite(q["query_cn"]), spec.year_shift, "zh")}

    dst.mkdir(parents=True, exist_ok=True)
    lunar: list[int] = []
    for path in sorted(src.glob("*_query.json")):
        rows = _read(path)
        if path.name == "protected_query.json":
            lunar = [i for i, q in enumerate(rows) if _LUNAR.search(q["query_en"]) or _LUNAR.search(q["query_cn"])]
        _write(dst / path.name, [query(q) for q in rows])
    _write(dst / "metadata.json", new_meta)
    _write(dst / "face_info_en.json", {**face_en, "face_id_to_nicknames": new_en})
    _write(dst / "face_info_cn.json", {**face_cn, "face_id_to_nicknames": new_cn})
    record = {"source": str(src), "spec": {"name": spec.name, "seed": spec.seed, "year_shift": spec.year_shift},
              "people": people, "places": places, "districts": districts, "name_characters": {k: list(v) for k, v in cmap.items()},
              "lunar_queries": lunar}
    _write(dst / "heldout.json", record)
    return HeldoutAlbum(dst, spec, people, places, districts, tuple(lunar))


def _write(path: Path, data: Any) -> None:
    write_text(path, json.dumps(data, ensure_ascii=False, indent=1))

