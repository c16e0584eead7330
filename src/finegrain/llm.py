"""The one OpenAI-compatible chat client: POST ``{url}/chat/completions`` with the stdlib, read the
message content, and parse JSON out of it. Used by the album's LLM planner and by training-query
generation; each caller turns :class:`LLMError` into its own fallback.

``url`` is the ``.../v1`` base of any OpenAI-compatible server (a local llama.cpp or vLLM, say);
nothing is sent anywhere the user did not name.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from typing import Any

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


def chat(url: str, model: str, messages: list[dict[str, str]], *, api_key: str | None = None,
         timeout: float = 30.0, **options: Any) -> str:
    """The message content of one chat completion (``options``: temperature, seed, response_format ...)."""
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
