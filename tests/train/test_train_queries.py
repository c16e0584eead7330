"""``finegrain.train`` query generation and ``finegrain gen-queries``: KW by hand, SM siblings on real Flickr8k,
zh KW on real CapRetrieval passages, a stub LLM endpoint, the ROUGE-L leakage filter, and bad input."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from rich.cells import cell_len

from finegrain.build.textset import as_text_set
from finegrain.cli.main import main
from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.llm import ReplyCache
from finegrain.text.lang import has_cjk
from finegrain.train.finetune_data import read_pairs
from finegrain.train.llm import LLMSettings, validate_queries
from finegrain.train.queries import generate_queries, read_pool
from finegrain.train.rules import Candidate, idf_table, rank_keywords, score_keywords
from llm_stub import chat_server


def _jsonl(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _by(qs, pid: str, style: str) -> list[str]:  # noqa: ANN001
    return [p.query for p in qs.pairs if p.passage_id == pid and p.style == style]


# --------------------------------------------------------------------------- KW by hand


def test_idf_and_tf_idf_ranking_by_hand() -> None:
    idf, unseen = idf_table([["x", "y"], ["x"], ["z"]])
    assert idf["x"] == pytest.approx(math.log(4 / 3) + 1)
    assert idf["y"] == pytest.approx(math.log(4 / 2) + 1)
    assert unseen == pytest.approx(math.log(4) + 1)
    cands = [Candidate("y", ("y",)), Candidate("x y", ("x", "y"), "phrase"), Candidate("x", ("x",)), Candidate("x", ("x",)),
             Candidate("the", ("the",))]
    # "x y": 1.288 + 1.693 = 2.98; "x": tf 2 * 1.288 = 2.58; "y": 1.69; "the" is a stop word: score 0, dropped;
    # the nouns x and y make no pair: the phrase "x y" already holds both
    assert rank_keywords(cands, idf, unseen, "en") == ["x y", "x", "y"]
    # two nouns no phrase holds together make a pair, scored as both: 1.29 + 1.69, placed where the later one is
    cands = [Candidate("y", ("y",)), Candidate("x", ("x",)), Candidate("runs", ("runs",), "verb")]
    ranked = score_keywords(cands, idf, unseen, "en")
    assert [(k.text, k.kind) for k in ranked] == [("y x", "pair"), ("runs", "verb"), ("y", "noun"), ("x", "noun")]
    assert ranked[0].score == pytest.approx(idf["x"] + idf["y"])


def test_english_kw_on_a_tiny_pool() -> None:
    pool = as_text_set({"d0": "A dog runs in the park .", "d1": "A cat sleeps in the park .",
                        "d2": "A dog and a cat ."}, "passages")
    qs = generate_queries(pool, style="kw", lang="en")
    # idf over 3 passages: runs ln(4/2)+1 = 1.69 > dog = park = ln(4/3)+1 = 1.29; phrases score the sum of
    # their words; the hypernym canine follows its noun; park has no sense these words point to
    assert _by(qs, "d0", "kw") == ["dog runs in park", "dog runs", "runs in park", "runs", "dog", "canine", "park"]
    assert {p.source for p in qs.pairs} == {"rules"}
    assert qs.stats()[0].passages == 3
    assert qs.stats()[0].hypernyms == sum(p.query in ("canine", "feline", "true cat") for p in qs.pairs)


def test_kw_has_multi_word_keyphrases_on_real_flickr8k(flickr_lines) -> None:  # noqa: ANN001
    """KW queries are keyphrases, not only single words: chunk + prepositional object, verb + object,
    subject + verb, adjective + noun, in the first Flickr8k caption; most queries of the pool have 2+ words."""
    pool = as_text_set({cid: c.strip() for cid, c in flickr_lines[:200]}, "passages")
    qs = generate_queries(pool, style="kw", lang="en", per_passage=30, max_query_share=1)
    first = _by(qs, flickr_lines[0][0], "kw")
    assert {"child in pink dress", "climbing up stairs", "child climbing", "pink dress"} <= set(first)
    kinds = {p.kind for p in qs.pairs}
    assert {"noun-prep", "verb-object", "subject-verb", "phrase", "pair", "noun", "hypernym"} <= kinds
    lengths = [len(p.query.split()) for p in qs.pairs]
    assert sum(n >= 2 for n in lengths) / len(lengths) > 0.5 and sum(lengths) / len(lengths) > 1.8


# --------------------------------------------------------------------------- SM


@pytest.fixture(scope="module")
def flickr_lines(data_root: Path) -> list[tuple[str, str]]:
    path = data_root / "flickr8k" / "Flickr8k.token.txt"
    lines = path.read_text(encoding="utf-8").splitlines()[:600]
    return [tuple(line.split("\t", 1)) for line in lines]  # type: ignore[misc]


def test_sm_siblings_on_real_flickr8k(tmp_path: Path, data_root: Path, flickr_lines) -> None:  # noqa: ANN001
    token = data_root / "flickr8k" / "Flickr8k.token.txt"
    pool = _jsonl(tmp_path / "pool.jsonl", [{"_id": f"p{i}", "text": c.strip()} for i, (_, c) in
                                            enumerate(flickr_lines)])
    qs = generate_queries(pool, style="sm", lang="en", siblings=f"flickr8k:{token}")
    assert qs.n_passages == 600
    first_image = [c.strip() for cid, c in flickr_lines if cid.startswith("1000268201_693b08cb0e.jpg#")]
    assert len(first_image) == 5
    assert _by(qs, "p0", "sm") == first_image[1:]
    assert _by(qs, "p3", "sm") == [first_image[k] for k in (0, 1, 2, 4)]
    stats = qs.stats()[0]
    assert stats.sources["siblings"] == 600 * 4 and stats.queries_per_passage == 4
    # Flickr8k's own ids group themselves; --group-by-prefix does the same by hand; --per-passage samples
    ids = _jsonl(tmp_path / "ids.jsonl", [{"_id": cid, "text": c.strip()} for cid, c in flickr_lines[:10]])
    assert read_pool(ids).grouping == "ids NAME#n"
    two = generate_queries(ids, style="sm", lang="en", per_passage=2, seed=3)
    assert all(len(_by(two, f"{cid}", "sm")) == 2 for cid, _ in flickr_lines[:10])
    assert set(_by(two, flickr_lines[0][0], "sm")) <= set(first_image[1:])
    dash = _jsonl(tmp_path / "dash.jsonl", [{"_id": f"img{i // 5}-{i}", "text": c.strip()} for i, (_, c) in
                                            enumerate(flickr_lines[:10])])
    assert _by(generate_queries(dash, style="sm", lang="en", group_by_prefix="-"), "img0-0", "sm") == first_image[1:]


def test_sm_compression_without_siblings() -> None:
    pool = as_text_set({"a": "A child in a pink dress is climbing up a set of stairs .",
                        "b": "Dogs ."}, "passages")
    qs = generate_queries(pool, style="sm", lang="en")
    assert _by(qs, "a", "sm") == ["A child in a dress is climbing up a set of stairs",
                                  "A child is climbing up a set of stairs"]
    assert _by(qs, "b", "sm") == []  # nothing shorter than the passage: no query, no denominator
    assert qs.stats()[0].passages == 1


def test_sm_source_compress_makes_summaries_of_the_passage_even_with_siblings(tmp_path: Path,
                                                                             flickr_lines) -> None:  # noqa: ANN001
    """``sm_source="compress"``: no sibling caption is a query, every SM query is a compression of its own
    passage; ``"siblings"``: siblings only, so a passage without siblings gets no SM query."""
    ids = _jsonl(tmp_path / "ids.jsonl", [{"_id": cid, "text": c.strip()} for cid, c in flickr_lines[:20]])
    auto = generate_queries(ids, style="sm", lang="en")
    assert {p.source for p in auto.pairs} == {"siblings"}
    squeezed = generate_queries(ids, style="sm", lang="en", sm_source="compress")
    assert squeezed.pairs and {p.source for p in squeezed.pairs} == {"rules"}
    captions = {c.strip() for _, c in flickr_lines[:20]}
    assert not captions & {p.query for p in squeezed.pairs}
    assert all(set(p.query.lower().split()) <= set(p.passage.lower().split()) for p in squeezed.pairs)
    assert _by(squeezed, flickr_lines[0][0], "sm") == ["A child in a dress is climbing up a set of stairs in an entry way",
                                                       "A child is climbing up a set of stairs"]
    assert squeezed.provenance["sm_source"] == "compress" and squeezed.stats()[0].sources["siblings"] == 0
    lone = as_text_set({"a": "A child in a pink dress is climbing up a set of stairs ."}, "passages")
    assert generate_queries(lone, style="sm", lang="en", sm_source="siblings").pairs == ()


def test_each_pair_carries_its_passage_group(tmp_path: Path, flickr_lines) -> None:  # noqa: ANN001
    """Training keeps the captions of one image out of one batch: each pair says its passage's sibling group
    (the image), and the pairs file stays readable by finetune_data.read_pairs."""
    ids = _jsonl(tmp_path / "ids.jsonl", [{"_id": cid, "text": c.strip()} for cid, c in flickr_lines[:10]])
    qs = generate_queries(ids, style="both", lang="en")
    assert all(p.group == p.passage_id.rsplit("#", 1)[0] for p in qs.pairs)
    out = qs.write(tmp_path / "pairs.jsonl")
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert {r["group"] for r in rows} == {cid.rsplit("#", 1)[0] for cid, _ in flickr_lines[:10]}
    assert len(read_pairs(out).pairs) == len(rows)


def test_a_generic_query_is_kept_only_where_it_is_most_salient() -> None:
    """A query made for more than max(20, share x pool) passages is dropped where its share of the
    passage's TF-IDF is smallest (the longest passages here), and the provenance counts the drops."""
    things = ["ball", "stick", "bone", "rope", "shoe", "hat", "toy", "box", "sock", "cup", "tire", "log",
              "brick", "can", "ring", "leaf", "rock", "bell", "kite", "drum", "sled", "fork", "lamp", "mat"]
    texts = {f"p{k:02d}": f"A dog chews a {t}" + " near a red car and a blue boat and a green tree" * (k % 3)
             for k, t in enumerate(things)}
    pool = as_text_set(texts, "passages")
    qs = generate_queries(pool, style="kw", lang="en", per_passage=50)
    holders = {p.passage_id for p in qs.pairs if p.query == "dog"}
    assert len(holders) == 20
    assert holders >= {k for k in texts if int(k[1:]) % 3 == 0}  # the 8 shortest passages keep it
    gen = qs.provenance["generic"]
    assert gen["max_units_per_query"] == 20 and gen["max_query_share"] == 0.005
    assert gen["kw"]["capped_queries"] >= 1 and ["dog", 24] in gen["kw"]["most_generic"]
    assert gen["kw"]["dropped"] >= 4
    every = generate_queries(pool, style="kw", lang="en", per_passage=50, max_query_share=1)
    assert len({p.passage_id for p in every.pairs if p.query == "dog"}) == 24
    assert every.provenance["generic"]["kw"]["dropped"] == 0


# --------------------------------------------------------------------------- zh KW


def test_zh_kw_with_jieba_on_real_capretrieval(tmp_path: Path, data_root: Path) -> None:
    src = data_root / "capretrieval" / "zh" / "candidates.jsonl"
    rows = [json.loads(line) for line in src.read_text(encoding="utf-8").splitlines()[:200]]
    pool = _jsonl(tmp_path / "zh.jsonl", rows)
    qs = generate_queries(pool, style="kw", lang="zh", per_passage=8)
    text0 = rows[0]["text"]
    assert text0.startswith("图片中显示了一个安装在墙上的燃气表")
    kw0 = _by(qs, "cr.0", "kw")
    assert "燃气表" in kw0 and "管道" in kw0 and len(kw0) <= 8
    # zh KW are words of the passage, noun runs, a verb and its object, or pairs of salient nouns
    assert all(set(k.replace(" ", "")) <= set(text0) for k in kw0)
    assert {"verb-object", "pair"} <= {p.kind for p in qs.pairs}
    assert not {"的", "一个", "了"} & set(kw0)
    assert all(has_cjk(p.query) or p.query.isascii() for p in qs.pairs)
    assert qs.stats()[0].passages == len({p.passage_id for p in qs.pairs})


# --------------------------------------------------------------------------- LLM stub


def _keywords_reply(calls: dict[str, int]) -> Callable[[str], str | int]:
    """Answers by the passage's first word: valid, fenced, flaky then valid, a copy, HTTP 500, prose."""

    def reply(prompt: str) -> str | int:
        passage = prompt.rsplit("Passage: ", 1)[-1]
        key = passage.split()[0]
        n = calls[key] = calls.get(key, 0) + 1
        if key == "GOOD":
            return json.dumps(["red bicycle", "bicycle", "vehicle"])
        if key == "FENCE":
            return '```json\n["wet street", "rainy day"]\n```'
        if key == "FLAKY" and n >= 2:
            return json.dumps(["flaky answer"])
        if key == "COPY":
            return json.dumps([passage])
        if key == "HTTP":
            return 500
        return "Sure! Here are some keywords: bicycle, street"

    return reply


STUB_CALLS: dict[str, int] = {}  # requests per passage key, of the current stub_url


@pytest.fixture
def stub_url() -> Iterator[str]:
    STUB_CALLS.clear()
    with chat_server(_keywords_reply(STUB_CALLS)) as url:
        yield url


def test_stub_llm_valid_malformed_and_fallback(stub_url: str) -> None:
    texts = {"g": "GOOD a red bicycle leans on a wall", "f": "FENCE a wet street in the rain",
             "k": "FLAKY a man with a flaky pastry", "b": "BAD a blue car on a road",
             "c": "COPY a copied caption here", "h": "HTTP a server error caption"}
    llm = LLMSettings(stub_url, "stub-model", retries=1, timeout=5)
    qs = generate_queries(as_text_set(texts, "passages"), style="kw", lang="en", llm=llm)
    assert _by(qs, "g", "kw") == ["red bicycle", "bicycle", "vehicle"]
    assert _by(qs, "f", "kw") == ["wet street", "rainy day"]
    assert _by(qs, "k", "kw") == ["flaky answer"]  # malformed first, valid on the retry
    assert {p.source for p in qs.pairs if p.passage_id in "gfk"} == {"llm"}
    assert {p.source for p in qs.pairs if p.passage_id in "bch"} == {"rules"}
    assert qs.fallbacks == {"kw": 3}
    assert STUB_CALLS == {"GOOD": 1, "FENCE": 1, "FLAKY": 2, "BAD": 2, "COPY": 2, "HTTP": 2}  # 1 + retries at most
    assert qs.provenance["generator"]["llm"]["model"] == "stub-model"


def _pool(n: int) -> object:
    return as_text_set({f"p{k:03d}": f"P{k:03d} a red bicycle number {k} leans on a wall" for k in range(n)},
                       "passages")


def test_llm_answers_keep_pool_order_with_concurrent_requests() -> None:
    """Replies that come back out of order (slower for earlier passages) land on their own passages."""
    import time

    def reply(prompt: str) -> str:
        key = prompt.rsplit("Passage: ", 1)[-1].split()[0]
        time.sleep(0.02 * (7 - int(key[1:]) % 8))
        return json.dumps([f"query of {key}"])

    with chat_server(reply) as url:
        one = generate_queries(_pool(16), style="kw", lang="en", llm=LLMSettings(url, "m", workers=1))
        many = generate_queries(_pool(16), style="kw", lang="en", llm=LLMSettings(url, "m", workers=8))
    assert [(p.passage_id, p.query) for p in many.pairs] == [(p.passage_id, p.query) for p in one.pairs]
    assert all(p.query == f"query of P{p.passage_id[1:]}" for p in many.pairs) and len(many.pairs) == 16
    assert many.provenance["generator"]["llm"]["workers"] == 8


@pytest.mark.parametrize("status", [404, 500])
def test_an_endpoint_that_never_answers_stops_the_run_early(status: int) -> None:
    """An endpoint with no chat completion for the first PROBE passages is an error, not hours of fallbacks."""
    calls: list[str] = []

    def reply(prompt: str) -> int:
        calls.append(prompt)
        return status

    with chat_server(reply) as url:
        with pytest.raises(FinegrainError, match=rf"{url}.*no chat completion.*HTTP {status}") as e:
            generate_queries(_pool(200), style="kw", lang="en", llm=LLMSettings(url, "m", retries=1, workers=2))
    assert e.value.hint is not None and "--llm-url" in e.value.hint
    assert len(calls) < 100  # of the 400 tries the whole pool would take: the rest was never asked


def test_an_unreachable_endpoint_is_one_error_line_and_no_file(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    import socket

    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    pool = _jsonl(tmp_path / "pool.jsonl", [{"_id": "a", "text": "A black dog runs across the green grass ."}])
    out = tmp_path / "pairs.jsonl"
    code = main(["gen-queries", str(pool), "-l", "en", "-o", str(out), "--llm-url", f"http://127.0.0.1:{port}/v1",
                 "--llm-model", "m", "--llm-retries", "0"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and not out.exists() and not list(tmp_path.glob("pairs.jsonl*"))
    errors = [x for x in err if x.startswith("error:")]
    assert len(errors) == 1 and f"127.0.0.1:{port}" in errors[0] and "Traceback" not in "\n".join(err)


def test_a_model_that_answers_badly_falls_back_passage_by_passage() -> None:
    """Chat completions whose content is no valid list are the model's failing, not the endpoint's: no error."""
    with chat_server(lambda prompt: "Sure! bicycle, wall") as url:
        qs = generate_queries(_pool(12), style="kw", lang="en", llm=LLMSettings(url, "m", retries=0))
    assert qs.fallbacks == {"kw": 12} and {p.source for p in qs.pairs} == {"rules"}


def test_a_rerun_takes_its_replies_from_the_cache_and_an_unreadable_one_is_asked_again(tmp_path: Path) -> None:
    """A stopped run resumes: replies already received are not asked again, and give the same pairs."""
    calls: list[str] = []

    def reply(prompt: str) -> str:
        key = prompt.rsplit("Passage: ", 1)[-1].split()[0]
        calls.append(key)
        return json.dumps([f"query {len(calls)} of {key}"])  # a server that never answers the same twice

    root = tmp_path / "cache"
    with chat_server(reply) as url:
        first = generate_queries(_pool(6), style="kw", lang="en", llm=LLMSettings(url, "m", cache=ReplyCache(root)))
        files = sorted(root.rglob("*.json"))
        assert len(calls) == 6 and len(files) == 6 and not [p for p in root.rglob("*") if p.name.startswith(".")]
        again = generate_queries(_pool(6), style="kw", lang="en", llm=LLMSettings(url, "m", cache=ReplyCache(root)))
        assert len(calls) == 6 and again.pairs == first.pairs
        assert again.provenance["generator"]["llm"]["cache"] == {"path": str(root), "hits": 6, "misses": 0}
        files[0].write_text('{"content": "[\\"cut sho', encoding="utf-8")  # damaged by hand
        damaged = ReplyCache(root)
        generate_queries(_pool(6), style="kw", lang="en", llm=LLMSettings(url, "m", cache=damaged))
        assert len(calls) == 7 and damaged.unreadable == 1  # only the damaged reply, written anew
        assert ReplyCache(root).get(files[0].stem) is not None
        generate_queries(_pool(6), style="kw", lang="en", llm=LLMSettings(url, "other-model", cache=ReplyCache(root)))
        assert len(calls) == 13  # another model's replies are its own


def test_cli_caches_llm_replies_unless_told_not_to(tmp_path: Path, capsys, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("FINEGRAIN_CACHE", str(tmp_path / "fgcache"))
    calls: list[str] = []

    def reply(prompt: str) -> str:
        calls.append(prompt)
        return json.dumps(["black dog", "green grass"])

    pool = _jsonl(tmp_path / "pool.jsonl", [{"_id": "a", "text": "A black dog runs across the green grass ."}])
    with chat_server(reply) as url:
        args = ["gen-queries", str(pool), "-l", "en", "--style", "kw", "--llm-url", url, "--llm-model", "m", "-q"]
        assert main([*args, "-o", str(tmp_path / "a.jsonl")]) == 0
        assert main([*args, "-o", str(tmp_path / "b.jsonl")]) == 0
        out = capsys.readouterr().out
        assert len(calls) == 1 and "llm replies: 1 from the cache" in out
        assert len(list((tmp_path / "fgcache" / "llm").rglob("*.json"))) == 1
        assert main([*args, "-o", str(tmp_path / "c.jsonl"), "--no-cache"]) == 0
        assert len(calls) == 2
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()


def test_llm_settings_reject_bad_workers() -> None:
    for bad in (0, 65, True, 2.5):
        with pytest.raises(FinegrainError, match="workers"):
            LLMSettings("http://127.0.0.1:1/v1", "m", workers=bad)  # type: ignore[arg-type]


def test_reply_validation() -> None:
    passage = "A red bicycle leans on a wall"
    assert validate_queries('["bicycle", "Bicycle ", "bicycle"]', passage, "kw", "en") == ["bicycle", "Bicycle"]
    with pytest.raises(Exception, match="not a JSON list of strings"):
        validate_queries('{"q": "bicycle"}', passage, "kw", "en")
    with pytest.raises(Exception, match="no string"):
        validate_queries('["自行车", "A red bicycle leans on a wall!"]', passage, "kw", "en")
    with pytest.raises(Exception, match="no string"):
        validate_queries(json.dumps([" ".join(["word"] * 20)]), passage, "kw", "en")
    assert validate_queries('["自行车", "bicycle"]', "一辆红色自行车靠在墙上", "kw", "zh") == ["自行车"]


# --------------------------------------------------------------------------- leakage filter


def test_rouge_l_exclude_count_by_hand(tmp_path: Path) -> None:
    test_set = _jsonl(tmp_path / "test.jsonl", [
        {"_id": "t1", "text": "the cat sat on a mat"},
        {"_id": "t2", "text": "red green blue cyan magenta yellow black"}])
    pool = as_text_set({
        "p1": "the cat sat on the mat",  # LCS 5 of 6 and 6 words: F = 10/12 = 0.83 > 0.6, removed
        "p2": "red green blue",  # LCS 3: F = 6/10 = 0.6, not above: kept
        "p3": "a dog runs in the park",  # F = 2*2/12 = 0.33 against t1: kept
    }, "passages")
    qs = generate_queries(pool, style="kw", lang="en", exclude=test_set, rouge_l=0.6)
    ex = qs.provenance["exclude"]
    assert (ex["removed"], ex["kept"], ex["rule"]) == (1, 2, "rougeL > 0.6")
    assert {p.passage_id for p in qs.pairs} == {"p2", "p3"}
    strict = generate_queries(pool, style="kw", lang="en", exclude=test_set, rouge_l=0.59)
    assert strict.provenance["exclude"]["removed"] == 2


# --------------------------------------------------------------------------- CLI and bad input


def test_cli_writes_pairs_provenance_and_an_80_column_table(tmp_path: Path, capsys, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("COLUMNS", "80")
    pool = _jsonl(tmp_path / "pool.jsonl", [{"_id": "a", "text": "A black dog runs across the green grass ."},
                                            {"_id": "b", "text": "Two dogs play with a red ball in the park ."}])
    out = tmp_path / "pairs.jsonl"
    assert main(["gen-queries", str(pool), "--style", "both", "-l", "en", "-o", str(out), "--seed", "7"]) == 0
    printed = capsys.readouterr().out
    table = [x for x in printed.splitlines() if not x.startswith("wrote ")]
    assert "KW" in printed and "SM" in printed and max(cell_len(x) for x in table) <= 80
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows and all(set(r) == {"query", "passage", "passage_id", "style", "source", "group"} for r in rows)
    assert {r["style"] for r in rows} == {"kw", "sm"} and {r["group"] for r in rows} == {None}
    prov = json.loads((tmp_path / "pairs.jsonl.provenance.json").read_text(encoding="utf-8"))
    assert prov["pool_sha256"] == hashlib.sha256(pool.read_bytes()).hexdigest()
    assert (prov["lang"], prov["seed"], prov["exclude"], prov["pairs"]) == ("en", 7, None, len(rows))
    # Table 6's columns and the hypernym share, printed and in the sidecar
    kw = [r for r in rows if r["style"] == "kw"]
    stats = {s["style"]: s for s in prov["stats"]}
    assert {"passages", "queries", "q/pass", "words/q", "hypernyms", "sources"} <= set(printed.split())
    assert stats["kw"]["hypernyms"] >= sum(r["query"] == "canine" for r in kw) == 2
    assert f"{100 * stats['kw']['hypernym_share']:.1f}%" in printed and stats["kw"]["queries"] == len(kw)
    assert stats["kw"]["queries_per_passage"] == len(kw) / 2 and stats["sm"]["hypernym_share"] == 0
    assert prov["sm_source"] == "auto" and prov["generic"]["max_query_share"] == 0.005


@pytest.mark.parametrize("args, message", [
    (["--style", "keywords"], "unknown query style 'keywords'"),
    (["--style", "kw", "-l", "zh"], "--lang zh but the passages of"),
    (["--style", "kw", "--llm-url", "ftp://x"], "is not an http(s) URL"),
    (["--style", "kw", "--siblings", "coco:x"], "is not KIND:PATH"),
    (["--sm-source", "sibs"], "unknown SM source 'sibs'"),
    (["--max-query-share", "0"], "max_query_share=0.0 is not a share in (0, 1]"),
    (["--max-query-share", "1.5"], "is not a share in (0, 1]"),
])
def test_bad_input_gets_one_clear_error(tmp_path: Path, capsys, args: list[str], message: str) -> None:  # noqa: ANN001
    pool = _jsonl(tmp_path / "pool.jsonl", [{"_id": "a", "text": "A black dog runs across the grass ."}])
    lang = [] if "-l" in args else ["-l", "en"]
    code = main(["gen-queries", str(pool), *lang, "-o", str(tmp_path / "o.jsonl"), *args])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o.jsonl").exists()


def test_empty_pool_and_unknown_style_in_python(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(FinegrainError, match="empty.jsonl"):
        generate_queries(empty, style="kw", lang="en")
    with pytest.raises(UnknownNameError, match="did you mean 'sm'"):
        generate_queries(as_text_set(["a dog"], "passages"), style="sn", lang="en")
