"""The CLIP adapter on a tiny randomly initialised CLIP (built offline here) and COCO-mini's real images."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("PIL")

from finegrain.cli.main import main
from finegrain.diagnose.contrastive import make_pair, run_contrast
from finegrain.errors import FinegrainError
from finegrain.retrieve.dense.encoders.registry import get_encoder
from tiny_clip import make_tiny_clip

N_IMAGES = 8
DIM = 16


@pytest.fixture(scope="module")
def tiny_clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CLIP folder: random tiny weights, a character-level BPE tokenizer (no merges), 32-px image processor."""
    return make_tiny_clip(tmp_path_factory.mktemp("tiny-clip") / "tiny-clip", projection_dim=DIM)


@pytest.fixture(scope="module")
def coco(data_root: Path) -> list[dict]:
    rows = [json.loads(line) for line in (data_root / "coco_mini/coco_mini_joined.jsonl").read_text().splitlines()]
    rows = sorted((r for r in rows if r["split"] == "val2017"), key=lambda r: r["file_name"])[:N_IMAGES]
    for r in rows:
        r["abs_path"] = str(data_root / "coco_mini" / r["image_path"])
    return rows


def _pairs(coco: list[dict]) -> list:
    """Image i vs image i+1: target caption 0 of i vs caption 0 of i+1; queries = captions 1.. of i."""
    out = []
    for i, r in enumerate(coco):
        other = coco[(i + 1) % len(coco)]
        cat = "entity type" if i % 2 == 0 else "scene type"
        out.append(make_pair(f"p{i}", cat, target_text=r["captions"][0], contrastive_text=other["captions"][0],
                             queries=r["captions"][1:], target_image=r["abs_path"],
                             contrastive_image=other["abs_path"]))
    return out


def test_shapes_unit_norm_and_determinism(tiny_clip: Path, coco: list[dict]):
    enc = get_encoder(f"clip:{tiny_clip}")
    assert enc.dim == DIM and enc.model_id.startswith("clip:")
    paths = [r["abs_path"] for r in coco]
    img = enc.encode_images(paths)
    txt = enc.encode([r["captions"][0] for r in coco], kind="query")
    for v in (img, txt):
        assert v.shape == (N_IMAGES, DIM) and v.dtype == np.float32 and v.flags.c_contiguous
        np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    again = get_encoder(f"clip:{tiny_clip}")  # a fresh load gives the same vectors
    np.testing.assert_array_equal(again.encode_images(paths), img)
    np.testing.assert_array_equal(enc.encode([r["captions"][0] for r in coco], kind="passage"), txt)
    np.testing.assert_allclose(enc.encode_images(paths[3:4]), img[3:4], atol=1e-6)  # batch-independent
    assert len({tuple(np.round(row, 5)) for row in img}) == N_IMAGES  # distinct images, distinct vectors


def test_adapter_equals_raw_transformers_features(tiny_clip: Path, coco: list[dict]):
    from PIL import Image
    from transformers import CLIPModel, CLIPProcessor

    model = CLIPModel.from_pretrained(tiny_clip, local_files_only=True).eval()
    proc = CLIPProcessor.from_pretrained(tiny_clip, local_files_only=True)
    images = [Image.open(r["abs_path"]).convert("RGB") for r in coco[:3]]
    texts = [r["captions"][0] for r in coco[:3]]
    with torch.inference_mode():
        pix = proc.image_processor(images=images, return_tensors="pt")["pixel_values"]
        fi = model.get_image_features(pixel_values=pix)
        tok = proc.tokenizer(texts, padding=True, return_tensors="pt")
        ft = model.get_text_features(input_ids=tok["input_ids"], attention_mask=tok["attention_mask"])
    fi = (fi if hasattr(fi, "detach") else fi.pooler_output).numpy()
    ft = (ft if hasattr(ft, "detach") else ft.pooler_output).numpy()
    enc = get_encoder(f"clip:{tiny_clip}")
    np.testing.assert_allclose(enc.encode_images([r["abs_path"] for r in coco[:3]]),
                               fi / np.linalg.norm(fi, axis=1, keepdims=True), atol=1e-5)
    np.testing.assert_allclose(enc.encode(texts, kind="query"),
                               ft / np.linalg.norm(ft, axis=1, keepdims=True), atol=1e-5)


def test_both_directions_match_independent_numpy(tiny_clip: Path, coco: list[dict]):
    enc = get_encoder(f"clip:{tiny_clip}")
    pairs = _pairs(coco)
    out = run_contrast(pairs, enc, enc, n_resamples=200)
    assert [r.direction for r in out.reports] == ["text->image", "image->text"]
    img = {r["abs_path"]: v for r, v in zip(coco, enc.encode_images([r["abs_path"] for r in coco]))}
    all_caps = sorted({c for r in coco for c in r["captions"]})
    txt = dict(zip(all_caps, enc.encode(all_caps, kind="query")))

    # text->image: every caption 1..4 of image i; target image i vs contrastive image i+1
    t2i = {"entity type": [], "scene type": []}
    for i, r in enumerate(coco):
        other = coco[(i + 1) % len(coco)]
        for q in r["captions"][1:]:
            ok = float(txt[q] @ img[r["abs_path"]]) > float(txt[q] @ img[other["abs_path"]])
            t2i["entity type" if i % 2 == 0 else "scene type"].append(ok)
    # image->text: image i; its caption 0 vs caption 0 of image i+1
    i2t = []
    for i, r in enumerate(coco):
        other = coco[(i + 1) % len(coco)]
        v = img[r["abs_path"]]
        i2t.append(float(v @ txt[r["captions"][0]]) > float(v @ txt[other["captions"][0]]))

    rep_t2i, rep_i2t = out.reports
    n_t2i = sum(len(v) for v in t2i.values())
    assert rep_t2i.overall.n == n_t2i == sum(len(r["captions"]) - 1 for r in coco)
    assert rep_t2i.overall.accuracy == pytest.approx(sum(sum(v) for v in t2i.values()) / n_t2i)
    by_cat = {a.name: a for a in rep_t2i.by_category}
    for cat, oks in t2i.items():
        assert by_cat[cat].accuracy == pytest.approx(np.mean(oks)) and by_cat[cat].n == len(oks)
    assert rep_i2t.overall.n == N_IMAGES
    assert rep_i2t.overall.accuracy == pytest.approx(np.mean(i2t))
    assert {a.name for a in rep_i2t.by_group} == {"entity", "scene"}
    assert rep_i2t.overall.fg_cde == pytest.approx(1 - np.mean(i2t))


def test_cli_with_clip_on_a_pairs_file(tiny_clip: Path, coco: list[dict], tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]):
    f = tmp_path / "pairs.jsonl"
    f.write_text("\n".join(json.dumps({
        "id": p.pair_id, "category": p.category, "target": p.target_text, "contrastive": p.contrastive_text,
        "queries": list(p.queries), "target_image": p.target_image, "contrastive_image": p.contrastive_image,
    }) for p in _pairs(coco)) + "\n")
    code = main(["contrast", "--pairs", str(f), "--encoder", f"clip:{tiny_clip}", "--out", str(tmp_path / "o"),
                 "--json", "-q", "--no-cache", "--resamples", "100"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    body = json.loads((tmp_path / "o/results.json").read_text())
    assert [d["direction"] for d in summary["directions"]] == ["text->image", "image->text"]
    for d in body["directions"]:
        recs = body["records"][d["direction"]]
        recomputed = np.mean([r["target_score"] > r["contrastive_score"] for r in recs])
        assert d["overall"]["fg_cda"] == pytest.approx(recomputed) and d["overall"]["n"] == len(recs)
    code = main(["contrast", "--pairs", str(f), "--encoder", f"clip:{tiny_clip}", "--out", str(tmp_path / "t"),
                 "--direction", "text->text", "--json", "-q", "--no-cache", "--resamples", "50"])
    assert code == 0 and json.loads(capsys.readouterr().out)["directions"][0]["overall"]["n"] == 4 * N_IMAGES


def test_missing_paths_are_clear_errors(tiny_clip: Path, tmp_path: Path):
    with pytest.raises(FinegrainError, match="CLIP model folder .* does not exist"):
        get_encoder(f"clip:{tmp_path / 'absent'}")
    with pytest.raises(FinegrainError, match="no config.json"):
        get_encoder(f"clip:{tmp_path}")
    with pytest.raises(FinegrainError, match="has no option 'nope'"):
        get_encoder(f"clip:{tiny_clip}", nope=1)
    enc = get_encoder(f"clip:{tiny_clip}")
    with pytest.raises(FinegrainError, match="image file not found"):
        enc.encode_images([str(tmp_path / "missing.jpg")])
    (tmp_path / "broken.jpg").write_bytes(b"not an image")
    with pytest.raises(FinegrainError, match="cannot read image"):
        enc.encode_images([str(tmp_path / "broken.jpg")])
