"""The judging app answers only requests naming it (``Host``, IPv6 literals included) and stores
grades only from its own pages (``Origin``): a DNS-rebinding page gets 400, another site's page
403 (a ``text/plain`` form too, which needs no CORS preflight), and nothing is stored for either.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
from fastapi.testclient import TestClient  # noqa: E402
from test_build_judge import make_pool  # noqa: E402

from finegrain.build.judge.app import create_app  # noqa: E402
from finegrain.build.judge.store import JudgmentStore  # noqa: E402
from finegrain.build.pool_file import write_pool
from finegrain.cli import serving
from finegrain.cli.main import main  # noqa: E402
from finegrain.web_guard import LOOPBACK_NAMES  # noqa: E402

PORT = 8766
GRADE = {"annotator": "ann", "qid": "q1", "doc_id": "d1", "grade": 1}


def _app(tmp_path: Path, allowed: tuple[str, ...] | None = LOOPBACK_NAMES) -> Any:
    return create_app(make_pool(), tmp_path / "j.sqlite", allowed_hosts=allowed)


def _grades(app: Any) -> dict[Any, Any]:
    store: JudgmentStore = app.state.store
    return dict(store.grades_of("ann"))


@pytest.mark.parametrize("base", [f"http://[::1]:{PORT}", f"http://127.0.0.1:{PORT}", f"http://LOCALHOST:{PORT}"])
def test_a_loopback_host_with_the_server_s_port_can_judge(tmp_path: Path, base: str) -> None:
    app = _app(tmp_path)
    with TestClient(app, base_url=base) as c:
        assert c.post("/api/login", json={"annotator": "ann"}, headers={"origin": base.lower()}).status_code == 200
        r = c.post("/api/judgments", json=GRADE, headers={"origin": base.lower(), "sec-fetch-site": "same-origin"})
        assert r.status_code == 200, r.text
        assert _grades(app) == {("q1", "d1"): 1}


@pytest.mark.parametrize("host", ["evil.example", f"evil.example:{PORT}", f"127.0.0.1:{PORT + 1}", f"[::1]:{PORT + 1}",
                                  "[::1]", "::1", "", f"127.0.0.1:{PORT}@evil.example", "[::1"])
def test_a_host_that_does_not_name_this_server_is_400(tmp_path: Path, host: str) -> None:
    app = _app(tmp_path)
    with TestClient(app, base_url=f"http://127.0.0.1:{PORT}") as c:
        c.post("/api/login", json={"annotator": "ann"})
        assert c.get("/api/config", headers={"host": host}).status_code == 400
        r = c.post("/api/judgments", json=GRADE, headers={"host": host})
        assert r.status_code == 400 and "Host" in r.json()["detail"]
        assert _grades(app) == {}


@pytest.mark.parametrize("headers", [
    {"origin": "http://evil.example"},
    {"origin": f"http://127.0.0.1:{PORT + 1}"},
    {"origin": "null"},
    {"sec-fetch-site": "cross-site"},
])
@pytest.mark.parametrize("content_type", ["application/json", "text/plain"])
def test_a_grade_sent_by_another_origin_s_page_is_403(tmp_path: Path, headers: dict[str, str],
                                                      content_type: str) -> None:
    import json

    app = _app(tmp_path)
    with TestClient(app, base_url=f"http://127.0.0.1:{PORT}") as c:
        assert c.post("/api/login", json={"annotator": "ann"}).status_code == 200  # no Origin: curl, a script
        body = json.dumps(GRADE).encode()
        for path in ("/api/judgments", "/api/skips", "/api/login"):
            r = c.post(path, content=body, headers={"content-type": content_type, **headers})
            assert r.status_code == 403, (path, headers, content_type, r.status_code, r.text)
            assert "cannot change" in r.json()["detail"]
        assert c.get("/api/config", headers=headers).status_code == 200  # reading is not changing
        assert _grades(app) == {} and app.state.store.annotators() == ("ann",)


def test_without_allowed_hosts_the_origin_rule_still_holds(tmp_path: Path) -> None:
    app = _app(tmp_path, allowed=None)  # --allow-remote
    with TestClient(app, base_url="http://judge.example:8080") as c:
        c.post("/api/login", json={"annotator": "ann"})
        assert c.post("/api/judgments", json=GRADE, headers={"origin": "http://evil.example"}).status_code == 403
        assert _grades(app) == {}
        assert c.post("/api/judgments", json=GRADE, headers={"origin": "http://judge.example:8080"}).status_code == 200
        assert _grades(app) == {("q1", "d1"): 1}


def test_judge_serve_on_the_ipv6_loopback_answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``judge POOL --serve --host ::1``: the app it builds answers ``Host: [::1]:PORT``."""
    pool = write_pool(make_pool(), tmp_path / "pool.jsonl")
    served: dict[str, Any] = {}
    monkeypatch.setattr(serving, "serve", lambda app, host, port, extra: served.update(app=app, host=host, port=port))
    argv = ["judge", str(pool), "--db", str(tmp_path / "j.sqlite"), "--serve", "--host", "::1", "--port", str(PORT)]
    assert main(argv) == 0
    assert served["host"] == "::1" and served["port"] == PORT
    with TestClient(served["app"], base_url=f"http://[::1]:{PORT}") as c:
        assert c.get("/api/config").status_code == 200
        assert c.get("/api/config", headers={"host": f"[::1]:{PORT + 1}"}).status_code == 400
