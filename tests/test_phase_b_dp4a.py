"""Real Phase B's weighting on ``dp4a`` (``OZ_PB_DP4A`` in kernels/gemm/phase_b.cu),
emulated on the host in exact integers.

The kernel transposes the byte-plane words of four moduli (four outputs each) into words
of one output's four residues (``oz_pb_transpose``, eight ``__byte_perm``), adds
``dp4a(q, quad, s_j)`` for every byte digit ``j`` of the weights
(:func:`ozfft.engines.cuda.constants.weight_quads`) and folds the sums into base-2**31
digit sums two byte digits at a time (``oz_pb_fold``): ``acc[8j // 31] += (s_j + 256
s_{j+1}) << (8j % 31)`` for even ``j``. The reference is ``X = sum_l r_l W_l``
as a Python integer; the bounds are the ones the kernel's finish assumes (every digit
sum below 2**62, every byte-digit sum inside 32 bits).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from ozfft.engines.cuda.constants import (
    DIGIT_BITS,
    phase_b_macros,
    weight_quads,
    weight_quads_macros,
)
from ozfft.ozaki.moduli import moduli_set
from ozfft.scheme.gemm import gaussian_system_for

PHASE_B_CU = Path(__file__).resolve().parents[1] / "kernels" / "gemm" / "phase_b.cu"


def _byte_perm(x: int, y: int, selector: int) -> int:
    """CUDA's ``__byte_perm(x, y, s)`` for selectors whose nibbles are 0..7: byte ``i``
    of the result is byte ``(s >> 4i) & 7`` of the eight bytes ``y:x``."""
    pool = x | (y << 32)
    return sum(((pool >> (8 * ((selector >> (4 * i)) & 7))) & 255) << (8 * i) for i in range(4))


def _transpose_from_source() -> Callable[[list[int]], list[int]]:
    """``oz_pb_transpose`` as the kernel spells it: its eight ``__byte_perm`` calls read
    from the source and run by :func:`_byte_perm`."""
    text = PHASE_B_CU.read_text()
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


def _systems():
    for count in range(2, 21):
        yield pytest.param(moduli_set(count), id=f"int8-{count}")
    for count in (8, 15, 16, 19):  # Gaussian systems: their weights are built the same way
        yield pytest.param(gaussian_system_for(moduli_set(count)), id=f"gaussian-{count}")


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
            acc = [0] * digits  # oz_pb_fold: two byte digits a 32-bit word, then 64-bit adds
            for j in range(0, d8, 2):
                word = s[j] + (s[j + 1] << 8 if j + 1 < d8 else 0)
                assert word < 2**30
                acc[8 * j // 31] += word << (8 * j % 31)
            assert max(acc) < 2**62
            x = sum(a << (DIGIT_BITS * d) for d, a in enumerate(acc))
            assert x == sum(r * w for r, w in zip(residues, moduli.weights, strict=True))


def test_weight_quads_macros_spell_the_table():
    moduli = moduli_set(15)
    macros = weight_quads_macros(moduli)
    d8, quads = weight_quads(moduli)
    assert macros["OZ_WEIGHT_BYTES"] == str(d8) == "15"  # P of 15 moduli: 113 < bits <= 120
    assert [int(v.rstrip("u"), 16) for v in macros["OZ_WEIGHT_QUADS"].split(",")] == quads
    # byte j of W_i sits in byte i % 4 of quad (i // 4, j)
    for i, w in enumerate(moduli.weights):
        for j in range(d8):
            assert (quads[(i // 4) * d8 + j] >> (8 * (i % 4))) & 255 == (w >> (8 * j)) & 255


def test_phase_b_macros_carry_the_weight_bytes_only_when_asked():
    moduli = moduli_set(15)
    plain = phase_b_macros(moduli, out_float=False, byte_planes=True)
    dp4a = phase_b_macros(moduli, out_float=False, byte_planes=True, dp4a_weights=True)
    assert "OZ_WEIGHT_QUADS" not in plain
    assert dict(dp4a) == dict(plain) | weight_quads_macros(moduli)
    with pytest.raises(ValueError, match="byte planes"):
        phase_b_macros(moduli, out_float=False, dp4a_weights=True)
