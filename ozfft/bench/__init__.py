"""Benchmark campaigns (``ozfft bench ...``)."""

__all__: list[str] = []
