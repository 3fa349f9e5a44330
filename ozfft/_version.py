"""Single source of the package version (read by pyproject and the kernel cache key)."""

__all__ = ["__version__"]

__version__ = "0.1.0"
