"""Shared catalogs for the album tool / engine / eval tests (real PhotoBench album1 imports and
a small synthetic catalog with caption embeddings from a deterministic fake encoder)."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from finegrain.album.engine.catalog import open_catalog
from finegrain.album.engine.records import FaceOccurrence, Person, Photo, PhotoPlace

WORDS = (
    "cat dog tree river bridge street car bus train lamp chair table cup book phone bike boat "
    "cloud rain snow flower garden temple tower market shop school road hill lake field window door "
    "bread noodle rice tea coffee cake fruit apple orange grape fish bird horse sheep cow kite sun moon"
).split()
KITE = "kite_photo_000.jpg"
KITE_CAPTION = "red kite flying over sandy beach"
HANGZHOU = PhotoPlace(country_en="China", country_zh="中国", province_en="Zhejiang", province_zh="浙江省",
                      city_en="Hangzhou", city_zh="杭州市", country_code="CN")
SHANGHAI = PhotoPlace(country_en="China", country_zh="中国", province_en="Shanghai", province_zh="上海市",
                      city_en="Shanghai", city_zh="上海市", country_code="CN")


def build_caption_catalog(path: Path | str, encoder, *, n: int = 60, seed: int = 7):  # noqa: ANN001, ANN201
    """``n`` photos in Hangzhou or Shanghai (2024), random 3-word captions, Anna (id 2) in every 4th;
    one photo (:data:`KITE`) captioned :data:`KITE_CAPTION` in Hangzhou with Anna; captions embedded."""
    rng = random.Random(seed)
    store = open_catalog(path)
    store.put_person(Person("1", ("me",), True))
    store.put_person(Person("2", ("Anna",), False))
    start = datetime(2024, 3, 1, 9, 0)
    rows = [(KITE, KITE_CAPTION, HANGZHOU, ["2"])]
    for i in range(1, n):
        cap = " ".join(rng.sample(WORDS, 3))
        rows.append((f"photo_{i:03d}.jpg", cap, HANGZHOU if i % 2 else SHANGHAI, ["2"] if i % 4 == 0 else []))
    for i, (pid, cap, place, people) in enumerate(rows):
        store.put_photo(Photo(id=pid, path=pid, taken_at=start + timedelta(days=i), caption=cap))
        store.set_place(pid, place)
        store.set_faces(pid, [FaceOccurrence(pid, who, None, k) for k, who in enumerate(people)])
        store.put_embedding(pid, encoder.model_id, np.asarray(encoder.encode([cap], kind="passage")[0]))
    return store
