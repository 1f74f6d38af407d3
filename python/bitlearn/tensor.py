"""Tensor construction from Python data and the Tensor ops of the C++ library.

Each op is the C++ function of bitlearn/ops.h (same bits); array arguments (NumPy, DLPack
producers) are viewed as Tensors without a copy.
"""
import numpy as _np

from . import _core
from ._core import Tensor

_SUPPORTED = {_np.dtype(_np.float32), _np.dtype(_np.int32), _np.dtype(_np.int64),
              _np.dtype(_np.uint8), _np.dtype(_np.bool_)}


def tensor(data, dtype=None):
    """A Tensor from array-like data: zero-copy for a supported NumPy/DLPack array, else a copy.

    dtype: "f32", "i32", "i64", "u8" or "bool" to convert (a copy); None keeps float32, int32,
    int64, uint8 and bool arrays as they are and refuses other element types (e.g. float64) with
    a TypeError, so that no precision is lost silently.
    """
    if isinstance(data, Tensor):
        return data if dtype is None else data.to(dtype)
    if hasattr(data, "__dlpack__") and not isinstance(data, _np.ndarray) and dtype is None:
        return _core.from_dlpack(data)
    arr = _np.asarray(data)
    if dtype is not None:
        names = {"f32": _np.float32, "i32": _np.int32, "i64": _np.int64, "u8": _np.uint8,
                 "bool": _np.bool_}
        if dtype not in names:
            raise ValueError(f"unknown dtype {dtype!r} (f32, i32, i64, u8, bool)")
        arr = arr.astype(names[dtype])
    elif arr.dtype not in _SUPPORTED:
        if not isinstance(data, _np.ndarray) and arr.dtype == _np.float64:
            arr = arr.astype(_np.float32)  # Python floats: float32 is bitlearn's float type
        else:
            raise TypeError(f"bitlearn.tensor: element type {arr.dtype} is not supported "
                            "(float32, int32, int64, uint8, bool); pass dtype='f32' to convert")
    if any(s < 0 for s in arr.strides):
        arr = _np.ascontiguousarray(arr)
    return Tensor(arr)


def from_numpy(arr):
    """A Tensor viewing a NumPy array's memory (no copy); unsupported types raise TypeError."""
    return Tensor(arr)


def _t(x):
    return x if isinstance(x, Tensor) else tensor(x)


def _unary(name):
    fn = getattr(_core, name)

    def op(x):
        return fn(_t(x))
    op.__name__ = name
    op.__doc__ = f"bitlearn {name} (elementwise; the C++ bl::{name})."
    return op


def _binary(name):
    fn = getattr(_core, name)

    def op(a, b):
        return fn(_t(a), _t(b))
    op.__name__ = name
    op.__doc__ = f"bitlearn {name} (elementwise with broadcasting; the C++ bl::{name})."
    return op


def _reduce(name):
    fn = getattr(_core, name)

    def op(x, dims=(), keepdim=False):
        if isinstance(dims, int):
            dims = [dims]
        return fn(_t(x), list(dims), keepdim)
    op.__name__ = name
    op.__doc__ = f"bitlearn {name} over dims (all when empty); the C++ reduction."
    return op


UNARY = ["exp", "expm1", "log", "log1p", "log2", "tanh", "sigmoid", "erf", "gelu", "gelu_tanh",
         "silu", "softplus", "sin", "cos", "rsqrt", "abs", "neg", "sqrt", "relu", "square",
         "reciprocal", "sign", "floor", "ceil", "round", "logical_not"]
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "pow", "eq", "ne", "lt", "le", "gt", "ge"]
REDUCE = ["sum", "mean", "amax", "amin", "max", "min", "l1_norm", "l2_norm"]
for _n in UNARY:
    globals()[_n] = _unary(_n)
for _n in BINARY:
    globals()[_n] = _binary(_n)
for _n in REDUCE:
    globals()[_n] = _reduce(_n)


def var(x, dims=(), ddof=0, keepdim=False):
    """Variance over dims (all when empty) with ddof, in the library's fixed order."""
    return _core.var(_t(x), [dims] if isinstance(dims, int) else list(dims), ddof, keepdim)


def std(x, dims=(), ddof=0, keepdim=False):
    """Standard deviation over dims (all when empty) with ddof."""
    return _core.std(_t(x), [dims] if isinstance(dims, int) else list(dims), ddof, keepdim)


def matmul(a, b, trans_a=False, trans_b=False):
    """a @ b for 2-d operands (optionally transposed): the C++ bl::matmul."""
    return _core.matmul(_t(a), _t(b), trans_a, trans_b)


def bmm(a, b, trans_a=False, trans_b=False):
    """Batched matmul of 3-d operands: the C++ bl::bmm."""
    return _core.bmm(_t(a), _t(b), trans_a, trans_b)


def softmax(x, dim=-1):
    """Softmax along dim: the C++ bl::softmax."""
    return _core.softmax(_t(x), dim)


def log_softmax(x, dim=-1):
    """Log-softmax along dim: the C++ bl::log_softmax."""
    return _core.log_softmax(_t(x), dim)


def argmax(x, dim, keepdim=False):
    """Index of the maximum along dim (first on ties)."""
    return _core.argmax(_t(x), dim, keepdim)


def argmin(x, dim, keepdim=False):
    """Index of the minimum along dim (first on ties)."""
    return _core.argmin(_t(x), dim, keepdim)


def cumsum(x, dim):
    """Cumulative sum along dim."""
    return _core.cumsum(_t(x), dim)


def where(cond, a, b):
    """cond ? a : b elementwise (cond boolean), broadcast together."""
    return _core.where(_t(cond), _t(a), _t(b))


def cast(x, dtype):
    """Conversion to dtype ("f32", "i32", "i64", "u8", "bool") by the library's cast rules."""
    return _core.cast(_t(x), dtype)


def concat(tensors, dim=0):
    """Concatenation along dim."""
    return _core.concat([_t(t) for t in tensors], dim)


def layer_norm(x, gamma, beta, eps=1e-5):
    """Layer normalization over the last dimension."""
    return _core.layer_norm(_t(x), _t(gamma), _t(beta), eps)


def rms_norm(x, gamma, eps=1e-6):
    """RMS normalization over the last dimension."""
    return _core.rms_norm(_t(x), _t(gamma), eps)


zeros = _core.zeros
full = _core.full
arange = _core.arange

__all__ = (["tensor", "from_numpy", "var", "std", "matmul", "bmm", "softmax", "log_softmax",
            "argmax", "argmin", "cumsum", "where", "cast", "concat", "layer_norm", "rms_norm",
            "zeros", "full", "arange"] + UNARY + BINARY + REDUCE)
