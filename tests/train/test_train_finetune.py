"""``finegrain train``: fine-tuning a tiny random BERT sentence-transformers model on CPU.

The model is a 2-layer, hidden-32 BERT with a word vocabulary written here, mean
pooling, saved as a sentence-transformers folder: a few steps take well under a
second. Checked: the loss falls, the output loads as ``st:DIR``, one seed gives one
set of weights, a run stopped after k steps and resumed ends where an uninterrupted
run ends, the held-out split is by passage, batches never repeat a text, BM25 hard
negatives are never a positive, and bad input is one clear error.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import finegrain
import finegrain.train.finetune as finetune
from finegrain.atomic import is_temporary
from finegrain.cli.main import app, main
from finegrain.errors import DataFormatError, FinegrainError, UnknownNameError
from finegrain.io._lines import iter_jsonl
from finegrain.retrieve.dense.encoders.registry import get_encoder
from finegrain.train.finetune import (
    LENGTH_GROUP,
    MAX_SEED,
    MAX_STEPS,
    TrainConfig,
    _embed,
    _encode,
    _infonce,
    _load_st,
    _Loss,
    _Passages,
    teacher_distribution,
    train_encoder,
)
from finegrain.train.finetune_data import (
    Pair,
    _epoch,
    batch_schedule,
    mine_bm25_negatives,
    read_pairs,
    split_by_passage,
)
from finegrain.train.soup import soup

COLOURS = ["red", "blue", "green", "black", "white", "brown"]
ANIMALS = ["dog", "cat", "horse", "bird"]
PLACES = ["grass", "beach", "snow", "street"]


def _passages() -> list[tuple[str, str]]:
    out = []
    for i, (c, a, p) in enumerate((c, a, p) for c in COLOURS for a in ANIMALS for p in PLACES):
        if i % 4 == 0:
            out.append((f"img{i}", f"a {c} {a} runs on the {p}"))
    return out  # 24 passages


@pytest.fixture(scope="module")
def pairs_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two queries per passage (its colour and animal; its animal and place): 48 pairs, 24 passages."""
    root = tmp_path_factory.mktemp("pairs")
    lines = []
    for pid, text in _passages():
        w = text.split()
        for q, style in ((f"{w[1]} {w[2]}", "kw"), (f"{w[2]} on {w[6]}", "sm")):
            lines.append(json.dumps({"query": q, "passage": text, "passage_id": pid, "style": style, "source": "t"}))
    path = root / "pairs.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "pairs.jsonl.provenance.json").write_text(json.dumps({"pool": "toy", "generator": "rules"}))
    return path


@pytest.fixture(scope="module")
def tiny_st(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A randomly initialised BERT (hidden 32, 2 layers) with mean pooling, as a sentence-transformers folder."""
    import torch
    import transformers
    from sentence_transformers import SentenceTransformer

    try:
        from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    except ImportError:  # sentence-transformers < 6
        from sentence_transformers.models import Pooling, Transformer

    root = tmp_path_factory.mktemp("tiny-st")
    words = sorted({w for _, t in _passages() for w in t.split()})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]
    (root / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    hf = root / "hf"
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=64)
    transformers.BertModel(config).save_pretrained(hf)
    transformers.BertTokenizer(str(root / "vocab.txt")).save_pretrained(hf)
    st = SentenceTransformer(modules=[Transformer(str(hf), max_seq_length=32), Pooling(32, "mean")], device="cpu")
    out = root / "st"
    st.save(str(out))
    return out


def _config(tiny_st: Path, pairs: Path, out: Path, **kw) -> TrainConfig:
    base = {"steps": 6, "batch": 8, "lr": 1e-3, "temperature": 0.05, "checkpoint_every": 2, "quiet": True}
    return TrainConfig(base=f"st:{tiny_st}", pairs=pairs, out=out, **{**base, **kw})


def _weights(folder: Path) -> dict[str, np.ndarray]:
    from safetensors.numpy import load_file

    files = sorted(folder.rglob("model.safetensors"))
    assert files, f"no weights in {folder}"
    return load_file(str(files[0]))


@pytest.fixture(scope="module")
def uninterrupted(tiny_st: Path, pairs_file: Path, tmp_path_factory: pytest.TempPathFactory):
    return train_encoder(_config(tiny_st, pairs_file, tmp_path_factory.mktemp("run") / "a"))


# --------------------------------------------------------------------------- training


def test_loss_falls_and_the_folder_loads_as_st(tiny_st: Path, pairs_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "model"
    result = train_encoder(_config(tiny_st, pairs_file, out, steps=40, checkpoint_every=20, warmup=0))
    assert result.finished and result.steps_done == 40 and len(result.train_losses) == 40
    assert np.mean(result.train_losses[-8:]) < 0.8 * np.mean(result.train_losses[:8])
    assert [p.step for p in result.validation] == [20, 40]
    assert not (out / "checkpoints").exists()  # removed once finished

    enc = get_encoder(f"st:{out}")
    vecs = enc.encode(["red dog", "a red dog runs on the grass"], kind="query")
    assert vecs.shape == (2, 32) and np.allclose(np.linalg.norm(vecs, axis=1), 1, atol=1e-5)

    prov = json.loads((out / "finegrain_training.json").read_text())
    assert prov["steps_done"] == 40 and prov["seed"] == 0
    assert prov["hyperparameters"]["scale"] == pytest.approx(20.0) and prov["hyperparameters"]["warmup"] == 0
    assert prov["hyperparameters"]["device"] == "cpu"
    assert prov["pairs"]["provenance"] == {"pool": "toy", "generator": "rules"}
    assert prov["pairs"]["records"] == 48 and prov["pairs"]["train"] + prov["pairs"]["held_out"] == 48
    assert len(prov["base"]["weights_sha256"]) == 64 and prov["base"]["path"] == str(tiny_st.resolve())
    assert len(prov["curve"]["train_loss"]) == 40 and prov["environment"]["machine"]["architecture"]
    assert prov["libraries"]["sentence-transformers"]


def test_one_seed_gives_one_set_of_weights(tiny_st: Path, pairs_file: Path, tmp_path: Path, uninterrupted) -> None:
    again = train_encoder(_config(tiny_st, pairs_file, tmp_path / "b"))
    a, b = _weights(uninterrupted.out), _weights(again.out)
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    assert again.train_losses == uninterrupted.train_losses
    other = train_encoder(_config(tiny_st, pairs_file, tmp_path / "c", seed=1))
    assert any(not np.array_equal(a[k], v) for k, v in _weights(other.out).items())


def test_resume_after_a_stop_ends_where_an_uninterrupted_run_ends(
    tiny_st: Path, pairs_file: Path, tmp_path: Path, uninterrupted
) -> None:
    out = tmp_path / "r"
    stopped = train_encoder(_config(tiny_st, pairs_file, out, stop_after=3))
    assert not stopped.finished and stopped.steps_done == 3 and stopped.provenance is None
    assert [p.name for p in (out / "checkpoints").iterdir()] == ["step-000003.pt"]
    with pytest.raises(FinegrainError, match="lr is 0.002 now but 0.001"):
        train_encoder(_config(tiny_st, pairs_file, out, lr=2e-3, resume=True))
    with pytest.raises(FinegrainError, match="exists and is not empty"):
        train_encoder(_config(tiny_st, pairs_file, out))
    done = train_encoder(_config(tiny_st, pairs_file, out, resume=True))
    assert done.finished and done.resumed_from == 3 and done.steps_done == 6
    np.testing.assert_allclose(done.train_losses, uninterrupted.train_losses, rtol=1e-5, atol=1e-6)
    a, b = _weights(uninterrupted.out), _weights(done.out)
    for k in a:
        np.testing.assert_allclose(a[k], b[k], rtol=1e-5, atol=1e-6, err_msg=k)
    assert json.loads((out / "finegrain_training.json").read_text())["resumed_from"] == 3



def test_bf16_runs_the_forward_pass_in_bfloat16_and_keeps_the_rest_in_float32(
    tiny_st: Path, pairs_file: Path, tmp_path: Path, uninterrupted, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--precision bf16: the encoder's matrix products run in bfloat16 (seen by a hook), the embeddings reach the
    loss in float32, the losses stay near fp32's, the weights are saved in float32 and the provenance says so."""
    import torch

    seen: list[tuple[torch.dtype, torch.dtype]] = []
    encode = finetune._encode

    def spy(model, texts, precision="fp32", group=0):
        layer = model[0].auto_model.encoder.layer[0].attention.self.query
        handle = layer.register_forward_hook(lambda m, i, o: seen.append((o.dtype, o.dtype)))
        try:
            out = encode(model, texts, precision, group)
        finally:
            handle.remove()
        seen[-1] = (seen[-1][0], out.dtype)
        return out

    monkeypatch.setattr(finetune, "_encode", spy)
    run = train_encoder(_config(tiny_st, pairs_file, tmp_path / "bf16", precision="bf16"))
    assert seen and all(inner == torch.bfloat16 and out == torch.float32 for inner, out in seen)
    seen.clear()
    train_encoder(_config(tiny_st, pairs_file, tmp_path / "fp32"))
    assert seen and all(inner == torch.float32 for inner, _ in seen)
    np.testing.assert_allclose(run.train_losses, uninterrupted.train_losses, rtol=0.05)
    assert run.train_losses != uninterrupted.train_losses  # the arithmetic did change
    assert {w.dtype for w in _weights(run.out).values()} == {np.dtype("float32")}
    prov = json.loads((run.out / "finegrain_training.json").read_text())
    assert prov["hyperparameters"]["precision"] == "bf16"
    assert json.loads((uninterrupted.out / "finegrain_training.json").read_text())["hyperparameters"]["precision"] == "fp32"


def test_a_run_resumes_only_at_its_own_precision(tiny_st: Path, pairs_file: Path, tmp_path: Path) -> None:
    """Precision is part of a run's identity; a checkpoint written before the setting existed ran in float32."""
    import torch

    out = tmp_path / "p"
    train_encoder(_config(tiny_st, pairs_file, out, stop_after=2))
    with pytest.raises(FinegrainError, match="precision is 'bf16' now but 'fp32'"):
        train_encoder(_config(tiny_st, pairs_file, out, precision="bf16", resume=True))
    ckpt = out / "checkpoints" / "step-000002.pt"
    state = torch.load(ckpt, map_location="cpu", weights_only=True)
    del state["identity"]["precision"]  # as an older finegrain wrote it
    torch.save(state, ckpt)
    with pytest.raises(FinegrainError, match="precision is 'bf16' now but 'fp32'"):
        train_encoder(_config(tiny_st, pairs_file, out, precision="bf16", resume=True))
    assert train_encoder(_config(tiny_st, pairs_file, out, resume=True)).finished

# --------------------------------------------------------------------------- length-sorted groups


def _ragged_texts() -> list[str]:
    """Texts of 1 to 10 words in no order of length, some repeated."""
    words = [w for _, t in _passages() for w in t.split()]
    return [" ".join(words[i:i + 1 + (i * 7) % 10]) for i in range(0, 60, 3)] + ["dog", "a red dog"]


def test_length_groups_give_the_one_pass_embeddings_and_gradients_in_order(tiny_st: Path) -> None:
    """Grouping by length changes how texts are padded, never which row is which nor its value or gradient."""
    import torch

    texts = _ragged_texts()
    grads = []
    outs = []
    for group in (0, 3, 4, len(texts) + 1):
        model = _load_st(tiny_st)
        model.eval()  # no dropout: the two forms must agree to float rounding
        out = _encode(model, texts, "fp32", group)
        (out * torch.arange(out.numel(), dtype=out.dtype).reshape(out.shape)).sum().backward()
        outs.append(out.detach().numpy())
        grads.append({n: w.grad.detach().numpy().copy() for n, w in model.named_parameters() if w.grad is not None})
    for out, grad in zip(outs[1:], grads[1:]):
        np.testing.assert_allclose(out, outs[0], rtol=1e-5, atol=1e-6)
        assert grad.keys() == grads[0].keys()
        for name in grad:
            np.testing.assert_allclose(grad[name], grads[0][name], rtol=1e-3, atol=1e-5, err_msg=name)


def test_length_groups_multiply_fewer_padded_tokens(tiny_st: Path) -> None:
    """What the grouping is for: every group is padded to its own longest text, so fewer tokens go through."""
    model = _load_st(tiny_st)
    shapes: list[tuple[int, int]] = []
    handle = model[0].auto_model.embeddings.register_forward_hook(lambda m, i, o: shapes.append(tuple(o.shape[:2])))
    texts = _ragged_texts()
    try:
        _encode(model, texts, "fp32", 0)
        (one,) = shapes
        shapes.clear()
        _encode(model, texts, "fp32", 4)
    finally:
        handle.remove()
    assert len(shapes) == -(-len(texts) // 4) and sum(n for n, _ in shapes) == len(texts)
    assert sum(n * width for n, width in shapes) < 0.8 * one[0] * one[1]


def test_the_length_group_defaults_by_device_is_checked_and_recorded(
    tiny_st: Path, pairs_file: Path, tmp_path: Path
) -> None:
    assert _config(tiny_st, pairs_file, tmp_path / "a").encode_group == LENGTH_GROUP > 0
    assert _config(tiny_st, pairs_file, tmp_path / "a", device="cuda").encode_group == 0  # a call costs more there
    assert _config(tiny_st, pairs_file, tmp_path / "a", device="cuda", length_group=16).encode_group == 16
    for bad in (-1, 1.5, True, "8"):
        with pytest.raises(FinegrainError, match="length_group=.* is not a whole number >= 0"):
            _config(tiny_st, pairs_file, tmp_path / "a", length_group=bad)
    out = tmp_path / "g"
    train_encoder(_config(tiny_st, pairs_file, out, length_group=3, stop_after=2))
    done = train_encoder(_config(tiny_st, pairs_file, out, length_group=0, resume=True))  # a speed setting
    assert done.finished
    assert json.loads((out / "finegrain_training.json").read_text())["hyperparameters"]["length_group"] == 0


def _train_args(tiny_st: Path, pairs: Path, out: Path) -> list[str]:
    """The CLI form of :func:`_config` with its defaults."""
    return ["train", "--base", f"st:{tiny_st}", "--pairs", str(pairs), "-o", str(out), "--steps", "6", "--batch-size", "8",
            "--lr", "1e-3", "--temperature", "0.05", "--checkpoint-every", "2", "-q"]


@pytest.mark.parametrize("native", [True, False, None])
def test_the_cli_says_when_the_other_precision_would_suit_this_cpu(
    tiny_st: Path, pairs_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch, native: bool | None,
) -> None:
    """bf16 without bfloat16 in hardware is a warning; fp32 where the CPU has it, a note; unknown, nothing."""
    monkeypatch.setattr("finegrain.machine.has_native_bf16", lambda machine=None: native)
    said = {}
    for precision in ("fp32", "bf16"):
        args = [a for a in _train_args(tiny_st, pairs_file, tmp_path / precision) if a != "-q"]
        assert main([*args, "--steps", "1", "--precision", precision]) == 0
        said[precision] = [line for line in capsys.readouterr().err.splitlines()
                           if line.startswith(("note:", "warning:"))]
    assert said["fp32"] == (["note: this CPU has bfloat16 arithmetic in hardware: --precision bf16 would train "
                             "faster here (docs/results/training.md compares the two, in speed and in the trained "
                             "model's scores)"] if native else [])
    assert said["bf16"] == ([] if native is not False else [
        "warning: --precision bf16: this CPU has no bfloat16 arithmetic in hardware (no AMX, AVX512-BF16 or Arm "
        "BF16), so torch emulates it and training runs slower than fp32"])


def _killed_while_checkpointing(tiny_st: Path, pairs: Path, out: Path, nth: int) -> None:
    """``finegrain train`` in a subprocess, SIGKILLed halfway through writing its ``nth`` checkpoint's bytes."""
    proc = _child(f"""
        import io, os, signal, torch
        from finegrain.cli.main import main
        save, calls = torch.save, []
        def killed_save(obj, f, *args, **kwargs):
            calls.append(1)
            if len(calls) < {nth}:
                return save(obj, f, *args, **kwargs)
            buf = io.BytesIO()
            save(obj, buf, *args, **kwargs)
            data = buf.getvalue()
            with (open(f, "wb") if isinstance(f, (str, os.PathLike)) else f) as target:
                target.write(data[: len(data) // 2])
                target.flush()
                os.kill(os.getpid(), signal.SIGKILL)
        torch.save = killed_save
        main({_train_args(tiny_st, pairs, out)!r})
    """, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr


@pytest.mark.parametrize("leftover", ["killed", "older-version"])
def test_a_kill_in_the_first_checkpoint_is_no_dead_end(
    tiny_st: Path, pairs_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], uninterrupted, leftover: str
) -> None:
    out = tmp_path / "k"
    if leftover == "killed":
        _killed_while_checkpointing(tiny_st, pairs_file, out, nth=1)
        left = list((out / "checkpoints").iterdir())
        assert len(left) == 1 and is_temporary(left[0]) and left[0].name.startswith(".step-000002.pt.")
    else:  # what versions that renamed their own temporary checkpoint left
        (out / "checkpoints").mkdir(parents=True)
        (out / "checkpoints" / "step-000002.pt.tmp").write_bytes(b"PK\x03\x04 cut short")
    assert main([*_train_args(tiny_st, pairs_file, out), "--resume"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --resume: no complete checkpoint in ")
    assert "killed run left only an unfinished one, now removed" in err[0] and "without --resume" in err[0]
    assert not any((out / "checkpoints").iterdir())
    assert main(_train_args(tiny_st, pairs_file, out)) == 0
    assert "trained 6 steps" in capsys.readouterr().out
    a, b = _weights(uninterrupted.out), _weights(out)
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    assert not (out / "checkpoints").exists() and not [p for p in out.rglob("*") if is_temporary(p)]


def test_a_kill_in_a_later_checkpoint_resumes_from_the_one_before(
    tiny_st: Path, pairs_file: Path, tmp_path: Path, uninterrupted
) -> None:
    out = tmp_path / "k2"
    _killed_while_checkpointing(tiny_st, pairs_file, out, nth=2)
    names = sorted(p.name for p in (out / "checkpoints").iterdir())
    assert names[0].startswith(".step-000004.pt.") and names[1:] == ["step-000002.pt"]
    with pytest.raises(FinegrainError, match="exists and is not empty"):
        train_encoder(_config(tiny_st, pairs_file, out))
    done = train_encoder(_config(tiny_st, pairs_file, out, resume=True))
    assert done.finished and done.resumed_from == 2
    np.testing.assert_allclose(done.train_losses, uninterrupted.train_losses, rtol=1e-5, atol=1e-6)
    assert not (out / "checkpoints").exists() and not [p for p in out.rglob("*") if is_temporary(p)]


def test_a_damaged_checkpoint_is_one_clear_error(tiny_st: Path, pairs_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "d"
    train_encoder(_config(tiny_st, pairs_file, out, stop_after=2))
    (out / "checkpoints" / "step-000002.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(FinegrainError, match=r"--resume: cannot read the checkpoint .*step-000002\.pt' \(") as e:
        train_encoder(_config(tiny_st, pairs_file, out, resume=True))
    assert "\n" not in str(e.value)


def test_torch_running_out_of_memory_is_one_error_line(
    tiny_st: Path, pairs_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch


    def embed_too_much(*args, **kwargs):
        return [torch.empty(10**13)]  # 40 TB: torch's CPU allocator refuses it with a RuntimeError

    monkeypatch.setattr(finetune, "_embed", embed_too_much)
    out = tmp_path / "oom"
    with pytest.raises(MemoryError, match=r"^training with --batch-size 8: can't allocate memory: you tried to allocate"):
        train_encoder(_config(tiny_st, pairs_file, out))
    capsys.readouterr()
    assert main(_train_args(tiny_st, pairs_file, out)) == 1
    err = capsys.readouterr().err  # after transformers' own "Loading weights" bar, which -q does not reach
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and err.rstrip().endswith(errors[0]) and "Traceback" not in err
    assert errors[0].startswith("error: finegrain train ran out of memory: training with --batch-size 8: can't allocate")
    assert list(out.iterdir()) == []  # nothing half-written: the same --out takes the rerun with a smaller --batch-size


def test_max_length_is_bounded_by_the_models_positions(tiny_st: Path, pairs_file: Path, tmp_path: Path) -> None:
    with pytest.raises(FinegrainError, match=r"max_length=65 is more than the 64 token positions of 'st:.*--max-length 64"):
        train_encoder(_config(tiny_st, pairs_file, tmp_path / "long", max_length=65))  # 64 in tiny_st's config
    assert train_encoder(_config(tiny_st, pairs_file, tmp_path / "long", max_length=64, steps=2)).finished


def test_hard_negatives_train_and_are_recorded(tiny_st: Path, pairs_file: Path, tmp_path: Path) -> None:
    result = train_encoder(_config(tiny_st, pairs_file, tmp_path / "h", steps=2, hard_negatives="bm25"))
    assert result.finished
    prov = json.loads((tmp_path / "h" / "finegrain_training.json").read_text())
    assert prov["hard_negatives"]["method"] == "bm25" and prov["hard_negatives"]["per_query"] == 1


# --------------------------------------------------------------------------- KL to a teacher's list


def _teacher_pairs(root: Path) -> Path:
    """The toy pairs, each with a teacher list that puts the *next* passage first, its own second and a third
    passage last: a teacher that disagrees with the labels, so only a KL term can pull the model its way."""
    texts = [t for _, t in _passages()]
    lines = []
    for i, (pid, text) in enumerate(_passages()):
        w = text.split()
        top = [texts[(i + 1) % len(texts)], text, texts[(i + 7) % len(texts)]]
        for q, style in ((f"{w[1]} {w[2]}", "kw"), (f"{w[2]} on {w[6]}", "sm")):
            lines.append(json.dumps({"query": q, "passage": text, "passage_id": pid, "style": style,
                                     "teacher_top": {"ids": ["x", "y", "z"], "texts": top,
                                                     "scores": [0.066, 0.060, 0.040]}}))
    path = root / "teacher.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _mean_kl(model_dir: Path, pairs: Sequence[Pair], temperature: float, teacher_temperature: float) -> float:
    """The mean KL(teacher || model) over ``pairs``' teacher lists, computed with numpy from the saved model."""
    enc = get_encoder(f"st:{model_dir}")
    total = 0.0
    for p in pairs:
        q = enc.encode([p.query], kind="query")[0]
        d = enc.encode([t for t, _ in p.teacher], kind="passage")
        z = d @ q / temperature
        log_student = z - z.max() - np.log(np.exp(z - z.max()).sum())
        target = teacher_distribution([s for _, s in p.teacher], teacher_temperature)
        total += float(np.sum(target * (np.log(target) - log_student)))
    return total / len(pairs)


def test_teacher_distribution_reads_any_scale_and_sums_to_one() -> None:
    rrf = teacher_distribution([0.066, 0.060, 0.040], 0.05)
    assert rrf.sum() == pytest.approx(1.0) and rrf[0] > rrf[1] > rrf[2]
    # a share of the top score: scaling every score by 1000 changes nothing
    assert np.allclose(teacher_distribution([66.0, 60.0, 40.0], 0.05), rrf)
    # softmax((s - s_top) / (T * |s_top|)): the top over the second is exp(0.006 / (0.05 * 0.066))
    assert rrf[0] / rrf[1] == pytest.approx(np.exp(0.006 / (0.05 * 0.066)))
    assert np.allclose(teacher_distribution([0.0, 0.0], 0.05), [0.5, 0.5])  # a top score of 0 reads as scale 1
    assert np.allclose(teacher_distribution([-1.0, -1.1], 1.0), [1 / (1 + np.exp(-0.1)), 1 / (1 + np.exp(0.1))])


def test_the_kl_term_pulls_the_model_towards_the_teachers_list(tiny_st: Path, tmp_path: Path) -> None:
    pairs_path = _teacher_pairs(tmp_path)
    pairs = read_pairs(pairs_path).pairs
    kw = {"steps": 30, "warmup": 0, "checkpoint_every": 30}
    plain = train_encoder(_config(tiny_st, pairs_path, tmp_path / "plain", **kw))
    kl = train_encoder(_config(tiny_st, pairs_path, tmp_path / "kl", kl_weight=5.0, **kw))
    assert plain.finished and kl.finished
    assert _mean_kl(kl.out, pairs, 0.05, 0.05) < 0.7 * _mean_kl(plain.out, pairs, 0.05, 0.05)
    prov = json.loads((kl.out / "finegrain_training.json").read_text())
    assert prov["hyperparameters"]["kl_weight"] == 5.0 and prov["hyperparameters"]["teacher_temperature"] == 0.05
    assert "5 x KL(teacher || student)" in prov["loss"]
    assert "KL" not in json.loads((plain.out / "finegrain_training.json").read_text())["loss"]


def test_the_kl_term_is_the_kl_of_the_models_own_scores(tiny_st: Path, tmp_path: Path) -> None:
    """The training loss's KL term (which reuses the batch's positive embeddings for the teacher passages they
    hold) equals the KL computed from scratch from the model's encodings."""
    import torch

    pairs = read_pairs(_teacher_pairs(tmp_path)).pairs[::2][:8]  # eight passages: each in the batch once
    for query_only in (False, True):  # the passages encoded at each step, or once before the first
        config = _config(tiny_st, tmp_path / "teacher.jsonl", tmp_path / "o", kl_weight=1.0, query_only=query_only)
        model = _load_st(tiny_st)
        model.eval()
        passages = _Passages(model, config, pairs, torch)
        loss = _Loss(_infonce(model, 1 / 0.05), passages, config, torch)
        with torch.no_grad():
            got = float(loss.kl(list(pairs), _embed(model, passages, list(pairs), config)))
        assert got == pytest.approx(_mean_kl(tiny_st, pairs, 0.05, 0.05), rel=1e-4)


def test_a_kl_loss_without_teacher_lists_is_one_clear_error(tiny_st: Path, pairs_file: Path, tmp_path: Path) -> None:
    with pytest.raises(FinegrainError, match=r"--kl-weight 1 needs .* line 1 of .*pairs\.jsonl' has 0") as e:
        train_encoder(_config(tiny_st, pairs_file, tmp_path / "o", kl_weight=1.0))
    assert "finegrain distill --teacher-scores" in e.value.hint
    assert not (tmp_path / "o").exists()
    for bad in (-1.0, float("nan"), True):
        with pytest.raises(FinegrainError, match="kl_weight="):
            _config(tiny_st, pairs_file, tmp_path / "o", kl_weight=bad)
    with pytest.raises(FinegrainError, match="teacher_temperature=0"):
        _config(tiny_st, pairs_file, tmp_path / "o", teacher_temperature=0)


@pytest.mark.parametrize(("top", "expect"), [
    ({"texts": ["a", "b"], "scores": [1.0, 0.5]}, None),
    ({"ids": ["1"], "scores": [1.0]}, '"teacher_top" as {"texts": [passage texts], "scores": [numbers]}'),
    ({"texts": ["a", "b"], "scores": [1.0]}, '"teacher_top" with as many "texts" as "scores", found \'2 texts, 1 scores'),
    ({"texts": ["a", ""], "scores": [1.0, 0.5]}, '"teacher_top" texts as non-empty strings, found \'""\''),
    ({"texts": ["a", "b"], "scores": [1.0, "0.5"]}, '"teacher_top" scores as finite numbers, found \'"0.5"\''),
    ({"texts": ["a", "b"], "scores": [0.5, 1.0]}, '"teacher_top" best first (scores never rising)'),
    ([["a", 1.0]], '"teacher_top" as {"texts"'),
])
def test_teacher_lists_are_read_or_refused_with_the_line(tmp_path: Path, top, expect) -> None:
    p = tmp_path / "p.jsonl"
    p.write_text('{"query": "q", "passage": "d"}\n' + json.dumps({"query": "q2", "passage": "e", "teacher_top": top})
                 + "\n")
    if expect is None:
        assert read_pairs(p).pairs[1].teacher == (("a", 1.0), ("b", 0.5)) and read_pairs(p).pairs[0].teacher == ()
        return
    with pytest.raises(DataFormatError) as e:
        read_pairs(p)
    assert str(e.value).startswith(f"{p}:2: expected {expect}")


# --------------------------------------------------------------------------- data


def test_held_out_split_is_by_passage_and_seeded(pairs_file: Path) -> None:
    pairs = read_pairs(pairs_file).pairs
    train, val = split_by_passage(pairs, 0.05, seed=3)
    assert len(train) + len(val) == 48 and len(val) >= 3  # ceil(0.05 * 48) = 3, in whole passages of 2
    assert not {p.key for p in train} & {p.key for p in val}
    assert split_by_passage(pairs, 0.05, seed=3) == (train, val)
    assert split_by_passage(pairs, 0.05, seed=4)[1] != val
    assert split_by_passage(pairs[:5], 0.05, seed=3) == (tuple(pairs[:5]), ())  # too few to hold any out


def test_batches_never_repeat_a_text_and_negatives_are_never_positives(pairs_file: Path) -> None:
    pairs = read_pairs(pairs_file).pairs
    mined, stats = mine_bm25_negatives(pairs, 2, "en")
    assert stats["pool"] == 24
    own = {}
    for p in mined:
        own.setdefault(p.query, set()).add(p.passage)
    assert all(len(p.negatives) == 2 and not set(p.negatives) & own[p.query] for p in mined)
    for idx in itertools.islice(batch_schedule(mined, 8, seed=0), 20):
        texts = [t for i in idx for t in mined[i].texts()]
        assert len(texts) == len(set(texts)) and 2 <= len(idx) <= 8
    same = [Pair(f"q{i}", "one passage", "k", None, i) for i in range(4)]
    with pytest.raises(FinegrainError, match="no batch of two"):
        next(batch_schedule(same, 4, seed=0))


def _eager_schedule(pairs: Sequence[Pair], batch: int, seed: int, steps: int) -> list[list[int]]:
    """The batch order as it was defined when the whole schedule was built before step 1: the reference that
    keeps old runs resumable and every seed's results unchanged."""
    out: list[list[int]] = []
    epoch = 0
    while len(out) < steps:
        out.extend(_epoch(pairs, batch, np.random.default_rng([seed, 2, epoch]).permutation(len(pairs))))
        epoch += 1
    return out[:steps]


@pytest.mark.parametrize(("seed", "batch", "negatives"), [(0, 8, 0), (1, 8, 1), (7, 5, 2), (3, 32, 0)])
def test_the_lazy_schedule_is_the_eager_one_whatever_the_number_of_steps(
    pairs_file: Path, seed: int, batch: int, negatives: int
) -> None:
    pairs = read_pairs(pairs_file).pairs
    if negatives:
        pairs = mine_bm25_negatives(pairs, negatives, "en")[0]
    for steps in (1, 7, 50, 200):  # within the first epoch and across many
        assert list(itertools.islice(batch_schedule(pairs, batch, seed), steps)) == _eager_schedule(
            pairs, batch, seed, steps)


def test_steps_and_seed_have_an_upper_bound(tmp_path: Path) -> None:
    p = tmp_path / "p.jsonl"
    TrainConfig(base="minilm", pairs=p, out=tmp_path / "o", steps=MAX_STEPS, seed=MAX_SEED)
    with pytest.raises(FinegrainError, match=r"steps=1000000001 is more than 1,000,000,000 \(pass --steps"):
        TrainConfig(base="minilm", pairs=p, out=tmp_path / "o", steps=MAX_STEPS + 1)
    with pytest.raises(FinegrainError, match=r"seed=\d+ is more than .*pass --seed"):
        TrainConfig(base="minilm", pairs=p, out=tmp_path / "o", seed=MAX_SEED + 1)


def _child(code: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh Python on this checkout's finegrain, one torch thread."""
    env = {**os.environ, "PYTHONPATH": str(Path(finegrain.__file__).parents[1]), "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


def test_a_billion_steps_reach_step_one_at_once(tiny_st: Path, pairs_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "huge"
    t0 = time.monotonic()
    try:
        proc = _child(f"""
            from finegrain.train.finetune import TrainConfig, train_encoder
            r = train_encoder(TrainConfig(base="st:{tiny_st}", pairs="{pairs_file}", out="{out}", steps=10**9,
                                          batch=8, checkpoint_every=10**9, stop_after=1, quiet=True))
            print(r.steps_done, r.finished)
        """, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail(f"--steps 10**9 did not reach step 1 in {time.monotonic() - t0:.0f}s")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["1", "False"]
    assert [p.name for p in (out / "checkpoints").iterdir()] == ["step-000001.pt"]


def test_column_names_and_bad_records(tmp_path: Path) -> None:
    p = tmp_path / "p.jsonl"
    p.write_text('{"anchor": "a", "positive": "b"}\n\n{"query": "c", "positive": "d"}\n')
    assert [(x.query, x.passage, x.line) for x in read_pairs(p).pairs] == [("a", "b", 1), ("c", "d", 3)]
    p.write_text('{"query": "a", "passage": "b"}\n{"query": "a", "text": "b"}\n')
    with pytest.raises(DataFormatError, match=r"p\.jsonl:2: expected an object with \"query\" and \"passage\""):
        read_pairs(p)
    p.write_text('{"query": "", "passage": "b"}\n')
    with pytest.raises(DataFormatError, match=r":1: expected \"query\" as a non-empty string"):
        read_pairs(p)
    with pytest.raises(UnknownNameError, match="did you mean 'minilm'"):
        TrainConfig(base="minilmm", pairs=p, out=tmp_path / "o")


@pytest.mark.parametrize("case", ["huge-line", "long-id", "not-utf8", "not-object", "huge-number"])
def test_pairs_are_read_by_the_shared_line_reader(tmp_path: Path, case: str) -> None:
    """Whatever the shared JSON-lines reader refuses (and bounds), the pairs reader refuses with its error."""
    p = tmp_path / "p.jsonl"
    good = b'{"query": "a", "passage": "b"}\n'
    bad = {"huge-line": b'{"query": "c", "passage": "' + b"word " * 10_000_000 + b'"}',
           "long-id": b'{"query": "c", "passage": "d", "passage_id": "' + b"x" * 50_000_000 + b'"}',
           "not-utf8": b'{"query": "c", "passage": "\xff"}',
           "not-object": b'["c", "d"]',
           "huge-number": b'{"query": "c", "passage": "d", "passage_id": ' + b"9" * 5000 + b"}"}[case]
    p.write_bytes(good + bad + b"\n")

    def outcome(read) -> str:
        try:
            read()
        except FinegrainError as e:
            return str(e)
        return "read"

    shared = outcome(lambda: list(iter_jsonl(p)))
    assert outcome(lambda: read_pairs(p)) == shared
    if case not in ("huge-line", "long-id"):  # refused today; the long lines once the reader bounds a line
        assert shared.startswith(f"{p}:2: expected ")


# --------------------------------------------------------------------------- the CLI


@pytest.mark.parametrize(
    ("case", "expect"),
    [
        ("missing", "pairs file '{d}/nope.jsonl' does not exist"),
        ("bad-json", "{d}/bad.jsonl:2: expected"),
        ("base", "unknown base model 'e6'; known: e5, minilm, st:PATH"),
        ("steps", "steps=0 is not a whole number >= 1"),
        ("no-folder", "sentence-transformers model folder '{d}/none' does not exist"),
        ("teacher-temperature", "teacher_temperature=0.0 is not a positive number (pass e.g. --teacher-temperature"),
        ("no-teacher", "--kl-weight 1 needs the teacher's best passages on every pair, and line 1 of"),
        ("precision", "precision='fp16' is not one of fp32, bf16 (pass --precision fp32 (the default) or bf16)"),
        ("device", "device='tpu' is not a torch device (pass --device cpu (the default), cuda, cuda:N or mps)"),
        ("no-gpu", "--device cuda:7: this torch sees "),
    ],
)
def test_cli_bad_input_is_one_clear_error(tmp_path: Path, case: str, expect: str) -> None:
    if case == "no-gpu" and pytest.importorskip("torch").cuda.device_count() > 7:
        pytest.skip("a machine with eight GPUs has cuda:7")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": "a", "passage": "b"}\n{"query": "a", passage: b}\n')
    good = tmp_path / "good.jsonl"
    good.write_text('{"query": "a", "passage": "b"}\n{"query": "c", "passage": "d"}\n')
    args = {"missing": ["--base", "minilm", "--pairs", str(tmp_path / "nope.jsonl")],
            "bad-json": ["--base", "minilm", "--pairs", str(bad)],
            "base": ["--base", "e6", "--pairs", str(bad)],
            "steps": ["--base", "minilm", "--pairs", str(bad), "--steps", "0"],
            "no-folder": ["--base", f"st:{tmp_path / 'none'}", "--pairs", str(bad)],
            "teacher-temperature": ["--base", "minilm", "--pairs", str(bad), "--teacher-temperature", "0"],
            "no-teacher": ["--base", "minilm", "--pairs", str(good), "--kl-weight", "1"],
            "precision": ["--base", "minilm", "--pairs", str(good), "--precision", "fp16"],
            "device": ["--base", "minilm", "--pairs", str(good), "--device", "tpu"],
            "no-gpu": ["--base", "minilm", "--pairs", str(good), "--device", "cuda:7"]}[case]
    result = CliRunner().invoke(app, ["train", *args, "-o", str(tmp_path / "out"), "-q"])
    assert result.exit_code == 2, result.output
    err = result.stderr if hasattr(result, "stderr") else result.output
    assert expect.format(d=tmp_path) in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


# --------------------------------------------------------------------------- the query encoder alone


def test_query_only_trains_the_query_route_and_keeps_the_bases_passages(
    tiny_st: Path, pairs_file: Path, tmp_path: Path
) -> None:
    """``query_only``: the saved model encodes passages exactly as the base does (an index built with the base
    stays valid) and queries with the trained encoder, through finegrain's ``st:`` encoder."""
    result = train_encoder(_config(tiny_st, pairs_file, tmp_path / "q", steps=20, warmup=0, query_only=True))
    assert result.finished and np.mean(result.train_losses[-5:]) < np.mean(result.train_losses[:5])
    base, trained = get_encoder(f"st:{tiny_st}"), get_encoder(f"st:{result.out}")
    texts = [t for _, t in _passages()]
    queries = ["red dog", "cat on snow", "bird on beach"]
    assert np.allclose(trained.encode(texts, kind="passage"), base.encode(texts, kind="passage"), atol=1e-6)
    assert not np.allclose(trained.encode(queries, kind="query"), base.encode(queries, kind="query"), atol=1e-3)
    # the query route is the trained one: a query encoded as a passage reads the base
    assert not np.allclose(trained.encode(queries, kind="query"), trained.encode(queries, kind="passage"), atol=1e-3)
    prov = json.loads((result.out / "finegrain_training.json").read_text())
    assert prov["hyperparameters"]["query_only"] is True and "fixed embeddings" in prov["loss"]
    assert "router_config.json" in {p.name for p in result.out.iterdir()}


def test_query_only_resumes_where_an_uninterrupted_run_ends(tiny_st: Path, pairs_file: Path, tmp_path: Path) -> None:
    whole = train_encoder(_config(tiny_st, pairs_file, tmp_path / "whole", query_only=True))
    out = tmp_path / "stopped"
    assert not train_encoder(_config(tiny_st, pairs_file, out, query_only=True, stop_after=3)).finished
    with pytest.raises(FinegrainError, match="query_only"):  # a two-sided resume of a query-only run
        train_encoder(_config(tiny_st, pairs_file, out, resume=True))
    done = train_encoder(_config(tiny_st, pairs_file, out, query_only=True, resume=True))
    assert done.finished and done.train_losses == whole.train_losses
    a, b = _weights(whole.out / "query_0_Transformer"), _weights(out / "query_0_Transformer")
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def test_an_asymmetric_base_is_one_clear_error(tiny_st: Path, pairs_file: Path, tmp_path: Path) -> None:
    first = train_encoder(_config(tiny_st, pairs_file, tmp_path / "q", steps=2, query_only=True))
    with pytest.raises(FinegrainError, match="asymmetric"):
        train_encoder(TrainConfig(base=f"st:{first.out}", pairs=pairs_file, out=tmp_path / "again", steps=2, batch=8,
                                  quiet=True))


def test_frozen_embeddings_keep_the_bases_table_and_train_the_rest(
    tiny_st: Path, pairs_file: Path, tmp_path: Path, uninterrupted
) -> None:
    result = train_encoder(_config(tiny_st, pairs_file, tmp_path / "f", freeze_embeddings=True))
    base, trained, free = _weights(tiny_st), _weights(result.out), _weights(uninterrupted.out)
    table = next(k for k in base if k.endswith("word_embeddings.weight"))
    assert np.array_equal(trained[table], base[table]) and not np.array_equal(free[table], base[table])
    moved = [k for k in base if k != table and not np.array_equal(trained[k], base[k])]
    assert any("encoder.layer" in k for k in moved)
    prov = json.loads((result.out / "finegrain_training.json").read_text())
    assert prov["hyperparameters"]["freeze_embeddings"] is True and "token embeddings frozen" in prov["loss"]
    out = tmp_path / "stopped"  # the setting is part of the run: a resume must keep it
    train_encoder(_config(tiny_st, pairs_file, out, freeze_embeddings=True, stop_after=2))
    with pytest.raises(FinegrainError, match="freeze_embeddings"):
        train_encoder(_config(tiny_st, pairs_file, out, resume=True))
    done = train_encoder(_config(tiny_st, pairs_file, out, freeze_embeddings=True, resume=True))
    assert done.finished and done.train_losses == result.train_losses


def test_a_soup_of_query_only_models_averages_each_route(tiny_st: Path, pairs_file: Path, tmp_path: Path) -> None:
    """An asymmetric model keeps one weights file per route; the soup averages each and still routes."""
    a = train_encoder(_config(tiny_st, pairs_file, tmp_path / "a", query_only=True)).out
    b = train_encoder(_config(tiny_st, pairs_file, tmp_path / "b", query_only=True, seed=1)).out
    mixed = soup([f"st:{a}", f"st:{b}"], tmp_path / "soup").out
    for route in ("query_0_Transformer", "document_0_Transformer"):
        wa, wb, ws = _weights(a / route), _weights(b / route), _weights(mixed / route)
        assert all(np.allclose(ws[k], (wa[k] + wb[k]) / 2, atol=1e-6) for k in wa if wa[k].dtype.kind == "f")
    assert not np.array_equal(_weights(a / "query_0_Transformer")["encoder.layer.0.output.dense.weight"],
                              _weights(mixed / "query_0_Transformer")["encoder.layer.0.output.dense.weight"])
    texts = [t for _, t in _passages()]
    assert np.allclose(get_encoder(f"st:{mixed}").encode(texts, kind="passage"),
                       get_encoder(f"st:{tiny_st}").encode(texts, kind="passage"), atol=1e-6)
    record = json.loads((mixed / "finegrain_training.json").read_text())
    assert set(record["members"][0]["weights_files"]) == {"query_0_Transformer/model.safetensors",
                                                          "document_0_Transformer/model.safetensors"}


def test_query_only_without_a_router_fails_before_the_first_step(
    tiny_st: Path, pairs_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sentence-transformers without ``Router`` could not save the asymmetric model: say so before training."""

    def no_router() -> None:
        raise FinegrainError("no Router", "pip install 'sentence-transformers>=5'")

    monkeypatch.setattr(finetune, "_router_class", no_router)
    steps: list[int] = []
    monkeypatch.setattr(finetune, "_embed", lambda *a, **k: steps.append(1))
    with pytest.raises(FinegrainError, match="no Router"):
        train_encoder(_config(tiny_st, pairs_file, tmp_path / "q", query_only=True))
    assert steps == [] and not (tmp_path / "q" / "checkpoints").exists()
