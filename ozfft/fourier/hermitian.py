"""``hfft``, ``ihfft``, ``hfft2``, ``ihfft2``, ``hfftn``, ``ihfftn``: transforms of Hermitian
sequences with ``scipy.fft`` semantics, built on the real transforms of :mod:`.api`.

pocketfft (scipy) computes them as the other direction of the real transforms:
``hfftn`` is the *forward* complex-to-real transform and ``ihfftn`` the *inverse*
real-to-complex one. With ``swap = {backward: forward, forward: backward, ortho: ortho}``

    hfftn(x, s, axes, norm)  = irfftn(conj(x), s, axes, swap(norm))
    ihfftn(x, s, axes, norm) = conj(rfftn(x, s, axes, swap(norm)))

(the Hermitian extension of ``conj(x)`` is the conjugate of that of ``x``, and
``conj(ifft(conj(y))) = fft(y) / n``). The default ``norm="backward"`` leaves ``hfft``
unscaled and divides ``ihfft`` by ``n``, as numpy and scipy do. Because every transform
goes through the public functions, both engines run them and stay bit-identical, and
``precision``, ``moduli`` and ``phase_a`` mean what they mean there.
"""

from __future__ import annotations

from . import api
from .helper import _xp_of

__all__ = ["hfft", "hfft2", "hfftn", "ihfft", "ihfft2", "ihfftn"]

_SWAP = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _swap(norm):
    # an invalid norm goes through unchanged: the real transform rejects it with the
    # library's message
    return _SWAP.get(norm, norm) if isinstance(norm, str | None) else norm


def _conj(x):
    xp, x = _xp_of(x)
    return xp.conj(x)  # a new array (also for real and integer input)


def hfft(
    x,
    n=None,
    axis=-1,
    norm=None,
    overwrite_x=False,
    workers=None,
    *,
    plan=None,
    precision="fp64",
    moduli=None,
    phase_a=None,
    out=None,
):
    """FFT of a signal with Hermitian symmetry (a half spectrum): real output of length
    ``n`` (default ``2 (m - 1)`` for ``m`` input points along ``axis``); ``out`` as in
    numpy 2."""
    return api.irfft(
        _conj(x),
        n=n,
        axis=axis,
        norm=_swap(norm),
        overwrite_x=True,  # the conjugate is our own temporary
        workers=workers,
        plan=plan,
        precision=precision,
        moduli=moduli,
        phase_a=phase_a,
        out=out,
    )


def ihfft(
    x,
    n=None,
    axis=-1,
    norm=None,
    overwrite_x=False,
    workers=None,
    *,
    plan=None,
    precision="fp64",
    moduli=None,
    phase_a=None,
    out=None,
):
    """Inverse of :func:`hfft`: the ``n//2 + 1`` non-negative-frequency terms of the
    inverse DFT of real input (scaled by ``1/n`` with the default norm); ``out`` as in
    numpy 2."""
    y = api.rfft(
        x,
        n=n,
        axis=axis,
        norm=_swap(norm),
        overwrite_x=overwrite_x,
        workers=workers,
        plan=plan,
        precision=precision,
        moduli=moduli,
        phase_a=phase_a,
        out=out,
    )
    xp, y = _xp_of(y)
    return xp.conj(y, out=y)


def hfftn(
    x,
    s=None,
    axes=None,
    norm=None,
    overwrite_x=False,
    workers=None,
    *,
    plan=None,
    precision="fp64",
    moduli=None,
    phase_a=None,
):
    """N-D FFT of Hermitian-symmetric input (half spectrum along the last of ``axes``):
    real output, last axis of length ``s[-1]`` (default ``2 (m - 1)``)."""
    return api.irfftn(
        _conj(x),
        s=s,
        axes=axes,
        norm=_swap(norm),
        overwrite_x=True,
        workers=workers,
        plan=plan,
        precision=precision,
        moduli=moduli,
        phase_a=phase_a,
    )


def ihfftn(
    x,
    s=None,
    axes=None,
    norm=None,
    overwrite_x=False,
    workers=None,
    *,
    plan=None,
    precision="fp64",
    moduli=None,
    phase_a=None,
):
    """N-D inverse DFT of real input; the last of ``axes`` keeps ``s[-1]//2 + 1`` terms."""
    y = api.rfftn(
        x,
        s=s,
        axes=axes,
        norm=_swap(norm),
        overwrite_x=overwrite_x,
        workers=workers,
        plan=plan,
        precision=precision,
        moduli=moduli,
        phase_a=phase_a,
    )
    xp, y = _xp_of(y)
    return xp.conj(y, out=y)


def hfft2(
    x,
    s=None,
    axes=(-2, -1),
    norm=None,
    overwrite_x=False,
    workers=None,
    *,
    plan=None,
    precision="fp64",
    moduli=None,
    phase_a=None,
):
    """2-D FFT of a Hermitian-symmetric array (:func:`hfftn` over the last two axes)."""
    return hfftn(
        x,
        s,
        axes,
        norm,
        overwrite_x,
        workers,
        plan=plan,
        precision=precision,
        moduli=moduli,
        phase_a=phase_a,
    )


def ihfft2(
    x,
    s=None,
    axes=(-2, -1),
    norm=None,
    overwrite_x=False,
    workers=None,
    *,
    plan=None,
    precision="fp64",
    moduli=None,
    phase_a=None,
):
    """2-D inverse FFT of a real array (:func:`ihfftn` over the last two axes)."""
    return ihfftn(
        x,
        s,
        axes,
        norm,
        overwrite_x,
        workers,
        plan=plan,
        precision=precision,
        moduli=moduli,
        phase_a=phase_a,
    )
