"""Training queries from an OpenAI-compatible LLM endpoint, in the style of CapRetrieval's Table 5.

Xu et al. (2025, Sect. 4.1) ask an LLM, for each passage, either for

* **KW** -- "all salient keywords and hypernyms, as well as short phrases that
  may be inquired by users" (precise saliency), or
* **SM** -- "summaries and long questions regarding a passage" (overall saliency).

:data:`PROMPTS` holds those two instructions in Chinese and English; the reply
must be a JSON list of strings. :func:`ask_queries` POSTs
``{url}/chat/completions`` (stdlib ``urllib``; ``url`` is the ``.../v1`` base),
validates the reply with :func:`validate_queries` and retries at most
``retries`` times; it returns no queries when no valid reply came, and the caller
falls back to the rules for that passage (:mod:`finegrain.train.queries`).
:func:`ask_all` asks for every passage of a pool, ``workers`` requests at a time
(an inference server answers several at once), with the answers in the pool's
order whatever order they come in. An endpoint that gives no chat completion at
all for the first :data:`PROBE` passages (unreachable, a wrong path or model
name, an HTTP error) stops the run with an error: falling back to the rules for
every passage of a large pool would take hours of timeouts and hand back rule
queries the user did not ask for. With ``LLMSettings.cache`` (a
:class:`~finegrain.llm.ReplyCache`) a reply already received is not asked again.

A reply is valid when its message content (optionally inside a ```json fence)
parses as a JSON list of strings; each string is kept when it has
``MIN_UNITS..MAX_UNITS[style]`` text units (Chinese characters / English words,
:mod:`finegrain.build.units`), is not the passage itself and does not contain
it, and is in the asked language (Chinese text holds a Chinese character;
English text holds none). Duplicates are dropped. A reply that keeps no string
is invalid.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from tqdm.auto import tqdm

from finegrain.build.units import exact_key, units
from finegrain.errors import FinegrainError
from finegrain.llm import LLMError, ReplyCache, chat, check_url, json_content
from finegrain.text.lang import Lang, has_cjk, parse_lang

STYLES: tuple[str, ...] = ("kw", "sm")

PROMPTS: Mapping[tuple[str, str], str] = MappingProxyType({
    ("kw", "en"): (
        "Given the passage below, list all of its salient keywords and their hypernyms, as well as short phrases "
        "that a user may search with to find it (for example: bill; electricity fee; utility bill; payment "
        "status; monthly electricity charges). Reply with a JSON list of strings and nothing else.\n\n"
        "Passage: {passage}"
    ),
    ("sm", "en"): (
        "Given the passage below, write short summaries of its overall content and longer questions a user may "
        "ask to find it (for example: Monthly electricity bill details; Shanghai Electric Power Company "
        "electricity bill from May to September 2021). Reply with a JSON list of strings and nothing else.\n\n"
        "Passage: {passage}"
    ),
    ("kw", "zh"): (
        "给定下面的段落，列出其中所有重要的关键词及其上位词，以及用户可能用来搜索它的短语"
        "（例如：账单；电费；水电账单；支付状态；月度电费）。只回复一个字符串的 JSON 列表，不要其他内容。\n\n"
        "段落：{passage}"
    ),
    ("sm", "zh"): (
        "给定下面的段落，写出概括其整体内容的简短摘要，以及用户为找到它可能提出的较长问题"
        "（例如：每月电费账单详情；上海市电力公司2021年5月至9月的电费账单）。只回复一个字符串的 JSON 列表，不要其他内容。\n\n"
        "段落：{passage}"
    ),
})

#: Bounds on a generated query's text units (zh characters, en words), per style.
MIN_UNITS = 1
MAX_UNITS: Mapping[str, int] = MappingProxyType({"kw": 16, "sm": 48})
DEFAULT_RETRIES = 2
DEFAULT_WORKERS = 4
#: passages answered without one chat completion before the endpoint is declared unusable
PROBE = 8


@dataclass(frozen=True)
class LLMSettings:
    """Where the endpoint is (``url``: the ``.../v1`` base), the model, timeout, retries and temperature."""

    url: str
    model: str
    timeout: float = 30.0
    retries: int = DEFAULT_RETRIES
    temperature: float = 0.7
    api_key: str | None = None
    workers: int = DEFAULT_WORKERS
    cache: ReplyCache | None = field(default=None, compare=False, repr=False)  # replies already received

    def __post_init__(self) -> None:
        check_url(self.url)
        if not isinstance(self.model, str) or not self.model.strip():
            raise FinegrainError("--llm-url needs a model name", "add --llm-model NAME (the endpoint's model id)")
        if self.timeout <= 0:
            raise FinegrainError(f"LLM timeout {self.timeout!r} is not positive", "give seconds, e.g. 30")
        if isinstance(self.retries, bool) or not isinstance(self.retries, int) or not 0 <= self.retries <= 10:
            raise FinegrainError(f"LLM retries {self.retries!r} is not a whole number 0..10", "use 2")
        if isinstance(self.workers, bool) or not isinstance(self.workers, int) or not 1 <= self.workers <= 64:
            raise FinegrainError(f"LLM workers {self.workers!r} is not a whole number 1..64",
                                 f"use {DEFAULT_WORKERS}, or 1 for a server that answers one request at a time")

    def describe(self) -> dict[str, Any]:
        """The settings for provenance (no key)."""
        return {"url": self.url, "model": self.model, "timeout": self.timeout, "retries": self.retries,
                "temperature": self.temperature, "workers": self.workers,
                "cache": None if self.cache is None else self.cache.describe()}


class ReplyError(Exception):
    """Why one LLM reply was not used (network, HTTP status, not a completion, not a JSON list, nothing valid);
    ``answered``: the endpoint did give a chat completion (its content was what failed)."""

    def __init__(self, reason: str, *, answered: bool) -> None:
        super().__init__(reason)
        self.answered = answered


@dataclass(frozen=True)
class Answer:
    """One passage's outcome: its valid queries (None: fall back to the rules), the last reason a reply was not
    used, and whether any try got a chat completion from the endpoint."""

    queries: list[str] | None
    reason: str = ""
    answered: bool = True


def messages(passage: str, style: str, lang: str | Lang) -> list[dict[str, str]]:
    """The chat messages that ask for ``style`` queries of ``passage`` in ``lang``."""
    return [{"role": "user", "content": PROMPTS[(style, str(parse_lang(lang)))].format(passage=passage)}]


def ask(settings: LLMSettings, msgs: list[dict[str, str]], *, seed: int | None = None) -> str:
    """The message content of one chat completion; :class:`ReplyError` on any failure."""
    extra = {} if seed is None else {"seed": seed}
    try:
        return chat(settings.url, settings.model, msgs, api_key=settings.api_key, timeout=settings.timeout,
                    cache=settings.cache, temperature=settings.temperature, **extra)
    except LLMError as e:
        raise ReplyError(str(e), answered=False) from e


def validate_queries(content: str, passage: str, style: str, lang: str | Lang) -> list[str]:
    """The valid queries of one reply's message content (see the module docstring); :class:`ReplyError` if none."""
    try:
        data = json_content(content)
    except LLMError as e:
        raise ReplyError(str(e), answered=True) from e
    if not isinstance(data, list) or not all(isinstance(q, str) for q in data):
        raise ReplyError(f"the reply is not a JSON list of strings: {content[:60]!r}", answered=True)
    language = parse_lang(lang)
    whole = exact_key(passage)
    out: dict[str, None] = {}
    for q in data:
        q = " ".join(q.split())
        n = len(units(q, language))
        key = exact_key(q)
        if not MIN_UNITS <= n <= MAX_UNITS[style] or not key or whole in key:
            continue
        if has_cjk(q) != (language is Lang.ZH):
            continue
        out.setdefault(q, None)
    if not out:
        raise ReplyError(f"no string of the reply is a valid {style} query in {language}: {content[:60]!r}",
                         answered=True)
    return list(out)


def ask_queries(settings: LLMSettings, passage: str, style: str, lang: str | Lang, *,
                seed: int | None = None) -> Answer:
    """The queries of the first valid reply in ``1 + retries`` tries, or no queries and the last reason."""
    reason, answered = "", False
    msgs = messages(passage, style, lang)
    for attempt in range(settings.retries + 1):
        try:
            content = ask(settings, msgs, seed=None if seed is None else seed + attempt)
            return Answer(validate_queries(content, passage, style, lang))
        except ReplyError as e:
            reason, answered = str(e), answered or e.answered
    return Answer(None, reason, answered)


def ask_all(settings: LLMSettings, passages: Sequence[str], style: str, lang: str | Lang, *,
            seed: int | None = None, show_progress: bool = False) -> list[Answer]:
    """:func:`ask_queries` for every passage, ``settings.workers`` at a time, answers in ``passages``' order; a
    FinegrainError when none of the first :data:`PROBE` passages (all of them, in a smaller pool) got one chat
    completion."""
    answers: list[Answer | None] = [None] * len(passages)
    probe = min(PROBE, len(passages))
    done, answered = 0, False
    bar = tqdm(total=len(passages), desc=f"LLM {style} queries", unit="passage", disable=not show_progress)
    pool = ThreadPoolExecutor(max_workers=settings.workers, thread_name_prefix="finegrain-llm")
    try:
        futures = {pool.submit(ask_queries, settings, text, style, lang, seed=seed): k
                   for k, text in enumerate(passages)}
        for fut in as_completed(futures):
            a = answers[futures[fut]] = fut.result()
            done, answered = done + 1, answered or a.answered
            bar.update()
            if done >= probe and not answered:
                raise FinegrainError(
                    f"the LLM endpoint {settings.url} gave no chat completion for {done} passage(s): {a.reason}",
                    "check --llm-url (the .../v1 base of an OpenAI-compatible server) and --llm-model, "
                    "or leave --llm-url out to generate with the rules")
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        bar.close()
    return [a for a in answers if a is not None]
