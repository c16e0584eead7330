"""``finegrain soup``: the weighted mean of encoders fine-tuned from one base (model soups, WiSE-FT).

Members are a tiny random BERT sentence-transformers folder and copies of it with perturbed weights
(standing for fine-tuned models). Checked: every floating-point tensor of the soup is the weighted mean
of the members' (the soup of a model with itself is that model), the soup loads and encodes as
``st:OUT``, a transductive member makes the soup transductive for its dataset, and every mismatch
(architecture, tokenizer, prefixes, weights, an existing folder, a failed write) is one clear error
that leaves no folder behind.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from finegrain.cli.main import app
from finegrain.errors import FinegrainError
from finegrain.experiment.run import transductive_models
from finegrain.train import soup as soup_module
from finegrain.train.finetune import transductive_dataset, transductive_datasets
from finegrain.train.soup import normalise, parse_mix, soup

WORDS = ["a", "red", "blue", "dog", "cat", "runs", "on", "the", "grass", "beach"]


def _tiny(folder: Path, hidden: int = 32, seed: int = 0, words: list[str] = WORDS) -> Path:
    import torch
    import transformers
    from sentence_transformers import SentenceTransformer

    try:
        from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    except ImportError:  # sentence-transformers < 6
        from sentence_transformers.models import Pooling, Transformer

    folder.mkdir(parents=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    torch.manual_seed(seed)
    config = transformers.BertConfig(vocab_size=len(vocab), hidden_size=hidden, num_hidden_layers=1,
                                     num_attention_heads=2, intermediate_size=2 * hidden, max_position_embeddings=32)
    transformers.BertModel(config).save_pretrained(folder / "hf")
    transformers.BertTokenizer(str(folder / "vocab.txt")).save_pretrained(folder / "hf")
    st = SentenceTransformer(modules=[Transformer(str(folder / "hf"), max_seq_length=16), Pooling(hidden, "mean")],
                             device="cpu")
    st.save(str(folder / "st"))
    return folder / "st"


def _weights(folder: Path) -> dict[str, np.ndarray]:
    from safetensors.numpy import load_file

    return load_file(str(folder / "model.safetensors"))


def _perturbed(base: Path, out: Path, seed: int, record: dict | None = None) -> Path:
    """A copy of ``base`` with every weight moved by seeded noise: a stand-in for a fine-tuned model."""
    from safetensors.numpy import save_file

    shutil.copytree(base, out)
    rng = np.random.default_rng(seed)
    w = {k: (v + rng.normal(0, 0.05, v.shape).astype(v.dtype)) if v.dtype.kind == "f" else v
         for k, v in _weights(base).items()}
    save_file(w, str(out / "model.safetensors"), metadata={"format": "pt"})
    if record is not None:
        (out / "finegrain_training.json").write_text(json.dumps(record), encoding="utf-8")
    return out


def _trained_record(dataset: str | None) -> dict:
    return {"format": "finegrain-training/1", "transductive": dataset is not None, "transductive_dataset": dataset,
            "hyperparameters": {"temperature": 0.05, "lr": 2e-5, "query_prefix": "", "passage_prefix": ""}}


@pytest.fixture(scope="module")
def members(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    root = tmp_path_factory.mktemp("soup")
    base = _tiny(root / "base")
    a = _perturbed(base, root / "a", 1, _trained_record("capretrieval/zh"))
    b = _perturbed(base, root / "b", 2, _trained_record(None))
    return base, a, b


# --------------------------------------------------------------------------- the mean


def test_the_uniform_soup_is_the_mean_of_every_tensor_and_encodes(members, tmp_path: Path) -> None:
    from sentence_transformers import SentenceTransformer

    _, a, b = members
    result = soup([f"st:{a}", f"st:{b}"], tmp_path / "s")
    wa, wb, ws = _weights(a), _weights(b), _weights(tmp_path / "s")
    assert set(ws) == set(wa) and result.averaged == result.tensors == len(wa)
    for k in wa:
        want = ((wa[k].astype(np.float64) + wb[k].astype(np.float64)) / 2).astype(wa[k].dtype)
        assert ws[k].dtype == wa[k].dtype and np.array_equal(ws[k], want), k
        if not np.array_equal(wa[k], wb[k]):
            assert not np.array_equal(ws[k], wa[k])
    emb = SentenceTransformer(str(tmp_path / "s"), device="cpu").encode(["a red dog"])
    assert emb.shape == (1, 32) and np.isfinite(emb).all()
    rec = json.loads((tmp_path / "s" / "finegrain_training.json").read_text())
    assert rec["format"] == "finegrain-soup/1" and [m["weight"] for m in rec["members"]] == [0.5, 0.5]
    assert [m["spec"] for m in rec["members"]] == [f"st:{a}", f"st:{b}"]


def test_weights_are_normalised_and_weight_the_mean(members, tmp_path: Path) -> None:
    base, a, _ = members
    soup([f"st:{base}", f"st:{a}"], tmp_path / "w", weights=[1, 3])  # WiSE-FT at alpha 0.75
    w0, wa, ws = _weights(base), _weights(a), _weights(tmp_path / "w")
    for k in wa:
        want = (0.25 * w0[k].astype(np.float64) + 0.75 * wa[k].astype(np.float64)).astype(wa[k].dtype)
        assert np.array_equal(ws[k], want), k
    assert normalise([1, 3], 2) == (0.25, 0.75) and normalise(None, 4) == (0.25,) * 4
    assert parse_mix("1, 3", 2) == (0.25, 0.75) and parse_mix(None, 3) is None


def test_a_soup_of_one_model_with_itself_is_that_model(members, tmp_path: Path) -> None:
    _, a, _ = members
    soup([f"st:{a}", f"st:{a}"], tmp_path / "same", weights=[0.3, 0.7])
    wa, ws = _weights(a), _weights(tmp_path / "same")
    assert all(np.array_equal(ws[k], wa[k]) for k in wa)


# --------------------------------------------------------------------------- transductive labels


def test_a_transductive_member_makes_the_soup_transductive(members, tmp_path: Path) -> None:
    base, a, b = members
    soup([f"st:{a}", f"st:{b}"], tmp_path / "t")
    assert transductive_dataset(tmp_path / "t") == "capretrieval/zh"
    assert transductive_models({"encoder": {"path": str(tmp_path / "t")}}, "capretrieval/zh") == [str(tmp_path / "t")]
    soup([f"st:{base}", f"st:{b}"], tmp_path / "clean")
    assert transductive_dataset(tmp_path / "clean") is None


def test_members_from_two_datasets_label_the_soup_for_both(members, tmp_path: Path) -> None:
    base, a, _ = members
    c = _perturbed(base, tmp_path / "c", 3, _trained_record("capretrieval/en"))
    soup([f"st:{a}", f"st:{c}"], tmp_path / "two")
    assert transductive_datasets(tmp_path / "two") == ("capretrieval/en", "capretrieval/zh")
    for ds in ("capretrieval/en", "capretrieval/zh"):
        assert transductive_models({"path": str(tmp_path / "two")}, ds) == [str(tmp_path / "two")]


# --------------------------------------------------------------------------- refusals


def _refused(tmp_path: Path, specs: list[str], match: str, **kw) -> None:
    out = tmp_path / "never"
    with pytest.raises(FinegrainError, match=match):
        soup(specs, out, **kw)
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".never")]


def test_models_of_another_shape_or_tokenizer_are_refused(members, tmp_path: Path) -> None:
    _, a, _ = members
    narrow = _tiny(tmp_path / "narrow", hidden=16)
    _refused(tmp_path, [f"st:{a}", f"st:{narrow}"], r"is \(")  # a tensor of another shape, named
    other_words = _tiny(tmp_path / "words", words=[*WORDS[:-1], "snow"])
    _refused(tmp_path, [f"st:{a}", f"st:{other_words}"], "tokenizer vocabulary differs")


def test_members_with_other_prefixes_are_refused(members, tmp_path: Path) -> None:
    base, a, _ = members
    rec = _trained_record(None)
    rec["hyperparameters"]["query_prefix"] = "query: "
    p = _perturbed(base, tmp_path / "p", 4, rec)
    _refused(tmp_path, [f"st:{a}", f"st:{p}"], "prefixes")


def test_differing_integer_tensors_are_refused(members, tmp_path: Path) -> None:
    from safetensors.numpy import save_file

    _, a, b = members
    x, y = shutil.copytree(a, tmp_path / "x"), shutil.copytree(b, tmp_path / "y")
    for folder, value in ((x, 0), (y, 1)):
        w = _weights(folder)
        w["buffer.ids"] = np.full(3, value, dtype=np.int64)
        save_file(w, str(folder / "model.safetensors"))
    _refused(tmp_path, [f"st:{x}", f"st:{y}"], "buffer.ids.*not floating-point")


def test_an_integer_buffer_one_member_saved_is_the_first_members_and_a_float_tensor_must_be_in_all(
        members, tmp_path: Path) -> None:
    """transformers versions differ in saving ``position_ids``; a weight only one member has is refused."""
    from safetensors.numpy import save_file

    _, a, b = members
    x = shutil.copytree(a, tmp_path / "x")
    w = _weights(x)
    w["embeddings.position_ids"] = np.arange(32, dtype=np.int64)[None]
    save_file(w, str(x / "model.safetensors"))
    soup([f"st:{x}", f"st:{b}"], tmp_path / "kept")
    assert np.array_equal(_weights(tmp_path / "kept")["embeddings.position_ids"], w["embeddings.position_ids"])
    soup([f"st:{b}", f"st:{x}"], tmp_path / "dropped")
    assert "embeddings.position_ids" not in _weights(tmp_path / "dropped")
    w["extra.weight"] = np.zeros(4, dtype=np.float32)
    save_file(w, str(x / "model.safetensors"))
    _refused(tmp_path, [f"st:{b}", f"st:{x}"], "'extra.weight' is in st:.* only")


@pytest.mark.parametrize(("weights", "match"), [([1.0], "1 weight"), ([1.0, -1.0], "non-negative"),
                                                ([0.0, 0.0], "all zero"), ([1.0, float("nan")], "non-negative")])
def test_bad_weights_are_refused(members, tmp_path: Path, weights: list[float], match: str) -> None:
    _, a, b = members
    _refused(tmp_path, [f"st:{a}", f"st:{b}"], match, weights=weights)


def test_one_model_a_missing_file_or_a_full_folder_is_refused(members, tmp_path: Path) -> None:
    _, a, b = members
    _refused(tmp_path, [f"st:{a}"], "at least two")
    bare = shutil.copytree(a, tmp_path / "bare")
    (bare / "model.safetensors").unlink()
    _refused(tmp_path, [f"st:{a}", f"st:{bare}"], "holds no model.safetensors")
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("mine")
    with pytest.raises(FinegrainError, match="not an empty folder"):
        soup([f"st:{a}", f"st:{b}"], full)
    assert [p.name for p in full.iterdir()] == ["keep.txt"]


@pytest.mark.parametrize("cut", [10, 0.9])
def test_a_broken_weights_file_is_one_error(members, tmp_path: Path, cut: float) -> None:
    """A file cut in its header, or in its last tensor (found only when that tensor is read)."""
    _, a, b = members
    broken = shutil.copytree(b, tmp_path / "broken")
    data = (broken / "model.safetensors").read_bytes()
    (broken / "model.safetensors").write_bytes(data[: int(cut if cut >= 1 else len(data) * cut)])
    _refused(tmp_path, [f"st:{a}", f"st:{broken}"], "cannot read")


def test_a_failed_write_leaves_no_folder(members, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, a, b = members

    class Full:
        @staticmethod
        def save_file(*args, **kwargs) -> None:
            raise OSError(28, "No space left on device")

        load_file = staticmethod(__import__("safetensors.torch", fromlist=["load_file"]).load_file)

    real = soup_module.require
    monkeypatch.setattr(soup_module, "require", lambda name, extra: Full if name == "safetensors.torch" else real(name, extra))
    _refused(tmp_path, [f"st:{a}", f"st:{b}"], "No space left")


# --------------------------------------------------------------------------- the command


def test_the_command_writes_the_soup_and_names_its_label(members, tmp_path: Path) -> None:
    _, a, b = members
    res = CliRunner().invoke(app, ["soup", f"st:{a}", f"st:{b}", "-o", str(tmp_path / "cli"), "--mix", "1,1"])
    assert res.exit_code == 0, res.output
    assert "averaged" in res.output and "TRANSDUCTIVE" in res.output and "capretrieval/zh" in res.output
    assert (tmp_path / "cli" / "model.safetensors").is_file()


def test_the_command_says_one_error_line_for_bad_weights(members, tmp_path: Path) -> None:
    _, a, b = members
    res = CliRunner().invoke(app, ["soup", f"st:{a}", f"st:{b}", "-o", str(tmp_path / "bad"), "--mix", "1,x"])
    assert res.exit_code == 2
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and "'x' is not a number" in lines[0]
    assert "Traceback" not in res.output and not (tmp_path / "bad").exists()
