#!/usr/bin/env python3
"""Golden files for the LightGBM text-model import (tests/ml_trees/test_lightgbm_model.cpp).

Trains small LightGBM models (fixed seeds, one thread), saves each as a text model and, beside it, a
case file with the test inputs (float32 hex) and LightGBM's own raw scores, predictions and SHAP
values (pred_contrib), all float64 little-endian hex. Run from the repository root:
    build/venv/bin/python scripts/golden/lightgbm_models.py
"""
import os

import lightgbm as lgb
import numpy as np

from gbdt_golden import hexa, problem, write_case

OUT = os.path.join("tests", "data", "ml", "lightgbm")


def save_case(name, booster, Xt, objective):
    path = os.path.join(OUT, name + ".txt")
    booster.save_model(path)
    b = lgb.Booster(model_file=path)  # predict with the model as read back from the file
    outputs = {"margin": hexa(b.predict(Xt, raw_score=True), "<f8"), "pred": hexa(b.predict(Xt), "<f8"),
               "shap": hexa(b.predict(Xt, pred_contrib=True), "<f8")}
    write_case(OUT, name, name + ".txt", objective, Xt, outputs, "lightgbm", lgb.__version__)


def main():
    os.makedirs(OUT, exist_ok=True)
    X, Xt, lin, t = problem(120)
    y, yb, ym, yc = t["y"], t["yb"], t["ym"], t["yc"]
    # Exact zeros, values LightGBM reads as zero (|x| <= 1e-35) and a subnormal in the test rows.
    Xt[0, :] = 0.0
    Xt[1, :] = np.float32(1e-36)
    Xt[2, :] = np.float32(-1e-40)
    Xt[3, :] = np.nan
    common = dict(seed=0, num_threads=1, verbose=-1, deterministic=True, min_data_in_leaf=5)

    b = lgb.train(dict(common, objective="regression", num_leaves=15, learning_rate=0.2),
                  lgb.Dataset(X, y), 25)
    save_case("regression", b, Xt, "regression")

    Xz = X.copy()
    Xz[np.random.RandomState(5).rand(*X.shape) < 0.15] = 0.0
    Xz = np.nan_to_num(Xz)
    b = lgb.train(dict(common, objective="regression", num_leaves=8, learning_rate=0.3, zero_as_missing=True),
                  lgb.Dataset(Xz, y), 15)
    save_case("zero_as_missing", b, Xt, "regression")

    b = lgb.train(dict(common, objective="binary", num_leaves=7, learning_rate=0.3, bagging_fraction=0.8,
                       bagging_freq=1, feature_fraction=0.8), lgb.Dataset(X, yb), 30)
    save_case("binary", b, Xt, "binary")

    b = lgb.train(dict(common, objective="multiclass", num_class=3, num_leaves=7, learning_rate=0.3),
                  lgb.Dataset(X, ym), 15)
    save_case("multiclass", b, Xt, "multiclass")

    b = lgb.train(dict(common, objective="poisson", num_leaves=7, learning_rate=0.2), lgb.Dataset(X, yc), 20)
    save_case("poisson", b, Xt, "poisson")

    # A categorical feature (column 3: categories 0 .. 11) with NaN; test rows add a negative, a
    # fraction, an unseen category and a huge value.
    Xc = X.copy()
    Xc[:, 3] = np.random.RandomState(6).randint(0, 12, 400).astype(np.float32)
    Xc[np.random.RandomState(7).rand(400) < 0.05, 3] = np.nan
    yk = lin + np.where(np.isin(Xc[:, 3], [1, 4, 7, 9]), 2.0, -1.0)
    Xct = Xt.copy()
    Xct[:, 3] = np.random.RandomState(8).randint(0, 12, Xt.shape[0]).astype(np.float32)
    Xct[4:9, 3] = [-1.0, 2.5, 40.0, 3e9, -0.5]
    b = lgb.train(dict(common, objective="regression", num_leaves=8, learning_rate=0.3, min_data_per_group=5,
                       cat_smooth=1.0), lgb.Dataset(Xc, yk, categorical_feature=[3]), 15)
    save_case("categorical", b, Xct, "regression")

    b = lgb.train(dict(common, boosting="rf", objective="binary", num_leaves=7, bagging_fraction=0.7,
                       bagging_freq=1), lgb.Dataset(X, yb), 10)
    save_case("random_forest", b, Xt, "binary")


if __name__ == "__main__":
    main()
