"""sample_weight against scikit-learn: LinearRegression, Ridge, Lasso, ElasticNet and
LogisticRegression fitted with the same weights give scikit-learn's coefficients (float32
tolerances); integer weights equal repeated rows; `bitlearn fit --weights COLUMN` writes the model
file that Python's fit(X, y, sample_weight) writes; estimators without weights say so."""
import csv
import json
import subprocess

import numpy as np
import pytest
import sklearn.linear_model as sk

from bitlearn import ml
from conftest import ROOT

DATA = ROOT / "tests" / "data" / "ml_linear"


def _xy(name):
    with open(DATA / name, newline="") as f:
        rows = list(csv.reader(f))
    header, values = rows[0], np.array(rows[1:], dtype=np.float64)
    t = header.index("target")
    return header, np.delete(values, t, axis=1).astype(np.float32), values[:, t].astype(np.float32)


def _weights(n):
    return ((np.arange(n) * 7 + 3) % 5).astype(np.float32) * 0.5  # 0, 0.5, ..., 2: zeros included


CASES = [
    ("LinearRegression", {}, "diabetes_std_train.csv", 2e-4),
    ("Ridge", {"alpha": 3.0}, "diabetes_std_train.csv", 2e-4),
    ("Lasso", {"alpha": 0.1, "tol": 1e-6, "max_iter": 10000}, "diabetes_std_train.csv", 2e-3),
    ("ElasticNet", {"alpha": 0.05, "l1_ratio": 0.4, "tol": 1e-6, "max_iter": 10000}, "diabetes_std_train.csv", 2e-3),
    ("LogisticRegression", {"C": 0.5, "tol": 1e-6, "max_iter": 2000}, "breast_cancer_std_train.csv", 2e-3),
]


@pytest.mark.parametrize("cls,params,data,tol", CASES, ids=[c[0] for c in CASES])
def test_weighted_fit_matches_scikit_learn(cls, params, data, tol):
    _, X, y = _xy(data)
    w = _weights(len(y))
    ours = getattr(ml, cls)(**params).fit(X, y, sample_weight=w)
    theirs = getattr(sk, cls)(**params).fit(X.astype(np.float64), y, sample_weight=w.astype(np.float64))
    a = np.concatenate([np.ravel(ours.coef_), np.ravel(ours.intercept_)]).astype(np.float64)
    b = np.concatenate([np.ravel(theirs.coef_), np.ravel(theirs.intercept_)])
    scale = max(1.0, np.max(np.abs(b)))
    assert np.max(np.abs(a - b)) <= tol * scale, (a, b)
    # The weights matter: the unweighted fit is farther from scikit-learn's weighted one.
    plain = getattr(ml, cls)(**params).fit(X, y)
    c = np.concatenate([np.ravel(plain.coef_), np.ravel(plain.intercept_)]).astype(np.float64)
    assert np.max(np.abs(c - b)) > 10 * np.max(np.abs(a - b))


def test_all_ones_and_none_give_the_unweighted_model_file():
    _, X, y = _xy("diabetes_std_train.csv")
    base = ml.Ridge().fit(X, y).model_file_text()
    assert ml.Ridge().fit(X, y, sample_weight=np.ones(len(y))).model_file_text() == base
    assert ml.Ridge().fit(X, y, sample_weight=None).model_file_text() == base


def test_cli_weights_column_equals_python(cli, tmp_path):
    header, X, y = _xy("diabetes_std_train.csv")
    w = _weights(len(y))
    path = tmp_path / "weighted.csv"
    feats = [h for h in header if h != "target"]
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(feats + ["target", "w"])
        for row, t, wi in zip(X, y, w):
            out.writerow([repr(float(v)) for v in row] + [repr(float(t)), repr(float(wi))])
    r = subprocess.run([cli, "fit", "--model", "ridge", "--data", str(path), "--target", "target", "--weights", "w",
                        "--out", str(tmp_path / "m.json")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert ", weights w" in r.stderr
    written = json.loads((tmp_path / "m.json").read_text())
    assert written["feature_names"] == feats  # the weight column is no feature
    assert written["sample_weight_column"] == "w"
    ours = json.loads(ml.Ridge().fit(X, y, sample_weight=w).model_file_text())
    assert written["state"] == ours["state"]
    bad = subprocess.run([cli, "fit", "--model", "pca", "--data", str(path), "--ignore", "target",
                          "--weights", "w", "--out", str(tmp_path / "k.json")], capture_output=True, text=True)
    assert bad.returncode != 0 and "pca: sample_weight is not supported" in bad.stderr
    missing = subprocess.run([cli, "fit", "--model", "ridge", "--data", str(path), "--target", "target", "--weights",
                              "nope", "--out", str(tmp_path / "x.json")], capture_output=True, text=True)
    assert missing.returncode != 0 and "--weights names column 'nope'" in missing.stderr


def test_bad_weights_get_scikit_learn_errors():
    _, X, y = _xy("diabetes_std_train.csv")
    with pytest.raises(ValueError, match="Negative values"):
        ml.Ridge().fit(X, y, sample_weight=-np.ones(len(y)))
    with pytest.raises(ValueError, match="sample_weight.shape"):
        ml.Ridge().fit(X, y, sample_weight=np.ones(len(y) - 1))
    assert "sample_weight" not in ml.PCA.fit.__code__.co_varnames


NB = [("GaussianNB", {}, False), ("MultinomialNB", {}, True), ("ComplementNB", {}, True),
      ("BernoulliNB", {"binarize": 1.0}, True), ("CategoricalNB", {}, True)]


@pytest.mark.parametrize("cls,params,counts", NB, ids=[c[0] for c in NB])
def test_weighted_naive_bayes_matches_scikit_learn(cls, params, counts):
    import sklearn.naive_bayes as sknb
    rng = np.random.RandomState(0)
    n, d = 400, 6
    y = rng.randint(0, 3, n)
    X = (rng.poisson(2.0 + y[:, None], (n, d)) if counts else rng.randn(n, d) + y[:, None]).astype(np.float32)
    w = _weights(n)
    ours = getattr(ml, cls)(**params).fit(X, y, sample_weight=w)
    theirs = getattr(sknb, cls)(**params).fit(X.astype(np.float64), y, sample_weight=w.astype(np.float64))
    np.testing.assert_allclose(ours.class_count_, theirs.class_count_, rtol=1e-6)
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), rtol=2e-4, atol=2e-6)
    assert np.array_equal(ours.predict(X), theirs.predict(X))


@pytest.mark.parametrize("cls", ["HistGradientBoostingClassifier", "HistGradientBoostingRegressor"])
def test_weighted_boosting_matches_scikit_learn(cls):
    import sklearn.ensemble as ske
    rng = np.random.RandomState(1)
    n = 3000
    X = rng.randn(n, 5).astype(np.float32)
    clean = X[:, 0] + 0.5 * X[:, 1] - X[:, 2] * X[:, 3]
    y = (clean > 0).astype(np.float32) if "Classifier" in cls else clean.astype(np.float32)
    noisy = np.arange(n) % 3 == 0  # scrambled rows, weight 0
    y_train = y.copy()
    y_train[noisy] = (1 - y[noisy]) if "Classifier" in cls else rng.randn(noisy.sum()).astype(np.float32) * 5
    w = np.where(noisy, 0.0, 1.0 + (np.arange(n) % 4)).astype(np.float32)
    ours = getattr(ml, cls)(max_iter=60).fit(X, y_train, sample_weight=w)
    theirs = getattr(ske, cls)(max_iter=60, early_stopping=False).fit(X, y_train, sample_weight=w)
    plain = getattr(ml, cls)(max_iter=60).fit(X, y_train)
    s_ours, s_theirs, s_plain = ours.score(X, y), theirs.score(X, y), plain.score(X, y)
    assert abs(s_ours - s_theirs) < 0.03, (s_ours, s_theirs)
    assert s_ours > s_plain + 0.05, (s_ours, s_plain)


@pytest.mark.parametrize("cls", ["DecisionTreeClassifier", "DecisionTreeRegressor", "RandomForestClassifier",
                                 "ExtraTreesRegressor"])
def test_weighted_trees_match_scikit_learn(cls):
    import sklearn.ensemble as ske
    import sklearn.tree as skt
    rng = np.random.RandomState(2)
    n = 2000
    X = rng.randn(n, 5).astype(np.float32)
    clean = X[:, 0] + 0.5 * X[:, 1] - X[:, 2] * X[:, 3]
    classify = "Classifier" in cls
    y = (clean > 0).astype(np.float32) if classify else clean.astype(np.float32)
    noisy = np.arange(n) % 3 == 0
    y_train = y.copy()
    y_train[noisy] = (1 - y[noisy]) if classify else rng.randn(noisy.sum()).astype(np.float32) * 5
    w = np.where(noisy, 0.0, 0.5 + (np.arange(n) % 4)).astype(np.float32)
    params = dict(max_depth=6, random_state=0)
    if "Forest" in cls or "Trees" in cls:
        params["n_estimators"] = 30
    peer = getattr(skt if "Decision" in cls else ske, cls)(**params)
    ours = getattr(ml, cls)(**params).fit(X, y_train, sample_weight=w)
    theirs = peer.fit(X.astype(np.float64), y_train, sample_weight=w.astype(np.float64))
    plain = getattr(ml, cls)(**params).fit(X, y_train)
    s_ours, s_theirs, s_plain = ours.score(X, y), theirs.score(X, y), plain.score(X, y)
    assert abs(s_ours - s_theirs) < 0.03, (s_ours, s_theirs)
    assert s_ours > s_plain + 0.03, (s_ours, s_plain)
    if cls == "DecisionTreeClassifier":  # the same tree: the same predictions
        assert np.mean(ours.predict(X) == theirs.predict(X)) > 0.995


def test_weighted_kmeans_matches_scikit_learn():
    from sklearn.cluster import KMeans
    from sklearn.datasets import make_blobs
    X, _ = make_blobs(n_samples=900, centers=4, cluster_std=0.8, random_state=3)
    X = X.astype(np.float32)
    w = _weights(len(X)) + 0.25
    ours = ml.KMeans(n_clusters=4).fit(X, sample_weight=w)
    theirs = KMeans(n_clusters=4, n_init=1, random_state=0).fit(X.astype(np.float64), sample_weight=w)
    order = [np.argmin(((theirs.cluster_centers_ - c) ** 2).sum(1)) for c in ours.cluster_centers_]
    assert sorted(order) == [0, 1, 2, 3]
    np.testing.assert_allclose(ours.cluster_centers_, theirs.cluster_centers_[order], rtol=1e-4, atol=1e-4)
    assert abs(ours.inertia_ - theirs.inertia_) <= 1e-4 * theirs.inertia_
