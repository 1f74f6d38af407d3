"""`bitlearn evaluate` against scikit-learn's metrics on the same predictions: classifiers (binary
and three classes, with and without predict_proba) and a regressor."""
import csv
import json
import subprocess

import numpy as np
import pytest
from sklearn import metrics

from conftest import ROOT

DATA = ROOT / "tests" / "data" / "ml_linear"


def _column(path, name):
    with open(path, newline="") as f:
        return np.array([float(r[name]) for r in csv.DictReader(f)])


def _run(cli, *args):
    r = subprocess.run([cli, *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("model,dataset,params", [
    ("logistic_regression", "breast_cancer_std", []),
    ("logistic_regression", "wine", ["--param", "max_iter=2000"]),
    ("decision_tree_classifier", "wine", ["--param", "max_depth=3"]),
    ("sgd_classifier", "breast_cancer_std", []),  # hinge loss: no predict_proba, so no log loss or AUC
])
def test_classifier_metrics_match_scikit_learn(cli, tmp_path, model, dataset, params):
    train, test = DATA / f"{dataset}_train.csv", DATA / f"{dataset}_test.csv"
    _run(cli, "fit", "--model", model, "--data", train, "--target", "target", "--out", tmp_path / "m.json",
         "--quiet", *params)
    out = _run(cli, "evaluate", "--model", tmp_path / "m.json", "--data", test, "--json", tmp_path / "e.json")
    got = json.loads((tmp_path / "e.json").read_text())
    _run(cli, "predict", "--model", tmp_path / "m.json", "--data", test, "--out", tmp_path / "p.csv")
    y = _column(test, "target")
    pred = _column(tmp_path / "p.csv", "target")
    assert got["task"] == "classification" and got["rows"] == len(y)
    assert got["accuracy"] == pytest.approx(metrics.accuracy_score(y, pred), abs=1e-12)
    for avg in ("macro", "weighted"):
        p, r, f, _ = metrics.precision_recall_fscore_support(y, pred, average=avg, zero_division=0)
        assert got[f"precision_{avg}"] == pytest.approx(p, abs=1e-12)
        assert got[f"recall_{avg}"] == pytest.approx(r, abs=1e-12)
        assert got[f"f1_{avg}"] == pytest.approx(f, abs=1e-12)
    labels = np.unique(np.concatenate([y, pred]))
    assert got["labels"] == list(labels)
    assert got["confusion_matrix"] == metrics.confusion_matrix(y, pred, labels=labels).tolist()
    assert "confusion matrix" in out
    if model == "sgd_classifier":
        assert got["log_loss"] is None and got["roc_auc"] is None
        return
    r = subprocess.run([cli, "predict", "--model", tmp_path / "m.json", "--data", test, "--output", "proba",
                        "--out", tmp_path / "q.csv"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    with open(tmp_path / "q.csv", newline="") as f:
        rows = list(csv.reader(f))
    header, proba = rows[0], np.array(rows[1:], dtype=np.float32)
    assert header == [f"proba_{int(c)}" for c in labels]  # columns named by class label
    assert got["log_loss"] == pytest.approx(metrics.log_loss(y, proba, labels=labels), rel=1e-6)
    auc = (metrics.roc_auc_score(y, proba[:, 1]) if len(labels) == 2 else
           metrics.roc_auc_score(y, proba, multi_class="ovr", average="macro", labels=labels))
    assert got["roc_auc"] == pytest.approx(auc, abs=1e-12)


def test_regressor_metrics_match_scikit_learn(cli, tmp_path):
    train, test = DATA / "diabetes_std_train.csv", DATA / "diabetes_std_test.csv"
    _run(cli, "fit", "--model", "ridge", "--data", train, "--target", "target", "--out", tmp_path / "m.json",
         "--quiet")
    _run(cli, "evaluate", "--model", tmp_path / "m.json", "--data", test, "--json", tmp_path / "e.json")
    got = json.loads((tmp_path / "e.json").read_text())
    _run(cli, "predict", "--model", tmp_path / "m.json", "--data", test, "--out", tmp_path / "p.csv")
    y = _column(test, "target")
    pred = _column(tmp_path / "p.csv", "target").astype(np.float32).astype(np.float64)
    assert got["task"] == "regression"
    assert got["r2"] == pytest.approx(metrics.r2_score(y, pred), abs=1e-9)
    assert got["mae"] == pytest.approx(metrics.mean_absolute_error(y, pred), rel=1e-9)
    assert got["mse"] == pytest.approx(metrics.mean_squared_error(y, pred), rel=1e-9)
    assert got["rmse"] == pytest.approx(np.sqrt(metrics.mean_squared_error(y, pred)), rel=1e-9)
    assert got["max_error"] == pytest.approx(metrics.max_error(y, pred), rel=1e-9)


def test_evaluate_errors_are_clear(cli, tmp_path):
    train = DATA / "breast_cancer_std_train.csv"
    _run(cli, "fit", "--model", "kmeans", "--data", train, "--ignore", "target", "--out", tmp_path / "k.json",
         "--quiet")
    r = subprocess.run([cli, "evaluate", "--model", tmp_path / "k.json", "--data", train], capture_output=True,
                       text=True)
    assert r.returncode == 2 and "records no target column" in r.stderr
    _run(cli, "fit", "--model", "ridge", "--data", train, "--target", "target", "--out", tmp_path / "r.json",
         "--quiet")
    r = subprocess.run([cli, "evaluate", "--model", tmp_path / "r.json", "--data", train, "--target", "nope"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "has no column 'nope'" in r.stderr
    r = subprocess.run([cli, "evaluate", "--model", tmp_path / "r.json", "--data", train, "--json", ""],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "--json: needs a value (got an empty one)" in r.stderr
