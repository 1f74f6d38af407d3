"""bitlearn.Tensor: zero-copy exchange with NumPy and DLPack, digests, ops, errors."""
import hashlib
import struct
import subprocess

import numpy as np
import pytest

import bitlearn as bl


def canonical_digest(arr):
    """The C++ canonical tensor digest (src/core/digest.h), recomputed independently here."""
    names = {np.float32: "f32", np.int32: "i32", np.int64: "i64", np.uint8: "u8", np.bool_: "bool"}
    name = names[arr.dtype.type]
    data = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()
    h = hashlib.sha256()
    h.update(b"bitlearn.tensor.v1\0" + name.encode() + b"\0")
    h.update(struct.pack("<q", arr.ndim))
    for e in arr.shape:
        h.update(struct.pack("<q", e))
    h.update(struct.pack("<q", len(data)))
    h.update(data)
    return h.hexdigest()


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.uint8, np.bool_])
def test_numpy_round_trip_without_copy(dtype):
    a = (np.arange(24) % 7).astype(dtype).reshape(2, 3, 4)
    t = bl.Tensor(a)
    assert t.data_ptr() == a.ctypes.data
    assert t.shape == (2, 3, 4) and t.dtype == {np.float32: "f32", np.int32: "i32", np.int64: "i64",
                                                np.uint8: "u8", np.bool_: "bool"}[dtype]
    back = np.asarray(t)
    assert back.ctypes.data == a.ctypes.data
    np.testing.assert_array_equal(back, a)
    d = np.from_dlpack(t)
    assert d.ctypes.data == a.ctypes.data
    assert bl.from_dlpack(a).data_ptr() == a.ctypes.data
    assert t.digest() == canonical_digest(a)


def test_strided_views_are_shared_and_digest_row_major():
    a = np.arange(30, dtype=np.float32).reshape(5, 6)
    v = a[1:4, ::2]
    t = bl.Tensor(v)
    assert t.data_ptr() == v.ctypes.data
    assert t.strides == (6, 2)
    assert t.digest() == canonical_digest(v)
    a[1, 0] = 99.0  # the tensor sees the NumPy memory
    assert np.asarray(t)[0, 0] == 99.0


def test_tensor_outlives_the_numpy_name():
    t = bl.Tensor(np.full((1000,), 3.0, np.float32))
    import gc
    gc.collect()
    assert float(bl.sum(t).item()) == 3000.0


def test_bad_input_is_a_python_exception():
    with pytest.raises(TypeError, match="float64 is not supported"):
        bl.Tensor(np.zeros(3))
    with pytest.raises(ValueError, match="negative strides"):
        bl.Tensor(np.arange(4, dtype=np.float32)[::-1])
    rev = bl.tensor(np.arange(4, dtype=np.float32)[::-1])  # copies
    np.testing.assert_array_equal(np.asarray(rev), [3, 2, 1, 0])
    with pytest.raises(TypeError, match="expected an array"):
        bl.Tensor("abc")
    with pytest.raises(bl.Error, match="matmul"):
        bl.matmul(np.zeros((2, 3), np.float32), np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError):
        bl.tensor([1, 2], dtype="f64")


def test_cuda_without_cuda_is_a_clear_error():
    t = bl.tensor(np.ones(3, np.float32))
    if bl.cuda_available():
        c = t.to("cuda")
        assert c.device == "cuda:0" and np.asarray(c.to("cpu")).tolist() == [1, 1, 1]
        return
    with pytest.raises(bl.Error, match="CUDA"):
        t.to("cuda")


def test_ops_match_numpy_where_numpy_is_exact():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(7, 5)).astype(np.float32)
    b = rng.normal(size=(7, 5)).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(bl.add(a, b)), a + b)
    np.testing.assert_array_equal(np.asarray(bl.mul(a, b)), a * b)
    np.testing.assert_array_equal(np.asarray(bl.div(a, b)), a / b)
    np.testing.assert_array_equal(np.asarray(bl.sqrt(np.abs(a))), np.sqrt(np.abs(a)))
    np.testing.assert_array_equal(np.asarray(bl.amax(a, 1)), a.max(1))
    np.testing.assert_allclose(np.asarray(bl.matmul(a, b, trans_b=True)), a @ b.T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(bl.softmax(a)),
                               np.exp(a) / np.exp(a).sum(-1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(bl.mean(a, [0])), a.mean(0), rtol=1e-5, atol=1e-6)
    ta, tb = bl.Tensor(a), bl.Tensor(b)
    assert (ta + tb).digest() == bl.add(ta, tb).digest()
    assert (ta @ tb.T).digest() == bl.matmul(a, b, trans_b=True).digest()
    assert (ta * 2.0).digest() == bl.mul(a, np.full_like(a, 2.0)).digest()


@pytest.mark.parametrize("fn", ["exp", "log", "tanh", "sigmoid", "erf"])
def test_math_functions_give_the_program_bytes(cli, fn):
    """bitlearn.exp & co. against `bitlearn math FN` (the C++ contract functions) byte for byte."""
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.normal(scale=4, size=2000).astype(np.float32),
                        np.array([0.0, -0.0, 1.0, np.inf, -np.inf, np.nan, 1e-40, 88.7, -103.0],
                                 np.float32)])
    if fn == "log":
        x = np.abs(x)
    out = subprocess.run([cli, "math", fn], input=x.astype("<f4").tobytes(), capture_output=True,
                         check=True).stdout
    mine = getattr(bl, fn)(x)
    assert np.asarray(mine).astype("<f4").tobytes() == out
    assert mine.digest() == canonical_digest(np.frombuffer(out, "<f4"))


def test_torch_dlpack_round_trip():
    torch = pytest.importorskip("torch")
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    t = bl.from_dlpack(x)
    assert t.data_ptr() == x.data_ptr()
    y = torch.from_dlpack(t)
    assert y.data_ptr() == x.data_ptr()
    assert torch.equal(y, x)
