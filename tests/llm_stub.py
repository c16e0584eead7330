"""A local OpenAI-compatible chat-completions endpoint for tests (loopback, a free port).

``chat_server(reply)`` serves ``POST .../chat/completions``: ``reply`` gets the last message's
content and returns the assistant's content (a string), or an HTTP status (an int) to fail
with an empty body. The context manager yields the base URL (``http://127.0.0.1:PORT/v1``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Reply = Callable[[str], "str | int"]


@contextmanager
def chat_server(reply: Reply) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            answer = reply(body["messages"][-1]["content"])
            if isinstance(answer, int):
                self.send_response(answer)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            raw = json.dumps({"choices": [{"message": {"role": "assistant", "content": answer}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
