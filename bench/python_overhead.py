"""The cost of the Python layer, and fit times against scikit-learn on the same data.

predict: bitlearn.ml's predict (scikit-learn's input validation, the float32 conversion, the
zero-copy hand-over, the label mapping) against the bare C++ call (bitlearn._core.Estimator.predict
on a Tensor: the C++ Estimator::predict behind one nanobind dispatch) and against
`bitlearn predict` (a process with CSV in and out, for scale), on 1 row and on 10^5 rows.
fit: bitlearn.ml against scikit-learn on the same float32 data, same hyper-parameters.

Usage: PYTHONPATH=build/python build/venv/bin/python bench/python_overhead.py [--cli build/bitlearn]
       [--rows 100000] [--threads N] [--json out.json]
"""
import argparse
import json
import os
import subprocess
import tempfile
import time

import numpy as np
import sklearn.cluster
import sklearn.ensemble
import sklearn.linear_model
from sklearn.datasets import make_classification, make_regression

import bitlearn
from bitlearn import ml


def best_of(fn, repeat, number=1):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def fmt(s):
    return f"{s * 1e6:9.1f} us" if s < 1e-2 else f"{s * 1e3:9.2f} ms"


def predict_overhead(est, X, cli, tmp, name):
    rows = {}
    for n in (1, len(X)):
        x = np.ascontiguousarray(X[:n])
        t = bitlearn.Tensor(x)
        reps, number = (7, 2000) if n == 1 else (5, 3)
        py = best_of(lambda: est.predict(x), reps, number)
        cpp = best_of(lambda: est._est.predict(t), reps, number)
        row = {"python_s": py, "cpp_call_s": cpp, "overhead_s": py - cpp}
        if cli:
            data = os.path.join(tmp, f"x{n}.csv")
            with open(data, "w") as f:
                f.write(",".join(f"f{i}" for i in range(x.shape[1])) + "\n")
                np.savetxt(f, x, delimiter=",", fmt="%.9g")
            model = os.path.join(tmp, f"{name}.json")
            est.save_model(model, feature_names=[f"f{i}" for i in range(x.shape[1])])
            out = os.path.join(tmp, "p.csv")
            row["cli_s"] = best_of(lambda: subprocess.run(
                [cli, "predict", "--model", model, "--data", data, "--out", out], check=True,
                capture_output=True), 3)
        rows[n] = row
        print(f"  predict {name:32s} rows={n:<7d} python {fmt(py)}  C++ call {fmt(cpp)}  "
              f"overhead {fmt(py - cpp)}" + (f"  CLI process {fmt(row['cli_s'])}" if cli else ""))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default="build/bitlearn")
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    if a.threads:
        bitlearn.set_num_threads(a.threads)
    cli = a.cli if os.path.exists(a.cli) else None
    n = a.rows
    Xr, yr = make_regression(n_samples=n, n_features=20, noise=5.0, random_state=0)
    Xc, yc = make_classification(n_samples=n, n_features=20, n_informative=10, random_state=0)
    Xr, Xc = Xr.astype(np.float32), Xc.astype(np.float32)
    yr = yr.astype(np.float32)
    print(f"bitlearn {bitlearn.__version__}, {bitlearn.num_threads()} threads, isa {bitlearn.cpu_isa()}, "
          f"{n} rows x 20 features")
    report = {"rows": n, "threads": bitlearn.num_threads(), "predict": {}, "fit": {}}
    cases = [
        ("Ridge", ml.Ridge(alpha=1.0), sklearn.linear_model.Ridge(alpha=1.0), Xr, yr),
        ("LogisticRegression", ml.LogisticRegression(max_iter=100),
         sklearn.linear_model.LogisticRegression(max_iter=100), Xc, yc),
        ("HistGradientBoostingClassifier", ml.HistGradientBoostingClassifier(max_iter=50),
         sklearn.ensemble.HistGradientBoostingClassifier(max_iter=50, early_stopping=False), Xc, yc),
        ("RandomForestRegressor", ml.RandomForestRegressor(n_estimators=20, max_depth=10),
         sklearn.ensemble.RandomForestRegressor(n_estimators=20, max_depth=10, n_jobs=-1,
                                                random_state=0), Xr, yr),
        ("KMeans", ml.KMeans(n_clusters=8), sklearn.cluster.KMeans(n_clusters=8, n_init=1,
                                                                     random_state=0), Xr, None),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for name, ours, theirs, X, y in cases:
            t_ours = best_of(lambda: ours.fit(X) if y is None else ours.fit(X, y), 1)
            t_theirs = best_of(lambda: theirs.fit(X) if y is None else theirs.fit(X, y), 1)
            report["fit"][name] = {"bitlearn_s": t_ours, "sklearn_s": t_theirs}
            print(f"fit {name:32s} bitlearn {fmt(t_ours)}  scikit-learn {fmt(t_theirs)}")
            if name in ("Ridge", "HistGradientBoostingClassifier", "RandomForestRegressor"):
                report["predict"][name] = predict_overhead(ours, X, cli, tmp, name)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
