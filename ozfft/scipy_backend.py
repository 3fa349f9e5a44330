"""A ``scipy.fft`` backend: ``scipy.fft.set_backend(ozfft.scipy_backend)``.

For a call of a ``scipy.fft`` function whose name ``ozfft.fourier`` exports (``fft``,
``ifft``, ``fft2``, ``ifft2``, ``fftn``, ``ifftn``, ``rfft``, ``irfft``, ``rfft2``,
``irfft2``, ``rfftn``, ``irfftn``, and whatever else lands there, such as the ``hfft``
family), ozfft answers on numpy and cupy arrays, with scipy's argument checks and error
messages (:func:`ozfft.fourier.api.scipy_semantics`). It returns ``NotImplemented``, so
that the next backend (scipy's own, where registered) answers, for:

- names ozfft does not have (``dct``, ``dst``, ``fht``, ...);
- input ozfft does not compute in: long double / clongdouble, object arrays (any
  :class:`~ozfft.UnsupportedDTypeError`);
- non-finite input (NaN or Inf; any :class:`~ozfft.NonFiniteInputError`); ozfft's own
  functions raise this error instead;
- a ``plan`` that is not an :class:`ozfft.fourier.planner.Plan`.

scipy's functions have no ``precision``, ``moduli`` or ``phase_a`` keywords, so calls
answered here take ozfft's defaults, with the environment's say where ozfft has one:
``OZFFT_PHASE_A`` (``int8``, ``fp8``, ``auto``; :func:`ozfft.config.phase_a_default`) picks
the arithmetic of the exact products, as for ``ozfft.fft(..., phase_a=None)`` (the result
does not depend on it); an ozfft plan passed as ``plan=`` brings its own precision and
moduli.

Use it for a block (``with scipy.fft.set_backend(ozfft.scipy_backend): ...``) or for
the whole program (``scipy.fft.set_global_backend(ozfft.scipy_backend)`` together with
``scipy.fft.register_backend("scipy")``, so that scipy answers what ozfft hands back).
"""

from __future__ import annotations

from typing import Any

from . import fourier as _fourier
from .errors import NonFiniteInputError, UnsupportedDTypeError
from .fourier.api import is_ozfft_plan, scipy_semantics

__all__ = ["__ua_domain__", "__ua_function__", "dispatch", "handles"]

__ua_domain__ = "numpy.scipy.fft"

# ozfft.fourier exports that are not transforms scipy.fft could ask for
_NOT_FUNCTIONS = frozenset({"clear_plan_cache", "plan_cache_info"})


def handles(name: str) -> bool:
    """Whether ``ozfft.fourier`` exports a function of this name (looked up per call,
    so functions added to ``ozfft.fourier`` are picked up)."""
    return (
        isinstance(name, str)
        and name in getattr(_fourier, "__all__", ())
        and name not in _NOT_FUNCTIONS
        and callable(getattr(_fourier, name, None))
    )


def dispatch(name: str, args: tuple, kwargs: dict, *, semantics: str = "scipy") -> Any:
    """ozfft's answer to a call of ``name(*args, **kwargs)``, or ``NotImplemented``
    where ozfft hands the call off (see the module docstring). ``semantics="scipy"``
    checks arguments as scipy.fft does (the backend); ``"numpy"`` as numpy.fft does."""
    if not handles(name):
        return NotImplemented
    plan = kwargs.get("plan")
    if plan is not None and not is_ozfft_plan(plan):
        return NotImplemented
    function = getattr(_fourier, name)
    try:
        with scipy_semantics(semantics == "scipy"):
            return function(*args, **kwargs)
    except (NonFiniteInputError, UnsupportedDTypeError):
        return NotImplemented


def __ua_function__(method: Any, args: tuple, kwargs: dict) -> Any:
    return dispatch(getattr(method, "__name__", None), args, kwargs)
