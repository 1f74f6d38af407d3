"""bitlearn: machine learning whose results are bitwise identical on every device.

The Python package is a thin layer over the C++ library (the extension module ``bitlearn._core``):
the same tensors, ops, estimators and verifier, with the same bits as the C++ calls and the
``bitlearn`` program.
"""
import json as _json

import numpy as _np

from . import _core
from ._core import (Error, Tensor, __version__, contract_profile, cuda_available,
                    cuda_backend_built, cuda_device_count, from_dlpack, num_threads,
                    set_num_threads, cpu_isa, set_gemm_profile, gemm_profile)
from .tensor import *  # noqa: F401,F403  (the ops, with array arguments accepted)
from .tensor import tensor, from_numpy
from . import models  # noqa: E402,F401
from . import lm  # noqa: E402,F401
from . import nn  # noqa: E402,F401

__all__ = ["Error", "Tensor", "tensor", "from_numpy", "from_dlpack", "verify", "compare",
           "doctor", "cli", "set_num_threads", "num_threads", "cuda_available", "cuda_backend_built",
           "cuda_device_count", "contract_profile", "set_gemm_profile", "gemm_profile", "__version__"]


def verify(device="cpu", quick=False, threads=0):
    """Runs the verification suite like ``bitlearn verify`` and returns its report as a dict.

    device: "cpu", "cuda", "cuda:N" or "all" (the CPU and every CUDA device, compared with each
    other). quick: the quick suite (a few seconds). threads: CPU threads (0: the default). The dict
    is the JSON ``bitlearn verify --json`` writes: per device run its checks, states and digest.
    """
    return _json.loads(_core._verify_json(device, bool(quick), int(threads)))


def cli(*args):
    """Runs the ``bitlearn`` command line in this process (``bitlearn.cli("train", "--model",
    "cnn", ...)``): the program's own code, options, output and exit code (returned)."""
    import sys
    sys.stdout.flush()
    sys.stderr.flush()
    return _core._run_cli([str(a) for a in args])


_cli = cli


def compare(a, b):
    """``bitlearn compare A B`` on two verify reports (JSON files): 0 when identical, else 1."""
    return _cli("compare", a, b)


def doctor(*args):
    """``bitlearn doctor``: prints the build, the CPU and the CUDA devices; returns the exit code."""
    return _cli("doctor", *args)
