"""Macro definitions that specialize the kernels, generated from Python integers.

Each set is built once per process (``functools.cache``) as an immutable, hashable
:class:`Macros`, whose items are sorted once and whose ``#define`` prologue is rendered
once, so a kernel launch only looks the compiled module up.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from functools import cache

from ...ozaki.moduli import ModuliSet, int_to_limbs, moduli_set
from ...ozaki.scaling import BOUND_MANTISSA_BITS, FRACTION_BITS, MIN_TERM_SHIFT, ZERO_ROW_EXP

__all__ = [
    "LIMB_BITS",
    "NO_MACROS",
    "Macros",
    "moduli_macros",
    "phase_b_macros",
    "scaling_macros",
]

#: limb width of the GPU Kulisch accumulator
LIMB_BITS = 32


class Macros(Mapping[str, str]):
    """Immutable, hashable ``#define`` name -> value pairs, sorted by name once."""

    __slots__ = ("_hash", "_map", "_prologue", "pairs")

    def __init__(self, macros: Mapping[str, str] | Iterable[tuple[str, str]] = ()) -> None:
        items = macros.items() if isinstance(macros, Mapping) else macros
        #: the ``(name, value)`` pairs sorted by name
        self.pairs: tuple[tuple[str, str], ...] = tuple(
            sorted((str(name), str(value)) for name, value in items)
        )
        self._map = dict(self.pairs)
        if len(self._map) != len(self.pairs):
            raise ValueError("a macro is defined twice")
        self._hash = hash(self.pairs)
        self._prologue = "".join(f"#define {name} {value}\n" for name, value in self.pairs)

    @property
    def prologue(self) -> str:
        """The ``#define`` lines that specialize a kernel source."""
        return self._prologue

    def __getitem__(self, name: str) -> str:
        return self._map[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._map)

    def __len__(self) -> int:
        return len(self.pairs)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Macros):
            return self.pairs == other.pairs
        return Mapping.__eq__(self, other)

    def __or__(self, other: Mapping[str, str]) -> Macros:
        """Union; ``other`` wins on a shared name (as for ``dict``)."""
        if not isinstance(other, Mapping):
            return NotImplemented
        return Macros({**self._map, **other})

    def __ror__(self, other: Mapping[str, str]) -> Macros:
        if not isinstance(other, Mapping):
            return NotImplemented
        return Macros({**other, **self._map})

    def __repr__(self) -> str:
        return f"Macros({self._map!r})"


#: the empty set (kernels that need no specialization, e.g. the bench probes)
NO_MACROS = Macros()


@cache
def scaling_macros() -> Macros:
    """Constants of the integer scaling rules (ozfft.ozaki.scaling)."""
    return Macros(
        {
            "OZ_BOUND_MANTISSA_BITS": str(BOUND_MANTISSA_BITS),
            "OZ_FRACTION_BITS": str(FRACTION_BITS),
            "OZ_ZERO_ROW_EXP": f"({ZERO_ROW_EXP})",
            "OZ_MIN_TERM_SHIFT": f"({MIN_TERM_SHIFT})",
        }
    )


def _join(values: Iterable[object]) -> str:
    return ",".join(str(v) for v in values)


def moduli_macros(moduli: ModuliSet, *, with_limbs: bool) -> Macros:
    """Moduli, ``2**24``/``2**48 mod p`` and (Phase B) the CRT weights and ``P`` in limbs.

    The moduli are the first ``moduli.count`` of the table, so the set is cached on the
    count (and the flag): every call for the same count returns the same object.
    """
    return _moduli_macros(moduli.count, with_limbs)


@cache
def _moduli_macros(count: int, with_limbs: bool) -> Macros:
    moduli = moduli_set(count)
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
    return Macros(macros)


def phase_b_macros(moduli: ModuliSet, *, out_float: bool) -> Macros:
    """Macros of ``gemm/phase_b.cu``: :func:`moduli_macros` with limbs, plus
    ``OZ_OUT_FLOAT`` when the output is binary32 (cached like the others)."""
    return _phase_b_macros(moduli.count, out_float)


@cache
def _phase_b_macros(count: int, out_float: bool) -> Macros:
    macros = _moduli_macros(count, True)
    return macros | {"OZ_OUT_FLOAT": "1"} if out_float else macros
