"""The one lazy-import mechanism: packages that export names of their submodules, imported on first use.

A package writes, module by module, the names it exports (space-separated, as the
``from ... import`` lines a type checker reads under ``TYPE_CHECKING``)::

    __getattr__, __dir__ = lazy_exports(__name__, {".trec": "read_qrels write_qrels", ".idlist": "read_ids"})

and ``package.read_qrels`` imports ``.trec`` on first access and returns its
``read_qrels``. A relative module (``.trec``) is resolved against the package.
An export named after the submodule it comes from (``".evaluate": "evaluate"``
in ``finegrain``) is that module itself. An unknown name raises the usual
``AttributeError``; ``dir(package)`` lists the exports too. Nothing is imported
before a name is used, and no state is kept here.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from finegrain.errors import MissingDependencyError


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A module ``__getattr__`` and ``__dir__`` for ``package`` serving ``exports`` (module -> names)."""
    table = {
        name: importlib.util.resolve_name(module, package) for module, names in exports.items() for name in names.split()
    }

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        loaded = importlib.import_module(module)
        return loaded if module == f"{package}.{name}" else getattr(loaded, name)

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(table))

    return __getattr__, __dir__


def require(module: str, extra: str, package: str | None = None) -> Any:
    """Import the optional ``module``, or raise a MissingDependencyError naming the pip ``package``
    (default: the module's top-level name) and the finegrain ``extra`` that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependencyError(package or module.split(".")[0], extra) from None


def callable_package(package: str, function: Callable[..., Any]) -> None:
    """Make ``package`` (already in ``sys.modules``) callable as ``function``, so that ``from finegrain import
    evaluate`` gives a package that is also the function: a package and a function cannot share a name
    otherwise, since importing a submodule rebinds the name to the package.

    The package shows the function to tools: ``inspect.signature(package)`` is the function's signature
    (``__signature__``), and its docstring (what ``help()`` prints first) opens with the function's
    signature and docstring, then the package's own. A call goes straight to the function (no frame in
    between, so a warning's ``stacklevel`` points at the caller).
    """
    module = sys.modules[package]

    class _CallablePackage(ModuleType):
        __call__ = staticmethod(function)

    signature = inspect.signature(function)
    module.__class__ = _CallablePackage
    module.__signature__ = signature  # type: ignore[attr-defined]  # read by inspect.signature
    module.__doc__ = "\n\n".join(
        part for part in (f"{function.__name__}{signature}", inspect.getdoc(function), inspect.getdoc(module)) if part
    )
