#!/usr/bin/env python3
"""Fit time of bitlearn's linear / cluster / neighbors / decomposition estimators against
scikit-learn on the same data and the same number of threads; prints the ratio
sklearn_time / bitlearn_time (>= 1 means bitlearn is as fast or faster) and each side's test metric.

    python3 bench/ml_vs_sklearn.py --bin build/bitlearn --rows 100000 1000000 --threads 2 [--only kmeans]

bitlearn's time is the fit alone (the `fit ... in X s` line of `bitlearn fit`, CSV parsing
excluded); scikit-learn's is model.fit under threadpoolctl's limit. k-NN has no real fit in either
library, so its row times predict of 10^4 query rows (bitlearn through `bitlearn predict`, whose
time then includes reading the CSV; reported as such). Each figure is the best of --repeat runs.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
from sklearn import cluster, datasets, decomposition, linear_model, neighbors
from sklearn.metrics import accuracy_score, r2_score
from threadpoolctl import threadpool_limits

D = 20


def data(kind, n, seed=0):
    if kind == "reg":
        X, y = datasets.make_regression(n_samples=n, n_features=D, n_informative=10, noise=10.0, random_state=seed)
    elif kind == "bin":
        X, y = datasets.make_classification(n_samples=n, n_features=D, n_informative=10, random_state=seed)
    elif kind == "multi":
        X, y = datasets.make_classification(n_samples=n, n_features=D, n_informative=10, n_classes=3,
                                            random_state=seed)
    else:
        X, y = datasets.make_blobs(n_samples=n, n_features=D, centers=8, random_state=seed)
    return X.astype(np.float32), y.astype(np.float32)


CASES = {
    # name: (data kind, bitlearn estimator, params, sklearn model factory, metric)
    "linear_regression": ("reg", "linear_regression", {}, lambda: linear_model.LinearRegression(), "r2"),
    "ridge": ("reg", "ridge", {"alpha": "1"}, lambda: linear_model.Ridge(alpha=1.0), "r2"),
    "lasso": ("reg", "lasso", {"alpha": "0.1"}, lambda: linear_model.Lasso(alpha=0.1), "r2"),
    "elastic_net": ("reg", "elastic_net", {"alpha": "0.1", "l1_ratio": "0.5"},
                    lambda: linear_model.ElasticNet(alpha=0.1, l1_ratio=0.5), "r2"),
    "logistic_binary": ("bin", "logistic_regression", {"C": "1"},
                        lambda: linear_model.LogisticRegression(C=1.0), "accuracy"),
    "logistic_multinomial": ("multi", "logistic_regression", {"C": "1"},
                             lambda: linear_model.LogisticRegression(C=1.0), "accuracy"),
    "kmeans": ("blobs", "kmeans", {"n_clusters": "8"},
               lambda: cluster.KMeans(n_clusters=8, n_init=1, random_state=0), "inertia"),
    "minibatch_kmeans": ("blobs", "minibatch_kmeans", {"n_clusters": "8"},
                         lambda: cluster.MiniBatchKMeans(n_clusters=8, n_init=1, random_state=0), "inertia"),
    "pca": ("reg", "pca", {}, lambda: decomposition.PCA(), "none"),
    "kneighbors_classifier": ("multi", "kneighbors_classifier", {"n_neighbors": "5"},
                              lambda: neighbors.KNeighborsClassifier(n_neighbors=5, algorithm="brute"),
                              "accuracy"),
}


def write_csv(path, X, y=None):
    cols = [f"f{j}" for j in range(X.shape[1])]
    M = X if y is None else np.column_stack([X, y])
    if y is not None:
        cols.append("target")
    np.savetxt(path, M, delimiter=",", header=",".join(cols), comments="", fmt="%.9g")


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(" ".join(cmd) + "\n" + r.stderr)
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/bitlearn")
    ap.add_argument("--rows", type=int, nargs="+", default=[100000, 1000000])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="bl_mlbench_")
    print(f"threads {args.threads}, {D} features, best of {args.repeat}; ratio = sklearn / bitlearn")
    print(f"{'case':24s} {'rows':>8s} {'bitlearn s':>10s} {'sklearn s':>10s} {'ratio':>6s}  metric (bitlearn / sklearn)")
    for n in args.rows:
        for name, (kind, est, params, factory, metric) in CASES.items():
            if args.only and name not in args.only:
                continue
            X, y = data(kind, n + 10000)
            Xtr, ytr, Xte, yte = X[:n], y[:n], X[n:], y[n:]
            unsup = metric in ("inertia", "none")
            train = os.path.join(tmp, f"{kind}_{n}.csv")
            test = os.path.join(tmp, f"{kind}_{n}_test.csv")
            if not os.path.exists(train):
                write_csv(train, Xtr, ytr)
                write_csv(test, Xte, yte)
            model_path = os.path.join(tmp, "model.json")
            pred_path = os.path.join(tmp, "pred.csv")
            cmd = [args.bin, "fit", "--model", est, "--data", train, "--out", model_path,
                   "--threads", str(args.threads)]
            cmd += [] if unsup else ["--target", "target"]
            for k, v in params.items():
                cmd += ["--param", f"{k}={v}"]
            knn = name.startswith("kneighbors")
            ours = []
            for _ in range(args.repeat):
                if knn:
                    run(cmd)
                    t0 = time.perf_counter()
                    run([args.bin, "predict", "--model", model_path, "--data", test, "--out", pred_path,
                         "--threads", str(args.threads)])
                    ours.append(time.perf_counter() - t0)
                else:
                    r = run(cmd)
                    ours.append(float(re.search(r" in ([0-9.]+) s", r.stderr).group(1)))
            theirs = []
            with threadpool_limits(args.threads):
                for _ in range(args.repeat):
                    m = factory()
                    if knn:
                        m.fit(Xtr.astype(np.float64), ytr)
                        t0 = time.perf_counter()
                        sk_pred = m.predict(Xte.astype(np.float64))
                    else:
                        t0 = time.perf_counter()
                        if unsup:
                            m.fit(Xtr)
                        else:
                            m.fit(Xtr, ytr)
                    theirs.append(time.perf_counter() - t0)
            metric_text = ""
            if metric in ("r2", "accuracy"):
                if not knn:
                    run([args.bin, "predict", "--model", model_path, "--data", test, "--out", pred_path])
                    sk_pred = m.predict(Xte)
                ours_pred = np.loadtxt(pred_path, delimiter=",", skiprows=1)
                f = r2_score if metric == "r2" else accuracy_score
                metric_text = f"{metric} {f(yte, ours_pred):.4f} / {f(yte, sk_pred):.4f}"
            elif metric == "inertia":
                import json
                with open(model_path) as fh:
                    st = json.load(fh)["state"]
                ours_inertia = np.frombuffer(bytes.fromhex(st["inertia"]), dtype="<f4")[0]
                metric_text = f"inertia {ours_inertia:.5g} / {m.inertia_:.5g}"
            label = name + (" (predict 1e4)" if knn else "")
            print(f"{label:24s} {n:8d} {min(ours):10.3f} {min(theirs):10.3f} {min(theirs) / min(ours):6.2f}  {metric_text}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
