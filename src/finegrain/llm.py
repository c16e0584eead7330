"""The one OpenAI-compatible chat client: POST ``{url}/chat/completions`` with the stdlib, read the
message content, and parse JSON out of it. Used by the album's LLM planner and by training-query
generation; each caller turns :class:`LLMError` into its own fallback.

``url`` is the ``.../v1`` base of any OpenAI-compatible server (a local llama.cpp or vLLM, say);
nothing is sent anywhere the user did not name.

:class:`ReplyCache` keeps the message content of every chat completion received, by request (URL, model,
messages and options), one file per reply written whole as it arrives: a long run that stops (a crash,
Ctrl-C, a server restart) asks again only for what it had not received, and a rerun of the same command
gives the same replies even from a server that samples.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from finegrain.atomic import write_text
from finegrain.errors import FinegrainError

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


class LLMError(Exception):
    """Why a reply could not be used: network, HTTP status, timeout, not a chat completion, not JSON."""


def check_url(url: Any, flag: str = "--llm-url") -> str:
    """``url`` if it is an http(s) URL, else a FinegrainError naming ``flag``."""
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise FinegrainError(f"{flag} {url!r} is not an http(s) URL",
                             "give the OpenAI-compatible base, e.g. http://127.0.0.1:8000/v1")
    return url


class ReplyCache:
    """Message contents received, one small file per request key (:meth:`key`) under ``root``, each written
    whole or not at all (safe to share between threads and processes)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).expanduser()
        self.hits = self.misses = self.unreadable = 0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"ReplyCache({str(self.root)!r})"

    @staticmethod
    def key(url: str, model: str, messages: list[dict[str, str]], options: dict[str, Any]) -> str:
        request = {"url": url.rstrip("/"), "model": model, "messages": messages, "options": options}
        return hashlib.sha256(json.dumps(request, sort_keys=True, ensure_ascii=False).encode()).hexdigest()

    def file(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> str | None:
        content: str | None = None
        unreadable = False
        try:
            content = str(json.loads(self.file(key).read_text(encoding="utf-8"))["content"])
        except FileNotFoundError:
            pass
        except (OSError, ValueError, KeyError, TypeError):
            unreadable = True  # asked again, and written anew
        with self._lock:
            self.unreadable += unreadable
            self.hits += content is not None
            self.misses += content is None
        return content

    def put(self, key: str, content: str) -> None:
        try:
            write_text(self.file(key), json.dumps({"content": content}, ensure_ascii=False))
        except FinegrainError as e:
            raise FinegrainError(f"cannot keep LLM replies under {self.root}: {e.message}",
                                 "set FINEGRAIN_CACHE to a writable folder, or pass --no-cache") from None

    def describe(self) -> dict[str, Any]:
        """For provenance: where, and how many replies came from it this run."""
        return {"path": str(self.root), "hits": self.hits, "misses": self.misses}


def chat(url: str, model: str, messages: list[dict[str, str]], *, api_key: str | None = None,
         timeout: float = 30.0, cache: ReplyCache | None = None, **options: Any) -> str:
    """The message content of one chat completion (``options``: temperature, seed, response_format ...);
    from ``cache`` when it holds this request, else asked, and kept there."""
    key = ReplyCache.key(url, model, messages, options) if cache is not None else ""
    if cache is not None and (held := cache.get(key)) is not None:
        return held
    content = _ask(url, model, messages, api_key=api_key, timeout=timeout, **options)
    if cache is not None:
        cache.put(key, content)
    return content


def _ask(url: str, model: str, messages: list[dict[str, str]], *, api_key: str | None, timeout: float,
         **options: Any) -> str:
    body = json.dumps({"model": model, "messages": messages, **options}).encode()
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    endpoint = url.rstrip("/") + "/chat/completions"
    req = urllib.request.Request(endpoint, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 (http(s) checked by the caller)
            raw = resp.read()
    except urllib.error.HTTPError as e:
        raise LLMError(f"HTTP {e.code} from {endpoint}") from e
    except TimeoutError as e:
        raise LLMError(f"no answer from {endpoint} within {timeout:g} s") from e
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        if isinstance(reason, TimeoutError) or "timed out" in str(reason):
            raise LLMError(f"no answer from {endpoint} within {timeout:g} s") from e
        raise LLMError(f"cannot reach {endpoint}: {reason}") from e
    try:
        return str(json.loads(raw)["choices"][0]["message"]["content"])
    except (ValueError, KeyError, IndexError, TypeError) as e:
        raise LLMError(f"the reply of {endpoint} is not an OpenAI chat completion") from e


def json_content(content: str) -> Any:
    """The JSON value of a message's content, inside a ```json fence or bare; LLMError when it is not JSON."""
    m = _FENCE.search(content)
    try:
        return json.loads(m.group(1) if m else content)
    except ValueError as e:
        raise LLMError(f"the message content is not JSON: {content[:80]!r}") from e
