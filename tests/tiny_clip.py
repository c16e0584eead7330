"""A tiny randomly initialised CLIP model saved as a local folder, for tests (no download).

``make_tiny_clip(folder)`` writes what ``CLIPModel.save_pretrained`` and
``CLIPProcessor.save_pretrained`` write, with a byte-level BPE vocabulary of
single characters (no merges): the real loading code path, in milliseconds.
"""

from __future__ import annotations

import json
from pathlib import Path


def _byte_chars() -> list[str]:
    # GPT-2 / CLIP byte-to-unicode table: printable bytes map to themselves, the rest above 255
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return [chr(c) for c in cs]


def make_tiny_clip(folder: Path, *, seed: int = 0, projection_dim: int = 16) -> Path:
    import torch
    from transformers import (
        CLIPConfig,
        CLIPImageProcessor,
        CLIPModel,
        CLIPProcessor,
        CLIPTokenizer,
    )

    folder.mkdir(parents=True, exist_ok=True)
    chars = _byte_chars()
    vocab = {c: i for i, c in enumerate(chars)}
    vocab.update({c + "</w>": len(chars) + i for i, c in enumerate(chars)})
    vocab["<|startoftext|>"] = len(vocab)
    vocab["<|endoftext|>"] = len(vocab)
    tok_dir = folder / "_tok"
    tok_dir.mkdir(exist_ok=True)
    (tok_dir / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (tok_dir / "merges.txt").write_text("#version: 0.2\n", encoding="utf-8")
    tokenizer = CLIPTokenizer(str(tok_dir / "vocab.json"), str(tok_dir / "merges.txt"))
    image_processor = CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    config = CLIPConfig(
        text_config={"vocab_size": len(vocab), "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                     "num_attention_heads": 2, "max_position_embeddings": 77,
                     "bos_token_id": vocab["<|startoftext|>"], "eos_token_id": vocab["<|endoftext|>"],
                     "pad_token_id": vocab["<|endoftext|>"]},
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                       "image_size": 32, "patch_size": 8},
        projection_dim=projection_dim,
    )
    torch.manual_seed(seed)
    CLIPModel(config).eval().save_pretrained(str(folder))
    CLIPProcessor(image_processor=image_processor, tokenizer=tokenizer).save_pretrained(str(folder))
    return folder
