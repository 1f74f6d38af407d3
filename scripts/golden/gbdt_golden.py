"""What the LightGBM and XGBoost golden scripts (lightgbm_models.py, xgboost_models.py) share: the
training and test rows, the targets the models learn, hex encoding and the case files."""
import json
import os

import numpy as np

N_TRAIN, D = 400, 6


def hexa(a, dtype):
    """a as contiguous little-endian values of dtype ("<f4", "<f8"), in hex."""
    return np.ascontiguousarray(np.asarray(a, dtype=dtype)).ravel().tobytes().hex()


def data(n, d, seed, nan_fraction=0.0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d).astype(np.float32)
    if nan_fraction > 0:
        X[rng.rand(n, d) < nan_fraction] = np.nan
    return X


def problem(n_test):
    """(X, Xt, lin, targets): N_TRAIN training rows and n_test test rows of D features (10% NaN), the
    linear signal lin of the training rows and the targets drawn from it: "y" (regression), "yb"
    (binary), "ym" (3 classes), "yc" (counts)."""
    X = data(N_TRAIN, D, 1, nan_fraction=0.1)
    Xt = data(n_test, D, 2, nan_fraction=0.1)
    w = np.array([1.5, -2.0, 0.7, 0.0, 1.0, -0.3], dtype=np.float32)
    lin = np.nan_to_num(X) @ w
    targets = {
        "y": lin + 0.1 * np.random.RandomState(3).randn(N_TRAIN),
        "yb": (lin > 0.2).astype(np.float32),
        "ym": np.digitize(lin, [-1.0, 1.0]).astype(np.float32),
        "yc": np.random.RandomState(4).poisson(np.exp(0.3 * lin.clip(-3, 3))).astype(np.float32),
    }
    return X, Xt, lin, targets


def write_case(out, name, model_file, objective, X_test, outputs, library, version):
    """out/name.case.json: the model file's name, the objective, the test rows (float32 hex) and the
    library's outputs (name -> hex), with the library's version."""
    case = {"model": model_file, "objective": objective, "n": int(X_test.shape[0]), "d": int(X_test.shape[1]),
            "X": hexa(X_test, "<f4"), library + "_version": version}
    case.update(outputs)
    with open(os.path.join(out, name + ".case.json"), "w") as f:
        json.dump(case, f, indent=1, sort_keys=True)
        f.write("\n")
