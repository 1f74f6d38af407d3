#!/usr/bin/env python3
"""Golden data and metrics for the linear, cluster, neighbors and decomposition estimators.

Writes tests/data/ml_linear/: the bundled scikit-learn datasets split 75/25 (train_test_split,
random_state=0) as CSV (columns f0.., target), and golden.json with scikit-learn's metric for each
case (the unit tests require ours to be within a stated tolerance) plus reference coefficients.

    python3 scripts/golden/ml_linear.py            # regenerate tests/data/ml_linear/
"""
import json
import os
import sys

import numpy as np
from sklearn import datasets
from sklearn.cluster import KMeans
from sklearn.decomposition import PCA
from sklearn.linear_model import ElasticNet, Lasso, LinearRegression, LogisticRegression, Ridge
from sklearn.metrics import accuracy_score, r2_score
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "data", "ml_linear")


def write_csv(path, X, y):
    cols = [f"f{j}" for j in range(X.shape[1])] + ["target"]
    with open(path, "w") as f:
        f.write(",".join(cols) + "\n")
        for row, t in zip(X, y):
            f.write(",".join(repr(float(v)) for v in row) + "," + repr(float(t)) + "\n")


def load(name):
    loader = {"diabetes": datasets.load_diabetes, "breast_cancer": datasets.load_breast_cancer,
              "iris": datasets.load_iris, "wine": datasets.load_wine}[name]
    X, y = loader(return_X_y=True)
    X = X.astype(np.float32)
    y = y.astype(np.float32)
    return train_test_split(X, y, test_size=0.25, random_state=0)


# (case, dataset, our estimator, our params, sklearn model, metric, tolerance)
CASES = [
    ("ols_diabetes", "diabetes", "linear_regression", {}, LinearRegression(), "r2", 0.002),
    ("ridge_diabetes", "diabetes", "ridge", {"alpha": "0.5"}, Ridge(alpha=0.5), "r2", 0.002),
    ("lasso_diabetes", "diabetes", "lasso", {"alpha": "0.1"}, Lasso(alpha=0.1), "r2", 0.005),
    ("enet_diabetes", "diabetes", "elastic_net", {"alpha": "0.01", "l1_ratio": "0.5"},
     ElasticNet(alpha=0.01, l1_ratio=0.5), "r2", 0.005),
    ("logreg_l2_cancer", "breast_cancer", "logistic_regression", {"C": "1", "max_iter": "1000"},
     LogisticRegression(C=1.0, max_iter=10000), "accuracy", 0.03),
    ("logreg_l1_cancer", "breast_cancer", "logistic_regression",
     {"C": "1", "penalty": "l1", "max_iter": "1000"},
     LogisticRegression(C=1.0, l1_ratio=1.0, solver="liblinear", max_iter=10000), "accuracy", 0.03),
    ("logreg_iris", "iris", "logistic_regression", {"C": "1"}, LogisticRegression(C=1.0, max_iter=1000),
     "accuracy", 0.03),
    ("logreg_wine", "wine", "logistic_regression", {"C": "1", "max_iter": "1000"},
     LogisticRegression(C=1.0, max_iter=10000), "accuracy", 0.03),
    ("knn_cancer", "breast_cancer", "kneighbors_classifier", {"n_neighbors": "5"},
     KNeighborsClassifier(n_neighbors=5, algorithm="brute"), "accuracy", 0.0),
    ("knn_iris_distance", "iris", "kneighbors_classifier", {"n_neighbors": "7", "weights": "distance"},
     KNeighborsClassifier(n_neighbors=7, weights="distance", algorithm="brute"), "accuracy", 0.0),
    ("knn_reg_diabetes", "diabetes", "kneighbors_regressor", {"n_neighbors": "5"},
     KNeighborsRegressor(n_neighbors=5, algorithm="brute"), "r2", 0.0005),
]


def main():
    os.makedirs(OUT, exist_ok=True)
    splits = {}
    for name in ["diabetes", "breast_cancer", "iris", "wine"]:
        Xtr, Xte, ytr, yte = load(name)
        splits[name] = (Xtr, Xte, ytr, yte)
        write_csv(os.path.join(OUT, f"{name}_train.csv"), Xtr, ytr)
        write_csv(os.path.join(OUT, f"{name}_test.csv"), Xte, yte)
    golden = {"cases": []}
    for case, ds, est, params, model, metric, tol in CASES:
        Xtr, Xte, ytr, yte = splits[ds]
        model.fit(Xtr.astype(np.float64), ytr)
        pred = model.predict(Xte.astype(np.float64))
        value = r2_score(yte, pred) if metric == "r2" else accuracy_score(yte, pred)
        entry = {"case": case, "dataset": ds, "estimator": est, "params": params, "metric": metric,
                 "sklearn": float(value), "tolerance": tol}
        if hasattr(model, "coef_") and est in ("linear_regression", "ridge", "lasso", "elastic_net"):
            entry["coef"] = [float(v) for v in np.ravel(model.coef_)]
            entry["intercept"] = float(model.intercept_)
        golden["cases"].append(entry)
        print(f"{case:22s} {metric:8s} sklearn {value:.6f}")
    # Unsupervised references on iris (features only).
    Xtr = splits["iris"][0].astype(np.float64)
    km = KMeans(n_clusters=3, n_init=10, random_state=0).fit(Xtr)
    pca = PCA().fit(Xtr)
    golden["kmeans_iris"] = {"n_clusters": 3, "inertia": float(km.inertia_)}
    golden["pca_iris"] = {"explained_variance": [float(v) for v in pca.explained_variance_],
                          "components": [[float(v) for v in row] for row in pca.components_]}
    with open(os.path.join(OUT, "golden.json"), "w") as f:
        json.dump(golden, f, indent=1, sort_keys=True)
        f.write("\n")
    print("wrote", OUT)


if __name__ == "__main__":
    sys.exit(main())
