#!/usr/bin/env python3
"""Golden files for the XGBoost JSON import (tests/ml_trees/test_xgboost_import.cpp).

Trains small XGBoost models (fixed seeds), saves each model as JSON and, beside it, a case file with
the test inputs and XGBoost's own margins and predictions (float32 little-endian hex). Run from the
repository root:  python3 scripts/golden/xgboost_models.py
"""
import os

import numpy as np
import xgboost as xgb

from gbdt_golden import hexa, problem, write_case

OUT = os.path.join("tests", "data", "ml", "xgboost")


def save_case(name, booster, X_test, objective):
    booster.save_model(os.path.join(OUT, name + ".json"))
    dm = xgb.DMatrix(X_test, missing=np.nan)
    outputs = {"margin": hexa(booster.predict(dm, output_margin=True), "<f4"),
               "pred": hexa(booster.predict(dm), "<f4")}
    write_case(OUT, name, name + ".json", objective, X_test, outputs, "xgboost", xgb.__version__)


def main():
    os.makedirs(OUT, exist_ok=True)
    X, Xt, _, t = problem(150)
    y, yb, ym, yc = t["y"], t["yb"], t["ym"], t["yc"]
    common = dict(tree_method="hist", seed=0, nthread=1)

    b = xgb.train(dict(common, objective="reg:squarederror", max_depth=4, eta=0.3),
                  xgb.DMatrix(X, y, missing=np.nan), 25)
    save_case("reg_squarederror", b, Xt, "reg:squarederror")

    b = xgb.train(dict(common, objective="reg:squarederror", grow_policy="lossguide", max_leaves=12,
                       max_depth=0, eta=0.2, reg_alpha=0.5, reg_lambda=2.0),
                  xgb.DMatrix(X, y, missing=np.nan), 20)
    save_case("reg_lossguide", b, Xt, "reg:squarederror")

    b = xgb.train(dict(common, objective="binary:logistic", max_depth=3, eta=0.3, subsample=0.8,
                       colsample_bytree=0.8), xgb.DMatrix(X, yb, missing=np.nan), 30)
    save_case("binary_logistic", b, Xt, "binary:logistic")

    b = xgb.train(dict(common, objective="multi:softprob", num_class=3, max_depth=3, eta=0.3),
                  xgb.DMatrix(X, ym, missing=np.nan), 15)
    save_case("multi_softprob", b, Xt, "multi:softprob")

    b = xgb.train(dict(common, objective="count:poisson", max_depth=3, eta=0.2),
                  xgb.DMatrix(X, yc, missing=np.nan), 20)
    save_case("count_poisson", b, Xt, "count:poisson")


if __name__ == "__main__":
    main()
