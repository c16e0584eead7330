"""BM25 as a package: the variant table, a saved index records its tokenizer, version-1 indexes migrate."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from finegrain.errors import FinegrainError
from finegrain.retrieve.bm25 import BM25, SCORING, VARIANTS, BM25Params
from finegrain.retrieve.bm25.files import FORMAT_VERSION
from finegrain.text import EnglishTokenizer, JiebaTokenizer, RegexSplitter, Tokenizer

DOCS = ["The running cats sleep", "A cat runs", "dogs bark at cats", "nothing here"]
IDS = ["d1", "d2", "d3", "d4"]


def test_variant_table_is_the_list_of_variants() -> None:
    assert VARIANTS == tuple(SCORING) == ("okapi", "lucene", "robertson", "atire")
    with pytest.raises(FinegrainError, match="unknown BM25 variant 'bm25l'"):
        BM25Params("bm25l")  # type: ignore[arg-type]


def test_lucene_hand_computed_through_the_table() -> None:
    bm = BM25("lucene", k1=1.2, b=0.5).index([["a", "b"], ["a"], ["c"]], ["x", "y", "z"])
    n, avgdl = 3, 4 / 3
    idf_a = math.log(1 + (n - 2 + 0.5) / (2 + 0.5))
    want_x = idf_a * 1 / (1.2 * ((1 - 0.5) + 0.5 * 2 / avgdl) + 1)
    assert bm.scores(["a"])[0] == pytest.approx(want_x, rel=1e-15)


@pytest.mark.parametrize("tok", [EnglishTokenizer(), JiebaTokenizer.capretrieval(),
                                 Tokenizer(RegexSplitter(), stopwords=["at"])], ids=["english", "jieba", "custom"])
def test_saved_index_restores_its_tokenizer(tmp_path: Path, tok: Tokenizer) -> None:
    bm = BM25("okapi", tokenizer=tok).index_texts(DOCS, IDS)
    folder = bm.save(tmp_path / "idx")
    meta = json.loads((folder / "bm25.json").read_text(encoding="utf-8"))
    assert meta["version"] == FORMAT_VERSION == 3 and meta["tokenizer"] == json.loads(json.dumps(tok.config()))
    back = BM25.load(folder)
    assert back.tokenizer == tok and type(back.tokenizer) is type(tok)
    want = bm.search_texts(["running cats"], ["q"], k=3, show_progress=False)
    got = back.search_texts(["running cats"], ["q"], k=3, show_progress=False)
    assert dict(got["q"]) == dict(want["q"]) and len(want["q"]) > 0


def test_index_without_tokenizer_saves_null_and_needs_token_lists(tmp_path: Path) -> None:
    bm = BM25("okapi").index([["a"], ["b"]], ["x", "y"])
    back = BM25.load(bm.save(tmp_path / "idx"))
    assert back.tokenizer is None
    with pytest.raises(FinegrainError, match="no tokenizer"):
        back.search_texts(["a"], ["q"], k=1)
    with pytest.raises(FinegrainError, match="not a finegrain Tokenizer"):
        BM25(tokenizer=str.split)  # type: ignore[arg-type]


def test_version_1_index_is_migrated_and_a_tokenizer_can_be_given(tmp_path: Path) -> None:
    tok = EnglishTokenizer()
    folder = BM25("lucene", tokenizer=tok).index_texts(DOCS, IDS).save(tmp_path / "v1")
    meta = json.loads((folder / "bm25.json").read_text(encoding="utf-8"))
    del meta["tokenizer"]
    (folder / "bm25.json").write_text(json.dumps({**meta, "version": 1}), encoding="utf-8")
    # Versions 1 and 2 kept the arrays in one arrays.npz.
    names = ("indptr", "indices", "data", "doc_lengths", "idf")
    np.savez(folder / "arrays.npz", **{n: np.load(folder / f"{n}.npy") for n in names})
    for n in names:
        (folder / f"{n}.npy").unlink()
    old = BM25.load(folder)
    assert old.tokenizer is None and old.params.variant == "lucene"
    given = BM25.load(folder, tokenizer=tok)
    assert given.tokenizer == tok
    np.testing.assert_array_equal(given.scores(tok.queries(["cats"])[0]),
                                  BM25("lucene").index(tok.documents(DOCS), IDS).scores(tok.queries(["cats"])[0]))
