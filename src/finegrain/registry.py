"""One registry pattern for datasets, retrievers, encoders, fusion methods, rerankers and metrics.

A :class:`Registry` maps names to factories. It refuses duplicate names,
suggests near names for unknown ones, and imports nothing until an entry is
asked for (a factory may be given as a ``"module:attribute"`` string).

An entry may declare its parameters, in the spirit of ir_measures'
``SUPPORTED_PARAMS``::

    RETRIEVERS.register("bm25", "finegrain.retrieve.bm25.retriever:lucene_retriever",
                        params={"k1": Param(float, 1.5, help="term saturation")})

and :meth:`Registry.check` (or :func:`check_options`) is then the one place
where options (``--set k1=1.2`` on the command line, keywords in Python) are
checked and converted: an unknown key is refused with "did you mean", a value
of the wrong type, outside the choices or outside the declared range with the
allowed values. Strings are converted (``"1.2"`` -> 1.2, ``"true"`` -> True,
``"none"`` -> None, ``"a,b"`` -> ``("a", "b")``), numbers by the one number
grammar (:mod:`finegrain.numbers`: ASCII digits, int64 integers, finite floats;
no ``1_5``, ``nan`` or ``1e999``), so the CLI passes ``--set`` values through
as written.
"""

from __future__ import annotations

import builtins
import difflib
import importlib
import math
import numbers
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Generic, TypeVar

from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.frozen import EMPTY
from finegrain.numbers import INT64_MAX, INT64_MIN, NumberError, parse_float, parse_int

T = TypeVar("T")

_TRUE = frozenset({"true"})
_FALSE = frozenset({"false"})
_NONE = frozenset({"none", "null"})


@dataclass(frozen=True)
class Param:
    """One declared parameter: its type, default, allowed values and a line of help.

    ``type`` is ``int``, ``float``, ``bool``, ``str``, ``list`` (a comma list;
    ``item`` is the type of its elements, ``str`` or ``float``) or ``object``
    (a name, or an object passed from Python, e.g. an Encoder). ``nullable``
    allows ``None`` (written ``none``); ``min`` and ``max`` are the smallest and
    largest allowed numbers (of each item, for a list of floats), and ``why``
    says why the range is what it is (shown with a value outside it);
    ``required`` means the entry cannot be built without it. ``grid`` makes the
    parameter tunable: the values ``finegrain eval --cv K`` chooses among by
    cross-validation (:mod:`finegrain.experiment.tuning.cv`), as a tuple, or as a
    ``"module:NAME"`` function of the entry's other (checked) options that
    returns them (a hybrid's weight vectors depend on its number of parts).
    """

    type: builtins.type = str
    default: Any = None
    choices: tuple[Any, ...] | str | None = None
    help: str = ""
    nullable: bool = False
    min: float | None = None
    required: bool = False
    item: builtins.type = str
    label: str | None = None
    grid: tuple[Any, ...] | str | None = None
    max: float | None = None
    why: str = ""

    def grid_values(self, options: Mapping[str, Any]) -> tuple[Any, ...]:
        """The values to cross-validate over (empty when the parameter is not tunable)."""
        if self.grid is None:
            return ()
        if isinstance(self.grid, str):
            module, _, attr = self.grid.partition(":")
            return tuple(getattr(importlib.import_module(module), attr)(options))
        return tuple(self.grid)

    def allowed(self) -> tuple[Any, ...] | None:
        """The choices; a ``"module:NAME"`` string is imported on first use (keeps listing and checking lazy)."""
        if isinstance(self.choices, str):
            module, _, attr = self.choices.partition(":")
            return tuple(getattr(importlib.import_module(module), attr))
        return self.choices

    @property
    def type_name(self) -> str:
        if self.type is list:
            return f"list[{self.item.__name__}]"
        return "name" if self.type is object else self.type.__name__

    def describe(self) -> str:
        """``int >= 1, default 10``, ``float, default 1.5, in [0, 100]`` or ``rrf|convex, default rrf``."""
        choices = self.allowed()
        bounded = self.max is not None or self.type is list
        if choices is not None:
            what = "|".join(str(c) for c in choices)
        else:
            what = " ".join(filter(None, (self.type_name, "" if bounded else self.range())))
        if self.required:
            what += ", required"
        else:
            what += ", default " + ("none" if self.default is None else _show(self.default))
        if bounded and choices is None and self.range():
            what += (", each " if self.type is list else ", ") + self.range()
        return what

    def convert(self, key: str, value: Any, owner: str = "") -> Any:
        """``value`` (a string as written, or a Python value) as this parameter's type; errors name the allowed values."""
        where = f"{owner}: " if owner else ""
        if value is None or (isinstance(value, str) and value.strip().lower() in _NONE and self.type is not str):
            if self.nullable or (value is None and not self.required and self.default is None):
                return None
            raise FinegrainError(f"{where}{key}={value!r} is not allowed", f"give {key} a value: {self.describe()}")
        out = self._cast(key, value, where)
        choices = self.allowed()
        if choices is not None and out not in choices:
            close = difflib.get_close_matches(str(out), [str(c) for c in choices], n=1, cutoff=0.5)
            hint = (f"did you mean {close[0]!r}? " if close else "") + f"use one of {', '.join(map(repr, choices))}"
            raise FinegrainError(f"{where}unknown {self.label or key} {out!r}", hint)
        if isinstance(out, (int, float)) and not isinstance(out, bool) and not self.within(out):
            kind = "a whole number" if self.type is int else "a number"
            bound = f">= {_num(self.min)}" if self.min is not None and out < self.min else self.range()
            raise FinegrainError(f"{where}{key}={out!r} is not {kind} {bound}", self._fix(key))
        return out

    def range(self) -> str:
        """The declared range as text: ``in [0, 1]``, ``>= 1``, ``<= 100`` or empty."""
        lo, hi = self.min, self.max
        if lo is not None and hi is not None:
            return f"in [{_num(lo)}, {_num(hi)}]"
        if lo is not None:
            return f">= {_num(lo)}"
        return f"<= {_num(hi)}" if hi is not None else ""

    def within(self, x: float) -> bool:
        """Whether the number ``x`` lies in the declared range."""
        return (self.min is None or x >= self.min) and (self.max is None or x <= self.max)

    def _fix(self, key: str) -> str:
        """The hint of an out-of-range value: the range, why, and an example."""
        parts = [f"{key} is {self.range()}" if self.type is not list else f"each {self.label or key} is {self.range()}"]
        if self.why:
            parts.append(self.why)
        return "; ".join(parts) + f"; e.g. {key}={self._example(1)}"

    def _example(self, fallback: float) -> str:
        """A value to show in a hint: the default, else the smallest allowed, else ``fallback``."""
        if self.type is list:
            return _show(self.default) if self.default else ("1,1" if self.item is float else "a,b")
        if self.default is not None:
            return _show(self.default)
        return _num(self.min if self.min is not None else fallback)

    def _cast(self, key: str, value: Any, where: str) -> Any:
        t = self.type
        if t is object:
            return value.strip() if isinstance(value, str) else value
        if t is bool:
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
                return value.strip().lower() in _TRUE
            raise FinegrainError(f"{where}{key}={value!r} is not true or false", f"pass {key}=true or {key}=false")
        if t is int:
            if isinstance(value, int) and not isinstance(value, bool):
                if not INT64_MIN <= value <= INT64_MAX:
                    raise FinegrainError(f"{where}{key}={value!r} is outside the range -2^63..2^63-1", self._fix(key))
                return value
            if isinstance(value, str):
                try:
                    return parse_int(value.strip())
                except NumberError as e:
                    raise FinegrainError(f"{where}{key}={e.reason}",
                                         e.hint or f"write it in ASCII digits, like {key}={self._example(10)}") from None
            raise FinegrainError(f"{where}{key}={value!r} is not a whole number", f"write it like {key}={self._example(10)}")
        if t is float:
            if isinstance(value, str):
                try:
                    return parse_float(value.strip())
                except NumberError as e:
                    raise FinegrainError(f"{where}{key}={e.reason}",
                                         e.hint or f"write it in ASCII digits, like {key}={self._example(0.5)}") from None
            if not _finite(value):
                raise FinegrainError(f"{where}{key}={value!r} is not a finite number", f"write it like {key}={self._example(0.5)}")
            return value  # a Python int is a number; kept as given
        if t is list:
            return self._list(key, value, where)
        if isinstance(value, str):
            return value.strip()
        raise FinegrainError(f"{where}{key}={value!r} is not a string", f"{key}: {self.describe()}")

    def _list(self, key: str, value: Any, where: str) -> tuple[Any, ...]:
        example = "1,1" if self.item is float else "a,b"
        if isinstance(value, str):
            items: list[Any] = value.split(",")
        elif self.item is float and isinstance(value, (int, float)) and not isinstance(value, bool):
            items = [value]
        elif isinstance(value, (list, tuple)):
            items = list(value)
        else:
            raise FinegrainError(f"{where}{key}={value!r} is not a comma list", f"write it like {key}={example}")
        if self.item is float:
            out: list[Any] = []
            for x in items:
                try:
                    number = parse_float(x.strip()) if isinstance(x, str) else x
                except NumberError as e:
                    raise FinegrainError(f"{where}{key}={value!r}: {x!r} is not a number", e.reason) from None
                if not _finite(number):
                    raise FinegrainError(f"{where}{key}={value!r}: {x!r} is not a finite number", f"write it like {key}={example}")
                number = float(number)
                if not self.within(number):
                    crossed = "negative" if self.min == 0 and number < 0 else f"not {self.range()}"
                    raise FinegrainError(f"{where}{self.label or key} {number!r} in {key}={value!r} is {crossed}",
                                         self._fix(key))
                out.append(number)
            return tuple(out)
        names = tuple(str(x).strip() for x in items)
        if not names or any(not n for n in names):
            raise FinegrainError(f"{where}{key}={value!r} has an empty name", f"write it like {key}={example}")
        return names


@dataclass(frozen=True)
class Entry(Generic[T]):
    """A registered name: its factory (or ``module:attribute``), declared parameters and help.

    ``params=None`` means the entry declares nothing and options are passed on
    unchecked. ``nested`` entries also take ``NAME.KEY`` options meant for a
    part ``NAME`` (hybrid parts, a reranker's first stage); ``hints`` give a
    specific hint for a key the entry refuses on purpose.
    """

    name: str
    factory: T | str
    params: Mapping[str, Param] | None = None
    help: str = ""
    nested: bool = False
    hints: Mapping[str, str] = field(default_factory=lambda: EMPTY)


class Registry(Generic[T]):
    """Names -> :class:`Entry`; refuses duplicates, suggests near names, imports lazily."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, Entry[T] | Any] = {}
        self._loaded: dict[str, T] = {}
        self._aliases: dict[str, str] = {}

    def register(
        self,
        name: str,
        factory: T | str,
        help: str = "",
        *,
        params: Mapping[str, Param] | None = None,
        nested: bool = False,
        hints: Mapping[str, str] | None = None,
    ) -> None:
        if name in self._entries:
            raise FinegrainError(f"{self.kind} {name!r} is registered twice", "pick another name")
        self._entries[name] = Entry(
            name, factory, MappingProxyType(dict(params)) if params is not None else None, help, nested,
            MappingProxyType(dict(hints or {})),
        )

    def alias(self, old: str, new: str) -> None:
        """Keep ``old`` working for a registered ``new``, with a FutureWarning naming ``new`` (a renamed
        entry stays usable for one release; listings show only ``new``)."""
        if old in self._entries or old in self._aliases:
            raise FinegrainError(f"{self.kind} {old!r} is registered twice", "pick another name")
        if new not in self._entries:
            raise UnknownNameError(self.kind, new, self._entries)
        self._aliases[old] = new

    def canonical(self, name: str) -> str:
        """``name``, or the entry an old name stands for, warning once that the old name goes away (a
        FutureWarning: shown to command-line users too)."""
        new = self._aliases.get(name)
        if new is None:
            return name
        warnings.warn(f"{self.kind} {name!r} is now called {new!r}; the old name will be removed",
                      FutureWarning, stacklevel=3)
        return new

    def entry(self, name: str) -> Entry[T]:
        name = self._aliases.get(name, name)
        try:
            entry = self._entries[name]
        except KeyError:
            raise UnknownNameError(self.kind, name, self._entries) from None
        if not isinstance(entry, Entry):  # a bare factory put in by hand (test doubles): declares nothing
            entry = Entry(name, entry)
        return entry

    def get(self, name: str) -> T:
        """The factory of ``name``, imported on first use."""
        factory = self.entry(name).factory
        if not (isinstance(factory, str) and ":" in factory):
            return factory  # type: ignore[return-value]
        if factory not in self._loaded:
            module, _, attr = factory.partition(":")
            self._loaded[factory] = getattr(importlib.import_module(module), attr)
        return self._loaded[factory]

    def params(self, name: str) -> Mapping[str, Param] | None:
        return self.entry(name).params

    def check(self, name: str, options: Mapping[str, Any]) -> dict[str, Any]:
        """``options`` checked against ``name``'s declared parameters and converted (see :func:`check_options`).

        A ``NAME.KEY`` option of a nested entry whose ``NAME`` is in this
        registry is checked against that entry; other ``NAME.KEY`` options are
        passed on for the factory to place.
        """
        entry = self.entry(name)
        out = check_options(f"{self.kind} {name!r}", entry.params, options, nested=entry.nested, hints=entry.hints)
        if entry.nested:
            for key, value in list(out.items()):
                head, dot, rest = key.partition(".")
                if dot and head in self._entries and head != name:
                    out[key] = self.check(head, {rest: value})[rest]
        return out

    def build(self, name: str, **options: Any) -> Any:
        """``get(name)(**check(name, options))``: the factory's product with checked options."""
        name = self.canonical(name)
        return self.get(name)(**self.check(name, options))  # type: ignore[operator]

    def help(self, name: str) -> str:
        return self.entry(name).help

    def __contains__(self, name: object) -> bool:
        return name in self._entries or name in self._aliases

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def names(self) -> list[str]:
        return list(self._entries)

    def entries(self) -> list[Entry[T]]:
        return [self.entry(n) for n in self._entries]


def check_options(
    owner: str,
    params: Mapping[str, Param] | None,
    options: Mapping[str, Any],
    *,
    nested: bool = False,
    hints: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The one checker: each option's key must be declared in ``params`` and its value converts to the type.

    ``owner`` names what takes them (``retriever 'bm25'``). An unknown key is a
    :class:`~finegrain.errors.FinegrainError` naming it, the nearest declared
    key and all of them; ``NAME.KEY`` keys pass through when ``nested``.
    ``params=None`` (nothing declared) returns the options unchanged.
    """
    if params is None:
        return dict(options)
    out: dict[str, Any] = {}
    for key, value in options.items():
        head, dot, rest = key.partition(".")
        if nested and dot and head and rest:
            out[key] = value
            continue
        param = params.get(key)
        if param is None:
            raise unknown_option(owner, key, params, nested=nested, hint=(hints or {}).get(key))
        out[key] = param.convert(key, value, owner)
    return out


def unknown_option(
    owner: str, key: str, params: Mapping[str, Param], *, nested: bool = False, hint: str | None = None
) -> FinegrainError:
    """``<owner> has no option 'k3'`` with did-you-mean and the declared options."""
    known = list(params)
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.5)
    listing = ", ".join(known) or "(none)"
    parts = [hint] if hint else []
    if close:
        parts.append(f"did you mean {close[0]!r}?")
    parts.append(f"its options are: {listing}" + (", and NAME.KEY for an option of the part NAME" if nested else ""))
    return FinegrainError(f"{owner} has no option {key!r}", "; ".join(parts))


def _finite(x: Any) -> bool:
    """Whether ``x`` is a real number (not a bool; numpy's count) that is a finite double."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        return False
    try:
        return math.isfinite(x)
    except OverflowError:  # an int beyond the double range
        return False


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(x)


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (tuple, list)):
        return ",".join(_show(v) for v in value)
    if isinstance(value, float):
        return _num(value)
    return str(value)
