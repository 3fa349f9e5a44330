"""Macro definitions that specialize the kernels, generated from Python integers."""

from __future__ import annotations

from ...ozaki.moduli import ModuliSet, int_to_limbs
from ...ozaki.scaling import BOUND_MANTISSA_BITS, FRACTION_BITS, MIN_TERM_SHIFT, ZERO_ROW_EXP

__all__ = ["LIMB_BITS", "moduli_macros", "scaling_macros"]

#: limb width of the GPU Kulisch accumulator
LIMB_BITS = 32


def scaling_macros() -> dict[str, str]:
    """Constants of the integer scaling rules (ozfft.ozaki.scaling)."""
    return {
        "OZ_BOUND_MANTISSA_BITS": str(BOUND_MANTISSA_BITS),
        "OZ_FRACTION_BITS": str(FRACTION_BITS),
        "OZ_ZERO_ROW_EXP": f"({ZERO_ROW_EXP})",
        "OZ_MIN_TERM_SHIFT": f"({MIN_TERM_SHIFT})",
    }


def _join(values) -> str:
    return ",".join(str(v) for v in values)


def moduli_macros(moduli: ModuliSet, *, with_limbs: bool) -> dict[str, str]:
    """Moduli, ``2**24``/``2**48 mod p`` and (Phase B) the CRT weights and ``P`` in limbs."""
    macros = {
        "OZ_NUM_MODULI": str(moduli.count),
        "OZ_MODULI": _join(moduli.moduli),
        "OZ_POW24": _join(f"{pow(2, 24, p)}.0" for p in moduli.moduli),
        "OZ_POW48": _join(f"{pow(2, 48, p)}.0" for p in moduli.moduli),
    }
    if with_limbs:
        limbs = moduli.limbs_for(LIMB_BITS)
        weights = [limb for w in moduli.weights for limb in int_to_limbs(w, LIMB_BITS, limbs)]
        macros |= {
            "OZ_LIMBS": str(limbs),
            "OZ_WEIGHT_LIMBS": _join(f"{w}u" for w in weights),
            "OZ_P_LIMBS": _join(f"{w}u" for w in int_to_limbs(moduli.product, LIMB_BITS, limbs)),
            "OZ_INV_P": (1.0 / moduli.product).hex(),
        }
    return macros
