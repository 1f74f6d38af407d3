"""Naive Bayes and nearest centroid against scikit-learn: class probabilities, predictions and
fitted attributes on scikit-learn's bundled datasets and on generated counts.

bitlearn computes in binary32 (statistics summed in binary64 and rounded once), scikit-learn in
float64, so probabilities agree to about 1e-4 and a prediction may differ only where scikit-learn's
two best classes are within 1e-3 of each other (a near tie)."""
import numpy as np
import pytest
import sklearn.naive_bayes
import sklearn.neighbors
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.model_selection import train_test_split

from bitlearn import ml

PROBA_TOL = 1e-3
TIE = 1e-3


def _split(loader):
    X, y = loader(return_X_y=True)
    return train_test_split(X, y, test_size=0.3, random_state=0)


def _counts(n=600, d=30, seed=0):
    """Word-count-like data: three classes with their own Poisson rates per feature."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, size=n)
    rates = rng.gamma(1.0, 1.5, size=(3, d))
    X = rng.poisson(rates[y]).astype(np.float64)
    return train_test_split(X, y, test_size=0.3, random_state=0)


def _categories(n=800, d=8, seed=1):
    """Categorical features 0..4 whose distribution depends on the class; every category occurs
    in the training split of every feature."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 4, size=n)
    p = rng.dirichlet(np.ones(5), size=(4, d))
    X = np.stack([[rng.choice(5, p=p[c, j]) for j in range(d)] for c in y]).astype(np.float64)
    X[:5] = np.arange(5)[:, None]  # rows 0..4 carry each category in every feature
    return X[:560], X[560:], y[:560], y[560:]


def _compare(mine, ref, Xte, proba=True):
    pred = mine.predict(Xte)
    want = ref.predict(Xte)
    if proba:
        p = mine.predict_proba(Xte)
        q = ref.predict_proba(Xte)
        assert p.shape == q.shape
        assert np.max(np.abs(p - q)) <= PROBA_TOL, np.max(np.abs(p - q))
        top2 = np.sort(q, axis=1)[:, -2:]
        near_tie = (top2[:, 1] - top2[:, 0]) < TIE
        assert np.all((pred == want) | near_tie), np.flatnonzero(pred != want)
    else:
        assert np.array_equal(pred, want), np.flatnonzero(pred != want)
    np.testing.assert_array_equal(mine.classes_, ref.classes_)


CASES = [
    ("GaussianNB", {}, "iris"), ("GaussianNB", {}, "wine"), ("GaussianNB", {}, "breast_cancer"),
    ("GaussianNB", {"var_smoothing": 1e-3}, "digits"),
    ("MultinomialNB", {}, "digits"), ("MultinomialNB", {"alpha": 0.1}, "counts"),
    ("MultinomialNB", {"fit_prior": False}, "counts"),
    ("ComplementNB", {}, "digits"), ("ComplementNB", {"norm": True}, "counts"),
    ("BernoulliNB", {}, "digits"), ("BernoulliNB", {"binarize": 4.0, "alpha": 0.5}, "digits"),
    ("BernoulliNB", {"binarize": 1.0}, "counts"),
    ("CategoricalNB", {}, "categories"), ("CategoricalNB", {"alpha": 0.3}, "categories"),
]
DATA = {"iris": lambda: _split(load_iris), "wine": lambda: _split(load_wine),
        "breast_cancer": lambda: _split(load_breast_cancer), "digits": lambda: _split(load_digits),
        "counts": _counts, "categories": _categories}


@pytest.mark.parametrize("cls,params,data", CASES, ids=[f"{c}-{d}-{i}" for i, (c, _, d) in enumerate(CASES)])
def test_naive_bayes_against_scikit_learn(cls, params, data):
    Xtr, Xte, ytr, yte = DATA[data]()
    mine = getattr(ml, cls)(**params).fit(Xtr, ytr)
    ref = getattr(sklearn.naive_bayes, cls)(**params).fit(Xtr, ytr)
    _compare(mine, ref, Xte)
    assert abs(mine.score(Xte, yte) - ref.score(Xte, yte)) <= 2.0 / len(yte)
    np.testing.assert_array_equal(mine.class_count_, ref.class_count_)
    ref_log_prior = np.log(ref.class_prior_) if cls == "GaussianNB" else ref.class_log_prior_
    np.testing.assert_allclose(mine.class_log_prior_, ref_log_prior, rtol=1e-6, atol=1e-6)
    if cls == "GaussianNB":
        np.testing.assert_allclose(mine.theta_, ref.theta_, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(mine.var_, ref.var_, rtol=1e-5, atol=1e-6)
    elif cls == "CategoricalNB":
        assert len(mine.feature_log_prob_) == len(ref.feature_log_prob_)
        for a, b in zip(mine.feature_log_prob_, ref.feature_log_prob_):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_array_equal(mine.feature_count_, ref.feature_count_)
        if cls != "BernoulliNB":
            np.testing.assert_allclose(mine.feature_log_prob_, ref.feature_log_prob_, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("metric", ["euclidean", "manhattan"])
@pytest.mark.parametrize("data", ["iris", "wine", "digits"])
def test_nearest_centroid_against_scikit_learn(metric, data):
    Xtr, Xte, ytr, _ = DATA[data]()
    mine = ml.NearestCentroid(metric=metric).fit(Xtr, ytr)
    ref = sklearn.neighbors.NearestCentroid(metric=metric).fit(Xtr, ytr)
    np.testing.assert_allclose(mine.centroids_, ref.centroids_, rtol=1e-5, atol=1e-4)
    _compare(mine, ref, Xte, proba=False)


def test_naive_bayes_bad_input_is_a_clear_error():
    Xtr, _, ytr, _ = _counts()
    with pytest.raises(ValueError, match="Negative values"):
        ml.MultinomialNB().fit(Xtr - 1.0, ytr)
    with pytest.raises(Exception, match="alpha"):
        ml.MultinomialNB(alpha=0.0).fit(Xtr, ytr)
    cat = ml.CategoricalNB().fit(Xtr, ytr)
    with pytest.raises(Exception, match="was not seen in fit"):
        cat.predict(Xtr + 1000.0)
    with pytest.raises(Exception, match="zero variance"):
        ml.GaussianNB(var_smoothing=0.0).fit(np.ones((20, 3)), np.arange(20) % 2)
