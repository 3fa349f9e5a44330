"""ozfft.matmul follows numpy.matmul's semantics and raises clear, specific errors."""

from __future__ import annotations

import numpy as np
import pytest

import ozfft
from ozfft.reference import phi_matrix

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def _ints(rng, shape, dtype):
    x = rng.integers(-40, 41, shape).astype(np.float64)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.integers(-40, 41, shape)
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "sa, sb",
    [
        ((4,), (4,)),
        ((4,), (4, 3)),
        ((5, 4), (4,)),
        ((5, 4), (4, 3)),
        ((2, 1, 5, 4), (3, 4, 2)),
        ((3, 5, 4), (4, 2)),
        ((1, 4), (4, 1)),
    ],
)
def test_shapes_and_dtypes_follow_numpy(dtype, sa, sb, rng):
    a = _ints(rng, sa, dtype)
    b = _ints(rng, sb, dtype)
    want = np.matmul(a, b)  # exact: small integers
    got = ozfft.matmul(a, b)
    assert got.shape == want.shape
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "da, db",
    [
        (np.float32, np.float64),
        (np.float64, np.complex64),
        (np.float32, np.complex64),
        (np.complex64, np.complex128),
    ],
)
def test_mixed_dtypes_promote_like_numpy(da, db, rng):
    a = _ints(rng, (3, 4), da)
    b = _ints(rng, (4, 2), db)
    got = ozfft.matmul(a, b)
    assert got.dtype == np.result_type(da, db)
    np.testing.assert_array_equal(got, np.matmul(a, b))


def test_batched_equals_slicewise(rng):
    """Each slice of a broadcast batch is the 2-D product of its operands, bit for bit."""
    a = phi_matrix(rng, (2, 1, 6, 9), 1.0)
    b = phi_matrix(rng, (3, 9, 5), 1.0)
    got = ozfft.matmul(a, b, mode="accurate")
    assert got.shape == (2, 3, 6, 5)
    for i in range(2):
        for j in range(3):
            np.testing.assert_array_equal(got[i, j], ozfft.matmul(a[i, 0], b[j], mode="accurate"))


@pytest.mark.parametrize(
    "shape_a, shape_b", [((0, 3), (3, 4)), ((2, 0), (0, 4)), ((0, 2, 3), (3, 1))]
)
def test_empty_operands(shape_a, shape_b):
    a = np.ones(shape_a)
    b = np.ones(shape_b)
    got = ozfft.matmul(a, b)
    np.testing.assert_array_equal(got, np.matmul(a, b))
    assert got.shape == np.matmul(a, b).shape


def test_lists_are_accepted():
    np.testing.assert_array_equal(ozfft.matmul([[1.0, 2.0]], [[3.0], [4.0]]), [[11.0]])


@pytest.mark.parametrize("operand", ["a", "b"])
@pytest.mark.parametrize("bad, kind", [(np.nan, "NaN"), (np.inf, "Inf"), (-np.inf, "Inf")])
def test_non_finite_input_names_operand(operand, bad, kind):
    a = np.ones((3, 3))
    b = np.ones((3, 3))
    (a if operand == "a" else b)[1, 2] = bad
    with pytest.raises(
        ozfft.NonFiniteInputError,
        match=f"operand '{operand}' contains 1 non-finite value\\(s\\) \\({kind}\\)",
    ) as info:
        ozfft.matmul(a, b)
    assert isinstance(info.value, ValueError)
    assert info.value.operand == operand


def test_non_finite_complex_part():
    a = np.ones((2, 2), np.complex128)
    a[0, 0] = complex(1.0, np.nan)
    with pytest.raises(ozfft.NonFiniteInputError, match=r"operand 'a'.*NaN"):
        ozfft.matmul(a, a)


def test_shape_mismatch_like_numpy():
    with pytest.raises(
        ValueError, match=r"mismatch in its core dimension 0.*size 4 is different from 3"
    ):
        ozfft.matmul(np.ones((2, 3)), np.ones((4, 2)))


def test_unbroadcastable_batches():
    with pytest.raises(ValueError, match="broadcast"):
        ozfft.matmul(np.ones((2, 3, 3)), np.ones((4, 3, 3)))


def test_zero_dimensional_operand():
    with pytest.raises(ValueError, match="Input operand 1 does not have enough dimensions"):
        ozfft.matmul(np.ones(3), np.float64(2.0))


@pytest.mark.parametrize("dtype", [np.longdouble, np.clongdouble, object, "U3", "M8[s]"])
def test_unsupported_dtype_is_named(dtype):
    with pytest.raises(
        ozfft.UnsupportedDTypeError, match=r"operand 'b' has unsupported dtype"
    ) as info:
        ozfft.matmul(np.ones((2, 2)), np.zeros((2, 2), dtype=dtype))
    assert isinstance(info.value, TypeError)
    assert str(np.dtype(dtype)) in str(info.value)


@pytest.mark.parametrize(
    "da, db",
    [
        (np.int64, np.int64),
        (np.bool_, np.bool_),
        (np.uint8, np.int16),
        (np.int8, np.float32),
        (np.int32, np.float32),
        (np.int64, np.complex64),
        (np.bool_, np.float64),
        (np.uint64, np.float16),
        (np.int8, np.float16),
        (np.float16, np.float16),
    ],
)
def test_bool_and_integer_operands_promote_like_numpy(da, db, rng):
    """numpy's result type when it is a float type; float64 for integer pairs and bool with
    integers; bool @ bool numpy's logical product (from the float64 counts)."""
    a = rng.integers(0 if da in (np.bool_, np.uint8, np.uint64) else -9, 9, (3, 5)).astype(da)
    b = rng.integers(0 if db in (np.bool_, np.uint8, np.uint64) else -9, 9, (5, 4)).astype(db)
    got = ozfft.matmul(a, b)
    numpy_type = np.matmul(a, b).dtype
    want = numpy_type if numpy_type.kind in "fc" else np.dtype(np.float64)
    assert want == ozfft.linalg.result_dtype(a.dtype, b.dtype)  # (what it computes in)
    counts = np.matmul(a.astype(want), b.astype(want))
    if da == db == np.bool_:
        assert got.dtype == np.bool_ and (counts > 1).any()  # (some counts above one)
        np.testing.assert_array_equal(got, np.matmul(a, b))
        np.testing.assert_array_equal(got, counts != 0)
    else:
        assert got.dtype == want
        np.testing.assert_array_equal(got, counts)


def test_out_takes_the_result_as_numpy_does(rng):
    """``out`` (positional or keyword, with the other options): the result written in it,
    cast as numpy casts (float64 into float32 rounds), it returned; the wrong kind of
    array or a 0-d ``out`` for 1-D @ 1-D as numpy has them. (numpy's own tests of ``out``:
    tests/peer/test_numpy_matmul.py.)"""
    a = phi_matrix(rng, (2, 6, 9), 2.0)
    b = phi_matrix(rng, (9, 4), 2.0)
    for kw in ({}, {"moduli": 12}, {"mode": "accurate"}):
        want = ozfft.matmul(a, b, **kw)
        out = np.full((2, 6, 4), np.nan, np.float32)
        assert ozfft.matmul(a, b, out, **kw) is out
        np.testing.assert_array_equal(out, want.astype(np.float32))
        assert want.astype(np.float32).dtype == out.dtype and not np.isnan(out).any()
    with pytest.raises(TypeError, match="numpy array"):
        ozfft.matmul(a, b, out=[[0.0] * 4] * 6)
    v = phi_matrix(rng, (9,), 1.0)
    scalar = ozfft.matmul(v, v)
    assert type(scalar) is np.float64
    zero_d = np.zeros(())
    assert ozfft.matmul(v, v, out=zero_d) is zero_d and zero_d == scalar
    with pytest.raises(ValueError, match="non-broadcastable"):
        ozfft.matmul(v, v, out=np.zeros(1))


def test_non_native_byte_order(rng):
    a = phi_matrix(rng, (4, 6), 1.0)
    b = phi_matrix(rng, (6, 3), 1.0, np.complex128)
    swapped_a = a.astype(a.dtype.newbyteorder())
    swapped_b = b.astype(b.dtype.newbyteorder())
    assert not swapped_a.dtype.isnative and not swapped_b.dtype.isnative
    got = ozfft.matmul(swapped_a, swapped_b)
    assert got.dtype == np.complex128 and got.dtype.isnative
    np.testing.assert_array_equal(got, ozfft.matmul(a, b))
    ints = np.arange(12, dtype=">i4").reshape(3, 4)
    np.testing.assert_array_equal(ozfft.matmul(ints, ints.T), (ints @ ints.T).astype(float))


@pytest.mark.parametrize("moduli", [np.int64(12), np.uint8(12), np.int32(12)])
def test_numpy_integer_moduli(moduli, rng):
    a = phi_matrix(rng, (4, 5), 1.0)
    got = ozfft.matmul(a, a.T, moduli=moduli)
    np.testing.assert_array_equal(got, ozfft.matmul(a, a.T, moduli=12))
    assert type(ozfft.GemmOptions(moduli=moduli).moduli) is int


@pytest.mark.parametrize("moduli", [0, 1, 21, 100])
def test_moduli_out_of_range(moduli):
    with pytest.raises(ValueError, match=f"moduli must be between 2 and 20, got {moduli}"):
        ozfft.matmul(np.ones((2, 2)), np.ones((2, 2)), moduli=moduli)


@pytest.mark.parametrize("moduli", [16.0, "16", True, np.True_, np.float64(16)])
def test_moduli_wrong_type(moduli):
    with pytest.raises(TypeError, match="moduli must be an int"):
        ozfft.matmul(np.ones((2, 2)), np.ones((2, 2)), moduli=moduli)


def test_bad_mode_and_precision():
    with pytest.raises(
        ValueError, match=r"mode must be one of \('fast', 'accurate'\), got 'exact'"
    ):
        ozfft.matmul(np.ones((2, 2)), np.ones((2, 2)), mode="exact")
    with pytest.raises(
        ValueError, match=r"precision must be one of \('fp64', 'fp32'\), got 'fp16'"
    ):
        ozfft.matmul(np.ones((2, 2)), np.ones((2, 2)), precision="fp16")


def test_default_moduli_counts_are_documented():
    assert ozfft.GemmOptions().num_moduli == 16
    assert ozfft.GemmOptions(precision="fp32").num_moduli == 8
    assert ozfft.GemmOptions(moduli=11).num_moduli == 11
