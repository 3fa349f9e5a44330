"""Dicts kept to a bounded size, oldest entry first out (the per-signature caches of
``ozfft.matmul``'s prepared products and of the CUDA engine's small-product plans)."""

from __future__ import annotations

from typing import Any

__all__ = ["put_bounded"]


def put_bounded(kept: dict, key: Any, value: Any, limit: int) -> Any:
    """``kept[key] = value`` after dropping the oldest entry where ``kept`` holds ``limit``
    (insertion order; threads that miss together may race for the same entry: whichever
    comes second finds it gone). Returns ``value``."""
    if len(kept) >= limit:
        try:
            kept.pop(next(iter(kept)), None)
        except (StopIteration, RuntimeError):  # (emptied, or changed while looked at)
            pass
    kept[key] = value
    return value
