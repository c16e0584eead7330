"""Settings read from the environment, resolved once by the caller and passed down."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from finegrain.errors import FinegrainError

DATA_ENV = "FINEGRAIN_DATA"
CACHE_ENV = "FINEGRAIN_CACHE"


def default_data_root() -> Path | None:
    """``$FINEGRAIN_DATA`` if set, else ``../shared/data`` relative to the working directory when present."""
    env = os.environ.get(DATA_ENV)
    if env:
        return Path(env)
    candidate = Path.cwd().parent / "shared" / "data"
    return candidate if candidate.is_dir() else None


def default_cache_dir() -> Path:
    """``$FINEGRAIN_CACHE`` if set, else ``~/.cache/finegrain`` (embeddings and other re-computable files)."""
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "finegrain"


@dataclass(frozen=True)
class Settings:
    data_root: Path | None
    cache_dir: Path | None = None  # None: no on-disk cache (from_env always sets it)

    @classmethod
    def from_env(cls) -> Settings:
        return cls(data_root=default_data_root(), cache_dir=default_cache_dir())

    def require_data_root(self) -> Path:
        root = self.data_root
        if root is None:
            raise FinegrainError(
                "no data root: $FINEGRAIN_DATA is not set and ../shared/data does not exist",
                f"set {DATA_ENV}=/path/to/data or run from a folder beside shared/",
            )
        if not root.is_dir():
            raise FinegrainError(
                f"data root {str(root)!r} does not exist or is not a folder",
                f"set {DATA_ENV} to the folder that holds the datasets",
            )
        return root
