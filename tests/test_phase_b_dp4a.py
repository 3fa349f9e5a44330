"""Phase B's weighting on ``dp4a`` (``OZ_PB_DP4A`` in kernels/gemm/phase_b.cu, its math in
kernels/gemm/phase_b_bytes.cuh), real and on Gaussian systems, emulated in Python in exact
integers with the kernel's byte selectors read from the source (needs no compiler; the
header itself runs on the host in tests/test_kernel_math.py).

The kernel transposes the byte-plane words of four moduli (four outputs each) into words
of one output's four residues (``oz_pb_transpose``, eight ``__byte_perm``), adds
``dp4a(q, quad, s_j)`` for every byte digit ``j`` of the weights
(:func:`ozfft.engines.cuda.constants.weight_quads`) and folds the sums into base-2**31
digit sums two byte digits at a time (``oz_pb_fold``): ``acc[8j // 31] += (s_j + 256
s_{j+1}) << (8j % 31)`` for even ``j``. The reference is ``X = sum_l r_l W_l``
as a Python integer; the bounds are the ones the kernel's finish assumes (every digit
sum below 2**62, every byte-digit sum inside 32 bits).

On a Gaussian system the kernel first reduces each modulus' ``t1 + t2`` and ``t1 - t2``
into ``[0, p)`` in 16-bit lanes (``oz_pb_gaussian_bytes``: ``VIADDMNMX.U16x2``, whose
lane adds wrap like PTX's ``add.u16x2``), then weights them with the quads of Re's and
Im's weights (:func:`ozfft.engines.cuda.constants.gaussian_weights`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from ozfft.engines.cuda.constants import (
    DIGIT_BITS,
    gaussian_weights,
    phase_b_macros,
    weight_quads,
    weight_quads_macros,
)
from ozfft.ozaki.residue_system import gaussian_system, int8_system
from ozfft.scheme.gemm import gaussian_system_for

PHASE_B_BYTES = Path(__file__).resolve().parents[1] / "kernels" / "gemm" / "phase_b_bytes.cuh"


def _byte_perm(x: int, y: int, selector: int) -> int:
    """CUDA's ``__byte_perm(x, y, s)`` for selectors whose nibbles are 0..7: byte ``i``
    of the result is byte ``(s >> 4i) & 7`` of the eight bytes ``y:x``."""
    pool = x | (y << 32)
    return sum(((pool >> (8 * ((selector >> (4 * i)) & 7))) & 255) << (8 * i) for i in range(4))


def _transpose_from_source() -> Callable[[list[int]], list[int]]:
    """``oz_pb_transpose`` as the kernel spells it: its eight ``__byte_perm`` calls read
    from the source and run by :func:`_byte_perm`."""
    text = PHASE_B_BYTES.read_text()
    body = text[text.index("void oz_pb_transpose") :]
    body = body[: body.index("\n}\n")]
    name = r"(\w+(?:\[\d\])?)"
    calls = re.findall(rf"{name} = __byte_perm\({name}, {name}, (0x[0-9a-f]+)\)", body)
    assert len(calls) == 8, calls
    for *_, sel in calls:  # plain selectors: no sign-replicating nibble (bit 3)
        assert all((int(sel, 16) >> (4 * i)) & 8 == 0 for i in range(4)), sel

    def transpose(w: list[int]) -> list[int]:
        env = {f"w[{m}]": w[m] for m in range(4)}
        for target, x, y, sel in calls:
            env[target] = _byte_perm(env[x], env[y], int(sel, 16))
        return [env[f"q[{e}]"] for e in range(4)]

    return transpose


def test_transpose_of_the_kernel_moves_byte_e_of_word_m_to_byte_m_of_word_e(rng):
    transpose = _transpose_from_source()
    for _ in range(200):
        w = [int(v) for v in rng.integers(0, 2**32, 4, dtype=np.uint64)]
        q = transpose(w)
        for e in range(4):
            for m in range(4):
                assert (q[e] >> (8 * m)) & 255 == (w[m] >> (8 * e)) & 255


def _dp4a(a: int, b: int, c: int) -> int:
    return c + sum(((a >> (8 * i)) & 255) * ((b >> (8 * i)) & 255) for i in range(4))


def _fold(s: list[int], digits: int) -> int:
    """``oz_pb_fold``: byte-digit sums ``s`` two to a 32-bit word, each word added at bit
    ``8j`` into base-2**31 digit sums (asserting the kernel's bounds); returns their value."""
    acc = [0] * digits
    for j in range(0, len(s), 2):
        word = s[j] + (s[j + 1] << 8 if j + 1 < len(s) else 0)
        assert word < 2**30
        acc[8 * j // 31] += word << (8 * j % 31)
    assert max(acc) < 2**62
    return sum(a << (DIGIT_BITS * d) for d, a in enumerate(acc))


def _systems():
    for count in range(2, 21):
        yield pytest.param(int8_system(count), id=f"int8-{count}")
    for count in (8, 15, 16, 19):  # Gaussian systems: their weights are built the same way
        yield pytest.param(gaussian_system_for(int8_system(count)), id=f"gaussian-{count}")


@pytest.mark.parametrize("moduli", list(_systems()))
def test_dp4a_digit_sums_rebuild_the_crt_sum(moduli, rng):
    count = moduli.count
    d8, quads = weight_quads(moduli)
    digits = -(-moduli.product.bit_length() // DIGIT_BITS)
    groups = -(-count // 4)
    assert len(quads) == groups * d8
    assert 8 * (d8 - 1) < DIGIT_BITS * digits  # the kernel's static_assert
    transpose = _transpose_from_source()
    cases = [[p - 1 for p in moduli.moduli] for _ in range(4)]  # the largest sums
    cases += [[0] * count] * 4
    cases += [[int(rng.integers(0, p)) for p in moduli.moduli] for _ in range(40)]
    for first in range(0, len(cases), 4):
        outputs = cases[first : first + 4]
        # plane words: modulus l's residues of the four outputs, one byte each
        words = [sum(outputs[e][i] << (8 * e) for e in range(4)) for i in range(count)]
        words += [0] * (4 * groups - count)
        q = [transpose(words[4 * g : 4 * g + 4]) for g in range(groups)]
        for e, residues in enumerate(outputs):
            s = [0] * d8
            for g in range(groups):
                for j in range(d8):
                    s[j] = _dp4a(q[g][e], quads[g * d8 + j], s[j])
            assert max(s) < 2**32
            x = _fold(s, digits)
            assert x == sum(r * w for r, w in zip(residues, moduli.weights, strict=True))


def test_weight_quads_macros_spell_the_table():
    moduli = int8_system(15)
    macros = weight_quads_macros(moduli)
    d8, quads = weight_quads(moduli)
    assert macros["OZ_WEIGHT_BYTES"] == str(d8) == "15"  # P of 15 moduli: 113 < bits <= 120
    assert [int(v.rstrip("u"), 16) for v in macros["OZ_WEIGHT_QUADS"].split(",")] == quads
    # byte j of W_i sits in byte i % 4 of quad (i // 4, j)
    for i, w in enumerate(moduli.weights):
        for j in range(d8):
            assert (quads[(i // 4) * d8 + j] >> (8 * (i % 4))) & 255 == (w >> (8 * j)) & 255


def test_phase_b_macros_carry_the_weight_bytes_only_when_asked():
    moduli = int8_system(15)
    plain = phase_b_macros(moduli, out_float=False, byte_planes=True)
    dp4a = phase_b_macros(moduli, out_float=False, byte_planes=True, dp4a_weights=True)
    assert "OZ_WEIGHT_QUADS" not in plain
    assert dict(dp4a) == dict(plain) | weight_quads_macros(moduli)
    with pytest.raises(ValueError, match="byte planes"):
        phase_b_macros(moduli, out_float=False, dp4a_weights=True)


# -- complex products on Gaussian moduli ---------------------------------------------------


def _viaddmin_u16x2(a, b, c):
    """``__viaddmin_u16x2``: per 16-bit lane ``min((a + b) mod 2**16, c)`` (numpy arrays)."""
    out = 0
    for shift in (0, 16):
        a_h, b_h, c_h = ((x >> shift) & 0xFFFF for x in (a, b, c))
        out = out | (np.minimum((a_h + b_h) & 0xFFFF, c_h) << shift)
    return out


def _gaussian_bytes_from_source() -> Callable:
    """``oz_pb_gaussian_bytes`` as the kernel spells it: the lane mask and the two
    ``__byte_perm`` selectors read from the source, the 32-bit arithmetic in uint64
    arrays (wrapped to 32 bits)."""
    text = PHASE_B_BYTES.read_text()
    body = text[text.index("void oz_pb_gaussian_bytes") :]
    body = body[: body.index("\n}\n")]
    assert "lanes = 0x00FF00FFu" in body
    selectors = re.findall(r"0x[0-9a-f]{4}\)", body)
    assert len(selectors) == 2 and len(set(selectors)) == 1, selectors
    sel = int(selectors[0][:-1], 16)
    mask32, lanes = 2**32 - 1, 0x00FF00FF

    def reduce(w1, w2, p):
        p2, minus_p = p * 0x00010001, (0x10000 - p) * 0x00010001
        e1, o1, e2, o2 = w1 & lanes, (w1 >> 8) & lanes, w2 & lanes, (w2 >> 8) & lanes
        se, so = (e1 + e2) & mask32, (o1 + o2) & mask32
        de, do = (e1 + p2 - e2) & mask32, (o1 + p2 - o2) & mask32

        def packed(even, odd):
            pool = [_viaddmin_u16x2(even, minus_p, even), _viaddmin_u16x2(odd, minus_p, odd)]
            out = 0
            for i in range(4):
                k = (sel >> (4 * i)) & 7
                out = out | (((pool[k // 4] >> (8 * (k % 4))) & 255) << (8 * i))
            return out

        return packed(se, so), packed(de, do)

    return reduce


def test_gaussian_bytes_reduce_every_pair_of_residues():
    """Every modulus of the Gaussian table and every pair ``t1, t2`` in ``[0, p)``, four
    outputs a word: bytes ``(t1 + t2) mod p`` and ``(t1 - t2) mod p``."""
    reduce = _gaussian_bytes_from_source()
    for p in gaussian_system(150).moduli:  # (the whole table)
        t1, t2 = (v.ravel().astype(np.uint64) for v in np.meshgrid(np.arange(p), np.arange(p)))
        # output e of a word takes the pairs rotated by e, so every lane sees every pair
        words = [sum(np.roll(t, e) << np.uint64(8 * e) for e in range(4)) for t in (t1, t2)]
        re_words, im_words = reduce(words[0], words[1], p)
        for e in range(4):
            a, b = np.roll(t1, e).astype(np.int64), np.roll(t2, e).astype(np.int64)
            sh = np.uint64(8 * e)
            np.testing.assert_array_equal((re_words >> sh) & np.uint64(255), (a + b) % p)
            np.testing.assert_array_equal((im_words >> sh) & np.uint64(255), (a - b) % p)


@pytest.mark.parametrize("count", [8, 14, 15, 16, 18, 19])
def test_gaussian_dp4a_sums_rebuild_re_and_im(count, rng):
    """The Gaussian kernel's path on the host: plane words of ``t1`` and ``t2``, their
    bytes reduced, transposed, weighted with the Re and Im quads and folded; the digit
    sums are ``sum ((t1 +- t2) mod p) W``, congruent mod P to the ``t1 +- t2`` sums of
    ``oz_crt_add_complex_terms``, within the finish's bounds."""
    system = gaussian_system_for(int8_system(count))
    moduli, n = system.moduli, system.count
    weights_re, weights_im = gaussian_weights(system)
    macros = weight_quads_macros(system)
    assert "OZ_WEIGHT_QUADS" not in macros
    d8 = int(macros["OZ_WEIGHT_BYTES"])

    def spelled(name: str) -> list[int]:
        return [int(v.rstrip("u"), 16) for v in macros[name].split(",")]

    quads_re, quads_im = spelled("OZ_WEIGHT_RE_QUADS"), spelled("OZ_WEIGHT_IM_QUADS")
    for quads, weights in ((quads_re, weights_re), (quads_im, weights_im)):
        for i, w in enumerate(weights):  # byte j of W_i in byte i % 4 of quad (i // 4, j)
            for j in range(d8):
                assert (quads[(i // 4) * d8 + j] >> (8 * (i % 4))) & 255 == (w >> (8 * j)) & 255
    digits = -(-system.product.bit_length() // DIGIT_BITS)
    groups = -(-n // 4)
    transpose, reduce = _transpose_from_source(), _gaussian_bytes_from_source()
    top = [p - 1 for p in moduli]
    cases = [(top, top), (top, [0] * n), ([0] * n, top), ([0] * n, [0] * n)]
    cases += [([int(rng.integers(0, p)) for p in moduli], [int(rng.integers(0, p)) for p in moduli])
              for _ in range(40)]  # fmt: skip
    for first in range(0, len(cases), 4):
        outputs = cases[first : first + 4]
        re_words, im_words = [], []
        for i, p in enumerate(moduli):  # plane words of modulus i: t1's, then t2's
            w1, w2 = (sum(outputs[e][part][i] << (8 * e) for e in range(4)) for part in (0, 1))
            r, m = reduce(np.uint64(w1), np.uint64(w2), p)
            re_words.append(int(r))
            im_words.append(int(m))
        for words, quads, weights, sign in (
            (re_words, quads_re, weights_re, 1),
            (im_words, quads_im, weights_im, -1),
        ):
            words = words + [0] * (4 * groups - n)
            q = [transpose(words[4 * g : 4 * g + 4]) for g in range(groups)]
            for e, (t1, t2) in enumerate(outputs):
                s = [0] * d8
                for g in range(groups):
                    for j in range(d8):
                        s[j] = _dp4a(q[g][e], quads[g * d8 + j], s[j])
                x = _fold(s, digits)
                terms = [a + sign * b for a, b in zip(t1, t2, strict=True)]
                reduced = [t % p for t, p in zip(terms, moduli, strict=True)]
                assert x == sum(r * w for r, w in zip(reduced, weights, strict=True))
                unreduced = sum(t * w for t, w in zip(terms, weights, strict=True))
                assert (x - unreduced) % system.product == 0


def test_reconstruct_kernel_takes_dp4a_explicitly():
    """The engine asks for the dp4a kernel by argument, not by what the macros carry: with
    the weights' bytes but without ``dp4a`` it builds the ``IMAD.WIDE`` kernel, and ``dp4a``
    without the weights' bytes, with other than four outputs a thread, or for complex
    products off a Gaussian system (real ones on it), whose kernel would build without the
    dp4a weighting, is refused before any kernel is built (so without a GPU too)."""
    from ozfft.engines.cuda import engine

    built = []
    original = engine.get_function
    engine.get_function = lambda source, name, macros: built.append((name, dict(macros)))
    try:
        system = int8_system(15)
        weights = phase_b_macros(system, out_float=False, byte_planes=True, dp4a_weights=True)
        plain = phase_b_macros(system, out_float=False, byte_planes=True)
        engine._reconstruct_kernel(weights, False, 4)
        engine._reconstruct_kernel(weights, False, 4, dp4a=True)
        for macros, vec in ((plain, 4), (weights, 2)):
            with pytest.raises(ValueError, match="four outputs a thread and the weights"):
                engine._reconstruct_kernel(macros, False, vec, dp4a=True)
        gaussian = phase_b_macros(
            gaussian_system_for(system), out_float=False, byte_planes=True, dp4a_weights=True
        )
        for macros, is_complex in ((weights, True), (gaussian, False)):  # the kernel's #if
            with pytest.raises(ValueError, match="real products, or complex ones on a Gaussian"):
                engine._reconstruct_kernel(macros, is_complex, 4, dp4a=True)
    finally:
        engine.get_function = original
    assert [name for name, _ in built] == ["oz_reconstruct_real_vec"] * 2
    assert "OZ_PB_DP4A" not in built[0][1] and built[1][1]["OZ_PB_DP4A"] == "1"


@pytest.mark.parametrize(("count", "used"), [(3, 1), (7, 2), (11, 2), (14, 3), (15, 2), (16, 3)])
def test_quotient_reads_the_fewest_digit_sums_that_keep_its_bound(count, used):
    """``OZ_QUOTIENT_DIGITS``: the finish's quotient estimate reads the fewest top digit sums
    (at most three) whose dropped digits, each below ``2**62``, move ``X / P`` by at most
    ``2**-21``; ``OZ_INV_P_TOP`` scales by the dropped digits' weight."""
    system = int8_system(count)
    macros = phase_b_macros(system, out_float=False)
    digits = int(macros["OZ_DIGITS"])
    assert int(macros["OZ_QUOTIENT_DIGITS"]) == used
    dropped = digits - used
    assert float.fromhex(macros["OZ_INV_P_TOP"]) == 2.0 ** (DIGIT_BITS * dropped) / system.product
    slack = sum(2 ** (62 + DIGIT_BITS * d) for d in range(dropped))
    assert slack * 2**21 <= system.product
    if used > 1:  # one digit fewer would not do
        assert sum(2 ** (62 + DIGIT_BITS * d) for d in range(dropped + 1)) * 2**21 > system.product
