"""The same bits from Python as from the program: a model fit by bitlearn.ml and by `bitlearn fit`
on the same data writes the same model file bytes and gives the same prediction bytes."""
import subprocess

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_diabetes

import bitlearn as bl
from bitlearn import ml

CASES = [
    ("ridge", {"alpha": 0.5}, "reg"),
    ("lasso", {"alpha": 0.1}, "reg"),
    ("logistic_regression", {"C": 0.5, "max_iter": 200}, "clf"),
    ("decision_tree_classifier", {"max_depth": 4}, "clf"),
    ("random_forest_classifier", {"n_estimators": 5, "max_depth": 5}, "clf"),
    ("hist_gradient_boosting_regressor", {"max_iter": 10}, "reg"),
    ("kneighbors_classifier", {"n_neighbors": 3}, "clf"),
    ("kmeans", {"n_clusters": 3}, "unsup"),
    ("pca", {"n_components": 3}, "unsup"),
]


def write_csv(path, X, y, names, target):
    cols = list(names) + ([target] if y is not None else [])
    with open(path, "w") as f:
        f.write(",".join(cols) + "\n")
        for i in range(len(X)):
            row = [str(np.float32(v)) for v in X[i]]
            if y is not None:
                row.append(str(np.float32(y[i])))
            f.write(",".join(row) + "\n")


def read_predictions(path):
    with open(path) as f:
        lines = f.read().splitlines()[1:]
    return np.array([[np.float32(c) for c in line.split(",")] for line in lines], dtype=np.float32)


@pytest.mark.parametrize("name,params,kind", CASES, ids=[c[0] for c in CASES])
def test_fit_and_predict_equal_the_program(cli, tmp_path, name, params, kind):
    if kind == "reg":
        X, y = load_diabetes(return_X_y=True)
    else:
        X, y = load_breast_cancer(return_X_y=True)
    X = X[:300, :8].astype(np.float32)
    y = y[:300].astype(np.float32)
    names = [f"f{i}" for i in range(X.shape[1])]
    target = None if kind == "unsup" else "target"
    data = tmp_path / "train.csv"
    write_csv(data, X, None if target is None else y, names, "target")
    cli_model = tmp_path / "cli.json"
    cmd = [cli, "fit", "--model", name, "--data", str(data), "--out", str(cli_model), "--quiet"]
    if target:
        cmd += ["--target", target]
    for k, v in params.items():
        cmd += ["--param", f"{k}={v}"]
    subprocess.run(cmd, check=True, capture_output=True)

    est = ml.estimator_class(name)(**params)
    est.fit(X) if target is None else est.fit(X, y)
    py_model = tmp_path / "py.json"
    est.save_model(py_model, feature_names=names, target=target)
    assert py_model.read_bytes() == cli_model.read_bytes()

    output = "transform" if name == "pca" else "predict"
    cli_pred = tmp_path / "pred.csv"
    subprocess.run([cli, "predict", "--model", str(cli_model), "--data", str(data), "--out",
                    str(cli_pred), "--output", output], check=True, capture_output=True)
    theirs = read_predictions(cli_pred)
    mine = est.transform(X) if name == "pca" else est.predict(X)
    mine = np.asarray(mine, dtype=np.float32).reshape(theirs.shape)
    assert mine.tobytes() == theirs.tobytes()
    if hasattr(est, "predict_proba") and kind == "clf":
        cli_proba = tmp_path / "proba.csv"
        subprocess.run([cli, "predict", "--model", str(cli_model), "--data", str(data), "--out",
                        str(cli_proba), "--output", "proba"], check=True, capture_output=True)
        assert est.predict_proba(X).astype(np.float32).tobytes() == read_predictions(cli_proba).tobytes()


def test_csv_reader_is_the_programs(tmp_path):
    X = np.array([[1.5, -2.0], [0.1, 3.25]], np.float32)
    write_csv(tmp_path / "d.csv", X, np.array([0, 1], np.float32), ["a", "b"], "t")
    Xt, yt, names = bl._core.read_csv(str(tmp_path / "d.csv"), "t")
    assert names == ["a", "b"]
    assert np.asarray(Xt).tobytes() == X.tobytes()
    assert np.asarray(yt).tolist() == [0, 1]


def test_model_file_round_trip_and_threads():
    X, y = load_diabetes(return_X_y=True)
    a = ml.Ridge(alpha=0.3, n_jobs=1).fit(X, y)
    b = ml.Ridge(alpha=0.3, n_jobs=2).fit(X, y)
    assert a.model_file_text() == b.model_file_text()
    assert a.predict(X).tobytes() == b.predict(X).tobytes()
