"""The package logger, ``logging.getLogger("ozfft")``."""

from __future__ import annotations

import logging

from . import config

__all__ = ["logger"]

logger = logging.getLogger("ozfft")
logger.addHandler(logging.NullHandler())
if (_level := config.log_level()) is not None:
    logger.setLevel(_level)
    if not any(isinstance(h, logging.StreamHandler) for h in logger.handlers):
        _handler = logging.StreamHandler()
        _handler.setFormatter(logging.Formatter("%(name)s %(levelname)s: %(message)s"))
        logger.addHandler(_handler)
