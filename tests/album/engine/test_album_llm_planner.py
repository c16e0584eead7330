"""The LLM planner against a real local HTTP server with canned OpenAI-style replies."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from finegrain.album.engine.plan import AlbumVocabulary, LLMConfig, PlaceKey, plan_query_llm
from finegrain.errors import FinegrainError

HANGZHOU = PlaceKey("city", "杭州市")


@pytest.fixture(scope="module")
def vocab() -> AlbumVocabulary:
    return AlbumVocabulary.build(
        people={"1": ["me"], "2": ["Xiaotong", "小李"]},
        places={"hangzhou": HANGZHOU, "杭州": HANGZHOU},
        latest_date=date(2025, 11, 20),
    )


class _Server:
    """A local chat-completions endpoint: ``reply`` is (status, body or None, delay seconds)."""

    def __init__(self) -> None:
        self.reply: tuple[int, Any, float] = (200, None, 0.0)
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", 0))
                server.requests.append({"path": self.path, "body": json.loads(self.rfile.read(length)),
                                        "auth": self.headers.get("Authorization")})
                status, body, delay = server.reply
                time.sleep(delay)
                data = json.dumps(body).encode() if not isinstance(body, bytes) else body
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def chat(self, content: str, status: int = 200, delay: float = 0.0) -> None:
        self.reply = (status, {"choices": [{"message": {"role": "assistant", "content": content}}]}, delay)


@pytest.fixture(scope="module")
def server() -> Iterator[_Server]:
    s = _Server()
    s.thread.start()
    yield s
    s.httpd.shutdown()
    s.httpd.server_close()


VALID = {
    "source": "MF",
    "time_ranges": [{"start": "2024-06-01", "end": "2024-08-31", "text": "去年夏天"}],
    "places": ["杭州"],
    "people": ["小李"],
    "event_words": [],
    "visual_text": "",
}


def test_valid_reply_is_used(server: _Server, vocab: AlbumVocabulary) -> None:
    server.chat("```json\n" + json.dumps(VALID, ensure_ascii=False) + "\n```")
    plan = plan_query_llm("去年夏天在杭州和小李的合照", vocab, LLMConfig(server.url, "tiny", api_key="k"))
    assert plan.planner == "llm" and plan.fallback_reason is None
    assert plan.source == "MF" and plan.person_ids == ("2",)
    assert plan.places[0].place == HANGZHOU and plan.places[0].in_album
    assert (plan.time_ranges[0].start, plan.time_ranges[0].end) == (date(2024, 6, 1), date(2024, 8, 31))
    assert ("llm: source type", "MF") in plan.explain()
    request = server.requests[-1]
    assert request["path"] == "/v1/chat/completions" and request["auth"] == "Bearer k"
    assert request["body"]["model"] == "tiny"
    assert '"required"' in request["body"]["messages"][0]["content"]  # the schema is in the prompt
    assert request["body"]["messages"][1]["content"] == "去年夏天在杭州和小李的合照"


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("the photos are from last summer", "not JSON"),
        (json.dumps({**VALID, "source": "X"}), "source 'X'"),
        (json.dumps({k: v for k, v in VALID.items() if k != "people"}), "people"),
        (json.dumps({**VALID, "extra": 1}), "extra"),
        (json.dumps({**VALID, "time_ranges": [{"start": "2024-08-31", "end": "2024-06-01", "text": "x"}]}), "ends before"),
        (json.dumps({**VALID, "time_ranges": [{"start": "last summer", "end": "2024-06-01", "text": "x"}]}), "time_ranges"),
        (json.dumps({**VALID, "people": ["Somebody"]}), "'Somebody' is not a nickname"),
    ],
)
def test_invalid_reply_falls_back_to_rules(server: _Server, vocab: AlbumVocabulary, content: str, reason: str) -> None:
    server.chat(content)
    plan = plan_query_llm("去年夏天在杭州和小李的合照", vocab, LLMConfig(server.url, "tiny"))
    assert plan.planner == "rules"
    assert plan.fallback_reason is not None and reason in plan.fallback_reason
    assert plan.source == "MF" and plan.person_ids == ("2",)  # the rule-based plan


def test_http_error_and_non_chat_body(server: _Server, vocab: AlbumVocabulary) -> None:
    server.chat(json.dumps(VALID), status=500)
    plan = plan_query_llm("Hangzhou", vocab, LLMConfig(server.url, "tiny"))
    assert plan.planner == "rules" and "HTTP 500" in plan.fallback_reason
    server.reply = (200, {"unexpected": True}, 0.0)
    plan = plan_query_llm("Hangzhou", vocab, LLMConfig(server.url, "tiny"))
    assert "not an OpenAI chat completion" in plan.fallback_reason


def test_timeout_falls_back(server: _Server, vocab: AlbumVocabulary) -> None:
    server.chat(json.dumps(VALID), delay=1.5)
    started = time.monotonic()
    plan = plan_query_llm("cat under the car", vocab, LLMConfig(server.url, "tiny", timeout=0.3))
    assert time.monotonic() - started < 1.4
    assert plan.planner == "rules" and plan.source == "V"
    assert "within 0.3 s" in plan.fallback_reason


def test_unreachable_endpoint_and_bad_config(vocab: AlbumVocabulary) -> None:
    plan = plan_query_llm("cat", vocab, LLMConfig("http://127.0.0.1:9/v1", "tiny", timeout=2))
    assert plan.planner == "rules" and "cannot reach" in plan.fallback_reason
    with pytest.raises(FinegrainError, match="'localhost:8000'"):
        LLMConfig("localhost:8000", "tiny")
