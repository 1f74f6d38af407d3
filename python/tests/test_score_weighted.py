"""score with sample_weight: the C++ Estimator.score(X, y, sample_weight) (weighted accuracy / R^2)
against scikit-learn's score(X, y, sample_weight=w) of its own estimators fitted alike, and the
ranker's query-weighted NDCG against a brute-force numpy computation."""
import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import accuracy_score, r2_score
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor

from bitlearn import Tensor, _core, ml

from _peer_common import query_ndcg


def _data(n, d, seed, classes=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float32)
    s = X[:, 0] - 0.7 * X[:, 1] + 0.4 * X[:, 2] ** 2 + 0.3 * rng.normal(size=n)
    y = np.digitize(s, [-0.5, 0.5]).astype(np.float32) if classes else s.astype(np.float32)
    return X, y


def _weights(n, seed):
    return np.random.default_rng(seed).uniform(0.0, 3.0, size=n).astype(np.float32)


@pytest.mark.parametrize("name,peer,params,classes", [
    ("logistic_regression", LogisticRegression, {}, 3),
    ("gaussian_nb", GaussianNB, {}, 3),
    ("kneighbors_classifier", KNeighborsClassifier, {"n_neighbors": 5}, 3),
    ("ridge", Ridge, {"alpha": 2.0}, 0),
    ("kneighbors_regressor", KNeighborsRegressor, {"n_neighbors": 5}, 0),
])
def test_weighted_score_matches_scikit_learn(name, peer, params, classes):
    X, y = _data(200, 4, 1, classes)
    Xt, yt = _data(90, 4, 2, classes)
    w = _weights(90, 3)
    est = _core.Estimator.make(name, {k: str(v) for k, v in params.items()})
    est.fit(Tensor(X), Tensor(y))
    got = est.score(Tensor(Xt), Tensor(yt), Tensor(w))
    theirs = peer(**params).fit(X.astype(np.float64), y).score(Xt.astype(np.float64), yt, sample_weight=w)
    # Our weighted metric of our predictions, exactly as scikit-learn's metric computes it.
    pred = np.asarray(est.predict(Tensor(Xt)), dtype=np.float64)
    metric = accuracy_score if classes else r2_score
    assert got == pytest.approx(metric(yt, pred, sample_weight=w.astype(np.float64)), abs=1e-12)
    # Same predictions here for the classifiers; the regressors differ by float32 vs float64 fits.
    assert got == pytest.approx(theirs, abs=1e-12 if classes else 1e-6)
    # None and all-ones weights: the unweighted score's bits.
    plain = est.score(Tensor(Xt), Tensor(yt))
    assert est.score(Tensor(Xt), Tensor(yt), None) == plain
    assert est.score(Tensor(Xt), Tensor(yt), Tensor(np.ones(90, np.float32))) == plain


def test_sklearn_wrapper_passes_weights_like_scikit_learn():
    X, y = _data(150, 4, 4, 3)
    Xt, yt = _data(60, 4, 5, 3)
    w = _weights(60, 6)
    est = ml.LogisticRegression().fit(X, y)
    pred = est.predict(Xt)
    assert est.score(Xt, yt, sample_weight=w) == pytest.approx(accuracy_score(yt, pred, sample_weight=w), abs=1e-12)


def test_weighted_score_errors():
    X, y = _data(40, 3, 7)
    est = _core.Estimator.make("ridge", {})
    est.fit(Tensor(X), Tensor(y))
    with pytest.raises(Exception, match="ridge: sample_weight has 39 entries but X has 40 rows"):
        est.score(Tensor(X), Tensor(y), Tensor(np.ones(39, np.float32)))
    bad = np.ones(40, np.float32)
    bad[2] = -1
    with pytest.raises(Exception, match=r"ridge: sample_weight holds -1 at row 2"):
        est.score(Tensor(X), Tensor(y), Tensor(bad))
    km = _core.Estimator.make("kmeans", {"n_clusters": "3"})
    km.fit(Tensor(X))
    with pytest.raises(Exception, match="kmeans: score with sample_weight is not supported"):
        km.score(Tensor(X), Tensor(y), Tensor(np.ones(40, np.float32)))


def test_ranker_weighted_ndcg_matches_brute_force():
    rng = np.random.default_rng(8)
    nq, m = 40, 12
    X = rng.normal(size=(nq * m, 5)).astype(np.float32)
    y = np.clip(np.floor(X[:, 0] - 0.5 * X[:, 1] + 0.6 * rng.normal(size=len(X)) + 1.5), 0, 3).astype(np.float32)
    qid = np.repeat(np.arange(nq), m).astype(np.float32)
    est = ml.HistGradientBoostingRanker(max_iter=20, min_samples_leaf=5, eval_at=5)
    est.fit(X[: 30 * m], y[: 30 * m], group=qid[: 30 * m])
    Xt, yt, qt = X[30 * m:], y[30 * m:], qid[30 * m:]
    w = rng.uniform(0.0, 2.0, size=len(yt)).astype(np.float32)
    got = est.score(Xt, yt, group=qt, sample_weight=w)
    assert got == pytest.approx(query_ndcg(est.predict(Xt), yt, qt, 5, w), abs=1e-12)
    assert est.score(Xt, yt, group=qt, sample_weight=np.ones(len(yt))) == est.score(Xt, yt, group=qt)
    with pytest.raises(ValueError):
        est.score(Xt, yt, group=qt, sample_weight=-w)
