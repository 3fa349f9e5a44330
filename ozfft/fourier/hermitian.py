"""``hfft``, ``ihfft``, ``hfft2``, ``ihfft2``, ``hfftn``, ``ihfftn``: transforms of Hermitian
sequences with ``scipy.fft`` semantics, built on the real transforms of :mod:`.api`.

pocketfft (scipy) computes them as the other direction of the real transforms:
``hfftn`` is the *forward* complex-to-real transform and ``ihfftn`` the *inverse*
real-to-complex one. With ``swap = {backward: forward, forward: backward, ortho: ortho}``

    hfftn(x, s, axes, norm)  = irfftn(conj(x), s, axes, swap(norm))
    ihfftn(x, s, axes, norm) = conj(rfftn(x, s, axes, swap(norm)))

(the Hermitian extension of ``conj(x)`` is the conjugate of that of ``x``, and
``conj(ifft(conj(y))) = fft(y) / n``). The default ``norm="backward"`` leaves ``hfft``
unscaled and divides ``ihfft`` by ``n``, as numpy and scipy do. Every transform runs the
real transforms' own code (:func:`.api._c2r`, :func:`.api._r2c`), so both engines run
them and stay bit-identical, and ``precision``, ``moduli`` and ``phase_a`` mean what they
mean there. The conjugations are theirs too, taken in complex128 (after the input's
conversion, before the result's): exact, where cupy's complex64 negation, built with
``-ftz=true``, would flush binary32 subnormals to zero.
"""

from __future__ import annotations

from . import api

__all__ = ["hfft", "hfft2", "hfftn", "ihfft", "ihfft2", "ihfftn"]

_SWAP = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _swap(norm):
    # an invalid norm goes through unchanged: the real transform rejects it with the
    # library's message
    return _SWAP.get(norm, norm) if isinstance(norm, str | None) else norm


def _one_axis(transform, x, n, axis, norm, workers, plan, precision, moduli, phase_a, out):
    """``transform`` (:func:`.api._c2r` or :func:`.api._r2c`) of ``conj`` along one axis
    with the swapped norm: the body of :func:`hfft` and :func:`ihfft`."""
    return transform(
        x, None, None, _swap(norm), workers, plan, precision, moduli, out,
        one_d_n=n, one_d_axis=axis, phase_a=phase_a, conj=True,
    )  # fmt: skip


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
    return _one_axis(api._c2r, x, n, axis, norm, workers, plan, precision, moduli, phase_a, out)


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
    return _one_axis(api._r2c, x, n, axis, norm, workers, plan, precision, moduli, phase_a, out)


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
    return api._c2r(
        x, s, axes, _swap(norm), workers, plan, precision, moduli, None, phase_a=phase_a, conj=True
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
    return api._r2c(
        x, s, axes, _swap(norm), workers, plan, precision, moduli, None, phase_a=phase_a, conj=True
    )


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
