#!/usr/bin/env python3
"""Golden files for the XGBoost JSON import (tests/ml_trees/test_xgboost_import.cpp).

Trains small XGBoost models (fixed seeds), saves each model as JSON and, beside it, a case file with
the test inputs and XGBoost's own margins and predictions (float32 little-endian hex). Run from the
repository root:  python3 scripts/golden/xgboost_models.py
"""
import json
import os
import struct

import numpy as np
import xgboost as xgb

OUT = os.path.join("tests", "data", "ml", "xgboost")


def f32_hex(a):
    a = np.ascontiguousarray(np.asarray(a, dtype="<f4")).ravel()
    return a.tobytes().hex()


def data(n, d, seed, nan_fraction=0.0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d).astype(np.float32)
    if nan_fraction > 0:
        X[rng.rand(n, d) < nan_fraction] = np.nan
    return X


def save_case(name, booster, X_test, objective):
    booster.save_model(os.path.join(OUT, name + ".json"))
    dm = xgb.DMatrix(X_test, missing=np.nan)
    margin = booster.predict(dm, output_margin=True)
    pred = booster.predict(dm)
    case = {
        "model": name + ".json",
        "objective": objective,
        "n": int(X_test.shape[0]),
        "d": int(X_test.shape[1]),
        "X": f32_hex(X_test),
        "margin": f32_hex(margin),
        "pred": f32_hex(pred),
        "xgboost_version": xgb.__version__,
    }
    with open(os.path.join(OUT, name + ".case.json"), "w") as f:
        json.dump(case, f, indent=1, sort_keys=True)
        f.write("\n")


def main():
    os.makedirs(OUT, exist_ok=True)
    d = 6
    X = data(400, d, 1, nan_fraction=0.1)
    Xt = data(150, d, 2, nan_fraction=0.1)
    w = np.array([1.5, -2.0, 0.7, 0.0, 1.0, -0.3], dtype=np.float32)
    lin = np.nan_to_num(X) @ w
    common = dict(tree_method="hist", seed=0, nthread=1)

    y = lin + 0.1 * np.random.RandomState(3).randn(400)
    b = xgb.train(dict(common, objective="reg:squarederror", max_depth=4, eta=0.3),
                  xgb.DMatrix(X, y, missing=np.nan), 25)
    save_case("reg_squarederror", b, Xt, "reg:squarederror")

    b = xgb.train(dict(common, objective="reg:squarederror", grow_policy="lossguide", max_leaves=12,
                       max_depth=0, eta=0.2, reg_alpha=0.5, reg_lambda=2.0),
                  xgb.DMatrix(X, y, missing=np.nan), 20)
    save_case("reg_lossguide", b, Xt, "reg:squarederror")

    yb = (lin > 0.2).astype(np.float32)
    b = xgb.train(dict(common, objective="binary:logistic", max_depth=3, eta=0.3, subsample=0.8,
                       colsample_bytree=0.8), xgb.DMatrix(X, yb, missing=np.nan), 30)
    save_case("binary_logistic", b, Xt, "binary:logistic")

    ym = np.digitize(lin, [-1.0, 1.0]).astype(np.float32)
    b = xgb.train(dict(common, objective="multi:softprob", num_class=3, max_depth=3, eta=0.3),
                  xgb.DMatrix(X, ym, missing=np.nan), 15)
    save_case("multi_softprob", b, Xt, "multi:softprob")

    yc = np.random.RandomState(4).poisson(np.exp(0.3 * lin.clip(-3, 3))).astype(np.float32)
    b = xgb.train(dict(common, objective="count:poisson", max_depth=3, eta=0.2),
                  xgb.DMatrix(X, yc, missing=np.nan), 20)
    save_case("count_poisson", b, Xt, "count:poisson")


if __name__ == "__main__":
    main()
