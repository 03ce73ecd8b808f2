"""SQLite: the one store."""

from fayd.store.db import Store

__all__ = ["Store"]
