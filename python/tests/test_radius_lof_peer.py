"""RadiusNeighborsClassifier, RadiusNeighborsRegressor and LocalOutlierFactor (novelty=True)
against scikit-learn on standardized iris and wine, make_classification and make_regression.

Both sides see the same float32 data (scikit-learn in float64). bitlearn's squared distances are
binary32 (contract GEMM), so a query with a training row within a relative 1e-4 of the radius is
left out (it may fall on either side), and a prediction may differ only where scikit-learn's two
best classes are within 1e-5 (a near tie). Queries are held-out rows: on a training row itself
the distance 0 of scikit-learn can be a tiny positive binary32 distance here, which changes
distance weights. LOF is compared on data without tied distances (iris, whose values lie on a
0.1 grid, gets a small jitter): with ties, which rows are a row's k nearest is arbitrary in
scikit-learn."""
import warnings

import numpy as np
import pytest
import sklearn.neighbors
from sklearn.datasets import load_iris, load_wine, make_classification, make_regression
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from bitlearn import ml

PROBA_TOL = 1e-5
LOF_TOL = 1e-4


def _standardized(X):
    return StandardScaler().fit_transform(X).astype(np.float32)


def _data(which):
    if which == "iris":
        X, y = load_iris(return_X_y=True)
    elif which == "wine":
        X, y = load_wine(return_X_y=True)
    elif which == "classification":
        X, y = make_classification(n_samples=500, n_features=6, n_informative=4, n_classes=3,
                                   random_state=0)
    else:
        X, y = make_regression(n_samples=500, n_features=5, noise=5.0, random_state=0)
        y = y.astype(np.float32)
    X = _standardized(X)
    return train_test_split(X, y, test_size=0.3, random_state=0)


def _radii(X):
    """Two radii for X: about the 5th and 25th percentile of the train-train distances."""
    d = np.sqrt(((X[:, None, :].astype(np.float64) - X[None, :, :]) ** 2).sum(-1))
    return [float(np.round(np.percentile(d, q), 3)) for q in (5, 25)]


def _clear_of_boundary(Xtr, Xte, r):
    d = np.sqrt(((Xte[:, None, :].astype(np.float64) - Xtr[None, :, :]) ** 2).sum(-1))
    return ~np.any(np.abs(d - r) < 1e-4 * r, axis=1)


@pytest.mark.parametrize("which", ["iris", "wine", "classification"])
@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_radius_classifier_matches_sklearn(which, weights):
    Xtr, Xte, ytr, _ = _data(which)
    for r in _radii(Xtr):
        ours = ml.estimator_class("radius_neighbors_classifier")(radius=r, weights=weights,
                                                                 outlier_label=-1).fit(Xtr, ytr)
        ref = sklearn.neighbors.RadiusNeighborsClassifier(radius=r, weights=weights,
                                                          outlier_label=-1).fit(Xtr.astype(np.float64), ytr)
        keep = _clear_of_boundary(Xtr, Xte, r)
        assert keep.mean() > 0.8
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scikit-learn: the outlier label is no class
            p_ref, y_ref = ref.predict_proba(Xte), ref.predict(Xte)
        p, y = ours.predict_proba(Xte), ours.predict(Xte)
        np.testing.assert_allclose(p[keep], p_ref[keep], atol=PROBA_TOL, rtol=PROBA_TOL)
        top = np.sort(p_ref, axis=1)
        clear = keep & (top[:, -1] - top[:, -2] > PROBA_TOL)
        np.testing.assert_array_equal(y[clear], y_ref[clear])
        assert np.all(y[keep & (p_ref.sum(axis=1) == 0)] == -1)


@pytest.mark.parametrize("which", ["regression", "wine"])
@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_radius_regressor_matches_sklearn(which, weights):
    Xtr, Xte, ytr, _ = _data(which)
    ytr = np.asarray(ytr, dtype=np.float32)
    for r in _radii(Xtr):
        ours = ml.estimator_class("radius_neighbors_regressor")(radius=r, weights=weights).fit(Xtr, ytr)
        ref = sklearn.neighbors.RadiusNeighborsRegressor(radius=r, weights=weights).fit(
            Xtr.astype(np.float64), ytr.astype(np.float64))
        keep = _clear_of_boundary(Xtr, Xte, r)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scikit-learn warns where it predicts NaN
            want = ref.predict(Xte)
        got = ours.predict(Xte)
        np.testing.assert_array_equal(np.isnan(got[keep]), np.isnan(want[keep]))
        ok = keep & ~np.isnan(want)
        scale = np.maximum(1.0, np.abs(want[ok]))
        assert np.max(np.abs(got[ok] - want[ok]) / scale) < PROBA_TOL


def test_radius_classifier_outlier_label_none_raises():
    Xtr, Xte, ytr, _ = _data("iris")
    est = ml.estimator_class("radius_neighbors_classifier")(radius=0.05).fit(Xtr, ytr)
    with pytest.raises(Exception, match="query row"):
        est.predict(Xte)
    est = ml.estimator_class("radius_neighbors_classifier")(radius=0.05, outlier_label="most_frequent")
    ref = sklearn.neighbors.RadiusNeighborsClassifier(radius=0.05, outlier_label="most_frequent")
    np.testing.assert_array_equal(est.fit(Xtr, ytr).predict(Xte),
                                  ref.fit(Xtr.astype(np.float64), ytr).predict(Xte))


def _lof_data(which):
    if which == "iris":
        X, _ = load_iris(return_X_y=True)
        X = X + np.random.default_rng(0).normal(scale=1e-3, size=X.shape)
    elif which == "wine":
        X, _ = load_wine(return_X_y=True)
    else:
        X, _ = make_classification(n_samples=600, n_features=5, random_state=1)
    X = _standardized(X)
    Xtr, Xte = train_test_split(X, test_size=0.3, random_state=0)
    Xte = Xte.copy()
    Xte[:5] += 3.0  # a few clear outliers
    return Xtr, Xte


@pytest.mark.parametrize("which", ["iris", "wine", "classification"])
@pytest.mark.parametrize("n_neighbors,contamination", [(20, "auto"), (10, 0.1), (5, 0.25)])
def test_lof_matches_sklearn(which, n_neighbors, contamination):
    Xtr, Xte = _lof_data(which)
    ours = ml.estimator_class("local_outlier_factor")(n_neighbors=n_neighbors,
                                                      contamination=contamination).fit(Xtr)
    ref = sklearn.neighbors.LocalOutlierFactor(n_neighbors=n_neighbors, contamination=contamination,
                                               novelty=True).fit(Xtr.astype(np.float64))
    np.testing.assert_allclose(ours.negative_outlier_factor_, ref.negative_outlier_factor_, rtol=LOF_TOL)
    assert ours.offset_ == pytest.approx(ref.offset_, rel=LOF_TOL)
    assert ours.n_neighbors_ == ref.n_neighbors_
    s, s_ref = ours.score_samples(Xte), ref.score_samples(Xte)
    np.testing.assert_allclose(s, s_ref, rtol=LOF_TOL)
    d, d_ref = ours.decision_function(Xte), ref.decision_function(Xte)
    np.testing.assert_allclose(d, d_ref, atol=LOF_TOL * np.max(np.abs(s_ref)))
    clear = np.abs(d_ref) > LOF_TOL * np.abs(s_ref)
    np.testing.assert_array_equal(ours.predict(Xte)[clear], ref.predict(Xte)[clear])
    assert np.all(ours.predict(Xte)[:5] == -1)


def test_lof_has_no_fit_predict():
    est = ml.estimator_class("local_outlier_factor")()
    assert not hasattr(est, "fit_predict")
    with pytest.raises(Exception, match="novelty"):
        ml.estimator_class("local_outlier_factor")(novelty=False).fit(np.zeros((5, 2), np.float32))
