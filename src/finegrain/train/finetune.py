"""Contrastive fine-tuning of a local sentence-transformers model on (query, passage) pairs: ``finegrain train``.

The objective is CapRetrieval's (Xu et al., *The Granularity Dilemma*, §4 and App. D):
InfoNCE with in-batch negatives, i.e. sentence-transformers' ``MultipleNegativesRankingLoss``
with ``scale = 1/τ``; AdamW, weight decay 0.1, around 4K steps. The temperature τ, the lr and
the query/passage prefixes default to what the base model was trained with
(:mod:`finegrain.train.bases`: τ = 0.05 for MiniLM, 0.01 for e5), and the provenance says
whether each came from the base or the user. Hard negatives, BM25-mined
(:mod:`~finegrain.train.finetune_data`) or given by the pairs file (``"negatives"``, as
``finegrain distill`` writes), are extra candidate columns; the two never mix. Batches never hold a text
twice, so a passage shared by two pairs is not the other's false negative; with
``avoid_false_negatives`` they also never hold two captions of one group (same image) nor a
pair whose passage is a labelled positive of another pair's query.

With ``kl_weight`` > 0 the loss adds ``kl_weight`` times a listwise distillation term (Hofstätter et al.
2021; RocketQAv2, Ren et al. 2021): for each query, the KL divergence from the teacher's distribution
over its best passages (the pairs file's ``"teacher_top"``, as ``finegrain distill --teacher-scores``
writes) to the student's, both softmaxes over the same passages. The student's logits are its cosines
at the training scale ``1/τ``; the teacher's are its scores less its top score, divided by
``teacher_temperature`` times the top score's magnitude (:func:`teacher_distribution`), so one setting
reads any teacher's scale (RRF sums, BM25 scores, cosines), as the relative false-negative margin of
:mod:`finegrain.train.distill` does. In-batch negatives and the teacher's passages never mix: the KL
term sees only each query's own list.

With ``freeze_embeddings`` the token embedding table keeps the base's values and AdamW never sees it. In a
multilingual model it is most of the weights (e5-small: 96M of 118M, for a 250K-token vocabulary), and their
dense gradient and AdamW update cost more than a short batch's forward and backward pass; the vocabulary a
run never sees stays where the base put it.

With ``query_only`` only the query encoder trains: every passage the pairs name (positives, negatives, teacher
lists) is encoded once by the base model, before the first step, and those fixed embeddings are the passage
side of every loss. A step then encodes only its queries, so it costs a fraction of a two-sided step and the
teacher's lists cost nothing; and an index built with the base model stays valid for the trained one. The
saved folder is an asymmetric sentence-transformers model (a ``Router``: the trained encoder on the
``query`` route, the base on the ``document`` route), which ``encode_query`` / ``encode_document`` and
finegrain's ``st:`` encoder read the right way round.

Torch runs ``threads`` intra-op threads (default :func:`finegrain.machine.default_torch_threads`:
one per physical core), set for the run and restored after it. ``precision="bf16"`` runs the encoder's
forward pass under bfloat16 autocast and everything else in float32 (:data:`PRECISIONS`): faster where
the CPU has bfloat16 in hardware (:func:`finegrain.machine.has_native_bf16`), slower where torch
emulates it. The default stays float32: the speed depends on the CPU, and what bfloat16 does to a trained
model is measured (``benchmarks/train_precision.py``), not assumed.

A step's texts vary in length (a keyword query beside a long caption; a teacher's list of passages), and one
padded forward pass pads every text to the longest. With ``length_group`` N > 0 each encode sorts its texts by
token count and runs them in groups of at most N, each padded to its own longest (the rows go back in
their order): the same embeddings up to float rounding for fewer padded tokens, so a CPU, whose cost is every
token it multiplies, trains faster; a batch's composition, and so its in-batch negatives, is unchanged. The
default (``None``) is :data:`LENGTH_GROUP` on the CPU and 0, one padded pass, on an accelerator, where a call's
fixed cost outweighs the padding. Like ``threads`` it moves float rounding and dropout's draws, not what is
trained, so a run may resume with another value; its gain is measured by ``benchmarks/train_throughput.py``.

Why a small explicit torch loop over ST's model rather than ``SentenceTransformerTrainer``:
the trainer needs ``datasets`` and ``accelerate``, and its resume skips data by replaying a
sampler whose state is not saved. Here the batch order is a pure function of
``(seed, step)`` (:func:`~finegrain.train.finetune_data.batch_schedule`, cut one epoch at a
time as training reaches it, so no setup grows with ``steps``) and the torch
RNG (dropout) is reseeded from ``(seed, step)`` before every step, so a checkpoint needs
only the weights, the optimizer and the scheduler: ``--resume`` after a kill replays
exactly the steps an uninterrupted run takes, and two runs with one seed give the same
weights (on one machine and thread count).

Checkpoints (``MODEL_DIR/checkpoints/step-NNNNNN.pt``; only the newest is kept, each written
through :mod:`finegrain.atomic`) are removed when training finishes unless
``keep_checkpoints``. A run killed while writing one leaves a temporary file, which the next
start removes: a folder holding nothing else is empty for a fresh start, and ``--resume``
continues from the newest complete checkpoint, or says there is none. ``MODEL_DIR`` then is a
sentence-transformers folder (``st:MODEL_DIR``) with ``finegrain_training.json``: the base model
and its weights' sha256, the pairs file's sha256 and provenance sidecar, every hyperparameter,
the loss curves, the machine, the versions and the wall time; ``"transductive"`` and ``"transductive_dataset"`` are copied from the
pairs' provenance (:mod:`finegrain.train.queries`): a model trained on an evaluation dataset's
passages, which :func:`transductive_dataset` reads back for ``finegrain eval``.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields, replace
from importlib import metadata
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from finegrain._lazy import require
from finegrain.atomic import atomic_write, is_temporary, remove_stale, write_text
from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.io.checksum import sha256_of
from finegrain.machine import default_torch_threads, run_environment
from finegrain.retrieve.dense.encoders.base import load_error
from finegrain.train.bases import BASES, BaseModel, resolve_base
from finegrain.train.finetune_data import (
    Pair,
    batch_schedule,
    mine_bm25_negatives,
    one_pass,
    read_pairs,
    split_by_passage,
)

PROVENANCE = "finegrain_training.json"
CHECKPOINTS = "checkpoints"
HARD_NEGATIVES = ("bm25",)
#: ``fp32``: everything in float32. ``bf16``: the encoder's forward pass under bfloat16 autocast (its matrix
#: products in bfloat16), the embeddings cast back to float32 before the similarities, the loss, the gradients'
#: accumulation into float32 weights, AdamW and the saved model: the cosines at scale 1/τ (100 for e5) keep
#: float32's resolution, which bfloat16's 8-bit mantissa would not.
PRECISIONS: tuple[str, ...] = ("fp32", "bf16")
# Fields that may differ between a run and its --resume.
_RUN_ONLY = ("resume", "quiet", "stop_after", "keep_checkpoints", "checkpoint_every", "threads", "device",
             "length_group")
#: Texts per length-sorted group of an encode on the CPU (``length_group=None`` there); 0 on an accelerator.
LENGTH_GROUP = 32
#: The settings whose default is the base model's own (:class:`finegrain.train.bases.Defaults`).
BASE_DEFAULTED = ("temperature", "lr", "query_prefix", "passage_prefix")
#: Upper bounds of ``steps`` and ``seed``: dropout is seeded with ``seed * _SEED_STRIDE + step``, which must stay
#: inside torch's 64-bit seed range; a billion steps is far beyond any run (the paper's is about 4K).
MAX_STEPS = 10**9
MAX_SEED = 10**12
_SEED_STRIDE = 1_000_003
#: The torch devices ``--device`` accepts: the CPU, a CUDA GPU (``cuda:N`` picks one) or Apple's MPS.
_DEVICE = re.compile(r"cpu|cuda(:\d+)?|mps")


@dataclass(frozen=True)
class TrainConfig:
    """Everything a fine-tuning run depends on. ``warmup=None`` is 10% of ``steps``; ``temperature``, ``lr``
    and the prefixes left ``None`` are the base model's (:meth:`with_base_defaults`); ``threads=None`` is
    :func:`~finegrain.machine.default_torch_threads`; ``stop_after`` stops (checkpointing) after that many
    steps of this call, as a kill would, for tests."""

    base: str
    pairs: Path
    out: Path
    steps: int = 4000
    batch: int = 32
    lr: float | None = None
    warmup: int | None = None
    temperature: float | None = None
    weight_decay: float = 0.1
    seed: int = 0
    hard_negatives: str | None = None
    negatives_per_query: int = 1
    checkpoint_every: int = 500
    resume: bool = False
    max_length: int | None = None
    query_prefix: str | None = None
    passage_prefix: str | None = None
    val_fraction: float = 0.05
    lang: str = "en"
    quiet: bool = False
    keep_checkpoints: bool = False
    stop_after: int | None = None
    threads: int | None = None
    avoid_false_negatives: bool = False
    kl_weight: float = 0.0
    teacher_temperature: float = 0.05
    precision: str = "fp32"
    query_only: bool = False
    freeze_embeddings: bool = False
    device: str = "cpu"
    length_group: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "pairs", Path(self.pairs))
        object.__setattr__(self, "out", Path(self.out))
        for name, low in (("steps", 1), ("batch", 2), ("negatives_per_query", 1), ("checkpoint_every", 1),
                          ("seed", 0), ("warmup", 0), ("max_length", 1), ("stop_after", 1), ("threads", 1)):
            v = getattr(self, name)
            if v is None and name in ("warmup", "max_length", "stop_after", "threads"):
                continue
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                raise FinegrainError(f"{name}={v!r} is not a whole number >= {low}",
                                     f"pass --{name.replace('_', '-')} {max(low, 1)} or more")
        for name, high in (("steps", MAX_STEPS), ("seed", MAX_SEED)):
            if getattr(self, name) > high:
                raise FinegrainError(f"{name}={getattr(self, name)} is more than {high:,}", f"pass --{name} {high} or less")
        for name, example, default in (("lr", "2e-5", "for the base model's own"),
                                       ("temperature", "0.05", "for the base model's own"),
                                       ("teacher_temperature", "0.05", "for 0.05")):
            v = getattr(self, name)
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0 < v < math.inf):
                raise FinegrainError(f"{name}={v!r} is not a positive number",
                                     f"pass e.g. --{name.replace('_', '-')} {example}, or leave it out {default}")
        for name in ("query_prefix", "passage_prefix"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), str):
                raise FinegrainError(f"{name}={getattr(self, name)!r} is not text", "pass a string, e.g. 'query: '")
        if isinstance(self.kl_weight, bool) or not isinstance(self.kl_weight, (int, float)) or not (
                0 <= self.kl_weight < math.inf):
            raise FinegrainError(f"kl_weight={self.kl_weight!r} is not a number >= 0",
                                 "pass e.g. --kl-weight 1, or 0 (the default) for InfoNCE alone")
        if not (0 <= self.weight_decay < math.inf) or not (0 <= self.val_fraction < 1):
            raise FinegrainError(f"weight_decay={self.weight_decay!r} / val_fraction={self.val_fraction!r} out of range",
                                 "weight decay >= 0, held-out fraction in [0, 1)")
        if self.warmup is not None and self.warmup > self.steps:
            raise FinegrainError(f"warmup={self.warmup} is more than steps={self.steps}", "pass --warmup <= --steps")
        for name in ("query_only", "freeze_embeddings"):
            if not isinstance(getattr(self, name), bool):
                raise FinegrainError(f"{name}={getattr(self, name)!r} is not true or false",
                                     f"pass --{name.replace('_', '-')} or leave it out")
        if not isinstance(self.device, str) or not _DEVICE.fullmatch(self.device):
            raise FinegrainError(f"device={self.device!r} is not a torch device", "pass --device cpu (the default), "
                                 "cuda, cuda:N or mps")
        if self.length_group is not None and (isinstance(self.length_group, bool) or not isinstance(
                self.length_group, int) or self.length_group < 0):
            raise FinegrainError(f"length_group={self.length_group!r} is not a whole number >= 0",
                                 f"pass --length-group {LENGTH_GROUP} (texts per length-sorted group), 0 for one "
                                 "padded pass, or leave it out for the device's default")
        if self.precision not in PRECISIONS:
            raise FinegrainError(f"precision={self.precision!r} is not one of {', '.join(PRECISIONS)}",
                                 "pass --precision fp32 (the default) or bf16")
        if self.hard_negatives is not None and self.hard_negatives not in HARD_NEGATIVES:
            raise UnknownNameError("hard-negative miner", self.hard_negatives, HARD_NEGATIVES)
        if self.base not in ("minilm", "e5") and not self.base.startswith("st:"):
            raise UnknownNameError("base model", self.base, BASES)

    @property
    def warmup_steps(self) -> int:
        return self.warmup if self.warmup is not None else self.steps // 10

    @property
    def torch_threads(self) -> int:
        return self.threads if self.threads is not None else default_torch_threads()

    @property
    def encode_group(self) -> int:
        """Texts per length-sorted group of an encode; 0: one padded pass (:func:`_encode`)."""
        if self.length_group is not None:
            return self.length_group
        return LENGTH_GROUP if self.device == "cpu" else 0

    def with_base_defaults(self, base: BaseModel) -> tuple[TrainConfig, dict[str, str]]:
        """This config with every base-defaulted setting filled in, and who chose each (``base`` or ``user``)."""
        filled = {name: getattr(base.defaults, name) for name in BASE_DEFAULTED if getattr(self, name) is None}
        chosen = {name: "base" if name in filled else "user" for name in BASE_DEFAULTED}
        return replace(self, **filled), chosen

    def hyperparameters(self) -> dict[str, Any]:
        """The settings as recorded (call on a config after :meth:`with_base_defaults`)."""
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("out", "pairs", "stop_after")}
        d["warmup"] = self.warmup_steps
        d["threads"] = self.torch_threads
        d["length_group"] = self.encode_group
        d["scale"] = 1.0 / self.temperature if self.temperature else None
        d["optimizer"] = "AdamW"
        d["schedule"] = "linear warmup, then linear decay to 0"
        return d


class ValPoint(NamedTuple):
    """Held-out loss and in-batch accuracy (the positive ranks first among the batch's candidates) at a step."""

    step: int
    loss: float
    accuracy: float


@dataclass(frozen=True)
class TrainResult:
    """A finished (or stopped) run: where the model is, the steps done and the curves."""

    out: Path
    steps_done: int
    batch: int
    finished: bool
    train_losses: tuple[float, ...]
    validation: tuple[ValPoint, ...]
    resumed_from: int | None
    wall_time_s: float
    step_time_s: float
    provenance: Path | None

    @property
    def pairs_per_second(self) -> float | None:
        """Training pairs per second of optimizer steps in this call (validation, checkpoints, loading excluded)."""
        n = self.steps_done - (self.resumed_from or 0)
        return n * self.batch / self.step_time_s if n and self.step_time_s > 0 else None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["out"], d["provenance"] = str(self.out), str(self.provenance) if self.provenance else None
        d["validation"] = [p._asdict() for p in self.validation]
        return d


def train_encoder(config: TrainConfig) -> TrainResult:
    """Fine-tune ``config.base`` on ``config.pairs`` into ``config.out`` (see the module docstring).

    Torch failing to allocate (a RuntimeError from its CPU allocator, ``torch.OutOfMemoryError`` on a GPU) is
    raised as a :class:`MemoryError` naming the batch size and the allocation, so callers meet one kind of
    out-of-memory error."""
    torch = require("torch", "train", "torch")
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(config.torch_threads)
        return _train(config, torch)
    except RuntimeError as e:
        line = (str(e).strip().splitlines() or [""])[0]
        cpu = line.find("can't allocate memory")
        if cpu < 0 and not isinstance(e, getattr(torch, "OutOfMemoryError", ())):
            raise
        raise MemoryError(f"training with --batch-size {config.batch}: {line[cpu:] if cpu >= 0 else line}") from None
    finally:
        torch.set_num_threads(threads)


def _train(config: TrainConfig, torch: Any) -> TrainResult:
    t0 = time.perf_counter()
    _require_device(config.device, torch)
    resolve_base(config.base, convert=False)  # a wrong base fails before the pairs are read
    data = read_pairs(config.pairs)
    base = resolve_base(config.base)  # e5: converted on first use, once the inputs are known to be good
    config, chosen = config.with_base_defaults(base)
    base_path = base.path
    if config.kl_weight:
        _require_teacher(data.pairs, config)
    train, val = split_by_passage(data.pairs, config.val_fraction, config.seed)
    negatives = None
    if config.hard_negatives and data.pairs[0].negatives:
        raise FinegrainError(f"--hard-negatives {config.hard_negatives} mines negatives, and the pairs file "
                             f"{str(config.pairs)!r} gives {len(data.pairs[0].negatives)} of its own a record",
                             "leave out --hard-negatives to train on the file's negatives, or give pairs without "
                             '"negatives"')
    if config.hard_negatives:
        train, negatives = mine_bm25_negatives(train, config.negatives_per_query, config.lang,
                                               avoid_false_negatives=config.avoid_false_negatives)
    identity = {**{k: v for k, v in config.hyperparameters().items() if k not in _RUN_ONLY},
                "pairs_sha256": data.sha256, "base_weights_sha256": _weights_sha256(base_path)}
    ckpt_dir = config.out / CHECKPOINTS
    state = _prepare_out(config, ckpt_dir, identity, torch)

    model = _load_st(base_path, config.device)
    if _router(model) is not None:
        raise FinegrainError(f"base {config.base!r} is an asymmetric model (a Router of query and document encoders)",
                             "train from a model with one encoder, e.g. the base the asymmetric one was trained from")
    if config.query_only:
        _router_class()  # the asymmetric model is saved after the last step: fail now if it cannot be
    if config.max_length is not None:
        limit = _positions(model)
        if limit is not None and config.max_length > limit:
            raise FinegrainError(f"max_length={config.max_length} is more than the {limit} token positions of "
                                 f"{config.base!r}", f"pass --max-length {limit} or less, or leave it out")
        model.max_seq_length = config.max_length
    assert config.temperature is not None and config.lr is not None  # filled by with_base_defaults
    passages = _Passages(model, config, (*train, *val), torch)
    loss_fn = _Loss(_infonce(model, 1.0 / config.temperature), passages, config, torch)
    if config.freeze_embeddings:
        _input_embeddings(model, config.base).weight.requires_grad_(False)
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=config.lr, weight_decay=config.weight_decay)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, _linear(config.warmup_steps, config.steps))
    val_batches = one_pass(val, config.batch, config.seed, avoid_false_negatives=config.avoid_false_negatives)

    start, losses, points, wall = 0, [], [], 0.0
    if state is not None:
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        start, losses = int(state["step"]), list(state["losses"])
        points, wall = [ValPoint(*p) for p in state["validation"]], float(state["wall_time_s"])
    schedule = batch_schedule(train, config.batch, config.seed, avoid_false_negatives=config.avoid_false_negatives)
    batches = itertools.islice(schedule, start, None)  # step start+1 on

    tqdm = require("tqdm", "train", "tqdm").tqdm
    bar = tqdm(total=config.steps, initial=start, disable=config.quiet, desc="train", unit="step", file=sys.stderr)
    stop = config.steps if config.stop_after is None else min(config.steps, start + config.stop_after)
    model.train()
    step, step_time = start, 0.0
    for step in range(start + 1, stop + 1):
        t_step = time.perf_counter()
        torch.manual_seed(config.seed * _SEED_STRIDE + step)  # dropout: a function of (seed, step)
        batch = [train[i] for i in next(batches)]
        loss = loss_fn(batch, _embed(model, passages, batch, config))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        scheduler.step()
        losses.append(float(loss.detach()))
        step_time += time.perf_counter() - t_step
        bar.update(1)
        bar.set_postfix(loss=f"{losses[-1]:.4f}")
        if step % config.checkpoint_every == 0 or step == stop:
            if val_batches and (step % config.checkpoint_every == 0 or step == config.steps):
                points.append(_validate(model, loss_fn, val, val_batches, config, step, torch))
                bar.set_postfix(loss=f"{losses[-1]:.4f}", val_loss=f"{points[-1].loss:.4f}")
            if step < config.steps:
                _checkpoint(ckpt_dir, step, model, optimizer, scheduler, losses, points, identity,
                            wall + time.perf_counter() - t0, torch)
    bar.close()
    wall += time.perf_counter() - t0
    finished = step == config.steps
    provenance = None
    if finished:
        if config.query_only:
            model = _asymmetric(model, base_path, config.device)
        if config.query_prefix or config.passage_prefix:
            model.prompts = {"query": config.query_prefix, "document": config.passage_prefix}
        model.save(str(config.out))
        provenance = config.out / PROVENANCE
        record = _provenance(config, base, chosen, data.summary(), len(train), val, negatives, step,
                             losses, points, state, wall)
        write_text(provenance, json.dumps(record, indent=2, ensure_ascii=False) + "\n")
        if not config.keep_checkpoints:
            for p in _checkpoints(ckpt_dir):
                p.unlink()
            if ckpt_dir.is_dir() and not any(ckpt_dir.iterdir()):
                ckpt_dir.rmdir()
    return TrainResult(config.out, step, config.batch, finished, tuple(losses), tuple(points),
                       int(state["step"]) if state is not None else None, round(wall, 3), round(step_time, 3),
                       provenance)


def _embed(model: Any, passages: _Passages, batch: list[Pair], config: TrainConfig) -> list[Any]:
    """The embeddings of each column: queries, positives, then each hard-negative column."""
    columns = [[p.passage for p in batch]]
    for j in range(len(batch[0].negatives)):
        columns.append([p.negatives[j] for p in batch])
    queries = _encode(model, [(config.query_prefix or "") + p.query for p in batch], config.precision,
                      config.encode_group)
    return [queries, *(passages(texts) for texts in columns)]


class _Passages:
    """The passage side of the loss: ``passages(texts)`` are the texts' embeddings (passage prefix added), from
    the model being trained, or, with ``query_only``, from the base model's fixed embeddings of every passage
    in ``pairs``, encoded once here (in eval mode, float32, without gradients)."""

    def __init__(self, model: Any, config: TrainConfig, pairs: Sequence[Pair], torch: Any) -> None:
        self.model, self.config, self.torch = model, config, torch
        self.row: dict[str, int] = {}
        self.fixed: Any = None
        if not config.query_only:
            return
        for p in pairs:
            for t in (p.passage, *p.negatives, *(t for t, _ in p.teacher)):
                self.row.setdefault(t, len(self.row))
        texts = list(self.row)
        tqdm = require("tqdm", "train", "tqdm").tqdm
        chunks = []
        was_training = model.training
        model.eval()
        with torch.no_grad():
            for i in tqdm(range(0, len(texts), 64), disable=config.quiet, desc="base passages", unit="batch",
                          file=sys.stderr):
                chunks.append(_encode(model, [(config.passage_prefix or "") + t for t in texts[i:i + 64]], "fp32",
                                      config.encode_group))
        model.train(was_training)
        self.fixed = torch.cat(chunks, dim=0) if chunks else None

    def __call__(self, texts: list[str]) -> Any:
        if self.fixed is None:
            return _encode(self.model, [(self.config.passage_prefix or "") + t for t in texts], self.config.precision,
                           self.config.encode_group)
        return self.fixed[self.torch.tensor([self.row[t] for t in texts], dtype=self.torch.long)]


class _Loss:
    """The training loss of a batch: InfoNCE over the in-batch columns, plus ``kl_weight`` times the mean
    KL divergence from the teacher's distribution over each query's ``teacher`` passages to the student's."""

    def __init__(self, infonce: Any, passages: _Passages, config: TrainConfig, torch: Any) -> None:
        self.infonce, self.passages, self.config, self.torch = infonce, passages, config, torch

    def __call__(self, batch: list[Pair], emb: list[Any]) -> Any:
        loss = self.infonce.compute_loss_from_embeddings(emb, None)
        if not self.config.kl_weight:
            return loss
        return loss + self.config.kl_weight * self.kl(batch, emb)

    def kl(self, batch: list[Pair], emb: list[Any]) -> Any:
        """The mean KL term; ``emb`` are the batch's columns (queries, positives, negatives), whose passage
        embeddings serve the teacher's passages they hold: only the others are encoded, each once."""
        torch, config = self.torch, self.config
        queries = emb[0]
        columns = [p.passage for p in batch] + [p.negatives[j] for j in range(len(batch[0].negatives)) for p in batch]
        row: dict[str, int] = {}
        for i, t in enumerate(columns):
            row.setdefault(t, i)
        fresh: list[str] = []
        for p in batch:
            for t, _ in p.teacher:
                if t not in row:
                    row[t] = len(columns) + len(fresh)
                    fresh.append(t)
        encoded = [self.passages(fresh)] if fresh else []
        passages = torch.cat([*emb[1:], *encoded], dim=0)
        width = max(len(p.teacher) for p in batch)
        index = torch.zeros((len(batch), width), dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.bool)
        target = torch.zeros((len(batch), width), dtype=queries.dtype)
        for i, p in enumerate(batch):
            k = len(p.teacher)
            index[i, :k] = torch.tensor([row[t] for t, _ in p.teacher])
            mask[i, :k] = True
            target[i, :k] = torch.from_numpy(teacher_distribution([s for _, s in p.teacher],
                                                                  config.teacher_temperature))
        index, mask, target = (t.to(queries.device) for t in (index, mask, target))
        q = torch.nn.functional.normalize(queries, dim=-1)
        d = torch.nn.functional.normalize(passages, dim=-1)[index]  # (batch, width, dim)
        logits = torch.einsum("bd,bkd->bk", q, d) / config.temperature
        log_student = torch.log_softmax(logits.masked_fill(~mask, -math.inf), dim=-1)
        terms = torch.where(mask & (target > 0), target * (torch.log(target.clamp_min(1e-30)) - log_student),
                            torch.zeros_like(target))
        return terms.sum(dim=-1).mean()


def teacher_distribution(scores: Sequence[float], temperature: float) -> np.ndarray:
    """The teacher's distribution over its best passages: ``softmax((s - s_top) / (temperature * |s_top|))``
    (``|s_top|`` read as 1 when the top score is 0), so ``temperature`` is a share of the top score and one
    value suits any teacher whose scale is its own."""
    s = np.asarray(scores, dtype=np.float64)
    scale = abs(float(s.max())) or 1.0
    z = (s - s.max()) / (temperature * scale)
    e = np.exp(z)
    out: np.ndarray = e / e.sum()
    return out


def _require_teacher(pairs: Sequence[Pair], config: TrainConfig) -> None:
    """A KL loss needs every pair's teacher list, of two passages at least."""
    short = next((p for p in pairs if len(p.teacher) < 2), None)
    if short is not None:
        raise FinegrainError(f"--kl-weight {config.kl_weight:g} needs the teacher's best passages on every pair, "
                             f"and line {short.line} of {str(config.pairs)!r} has {len(short.teacher)} "
                             '(its "teacher_top")',
                             "write the pairs with finegrain distill --teacher-scores 4 (or more), or leave out "
                             "--kl-weight")


def _encode(model: Any, texts: list[str], precision: str = "fp32", group: int = 0) -> Any:
    """The texts' embeddings in float32, rows in the texts' order, the forward pass run at ``precision``
    (:data:`PRECISIONS`). ``group`` > 0 encodes them in groups of at most that many texts of similar length
    (sorted by token count), each group padded to its own longest text rather than all to the longest of
    the list: the same embeddings up to float rounding, with fewer padded tokens through the encoder."""
    if group <= 0 or len(texts) <= group:
        return _forward(model, texts, precision)
    mask = model.preprocess(texts).get("attention_mask")
    if mask is None:  # an input module without padding (static embeddings): nothing to save
        return _forward(model, texts, precision)
    torch = require("torch", "train", "torch")
    lengths = mask.sum(dim=1)
    order = torch.argsort(lengths, stable=True)
    sorted_texts = [texts[i] for i in order.tolist()]
    parts = [_forward(model, sorted_texts[i:i + group], precision) for i in range(0, len(texts), group)]
    inverse = torch.empty_like(order)
    inverse[order] = torch.arange(len(texts))
    return torch.cat(parts, dim=0)[inverse.to(parts[0].device)]


def _forward(model: Any, texts: list[str], precision: str) -> Any:
    """One padded forward pass of ``texts`` (:func:`_encode`)."""
    features = {k: v.to(model.device) if hasattr(v, "to") else v for k, v in model.preprocess(texts).items()}
    if precision == "fp32":
        return model(features)["sentence_embedding"]
    torch = require("torch", "train", "torch")
    with torch.autocast(device_type=model.device.type, dtype=torch.bfloat16):
        out = model(features)["sentence_embedding"]
    return out.float()


def _validate(model: Any, loss_fn: _Loss, val: tuple[Pair, ...], batches: list[list[int]], config: TrainConfig,
              step: int, torch: Any) -> ValPoint:
    """Mean held-out loss and in-batch accuracy over one pass of the held-out batches (no dropout, no grad)."""
    model.eval()
    total = correct = 0
    loss_sum = 0.0
    with torch.no_grad():
        for idx in batches:
            batch = [val[i] for i in idx]
            emb = _embed(model, loss_fn.passages, batch, config)
            loss_sum += float(loss_fn(batch, emb)) * len(idx)
            scores = loss_fn.infonce.similarity_fct(emb[0], torch.cat(emb[1:], dim=0))
            correct += int((scores.argmax(dim=1) == torch.arange(len(idx), device=scores.device)).sum())
            total += len(idx)
    model.train()
    return ValPoint(step, round(loss_sum / total, 6), round(correct / total, 6))


def _input_embeddings(model: Any, spec: str) -> Any:
    """The token embedding table of the model's transformer (its first module)."""
    get = getattr(getattr(model[0], "auto_model", None), "get_input_embeddings", None)
    table = get() if callable(get) else None
    if table is None or not hasattr(table, "weight"):
        raise FinegrainError(f"--freeze-embeddings: base {spec!r} has no token embedding table to freeze "
                             "(its first module is not a transformers model)", "leave out --freeze-embeddings")
    return table


def _router_class() -> Any:
    """sentence-transformers' ``Router`` (moved under ``base.modules`` in v6; none before v5)."""
    for module in ("sentence_transformers.base.modules", "sentence_transformers.models"):
        with contextlib.suppress(ImportError, FinegrainError):
            cls = getattr(require(module, "train", "sentence-transformers"), "Router", None)
            if cls is not None:
                return cls
    raise FinegrainError("--query-only saves an asymmetric model, and this sentence-transformers has no Router",
                         "pip install 'sentence-transformers>=5'")


def _router(model: Any) -> Any:
    """The model's ``Router`` module (asymmetric query/document encoders), or None."""
    return next((m for m in model.children() if type(m).__name__ == "Router"), None)


def _asymmetric(query_model: Any, base_path: Path, device: str = "cpu") -> Any:
    """One sentence-transformers model: ``query_model`` on the ``query`` route, the base on the ``document`` route."""
    st = require("sentence_transformers", "train", "sentence-transformers")
    base = _load_st(base_path, device)
    base.max_seq_length = query_model.max_seq_length  # the length the fixed passage embeddings were encoded at
    router = _router_class().for_query_document(query_modules=list(query_model.children()),
                                                 document_modules=list(base.children()))
    return st.SentenceTransformer(modules=[router], device=device)


def _linear(warmup: int, total: int) -> Any:
    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / (warmup + 1)
        return max(0.0, (total - step) / max(1, total - warmup))

    return factor


def _require_device(device: str, torch: Any) -> None:
    """Fail before any work when ``device`` is not on this machine."""
    parsed = torch.device(device)
    kind, index = parsed.type, parsed.index or 0
    if kind == "cuda" and (not torch.cuda.is_available() or index >= torch.cuda.device_count()):
        raise FinegrainError(f"--device {device}: this torch sees {torch.cuda.device_count()} CUDA GPU(s)"
                             f"{'' if torch.cuda.is_available() else ' (a CPU build, or no driver)'}",
                             "pass --device cpu, or install a CUDA build of torch on a machine with the GPU")
    if kind == "mps" and not torch.backends.mps.is_available():
        raise FinegrainError(f"--device {device}: MPS is not available here", "pass --device cpu")


def _load_st(path: Path, device: str = "cpu") -> Any:
    st = require("sentence_transformers", "train", "sentence-transformers")
    try:
        return st.SentenceTransformer(str(path), device=device, local_files_only=True, trust_remote_code=False)
    except Exception as e:  # noqa: BLE001 - library errors vary; name the folder and the cause

        raise load_error("sentence-transformers model", path, e,
                         "check that the folder is complete (modules.json, config.json, weights, tokenizer)") from e


def _positions(model: Any) -> int | None:
    """How many tokens the model's position embeddings cover (RoBERTa-style models number positions after
    their padding index), or None when it has no such table to read; longer inputs fail inside torch."""
    table = getattr(getattr(getattr(model[0], "auto_model", None), "embeddings", None), "position_embeddings", None)
    if table is None or not isinstance(getattr(table, "num_embeddings", None), int):
        return None
    pad = getattr(table, "padding_idx", None)
    return int(table.num_embeddings) - (pad + 1 if isinstance(pad, int) else 0)


def _infonce(model: Any, scale: float) -> Any:
    """sentence-transformers' MultipleNegativesRankingLoss (``losses`` moved under ``sentence_transformer`` in v6)."""
    try:
        losses = require("sentence_transformers.sentence_transformer.losses", "train", "sentence-transformers")
    except FinegrainError:
        losses = require("sentence_transformers.losses", "train", "sentence-transformers")
    return losses.MultipleNegativesRankingLoss(model, scale=scale)


def _weights_file(folder: Path) -> Path | None:
    for name in ("model.safetensors", "pytorch_model.bin", "0_Transformer/model.safetensors",
                 "0_Transformer/pytorch_model.bin"):
        if (folder / name).is_file():
            return folder / name
    return None


def _weights_sha256(folder: Path) -> str | None:
    path = _weights_file(folder)
    return sha256_of(path) if path is not None else None


def _prepare_out(config: TrainConfig, ckpt_dir: Path, identity: dict[str, Any], torch: Any) -> dict[str, Any] | None:
    """The checkpoint to resume from (``--resume``), after checking it belongs to this run; else None, after
    checking that ``out`` is new or holds only what killed writes left. Those leftovers are removed."""
    if config.resume:
        removed = _remove_unfinished(ckpt_dir)
        found = _checkpoints(ckpt_dir)
        if not found:
            killed = " (a killed run left only an unfinished one, now removed)" if removed else ""
            raise FinegrainError(f"--resume: no complete checkpoint in {str(ckpt_dir)!r}{killed}",
                                 "run without --resume to start from step 0, or point --out at the stopped run's folder")
        try:
            state: dict[str, Any] = torch.load(found[-1], map_location="cpu", weights_only=True)
            saved = dict(state["identity"])
            saved.setdefault("precision", "fp32")  # a checkpoint from before the setting existed ran in float32
        except Exception as e:  # noqa: BLE001 - torch raises many types for a damaged file; name it and the cause
            cause = (str(e).strip().splitlines() or [""])[0][:200]
            raise FinegrainError(f"--resume: cannot read the checkpoint {str(found[-1])!r} ({type(e).__name__}: "
                                 f"{cause})", "delete it, then resume from an earlier one or start again without "
                                 "--resume") from None
        diff = sorted(k for k in identity.keys() | saved.keys() if identity.get(k) != saved.get(k))
        if diff:
            k = diff[0]
            raise FinegrainError(f"--resume: {k} is {identity.get(k)!r} now but {saved.get(k)!r} in "
                                 f"{str(found[-1])!r}", "resume with the settings and files of the stopped run")
        remove_stale(config.out)
        return state
    if not _holds_nothing(config.out, ckpt_dir):
        raise FinegrainError(f"output folder {str(config.out)!r} exists and is not empty",
                             "choose a new --out, delete it, or pass --resume to continue a stopped run there")
    _remove_unfinished(ckpt_dir)
    remove_stale(config.out)
    ckpt_dir.parent.mkdir(parents=True, exist_ok=True)
    return None


_CHECKPOINT = re.compile(r"step-(\d+)\.pt")
#: What versions that renamed ``step-NNNNNN.pt.tmp`` themselves left when killed mid-write.
_OLD_UNFINISHED = re.compile(r"step-\d+\.pt\.tmp")


def _checkpoints(ckpt_dir: Path) -> list[Path]:
    """The complete checkpoints in ``ckpt_dir``, oldest first (by step: names grow a digit past 999,999)."""
    if not ckpt_dir.is_dir():
        return []
    steps = {p: int(m[1]) for p in ckpt_dir.iterdir() if (m := _CHECKPOINT.fullmatch(p.name)) and p.is_file()}
    return sorted(steps, key=steps.__getitem__)


def _unfinished(path: Path) -> bool:
    """Whether ``path`` is a file a killed write left: a :mod:`finegrain.atomic` temporary, or
    ``step-NNNNNN.pt.tmp`` of a version that renamed its own temporary checkpoints."""
    return path.is_file() and (is_temporary(path) or _OLD_UNFINISHED.fullmatch(path.name) is not None)


def _remove_unfinished(ckpt_dir: Path) -> list[Path]:
    """Remove the unfinished checkpoint writes in ``ckpt_dir``; returns what was removed."""
    removed = remove_stale(ckpt_dir)
    for p in ckpt_dir.iterdir() if ckpt_dir.is_dir() else ():
        if _OLD_UNFINISHED.fullmatch(p.name) and p.is_file():
            with contextlib.suppress(OSError):
                p.unlink()
                removed.append(p)
    return removed


def _holds_nothing(out: Path, ckpt_dir: Path) -> bool:
    """Whether ``out`` is missing, or a folder holding only what killed writes left (in it or in ``ckpt_dir``)."""
    if not out.exists():
        return True
    if not out.is_dir():
        return False
    return all(_unfinished(p) or (p == ckpt_dir and p.is_dir() and all(_unfinished(q) for q in p.iterdir()))
               for p in out.iterdir())


def _checkpoint(ckpt_dir: Path, step: int, model: Any, optimizer: Any, scheduler: Any, losses: list[float],
                points: list[ValPoint], identity: dict[str, Any], wall: float, torch: Any) -> None:
    """Write ``step-NNNNNN.pt`` whole or not at all, then drop older checkpoints."""
    path = ckpt_dir / f"step-{step:06d}.pt"
    with atomic_write(path, "wb") as f:
        torch.save({"step": step, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(), "losses": losses,
                    "validation": [[p.step, p.loss, p.accuracy] for p in points], "identity": identity,
                    "wall_time_s": wall}, f)
    for old in _checkpoints(ckpt_dir):
        if old != path:
            old.unlink()


def _provenance(config: TrainConfig, base: BaseModel, chosen: dict[str, str], pairs: dict[str, Any], n_train: int,
                val: tuple[Pair, ...], negatives: dict[str, Any] | None, steps_done: int, losses: list[float],
                points: list[ValPoint], state: dict[str, Any] | None, wall: float) -> dict[str, Any]:
    weights = _weights_file(base.path)
    batches = "no text twice in a batch" + (
        "; no two pairs of one group, no pair whose texts are labelled positives of another's query"
        if config.avoid_false_negatives else "")
    return {
        "format": "finegrain-training/1",
        "base": {"spec": config.base, "name": base.name, "path": str(base.path),
                 "weights_file": weights.name if weights else None, "weights_sha256": _weights_sha256(base.path),
                 "declared": {"temperature": base.defaults.temperature, "lr": base.defaults.lr,
                              "query_prefix": base.defaults.query_prefix,
                              "passage_prefix": base.defaults.passage_prefix, "source": base.defaults.source}},
        "pairs": {**pairs, "train": n_train, "held_out": len(val), "held_out_passages": len({p.key for p in val})},
        "hyperparameters": config.hyperparameters(),
        "chosen_by": chosen,
        "loss": f"MultipleNegativesRankingLoss (InfoNCE, in-batch negatives; {batches})" + (
            "; passages: the base model's fixed embeddings, the query encoder trained alone"
            if config.query_only else "") + (
            "; token embeddings frozen" if config.freeze_embeddings else "") + (
            f" + {config.kl_weight:g} x KL(teacher || student) over each query's teacher_top passages (teacher "
            f"temperature {config.teacher_temperature:g} of its top score)" if config.kl_weight else ""),
        "hard_negatives": negatives,
        "seed": config.seed,
        **_transductive(pairs.get("provenance")),
        "steps_done": steps_done,
        "resumed_from": int(state["step"]) if state is not None else None,
        "curve": {"train_loss": [round(x, 6) for x in losses], "validation": [p._asdict() for p in points]},
        "wall_time_s": round(wall, 3),
        "environment": run_environment(),
        "libraries": _versions("torch", "transformers", "sentence-transformers", "tokenizers", "numpy"),
    }


def _transductive(pairs_provenance: Any) -> dict[str, Any]:
    prov = pairs_provenance if isinstance(pairs_provenance, dict) else {}
    dataset = prov.get("transductive_dataset") if prov.get("transductive") else None
    return {"transductive": dataset is not None, "transductive_dataset": dataset}


def transductive_dataset(folder: str | Path) -> str | None:
    """The dataset whose passages trained the model in ``folder`` (its ``finegrain_training.json``), else None;
    several, comma-separated, for a soup of models trained on different datasets' passages."""
    names = transductive_datasets(folder)
    return ", ".join(names) if names else None


def transductive_datasets(folder: str | Path) -> tuple[str, ...]:
    """Every dataset whose passages trained the model in ``folder``: the one of a trained model, each
    member's of a soup (:mod:`finegrain.train.soup`); empty when none did or the record is unreadable."""
    path = Path(folder) / PROVENANCE
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ()
    if not isinstance(record, dict) or not record.get("transductive"):
        return ()
    many = record.get("transductive_datasets")
    if isinstance(many, list) and many and all(isinstance(x, str) for x in many):
        return tuple(many)
    one = record.get("transductive_dataset")
    return (one,) if isinstance(one, str) else ()


def _versions(*names: str) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for n in names:
        try:
            out[n] = metadata.version(n)
        except metadata.PackageNotFoundError:
            out[n] = None
    return out
