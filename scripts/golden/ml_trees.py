#!/usr/bin/env python3
"""Accuracy parity of bitlearn's trees, forests and boosting with scikit-learn and XGBoost on the
same data: scikit-learn's bundled datasets (iris, wine, breast_cancer, digits, diabetes) and
make_classification / make_regression at 10^5 rows. 75/25 split (random_state 0); accuracy for
classifiers, R^2 for regressors, on the test part. Prints a markdown table (docs/ml-trees.md).

    python3 scripts/golden/ml_trees.py --bin build/tools/ml_trees_bench/bitlearn_ml_trees_bench
"""
import argparse
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from trees_vs_peers import run_ours, save  # noqa: E402


def datasets(big_rows):
    from sklearn import datasets as ds
    from sklearn.model_selection import train_test_split
    out = []
    for name, loader, task in (("iris", ds.load_iris, "cls"), ("wine", ds.load_wine, "cls"),
                               ("breast_cancer", ds.load_breast_cancer, "cls"), ("digits", ds.load_digits, "cls"),
                               ("diabetes", ds.load_diabetes, "reg")):
        X, y = loader(return_X_y=True)
        out.append((name, task) + tuple(train_test_split(X, y, test_size=0.25, random_state=0)))
    X, y = ds.make_classification(n_samples=big_rows, n_features=20, n_informative=10, random_state=0)
    out.append(("make_classification 1e5", "cls") + tuple(train_test_split(X, y, test_size=0.25, random_state=0)))
    X, y = ds.make_regression(n_samples=big_rows, n_features=20, n_informative=10, noise=10.0, random_state=0)
    out.append(("make_regression 1e5", "reg") + tuple(train_test_split(X, y, test_size=0.25, random_state=0)))
    return out


def pairs(task):
    import xgboost as xgb
    from sklearn import ensemble, tree
    if task == "cls":
        return [
            ("decision_tree_classifier", {}, "sklearn DecisionTree", lambda: tree.DecisionTreeClassifier(random_state=0)),
            ("random_forest_classifier", {}, "sklearn RandomForest",
             lambda: ensemble.RandomForestClassifier(random_state=0, n_jobs=2)),
            ("extra_trees_classifier", {}, "sklearn ExtraTrees", lambda: ensemble.ExtraTreesClassifier(random_state=0, n_jobs=2)),
            ("hist_gradient_boosting_classifier", {}, "sklearn HistGB",
             lambda: ensemble.HistGradientBoostingClassifier(early_stopping=False)),
            ("hist_gradient_boosting_classifier",
             {"grow_policy": "depthwise", "max_depth": "6", "max_leaf_nodes": "none", "min_samples_leaf": "1",
              "min_child_weight": "1", "l2_regularization": "1", "learning_rate": "0.3"},
             "xgboost hist", lambda: xgb.XGBClassifier(tree_method="hist", n_jobs=2)),
        ]
    return [
        ("decision_tree_regressor", {}, "sklearn DecisionTree", lambda: tree.DecisionTreeRegressor(random_state=0)),
        ("random_forest_regressor", {}, "sklearn RandomForest",
         lambda: ensemble.RandomForestRegressor(random_state=0, n_jobs=2)),
        ("extra_trees_regressor", {}, "sklearn ExtraTrees", lambda: ensemble.ExtraTreesRegressor(random_state=0, n_jobs=2)),
        ("hist_gradient_boosting_regressor", {}, "sklearn HistGB",
         lambda: ensemble.HistGradientBoostingRegressor(early_stopping=False)),
        ("hist_gradient_boosting_regressor",
         {"grow_policy": "depthwise", "max_depth": "6", "max_leaf_nodes": "none", "min_samples_leaf": "1",
          "min_child_weight": "1", "l2_regularization": "1", "learning_rate": "0.3"},
         "xgboost hist", lambda: xgb.XGBRegressor(tree_method="hist", n_jobs=2)),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/tools/ml_trees_bench/bitlearn_ml_trees_bench")
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--skip-forests-big", action="store_true", help="no forests on the 10^5-row sets")
    args = ap.parse_args()
    print("| dataset | bitlearn estimator | ours | peer | peer score | difference |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, task, Xtr, Xte, ytr, yte in datasets(args.rows):
            files = [save(tmp, k, a) for k, a in (("Xtr", Xtr), ("ytr", ytr), ("Xte", Xte), ("yte", yte))]
            for model, params, peer, make in pairs(task):
                if args.skip_forests_big and "1e5" in name and ("forest" in model or "extra" in model):
                    continue
                ours = run_ours(args.bin, model, files, params, 2)
                est = make()
                est.fit(Xtr.astype(np.float32), ytr)
                ps = est.score(Xte.astype(np.float32), yte)
                label = model + ("" if not params else " (xgboost-like)")
                print("| %s | %s | %.4f | %s | %.4f | %+.4f |" % (name, label, ours["score"], peer, ps,
                                                                ours["score"] - ps))
                sys.stdout.flush()


if __name__ == "__main__":
    main()
