#!/usr/bin/env python3
"""Fit-time of bitlearn's trees, forests and boosting against scikit-learn, XGBoost (hist) and
LightGBM on the same data and the same number of threads; prints a table with the ratio
peer_time / bitlearn_time (>= 1: bitlearn is as fast or faster).

    python3 bench/trees_vs_peers.py --bin build/tools/ml_trees_bench/bitlearn_ml_trees_bench \
        --rows 100000 1000000 --threads 2

Data: sklearn make_classification / make_regression (20 features, 10 informative, seed 0), 80/20
split. Each fit runs once after a warm-up-free start (fits of seconds; the spread between runs on
an idle machine is a few percent).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np


def save(dirname, name, a):
    path = os.path.join(dirname, name + ".npy")
    np.save(path, np.ascontiguousarray(a, dtype=np.float32))
    return path


def run_ours(binary, model, files, params, threads):
    cmd = [binary, model] + files + ["%s=%s" % kv for kv in params.items()] + ["--threads", str(threads)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def timed(fn):
    t0 = time.perf_counter()
    r = fn()
    return time.perf_counter() - t0, r


def make_data(rows, task, seed=0):
    from sklearn.datasets import make_classification, make_regression
    n = int(rows * 1.25)
    if task == "regression":
        X, y = make_regression(n_samples=n, n_features=20, n_informative=10, noise=10.0, random_state=seed)
    elif task == "counts":  # Poisson counts of a log-linear rate in the regression's features
        X, y = make_regression(n_samples=n, n_features=20, n_informative=10, noise=10.0, random_state=seed)
        y = np.random.default_rng(seed).poisson(np.exp(0.5 * y / y.std()))
    else:
        X, y = make_classification(n_samples=n, n_features=20, n_informative=10, n_classes=2, random_state=seed)
    X = X.astype(np.float32)
    y = y.astype(np.float32)
    return X[:rows], y[:rows], X[rows:], y[rows:]


def cases(threads):
    """(name, task, our model, our params, [(peer name, peer factory)])"""
    import lightgbm as lgb
    import xgboost as xgb
    from sklearn import ensemble, tree
    t = threads
    xgb_common = dict(tree_method="hist", max_depth=6, learning_rate=0.1, n_estimators=100, n_jobs=t,
                      max_bin=256, reg_lambda=1.0, min_child_weight=1.0)
    ours_depthwise = {"grow_policy": "depthwise", "max_depth": "6", "max_leaf_nodes": "none", "max_iter": "100",
                      "learning_rate": "0.1", "min_samples_leaf": "1", "min_child_weight": "1",
                      "l2_regularization": "1", "max_bins": "255"}
    ours_lossguide = {"max_iter": "100", "learning_rate": "0.1", "max_leaf_nodes": "31", "min_samples_leaf": "20"}
    lgb_common = dict(n_estimators=100, learning_rate=0.1, num_leaves=31, min_child_samples=20, n_jobs=t,
                      verbose=-1, max_bin=255)
    return [
        ("boosting depthwise d6, regression", "regression", "hist_gradient_boosting_regressor", ours_depthwise,
         [("xgboost hist", lambda: xgb.XGBRegressor(**xgb_common))]),
        ("boosting depthwise d6, binary", "classification", "hist_gradient_boosting_classifier", ours_depthwise,
         [("xgboost hist", lambda: xgb.XGBClassifier(**xgb_common))]),
        ("boosting 31 leaves, regression", "regression", "hist_gradient_boosting_regressor", ours_lossguide,
         [("lightgbm", lambda: lgb.LGBMRegressor(**lgb_common)),
          ("sklearn HGB", lambda: ensemble.HistGradientBoostingRegressor(max_iter=100, early_stopping=False))]),
        ("boosting 31 leaves, binary", "classification", "hist_gradient_boosting_classifier", ours_lossguide,
         [("lightgbm", lambda: lgb.LGBMClassifier(**lgb_common)),
          ("sklearn HGB", lambda: ensemble.HistGradientBoostingClassifier(max_iter=100, early_stopping=False))]),
        ("boosting 31 leaves, poisson", "counts", "hist_gradient_boosting_regressor",
         dict(ours_lossguide, loss="poisson"),
         [("sklearn HGB", lambda: ensemble.HistGradientBoostingRegressor(loss="poisson", max_iter=100,
                                                                        early_stopping=False))]),
        ("boosting 31 leaves, quantile 0.8", "regression", "hist_gradient_boosting_regressor",
         dict(ours_lossguide, loss="quantile", quantile="0.8"),
         [("sklearn HGB", lambda: ensemble.HistGradientBoostingRegressor(loss="quantile", quantile=0.8, max_iter=100,
                                                                        early_stopping=False))]),
        ("boosting 31 leaves, monotonic", "regression", "hist_gradient_boosting_regressor",
         dict(ours_lossguide, monotonic_cst=",".join(["1"] * 5 + ["0"] * 15)),
         [("sklearn HGB", lambda: ensemble.HistGradientBoostingRegressor(
             monotonic_cst=[1] * 5 + [0] * 15, max_iter=100, early_stopping=False))]),
        ("boosting early stopping, regression", "regression", "hist_gradient_boosting_regressor",
         {"max_iter": "1000", "early_stopping": "true", "learning_rate": "0.1"},
         [("sklearn HGB", lambda: ensemble.HistGradientBoostingRegressor(max_iter=1000, early_stopping=True))]),
        ("decision tree, classification", "classification", "decision_tree_classifier", {},
         [("sklearn", lambda: tree.DecisionTreeClassifier(random_state=0))]),
        ("decision tree, regression", "regression", "decision_tree_regressor", {"max_depth": "12"},
         [("sklearn", lambda: tree.DecisionTreeRegressor(max_depth=12, random_state=0))]),
        ("random forest 20 trees, classification", "classification", "random_forest_classifier",
         {"n_estimators": "20"},
         [("sklearn", lambda: ensemble.RandomForestClassifier(n_estimators=20, n_jobs=t, random_state=0))]),
        ("extra trees 20 trees, classification", "classification", "extra_trees_classifier", {"n_estimators": "20"},
         [("sklearn", lambda: ensemble.ExtraTreesClassifier(n_estimators=20, n_jobs=t, random_state=0))]),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/tools/ml_trees_bench/bitlearn_ml_trees_bench")
    ap.add_argument("--rows", type=int, nargs="+", default=[100000])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", default="", help="substring of the case names to run")
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    results = []
    print("| case | rows | ours fit s | peer | peer fit s | ratio peer/ours | our score | peer score |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for rows in args.rows:
            data = {}
            for name, task, model, params, peers in cases(args.threads):
                if args.only and args.only not in name:
                    continue
                if rows > 200000 and ("tree" in name and "boosting" not in name):
                    continue  # single-tree/forest peers at 10^6 rows take minutes on small hosts
                if task not in data:
                    Xtr, ytr, Xte, yte = make_data(rows, task)
                    files = [save(tmp, task + k, a) for k, a in
                             (("Xtr", Xtr), ("ytr", ytr), ("Xte", Xte), ("yte", yte))]
                    data[task] = (Xtr, ytr, Xte, yte, files)
                Xtr, ytr, Xte, yte, files = data[task]
                ours = run_ours(args.bin, model, files, params, args.threads)
                for peer_name, make in peers:
                    est = make()
                    fit_s, _ = timed(lambda: est.fit(Xtr, ytr))
                    peer_score = est.score(Xte, yte)
                    ratio = fit_s / ours["fit_s"]
                    print("| %s | %d | %.3f | %s | %.3f | %.2f | %.4f | %.4f |" % (
                        name, rows, ours["fit_s"], peer_name, fit_s, ratio, ours["score"], peer_score))
                    sys.stdout.flush()
                    results.append(dict(case=name, rows=rows, ours_fit_s=ours["fit_s"], peer=peer_name,
                                        peer_fit_s=fit_s, ratio=ratio, our_score=ours["score"],
                                        peer_score=peer_score, threads=args.threads,
                                        model_sha256=ours["model_sha256"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
