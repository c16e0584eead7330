"""finegrain's version, the one place it is written (``finegrain.__version__`` re-exports it)."""

__version__ = "0.1.0"
