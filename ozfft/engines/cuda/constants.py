"""Macro definitions that specialize the kernels, generated from Python integers.

Each set is built once per process (``functools.cache``) as an immutable, hashable
:class:`Macros`, whose items are sorted once and whose ``#define`` prologue is rendered
once, so a kernel launch only looks the compiled module up.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from fractions import Fraction
from functools import cache, lru_cache

import numpy as np

from ...ozaki.moduli import int_to_limbs
from ...ozaki.residue_system import FP8_DIGIT_MAX, FP8_EXACT_BITS, ResidueSystem
from ...ozaki.scaling import (
    BOUND_MANTISSA_BITS,
    FRACTION_BITS,
    MIN_TERM_SHIFT,
    NEAREST_MIN,
    ROUNDINGS,
    ZERO_ROW_EXP,
)

__all__ = [
    "DIGIT_BITS",
    "FP8_MAX_DIGITS",
    "FP8_TILE_K",
    "FP8_TILE_M",
    "FP8_TILE_N",
    "NO_MACROS",
    "RAW_SUM_BITS",
    "SMALL_COMPLEX_SLICE_COLUMNS",
    "SMALL_COMPLEX_SLICE_THREADS",
    "SMALL_COMPLEX_TILES_PER_BLOCK",
    "SMALL_PRODUCT_K",
    "SMALL_PRODUCT_STATIC_SHARED",
    "SMALL_PRODUCT_THREADS",
    "SMALL_PRODUCT_TILE",
    "SMALL_SLICE_BYTES",
    "SMALL_SLICE_THREADS",
    "STATS_CACHED",
    "Macros",
    "fp8_k_block",
    "fp8_macros",
    "fp8_pad_k",
    "fp8_phase_b_macros",
    "gaussian_weights",
    "moduli_macros",
    "phase_b_macros",
    "raw_sums_fit",
    "rounding_macros",
    "scaling_macros",
    "small_complex_slice_shared",
    "small_product_chunk",
    "small_product_macros",
    "weight_quads",
    "weight_quads_macros",
]

#: digit width of the GPU Kulisch accumulator (base 2**31: a weight digit is a signed
#: 32-bit multiplier, so one IMAD.WIDE adds a residue's share to a 64-bit digit sum)
DIGIT_BITS = 31

#: the longest k of the fused small-product kernel (``kernels/gemm/small_product.cu``:
#: ``OZ_SP_K``, two mma k-steps)
SMALL_PRODUCT_K = 64
#: that kernel's block: ``SMALL_PRODUCT_TILE`` x ``SMALL_PRODUCT_TILE`` outputs
#: (``OZ_SP_TILE``), ``SMALL_PRODUCT_THREADS`` threads per residue plane, and its static
#: shared bytes (the table of the tile's 128 row shifts)
SMALL_PRODUCT_TILE = 64
SMALL_PRODUCT_THREADS = 256
SMALL_PRODUCT_STATIC_SHARED = 2 * SMALL_PRODUCT_TILE * 4
#: shared bytes per modulus of that kernel, per residue plane: the INT8 residues of the
#: tile's A rows and Bt rows (``SMALL_PRODUCT_K`` each), and the block's reduced sums
_SP_RESIDUE_BYTES = 2 * SMALL_PRODUCT_TILE * SMALL_PRODUCT_K
_SP_SUM_BYTES = SMALL_PRODUCT_TILE * SMALL_PRODUCT_TILE

#: the FP8 Phase A kernel's block tile (``kernels/gemm/fp8_phase_a.cu``: 8 warps, 2 x 4, of
#: 32 x 16 outputs) and its k-step; FP8 residue planes are padded to a multiple of the k-step
FP8_TILE_M = 64
FP8_TILE_N = 64
FP8_TILE_K = 32
#: digits per modulus the FP8 kernels take (moduli up to s**3: six digit products, three
#: FP32 accumulator sets per thread)
FP8_MAX_DIGITS = 3


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
        """Union; ``other`` wins on a shared name (as for ``dict``). Built once per pair
        of operands (the launch paths form the same unions on every call)."""
        if not isinstance(other, Mapping):
            return NotImplemented
        return _union(self, _pairs(other))

    def __ror__(self, other: Mapping[str, str]) -> Macros:
        if not isinstance(other, Mapping):
            return NotImplemented
        return _union_under(self, _pairs(other))

    def __repr__(self) -> str:
        return f"Macros({self._map!r})"


def _pairs(macros: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """``(name, value)`` pairs of a mapping, sorted by name (a hashable key)."""
    if isinstance(macros, Macros):
        return macros.pairs
    pairs = tuple(sorted((str(name), str(value)) for name, value in macros.items()))
    if len({name for name, _ in pairs}) != len(pairs):
        raise ValueError("a macro is defined twice")
    return pairs


@lru_cache(maxsize=4096)
def _union(base: Macros, extra: tuple[tuple[str, str], ...]) -> Macros:
    """``base`` with the pairs ``extra`` defined over it."""
    return Macros({**base._map, **dict(extra)})


@lru_cache(maxsize=1024)
def _union_under(base: Macros, extra: tuple[tuple[str, str], ...]) -> Macros:
    """The pairs ``extra`` with ``base`` defined over them."""
    return Macros({**dict(extra), **base._map})


#: the empty set (kernels that need no specialization, e.g. the bench probes)
NO_MACROS = Macros()


#: values per thread ``oz_row_stats_cached`` (``gemm/scaling.cu``) holds in registers: the
#: engine sends it rows of at most this many values per thread
STATS_CACHED = 16


@cache
def scaling_macros() -> Macros:
    """Constants of the integer scaling rules (ozfft.ozaki.scaling) and the statistics
    kernel's register row (:data:`STATS_CACHED`)."""
    return Macros(
        {
            "OZ_BOUND_MANTISSA_BITS": str(BOUND_MANTISSA_BITS),
            "OZ_FRACTION_BITS": str(FRACTION_BITS),
            "OZ_ZERO_ROW_EXP": f"({ZERO_ROW_EXP})",
            "OZ_MIN_TERM_SHIFT": f"({MIN_TERM_SHIFT})",
            "OZ_STATS_CACHED": str(STATS_CACHED),
        }
    )


@cache
def rounding_macros(rounding: str) -> Macros:
    """The residue kernels' rule for the scaled integers (``oz_scaled_integer`` in
    ``common/ozaki_common.cuh``): nothing for ``"trunc"``, ``OZ_NEAREST`` and its
    threshold ``OZ_NEAREST_MIN`` for ``"nearest"`` (:func:`ozfft.ozaki.scaling.scaled_integers`)."""
    if rounding not in ROUNDINGS:
        raise ValueError(f"rounding is one of {ROUNDINGS}, not {rounding!r}")
    if rounding == "trunc":
        return NO_MACROS
    return Macros({"OZ_NEAREST": "1", "OZ_NEAREST_MIN": f"{float(NEAREST_MIN)!r}"})


def _join(values: Iterable[object]) -> str:
    return ",".join(str(v) for v in values)


def moduli_macros(moduli: ResidueSystem, *, with_limbs: bool) -> Macros:
    """Moduli, ``2**24``/``2**48 mod p`` (and ``2**40 mod p`` for moduli up to 256), a
    Gaussian system's roots and inverses
    (``OZ_GAUSSIAN``), and (Phase B, ``with_limbs``) the CRT constants in base-``2**31``
    digits.

    Cached on the moduli (equal sets give the same object) and the flag."""
    return _moduli_macros(moduli, with_limbs)


@cache
def _moduli_macros(moduli: ResidueSystem, with_limbs: bool) -> Macros:
    macros = {
        "OZ_NUM_MODULI": str(moduli.count),
        "OZ_MODULI": _join(moduli.moduli),
        "OZ_POW24": _join(f"{pow(2, 24, p)}.0" for p in moduli.moduli),
        "OZ_POW48": _join(f"{pow(2, 48, p)}.0" for p in moduli.moduli),
    }
    if max(moduli.moduli) <= 256:  # INT8 moduli: two-digit residues (oz_residue of OzSplit40)
        macros["OZ_POW40"] = _join(pow(2, 40, p) for p in moduli.moduli)
    if moduli.gaussian:
        roots = moduli.roots
        macros |= {
            "OZ_GAUSSIAN": "1",
            "OZ_GAUSS_ROOT": _join(f"({j})" for j, _, _ in roots),
            "OZ_GAUSS_INV2": _join(inv2 for _, inv2, _ in roots),
            "OZ_GAUSS_INV2J": _join(inv2j for _, _, inv2j in roots),
        }
    if with_limbs:
        macros |= _crt_macros(moduli)
    return Macros(macros)


def _crt_macros(moduli: ResidueSystem) -> dict[str, str]:
    """Phase B's CRT constants (``kernels/common/ozaki_common.cuh``, "CRT reconstruction"):
    ``P`` and the weights ``W_i`` as ``OZ_DIGITS`` base-``2**31`` digits (each fits a
    signed 32-bit multiplier); on a Gaussian system also ``W_i 2**-1`` and ``W_i
    (2j)**-1 mod P``, which take a modulus' Re and Im straight from its two products;
    ``2**16 mod p_i`` for the partial reductions; ``OZ_QUOTIENT_DIGITS``, the top digit
    sums the quotient estimate reads (:func:`_quotient_digits`), and ``2**(31 t) / P``, ``t``
    the digits below them; and ``floor(P / 2 / B)``, ``B = 2**(31 (D - 2))``, below
    which the top two digits of a remainder prove it inside ``(-P/2, P/2)``."""
    product = moduli.product
    digits = -(-product.bit_length() // DIGIT_BITS)

    def table(values: Iterable[int]) -> str:
        return _join(d for v in values for d in int_to_limbs(v, DIGIT_BITS, digits))

    used = _quotient_digits(product, digits)
    dropped = DIGIT_BITS * (digits - used)  # the digits below the top `used`
    macros = {
        "OZ_DIGITS": str(digits),
        "OZ_MAX_MODULUS": str(max(moduli.moduli)),
        "OZ_POW16": _join(pow(2, 16, m) for m in moduli.moduli),
        "OZ_P_DIGITS": table([product]),
        "OZ_WEIGHT_DIGITS": table(moduli.weights),
        "OZ_QUOTIENT_DIGITS": str(used),
        "OZ_INV_P_TOP": (2.0**dropped / product).hex(),
        "OZ_HALF_P_TOP_TWO": f"{(product // 2) >> (DIGIT_BITS * max(0, digits - 2))}LL",
    }
    if moduli.gaussian:
        weights_re, weights_im = gaussian_weights(moduli)
        macros |= {
            "OZ_WEIGHT_RE_DIGITS": table(weights_re),
            "OZ_WEIGHT_IM_DIGITS": table(weights_im),
        }
    return macros


def _quotient_digits(product: int, digits: int) -> int:
    """How many top digit sums the CRT finish's quotient estimate reads (``oz_top_digits``):
    the fewest, at most three, whose dropped digits (each sum below ``2**62``) move ``X /
    P`` by at most ``2**-21``, so that with the sum's rounding the estimate stays within the
    ``2**-19`` that ``oz_crt_finish`` allows. Fewer sums, fewer of the slow 64-bit integer
    conversions (15 INT8 moduli: two of four)."""
    for used in range(1, min(3, digits) + 1):
        dropped = sum(Fraction(2 ** (62 + DIGIT_BITS * lv), product) for lv in range(digits - used))
        if dropped <= Fraction(1, 2**21):
            return used
    return min(3, digits)


def gaussian_weights(moduli: ResidueSystem) -> tuple[list[int], list[int]]:
    """A Gaussian system's weights of Re and Im in ``[0, P)``: ``W_i 2**-1`` and ``W_i
    (2j)**-1 mod P``, so that ``Re C = sum_i (C+ + C-)_i W_i 2**-1`` and ``Im C = sum_i
    (C+ - C-)_i W_i (2j)**-1 (mod P)`` (docs/numerics.md, "Complex products on Gaussian
    moduli")."""
    product, pairs = moduli.product, list(zip(moduli.weights, moduli.roots, strict=True))
    weights_re = [w * inv2 % product for w, (_, inv2, _) in pairs]
    weights_im = [w * inv2j % product for w, (_, _, inv2j) in pairs]
    return weights_re, weights_im


#: Phase B takes INT32 sums below ``2**RAW_SUM_BITS`` in magnitude as they are (the bound
#: of its partial reductions: ``oz_partial_residue`` in ``common/ozaki_common.cuh``)
RAW_SUM_BITS = 24


def raw_sums_fit(kp: int, moduli: ResidueSystem) -> bool:
    """Whether Phase A's INT32 sums over ``kp`` products of symmetric residues (at most
    ``p/2`` each) stay below ``2**RAW_SUM_BITS``: ``kp (p_max/2)**2 < 2**24`` (INT8
    moduli: ``kp < 1024``), so that Phase B needs no partial reduction."""
    half = max(moduli.moduli) // 2
    return max(moduli.moduli) <= 256 and kp * half * half < 2**RAW_SUM_BITS


def phase_b_macros(
    moduli: ResidueSystem,
    *,
    out_float: bool,
    raw_sums: bool = False,
    byte_planes: bool = False,
    dp4a_weights: bool = False,
) -> Macros:
    """Macros of ``gemm/phase_b.cu``: :func:`moduli_macros` with limbs, plus
    ``OZ_OUT_FLOAT`` when the output is binary32, ``OZ_RAW_SUMS`` when every value it
    reads is below ``2**RAW_SUM_BITS`` (:func:`raw_sums_fit`, or sums reduced to
    ``[0, p)``: so always with ``byte_planes``), ``OZ_PLANES_U8`` when the planes hold
    residues in ``[0, p)`` as bytes (``gemm/modp_igemm.cu``) and, with ``dp4a_weights``
    (byte planes of real products, or of complex products on a Gaussian system), the
    weights' bytes of :func:`weight_quads_macros` (cached like the others)."""
    if dp4a_weights and not byte_planes:
        raise ValueError("the dp4a weighting reads byte planes")
    return _phase_b_macros(moduli, out_float, raw_sums or byte_planes, byte_planes, dp4a_weights)


@cache
def _phase_b_macros(
    moduli: ResidueSystem,
    out_float: bool,
    raw: bool,
    byte_planes: bool,
    dp4a_weights: bool = False,
) -> Macros:
    macros = _moduli_macros(moduli, True)
    if out_float:
        macros |= {"OZ_OUT_FLOAT": "1"}
    if byte_planes:
        macros |= {"OZ_PLANES_U8": "1"}
    if dp4a_weights:
        macros |= weight_quads_macros(moduli)
    return macros | {"OZ_RAW_SUMS": "1"} if raw else macros


def weight_quads(
    moduli: ResidueSystem, weights: Sequence[int] | None = None
) -> tuple[int, list[int]]:
    """The CRT weights ``W_i`` (in ``[0, P)``; ``weights`` where given, else the system's
    own) as base-256 digits, four moduli to a word: ``(D8, quads)`` with ``D8 =
    ceil(bits(P) / 8)`` and ``quads[g D8 + j]`` holding byte ``j`` of ``W_{4g+m}`` in its
    byte ``m`` (0 past the last modulus). With the residues of four moduli in the bytes of
    a word, one ``dp4a`` adds their share of byte digit ``j`` (``kernels/gemm/phase_b.cu``,
    ``OZ_PB_DP4A``)."""
    d8 = -(-moduli.product.bit_length() // 8)
    digits = [int_to_limbs(w, 8, d8) for w in (moduli.weights if weights is None else weights)]
    digits += [[0] * d8] * (-len(digits) % 4)
    quads = [
        sum(digits[g + m][j] << (8 * m) for m in range(4))
        for g in range(0, len(digits), 4)
        for j in range(d8)
    ]
    return d8, quads


def weight_quads_macros(moduli: ResidueSystem) -> dict[str, str]:
    """``OZ_WEIGHT_BYTES`` and ``OZ_WEIGHT_QUADS`` (:func:`weight_quads`); on a Gaussian
    system ``OZ_WEIGHT_RE_QUADS`` and ``OZ_WEIGHT_IM_QUADS`` instead, the quads of
    :func:`gaussian_weights`."""

    def spelled(quads: list[int]) -> str:
        return _join(f"0x{q:08x}u" for q in quads)

    if moduli.gaussian:
        weights_re, weights_im = gaussian_weights(moduli)
        d8, re = weight_quads(moduli, weights_re)
        _, im = weight_quads(moduli, weights_im)
        return {
            "OZ_WEIGHT_BYTES": str(d8),
            "OZ_WEIGHT_RE_QUADS": spelled(re),
            "OZ_WEIGHT_IM_QUADS": spelled(im),
        }
    d8, quads = weight_quads(moduli)
    return {"OZ_WEIGHT_BYTES": str(d8), "OZ_WEIGHT_QUADS": spelled(quads)}


# -- the FP8 Phase A (kernels/gemm/fp8_residues.cu, fp8_phase_a.cu) ----------------------


def fp8_pad_k(k: int) -> int:
    """Inner dimension of the FP8 digit planes: padded to a multiple of the kernel's k-step
    (the padding holds zero digits)."""
    return -(-k // FP8_TILE_K) * FP8_TILE_K


def fp8_k_block(system: ResidueSystem) -> int:
    """k-indices whose digit products one FP32 accumulator sums before it is turned into an
    exact integer and reduced mod ``m``: the longest multiple of :data:`FP8_TILE_K` not past
    :meth:`ResidueSystem.max_k` (``digit_max**2 * d * k < 2**exact_bits`` for the longest
    digit count ``d``: every partial sum of every ``P_t`` stays exact)."""
    block = system.max_k() // FP8_TILE_K * FP8_TILE_K
    if block < FP8_TILE_K:
        raise ValueError(f"the FP8 system's k-block {system.max_k()} is below {FP8_TILE_K}")
    return block


@cache
def _check_fp8(system: ResidueSystem) -> None:
    """What the FP8 kernels assume of a system, each a clear error (checked once per
    system)."""
    if system.phase_a != "fp8":
        raise ValueError(f"not an FP8 residue system: {system.phase_a!r}")
    if system.digit_max > FP8_DIGIT_MAX:
        raise ValueError(f"e4m3 holds digits up to {FP8_DIGIT_MAX}, not {system.digit_max}")
    if system.exact_bits > FP8_EXACT_BITS:
        raise ValueError(
            f"the FP32 accumulators keep {FP8_EXACT_BITS} exact bits, not {system.exact_bits}"
        )
    if max(system.digits) > FP8_MAX_DIGITS:
        raise ValueError(f"the FP8 kernels take at most {FP8_MAX_DIGITS} digits per modulus")
    for i, (s, m) in enumerate(zip(system.bases, system.moduli, strict=True)):
        # the lower digits are balanced (|c| <= s // 2); the top one is largest at +-m/2
        if s // 2 > system.digit_max:
            raise ValueError(f"base {s} has digits above {system.digit_max}")
        system.split_array(i, np.array([-(m // 2), m // 2]))  # raises if a digit is too big
    fp8_k_block(system)


def _fp8_moduli_macros(system: ResidueSystem) -> Macros:
    """The system's moduli and ``2**24``/``2**48 mod m_i`` (what ``ozaki_common.cuh``
    reads without limbs), after checking what the FP8 kernels assume."""
    _check_fp8(system)
    return _moduli_macros(system, False)


@cache
def fp8_macros(system: ResidueSystem) -> Macros:
    """Macros of ``gemm/fp8_residues.cu`` and ``gemm/fp8_phase_a.cu`` for an FP8 system:
    its moduli, bases and digit counts, the tile, the digit bound, the accumulator's exact
    bits and the k-block (the kernel re-checks the exactness bound with a static_assert)."""
    return _fp8_moduli_macros(system) | {
        "OZ_FP8_BASES": _join(system.bases),
        "OZ_FP8_DIGITS": _join(system.digits),
        "OZ_FP8_MAX_DIGITS": str(max(system.digits)),
        "OZ_FP8_DIGIT_MAX": str(system.digit_max),
        "OZ_FP8_EXACT_BITS": str(system.exact_bits),
        "OZ_FP8_KBLOCK": str(fp8_k_block(system)),
        "OZ_FP8_BM": str(FP8_TILE_M),
        "OZ_FP8_BN": str(FP8_TILE_N),
        "OZ_FP8_BK": str(FP8_TILE_K),
    }


def fp8_phase_b_macros(system: ResidueSystem, *, out_float: bool) -> Macros:
    """Macros of ``gemm/phase_b.cu`` for an FP8 system: its moduli (up to 32**3), the CRT
    weights and ``P`` in signed base-2**31 digits (:data:`DIGIT_BITS`), plus
    ``OZ_OUT_FLOAT`` for a binary32 output (:func:`phase_b_macros` after the FP8 checks)."""
    _check_fp8(system)
    return _phase_b_macros(system, out_float, False, False)


def small_product_chunk(count: int, planes: int, shared_bytes: int) -> tuple[int, int] | None:
    """``(chunk, bytes)``: the moduli whose residues the small-product kernel holds in
    shared memory at a time (as few chunks as fit, of even size) and the block's dynamic
    shared memory, for ``count`` moduli, ``planes`` residue planes (1 real, 2 Gaussian)
    and ``shared_bytes`` per block; None where the reduced sums alone do not fit."""
    sums = count * planes * _SP_SUM_BYTES
    most = (shared_bytes - sums) // (planes * _SP_RESIDUE_BYTES)
    if most < 1:
        return None
    chunks = -(-count // min(most, count))
    chunk = -(-count // chunks)
    return chunk, sums + chunk * planes * _SP_RESIDUE_BYTES


#: bytes of one slice's digits in the exact-slices small product (``OZ_SP_SLICE_BYTES``:
#: the tile's A rows and Bt rows, ``SMALL_PRODUCT_K`` digits each)
SMALL_SLICE_BYTES = 2 * SMALL_PRODUCT_TILE * SMALL_PRODUCT_K
#: the real slices kernel's blocks (``OZ_SP_SLICE_THREADS``; ``OZ_SP_SLICE_TILES`` = 2 output
#: tiles per warp)
SMALL_SLICE_THREADS = 512
#: the complex slices kernel's blocks (``OZ_SP_CTHREADS``: an m16 row tile and two n8
#: column tiles per warp, both parts; two blocks per SM)
SMALL_COMPLEX_SLICE_THREADS = 256
#: complex output columns of a block of the complex slices kernel (``OZ_SP_CTILE_N``)
SMALL_COMPLEX_SLICE_COLUMNS = 32
#: the complex slices kernel's column tiles per block where a stack has blocks to spare: A's
#: slices are formed once for both (``oz_complex_slices_body``)
SMALL_COMPLEX_TILES_PER_BLOCK = 2


def small_complex_slice_shared(slices: int, out_itemsize: int) -> int:
    """Dynamic shared bytes of the complex slices kernel: its slices, A's region
    (``OZ_SP_CA_SLICE`` a slice: the parts of the tile's 64 A rows, ``SMALL_PRODUCT_K``
    digits each), then B's (``OZ_SP_CB_PLANE``: the parts of its 32 Bt rows), which is at
    least one rounded 64 x 32 tile of ``out_itemsize``-byte outputs: it stages them
    (``oz_sp_round_staged``)."""
    a_region = slices * 2 * SMALL_PRODUCT_TILE * SMALL_PRODUCT_K
    b_region = slices * 2 * SMALL_COMPLEX_SLICE_COLUMNS * SMALL_PRODUCT_K
    staged = SMALL_PRODUCT_TILE * SMALL_COMPLEX_SLICE_COLUMNS * out_itemsize
    return a_region + max(b_region, staged)


#: the most digits of each kernel: a signed 64-bit integer (real), a two-word split of the
#: scaled integer below 2**71 (complex)
_MOST_SLICES = {1: 8, 2: 9}


def small_product_slices(budget_bits: int, parts: int = 1) -> int | None:
    """Signed base-256 digits of the fast-mode scaled integers for the exact-slices small
    product (``OZ_SP_SLICES``) of real (``parts`` 1) or complex (2) operands: fast-mode
    shifts give ``|a'| <= 2**t``, ``t = (L - 1) / 2`` for the CRT budget ``L``
    (``ozfft.ozaki.scaling.fast_shift``; each part of a complex entry), and ``S`` digits in
    ``[-128, 128)`` hold ``-128 (256**S - 1) / 255 .. 127 (256**S - 1) / 255``, so ``S =
    floor((t + 1) / 8) + 1``; None past the kernel's digits (8 real, 9 complex)."""
    slices = ((budget_bits - 1) // 2 + 1) // 8 + 1  # t + 1 = floor((L - 1) / 2) + 1
    return slices if slices <= _MOST_SLICES[parts] else None


def small_product_macros(
    moduli: ResidueSystem,
    *,
    out_float: bool,
    rounding: str,
    chunk: int,
    shifts: bool = False,
    packed: bool = False,
    slices: int = 0,
    b_columns: bool = False,
) -> Macros:
    """Macros of ``gemm/small_product.cu``: :func:`phase_b_macros` (the moduli, the CRT
    digits, the output format), :func:`rounding_macros` and ``OZ_SP_CHUNK``; with
    ``shifts``, ``OZ_SP_SHIFTS`` and :func:`scaling_macros` (the kernel computes the
    fast-mode shifts itself); with ``packed``, ``OZ_SP_PACKED`` (several small items per
    block, the kernel's ``span_shift`` read; without it one item per block, its index
    arithmetic constant); with ``slices``, ``OZ_SP_SLICES`` (exact slices; for a Gaussian
    system also ``OZ_SP_COMPLEX_SLICES``: the complex slices kernel); with ``b_columns``
    (slices, not ``packed``), ``OZ_SP_B_COLUMNS``: the kernel reads B itself, not Bt's
    rows."""
    if b_columns and (not slices or packed):
        raise ValueError("only the slices kernels, one item a block, read B in place")
    return _small_product_macros(
        moduli, out_float, rounding, chunk, shifts, packed, slices, b_columns
    )


@cache
def _small_product_macros(
    moduli,
    out_float: bool,
    rounding: str,
    chunk: int,
    shifts: bool,
    packed: bool,
    slices: int,
    b_columns: bool,
):
    macros = (
        phase_b_macros(moduli, out_float=out_float)
        | rounding_macros(rounding)
        | {"OZ_SP_CHUNK": str(chunk)}
    )
    if packed:
        macros = macros | {"OZ_SP_PACKED": "1"}
    if slices:
        macros = macros | {"OZ_SP_SLICES": str(slices)}
        if moduli.gaussian:
            macros = macros | {"OZ_SP_COMPLEX_SLICES": "1"}
    if b_columns:
        macros = macros | {"OZ_SP_B_COLUMNS": "1"}
    return macros | scaling_macros() | {"OZ_SP_SHIFTS": "1"} if shifts else macros
