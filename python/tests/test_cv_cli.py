"""`bitlearn cv` against scikit-learn: the same folds as KFold / StratifiedKFold (unshuffled), and the
same per-fold scores as cross_val_score of the bitlearn.ml estimator over those folds."""
import csv
import json
import subprocess

import numpy as np
import pytest
from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score

from bitlearn import ml
from conftest import ROOT

DATA = ROOT / "tests" / "data" / "ml_linear"


def _xy(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header, values = rows[0], np.array(rows[1:], dtype=np.float64)
    t = header.index("target")
    return np.delete(values, t, axis=1).astype(np.float32), values[:, t]


def _cv(cli, tmp_path, *args):
    r = subprocess.run([cli, "cv", *map(str, args), "--json", str(tmp_path / "cv.json")], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    return json.loads((tmp_path / "cv.json").read_text()), r


def _folds_of(splitter, X, y):
    fold = np.empty(len(y), dtype=int)
    for f, (_, test) in enumerate(splitter.split(X, y)):
        fold[test] = f
    return fold.tolist()


@pytest.mark.parametrize("model,cls,dataset,k", [
    ("logistic_regression", "LogisticRegression", "breast_cancer_std", 5),
    ("logistic_regression", "LogisticRegression", "wine", 4),
    ("ridge", "Ridge", "diabetes_std", 5),
    ("ridge", "Ridge", "diabetes_std", 7),
])
def test_cv_matches_scikit_learn(cli, tmp_path, model, cls, dataset, k):
    path = DATA / f"{dataset}_train.csv"
    X, y = _xy(path)
    params = ["--param", "max_iter=3000"] if dataset == "wine" else []
    got, _ = _cv(cli, tmp_path, "--model", model, "--data", path, "--target", "target", "--folds", k, *params)
    classifier = model == "logistic_regression"
    splitter = StratifiedKFold(k) if classifier else KFold(k)
    assert got["stratified"] == classifier
    assert got["test_fold"] == _folds_of(splitter, X, y)
    est = getattr(ml, cls)(**({"max_iter": 3000} if dataset == "wine" else {}))
    expected = cross_val_score(est, X, y, cv=splitter)
    assert got["scores"] == pytest.approx(list(expected), abs=1e-12)
    assert got["mean"] == pytest.approx(expected.mean(), abs=1e-12)
    assert got["std"] == pytest.approx(expected.std(), abs=1e-12)


def test_shuffled_folds_are_seeded_and_stratified(cli, tmp_path):
    path = DATA / "breast_cancer_std_train.csv"
    _, y = _xy(path)
    a, _ = _cv(cli, tmp_path, "--model", "logistic_regression", "--data", path, "--target", "target", "--shuffle",
               "--seed", 7)
    b, _ = _cv(cli, tmp_path, "--model", "logistic_regression", "--data", path, "--target", "target", "--shuffle",
               "--seed", 7, "--threads", 1)
    c, _ = _cv(cli, tmp_path, "--model", "logistic_regression", "--data", path, "--target", "target", "--shuffle",
               "--seed", 8)
    assert a["test_fold"] == b["test_fold"] and a["scores"] == b["scores"]
    assert a["test_fold"] != c["test_fold"]
    fold = np.array(a["test_fold"])
    for f in range(5):  # each fold keeps the class shares (within one row per class)
        for label in (0.0, 1.0):
            share = np.sum((fold == f) & (y == label))
            assert abs(share - np.sum(y == label) / 5) <= 1


def test_cv_errors_are_clear(cli, tmp_path):
    path = DATA / "wine_train.csv"
    r = subprocess.run([cli, "cv", "--model", "ridge", "--data", str(path), "--target", "target", "--folds", "1"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "at least 2" in r.stderr
    r = subprocess.run([cli, "cv", "--model", "logistic_regression", "--data", str(path), "--target", "target",
                        "--folds", "1000"], capture_output=True, text=True)
    assert r.returncode == 2 and "no class has that many rows" in r.stderr
    r = subprocess.run([cli, "cv", "--model", "nope", "--data", str(path), "--target", "target"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "nope" in r.stderr
