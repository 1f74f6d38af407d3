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


def _with_weights(path, out, weights, at=3):
    """path's CSV with a column "w" of weights inserted before column `at`."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    rows[0].insert(at, "w")
    for r, w in zip(rows[1:], weights):
        r.insert(at, repr(float(w)))
    with open(out, "w", newline="") as f:
        csv.writer(f).writerows(rows)
    return out


def _uneven(n):
    return np.float32(0.25) * (1 + (np.arange(n) * 7) % 5).astype(np.float32)


@pytest.mark.parametrize("model,dataset,extra", [
    ("ridge", "diabetes_std", []),
    ("logistic_regression", "breast_cancer_std", []),
    ("ridge", "diabetes_std", ["--grid", "alpha=0.1,1,10", "--scoring", "neg_mean_absolute_error"]),
])
def test_cv_all_ones_weights_change_nothing(cli, tmp_path, model, dataset, extra):
    path = DATA / f"{dataset}_train.csv"
    _, y = _xy(path)
    weighted = _with_weights(path, tmp_path / "w.csv", np.ones(len(y)))
    plain, rp = _cv(cli, tmp_path, "--model", model, "--data", path, "--target", "target", *extra)
    ones, rw = _cv(cli, tmp_path, "--model", model, "--data", weighted, "--target", "target", "--weights", "w",
                   *extra)
    assert ones.pop("sample_weight_column") == "w"
    ones["data"] = plain["data"]
    assert ones == plain  # scores, folds, grid results: the same numbers
    assert rw.stdout == rp.stdout


@pytest.mark.parametrize("model,cls,dataset", [
    ("ridge", "Ridge", "diabetes_std"),
    ("logistic_regression", "LogisticRegression", "breast_cancer_std"),
])
def test_cv_weights_match_scikit_learn(cli, tmp_path, model, cls, dataset):
    # scikit-learn's cross_validate with params={"sample_weight": w}: weighted fits, unweighted scores.
    # The weight column sits among the features in the file and is no feature (X below lacks it).
    from sklearn.model_selection import cross_validate
    path = DATA / f"{dataset}_train.csv"
    X, y = _xy(path)
    w = _uneven(len(y))
    weighted = _with_weights(path, tmp_path / "w.csv", w)
    got, r = _cv(cli, tmp_path, "--model", model, "--data", weighted, "--target", "target", "--weights", "w")
    assert f"x {X.shape[1]} features" in r.stdout
    classifier = model == "logistic_regression"
    splitter = StratifiedKFold(5) if classifier else KFold(5)
    expected = cross_validate(getattr(ml, cls)(), X, y, cv=splitter, params={"sample_weight": w})["test_score"]
    assert got["scores"] == pytest.approx(list(expected), abs=1e-12)
    unweighted, _ = _cv(cli, tmp_path, "--model", model, "--data", path, "--target", "target")
    assert got["scores"] != unweighted["scores"]  # the weights reach the fits
    for threads in (1, 2, 3):  # the same bits at every thread count
        again, _ = _cv(cli, tmp_path, "--model", model, "--data", weighted, "--target", "target", "--weights", "w",
                       "--threads", threads)
        assert again["scores"] == got["scores"]
    # --refit: the model `bitlearn fit --weights` writes, byte for byte.
    _cv(cli, tmp_path, "--model", model, "--data", weighted, "--target", "target", "--weights", "w", "--refit",
        tmp_path / "refit.json")
    f = subprocess.run([cli, "fit", "--model", model, "--data", str(weighted), "--target", "target", "--weights",
                        "w", "--out", str(tmp_path / "fit.json"), "--quiet"], capture_output=True, text=True)
    assert f.returncode == 0, f.stderr
    assert (tmp_path / "refit.json").read_text() == (tmp_path / "fit.json").read_text()


def test_cv_weights_errors_are_clear(cli, tmp_path):
    path = DATA / "diabetes_std_train.csv"
    _, y = _xy(path)
    weighted = _with_weights(path, tmp_path / "w.csv", np.ones(len(y)))

    def run(*args):
        return subprocess.run([cli, "cv", "--data", str(weighted), "--target", "target", *map(str, args)],
                              capture_output=True, text=True)

    r = run("--model", "kneighbors_regressor", "--weights", "w")
    assert r.returncode == 2
    assert "kneighbors_regressor: sample_weight is not supported by this estimator" in r.stderr
    assert r.stdout == ""  # refused before any fold
    r = run("--model", "ridge", "--weights", "nope")
    assert r.returncode == 2 and "--weights names column 'nope'" in r.stderr
    r = run("--model", "ridge", "--weights", "target")
    assert r.returncode == 2 and "--weights names the target column" in r.stderr
    r = run("--model", "ridge", "--weights", "w", "--features", "f0,w")
    assert r.returncode == 2 and "also named in --features" in r.stderr
    neg = _with_weights(path, tmp_path / "neg.csv", -np.ones(len(y)))
    r = subprocess.run([cli, "cv", "--model", "ridge", "--data", str(neg), "--target", "target", "--weights", "w"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "sample_weight holds -1" in r.stderr
