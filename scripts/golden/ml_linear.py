#!/usr/bin/env python3
"""Golden data and metrics for the linear, cluster, neighbors and decomposition estimators.

Writes tests/data/ml_linear/: the bundled scikit-learn datasets split 75/25 (train_test_split,
random_state=0) as CSV (columns f0.., target), and golden.json with scikit-learn's metric for each
case (the unit tests require ours to be within a stated tolerance) plus reference coefficients.

    python3 scripts/golden/ml_linear.py            # regenerate tests/data/ml_linear/
    python3 scripts/golden/ml_linear.py --big build/bitlearn
        # make_regression / make_classification / make_blobs at 10^5 training rows (+ 25000 test
        # rows): bitlearn (through `bitlearn fit` / `predict`) and scikit-learn side by side;
        # writes the markdown table tests/data/ml_linear/metrics_1e5.md (copied into docs/ml.md)
"""
import json
import os
import sys

import numpy as np
from sklearn import datasets
from sklearn.cluster import KMeans
from sklearn.decomposition import PCA
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import BayesianRidge, ElasticNet, Lasso, LinearRegression, LogisticRegression, Ridge
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
    loader = {"diabetes": datasets.load_diabetes, "diabetes_bmi": datasets.load_diabetes, "breast_cancer": datasets.load_breast_cancer,
              "iris": datasets.load_iris, "wine": datasets.load_wine}[name]
    X, y = loader(return_X_y=True)
    if name == "diabetes_bmi":
        X = X[:, 2:3]
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
    ("bayesian_ridge_diabetes", "diabetes", "bayesian_ridge", {}, BayesianRidge(), "r2", 0.002),
    ("isotonic_diabetes_bmi", "diabetes_bmi", "isotonic_regression", {}, IsotonicRegression(out_of_bounds="clip"),
     "r2", 0.002),
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


BIG = [
    # (case, data kind, estimator, params, sklearn factory, metric)
    ("ols", "reg", "linear_regression", {}, lambda: LinearRegression(), "r2"),
    ("ridge alpha=1", "reg", "ridge", {"alpha": "1"}, lambda: Ridge(alpha=1.0), "r2"),
    ("lasso alpha=0.5", "reg", "lasso", {"alpha": "0.5"}, lambda: Lasso(alpha=0.5), "r2"),
    ("elastic_net alpha=0.5 l1=0.5", "reg", "elastic_net", {"alpha": "0.5", "l1_ratio": "0.5"},
     lambda: ElasticNet(alpha=0.5, l1_ratio=0.5), "r2"),
    ("logistic l2 binary", "bin", "logistic_regression", {}, lambda: LogisticRegression(), "accuracy"),
    ("logistic l1 binary C=0.1", "bin", "logistic_regression", {"penalty": "l1", "C": "0.1", "max_iter": "300"},
     lambda: LogisticRegression(C=0.1, l1_ratio=1.0, solver="saga", max_iter=300), "accuracy"),
    ("logistic multinomial (5 classes)", "multi", "logistic_regression", {}, lambda: LogisticRegression(),
     "accuracy"),
    ("k-NN classifier k=5", "multi", "kneighbors_classifier", {"n_neighbors": "5"},
     lambda: KNeighborsClassifier(n_neighbors=5, algorithm="brute"), "accuracy"),
    ("k-NN regressor k=5", "reg", "kneighbors_regressor", {"n_neighbors": "5"},
     lambda: KNeighborsRegressor(n_neighbors=5, algorithm="brute"), "r2"),
    ("kmeans k=8 (inertia, lower is better)", "blobs", "kmeans", {"n_clusters": "8"},
     lambda: KMeans(n_clusters=8, n_init=1, random_state=0), "inertia"),
    ("pca (explained variance ratio of comp. 1)", "reg", "pca", {}, lambda: PCA(), "evr0"),
]


def big(binary):
    import subprocess
    import tempfile
    tmp = tempfile.mkdtemp(prefix="bl_golden_big_")
    n, nt, d = 100000, 25000, 20
    rows = []
    cache = {}
    for case, kind, est, params, factory, metric in BIG:
        if kind not in cache:
            if kind == "reg":
                X, y = datasets.make_regression(n_samples=n + nt, n_features=d, n_informative=10, noise=20.0,
                                                random_state=1)
            elif kind == "bin":
                X, y = datasets.make_classification(n_samples=n + nt, n_features=d, n_informative=8,
                                                    random_state=1)
            elif kind == "multi":
                X, y = datasets.make_classification(n_samples=n + nt, n_features=d, n_informative=8,
                                                    n_classes=5, random_state=1)
            else:
                X, y = datasets.make_blobs(n_samples=n + nt, n_features=d, centers=8, random_state=1)
            X = X.astype(np.float32)
            y = y.astype(np.float32)
            tr, te = os.path.join(tmp, kind + "_train.csv"), os.path.join(tmp, kind + "_test.csv")
            write_csv(tr, X[:n], y[:n])
            write_csv(te, X[n:], y[n:])
            cache[kind] = (X, y, tr, te)
        X, y, tr, te = cache[kind]
        unsup = metric in ("inertia", "evr0")
        if unsup:  # features only: an unsupervised fit uses every column
            tr = os.path.join(tmp, kind + "_features.csv")
            if not os.path.exists(tr):
                with open(tr, "w") as f:
                    f.write(",".join(f"f{j}" for j in range(d)) + "\n")
                    for row in X[:n]:
                        f.write(",".join(repr(float(v)) for v in row) + "\n")
        model = os.path.join(tmp, "model.json")
        cmd = [binary, "fit", "--model", est, "--data", tr, "--out", model, "--quiet"]
        cmd += [] if unsup else ["--target", "target"]
        for k, v in params.items():
            cmd += ["--param", f"{k}={v}"]
        subprocess.run(cmd, check=True)
        m = factory()
        Xtr, ytr, Xte, yte = X[:n].astype(np.float64), y[:n], X[n:].astype(np.float64), y[n:]
        if unsup:
            m.fit(Xtr)
            st = json.load(open(model))["state"]
            if metric == "inertia":
                ours = float(np.frombuffer(bytes.fromhex(st["inertia"]), dtype="<f4")[0])
                theirs = float(m.inertia_)
            else:
                ours = float(np.frombuffer(bytes.fromhex(st["explained_variance_ratio"]), dtype="<f4")[0])
                theirs = float(m.explained_variance_ratio_[0])
        else:
            pred = os.path.join(tmp, "pred.csv")
            subprocess.run([binary, "predict", "--model", model, "--data", te, "--out", pred], check=True)
            p = np.loadtxt(pred, delimiter=",", skiprows=1)
            m.fit(Xtr, ytr)
            q = m.predict(Xte)
            f = r2_score if metric == "r2" else accuracy_score
            ours, theirs = float(f(yte, p)), float(f(yte, q))
        rows.append((case, metric, ours, theirs))
        print(f"{case:44s} {metric:9s} bitlearn {ours:.6g}  scikit-learn {theirs:.6g}", flush=True)
    with open(os.path.join(OUT, "metrics_1e5.md"), "w") as f:
        f.write("| estimator (10^5 training rows, 25000 test rows, 20 features) | metric | bitlearn | scikit-learn |\n")
        f.write("|---|---|---|---|\n")
        for case, metric, ours, theirs in rows:
            f.write(f"| {case} | {metric} | {ours:.6g} | {theirs:.6g} |\n")
    print("wrote", os.path.join(OUT, "metrics_1e5.md"))


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--big":
        return big(sys.argv[2])
    os.makedirs(OUT, exist_ok=True)
    splits = {}
    for name in ["diabetes", "diabetes_bmi", "breast_cancer", "iris", "wine"]:
        Xtr, Xte, ytr, yte = load(name)
        splits[name] = (Xtr, Xte, ytr, yte)
        write_csv(os.path.join(OUT, f"{name}_train.csv"), Xtr, ytr)
        write_csv(os.path.join(OUT, f"{name}_test.csv"), Xte, yte)
    golden = {"cases": []}
    for case, ds, est, params, model, metric, tol in CASES:
        Xtr, Xte, ytr, yte = splits[ds]
        fit_X, test_X = Xtr.astype(np.float64), Xte.astype(np.float64)
        if est == "isotonic_regression":
            fit_X, test_X = fit_X[:, 0], test_X[:, 0]
        model.fit(fit_X, ytr)
        pred = model.predict(test_X)
        value = r2_score(yte, pred) if metric == "r2" else accuracy_score(yte, pred)
        entry = {"case": case, "dataset": ds, "estimator": est, "params": params, "metric": metric,
                 "sklearn": float(value), "tolerance": tol}
        if hasattr(model, "coef_") and est in ("linear_regression", "ridge", "lasso", "elastic_net", "bayesian_ridge"):
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
