"""No query string makes the album web page fail, nor the album search CLI trace back.

Property tests (hypothesis, derandomized, bounded) send arbitrary text to ``/api/search``
through FastAPI's TestClient on a small real catalog (the default engine, not a stand-in):
control characters, huge numbers, impossible dates in Chinese and English, long strings.
"""

from __future__ import annotations

from datetime import datetime

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
from fastapi.testclient import TestClient  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from finegrain.album.engine.catalog import open_catalog  # noqa: E402
from finegrain.album.engine.records import FaceOccurrence, Person, Photo, PhotoPlace  # noqa: E402
from finegrain.album.engine.web.app import create_app  # noqa: E402
from finegrain.cli.main import main  # noqa: E402

HANGZHOU = PhotoPlace(country_en="China", country_zh="中国", province_en="Zhejiang", province_zh="浙江省",
                      city_en="Hangzhou", city_zh="杭州市", country_code="CN")

DATE_WORDS = [
    "2月30日", "2099年13月45日", "99999年", "0000年", "-5年", "十三月", "三十二日", "February 30", "Feb 31st, 2023",
    "2023-02-29", "2023-13-45", "year 0", "year -44", "year 99999999999999999999", "9999年12月31日", "last summer",
    "去年春节", "上个月", "yesterday", "weekend", "下午", "9999年春节", "Christmas", "photos", "的照片", "with Anna",
    "和小王", "in Hangzhou", "在杭州", "selfie", "自拍", "1e309", "NaN", "%00", "\x00", "\u202e", "\ud7ff", "😀",
]

queries = st.one_of(
    st.text(max_size=80),
    st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x3000), max_size=60),
    st.lists(st.sampled_from(DATE_WORDS), min_size=1, max_size=6).map(" ".join),
    st.lists(st.sampled_from(DATE_WORDS), min_size=1, max_size=6).map("".join),
    st.integers(min_value=-(10**30), max_value=10**30).map(lambda n: f"{n}年{abs(n) % 40}月{abs(n) % 50}日的照片"),
    st.integers(min_value=-(10**30), max_value=10**30).map(lambda n: f"photos from year {n}"),
    st.tuples(st.integers(0, 99), st.integers(0, 99), st.integers(0, 99999)).map(
        lambda t: f"photos on {t[0]}/{t[1]}/{t[2]} and {t[2]}-{t[0]}-{t[1]}"),
    st.text(min_size=400, max_size=600),
)


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def catalog(request, tmp_path_factory):
    """The small catalog in a SQLite file, or in a Postgres database (its URL)."""
    path = tmp_path_factory.mktemp("webprop") / "c.sqlite"
    target = path if request.param == "sqlite" else request.getfixturevalue("postgres_server").new_database("prop")
    with open_catalog(target) as s:
        s.put_person(Person("1", ("me",), True))
        s.put_person(Person("2", ("Anna", "小王"), False))
        for i in range(6):
            pid = f"p{i}.jpg"
            s.put_photo(Photo(id=pid, path=pid, taken_at=datetime(2024, 2, 25 + i % 5, 9 + i), caption=f"photo {i}"))
            s.set_place(pid, HANGZHOU)
            s.set_faces(pid, [FaceOccurrence(pid, "2" if i % 2 else "1", None, 0)])
        s.put_photo(Photo(id="undated.jpg", path="undated.jpg"))
        s.set_meta("roots", [str(path.parent)])
    return target


@pytest.fixture(scope="module")
def client(catalog):
    with TestClient(create_app(catalog)) as c:
        yield c


@settings(max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(q=queries, lang=st.sampled_from([None, "en", "zh"]))
def test_any_query_gets_an_answer_not_a_server_error(client, q: str, lang: str | None) -> None:
    params = {"q": q} if lang is None else {"q": q, "lang": lang}
    r = client.get("/api/search", params=params)
    assert r.status_code < 500, (q, r.status_code, r.text[:300])
    if r.status_code == 200:
        body = r.json()
        assert isinstance(body["abstained"], bool) and isinstance(body["reason"], str)
        assert body["abstained"] or body["results"]


@pytest.mark.parametrize("q", ["2099年13月45日的照片", "2月30日的照片", "photos on February 30", "99999年的照片"])
def test_impossible_dates_answer_with_the_reason(client, q: str) -> None:
    r = client.get("/api/search", params={"q": q})
    assert r.status_code == 200
    body = r.json()
    # the reason is rendered in the query's language
    assert body["abstained"] and ("no photo can match time" in body["reason"] or "没有照片能符合时间" in body["reason"])
    assert body["plan"]["impossible_times"] and any(c["title"].startswith("no such date") for c in body["chips"])


@settings(max_examples=40, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(q=queries.filter(lambda s: not s.startswith("-") and "\x00" not in s))
def test_the_search_cli_never_traces_back(catalog, capsys, q: str) -> None:
    code = main(["album", "search", "-c", str(catalog), q])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert code == 0 or (code == 2 and err.startswith("error: ") and err.count("\n") == 1), (q, code, err)


# The page's other endpoints: any parameter text is a 2xx or a 4xx with a detail, never a 5xx.
params_text = st.one_of(st.text(max_size=40), st.sampled_from(
    ["", "|", "2023-05", "2023-13-45", "9999-12-31T23:59:59|p1.jpg", "|p3.jpg", "1,2,3,4", "-91,0,0,0", "nan,nan,nan,nan",
     "inf,-inf,1,2", "1e309,0,1,2", "../../etc/passwd", "%00", "\x00", "杭州", "Hangzhou", "city", "2", "p1.jpg"]))
endpoints = st.sampled_from([
    ("/api/timeline", "before"), ("/api/photos", "bbox"), ("/api/photos", "place"), ("/api/photos", "person"),
    ("/api/map", "cell"), ("/api/places", "lang"), ("/api/people/{}", None), ("/api/photo/{}", None),
    ("/thumb/{}", None), ("/api/search?q=photos+in+Hangzhou", "without"),
])


@settings(max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(endpoint=endpoints, value=params_text)
def test_any_view_parameter_is_answered_without_a_server_error(client, endpoint: tuple[str, str | None], value: str) -> None:
    from urllib.parse import quote

    path, param = endpoint
    if param is None:
        r = client.get(path.format(quote(value, safe="")))
    else:
        r = client.get(path, params={param: value})
    assert r.status_code < 500, (path, param, value, r.status_code, r.text[:300])
    if r.status_code >= 400:
        assert r.json().get("detail"), (path, value, r.text[:200])


@settings(max_examples=60, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=10),
                         lambda c: st.lists(c, max_size=3) | st.dictionaries(
                             st.sampled_from(["add_names", "rename", "merge", "x"]), c, max_size=3), max_leaves=8))
def test_any_edit_body_for_an_unknown_person_is_a_client_error(client, body: object) -> None:
    r = client.post("/api/people/nobody", json=body)
    assert r.status_code in (400, 404, 422), (body, r.status_code, r.text[:200])
