"""standard_scaler, min_max_scaler, max_abs_scaler, robust_scaler and normalizer against scikit-learn.

On diabetes, wine and breast_cancer (float32 for bitlearn, float64 for scikit-learn): the fitted
statistics (mean_ / var_ / scale_, data_min_ / data_max_ / scale_ / min_, max_abs_, center_ / scale_)
and the transforms of the training rows and of shifted rows agree within float32 tolerance; every
setting's get_params round-trips; the Python classes are scikit-learn transformers (fit_transform).
"""
import json

import numpy as np
import pytest
from sklearn import preprocessing
from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine

from bitlearn import ml

DATA = {"diabetes": load_diabetes, "wine": load_wine, "breast_cancer": load_breast_cancer}


def _data(name):
    X = DATA[name]().data.astype(np.float32)
    return X, (X[::4] * np.float32(1.1) + np.float32(0.5))  # training rows, other rows


def _state(est):
    return json.loads(est._est.state_json())


def _f32(state, key):
    return np.frombuffer(bytes.fromhex(state[key]), dtype="<f4")


def _close(ours, theirs, rtol=2e-6):
    """Within a few float32 ulps of scikit-learn's float64 values, relative to each column's scale."""
    theirs = np.asarray(theirs, dtype=np.float64)
    ours = np.asarray(ours, dtype=np.float64)
    tol = rtol * np.maximum(1.0, np.abs(theirs).max(axis=0) if theirs.ndim == 2 else np.abs(theirs))
    assert np.all(np.abs(ours - theirs) <= tol), np.max(np.abs(ours - theirs) / tol)


def _compare(ours, theirs, X, Q, rtol=2e-6):
    a = ours.fit_transform(X)
    assert a.dtype == np.float32 and a.shape == X.shape
    theirs.fit(X.astype(np.float64))
    _close(a, theirs.transform(X.astype(np.float64)), rtol)
    _close(ours.transform(Q), theirs.transform(Q.astype(np.float64)), rtol)
    return _state(ours), theirs


@pytest.mark.parametrize("data", list(DATA))
@pytest.mark.parametrize("with_mean,with_std", [(True, True), (False, True), (True, False)])
def test_standard_scaler(data, with_mean, with_std):
    X, Q = _data(data)
    st, sk = _compare(ml.StandardScaler(with_mean=with_mean, with_std=with_std),
                      preprocessing.StandardScaler(with_mean=with_mean, with_std=with_std), X, Q, 1e-5)
    _close(_f32(st, "mean"), sk.mean_)
    if with_std:
        _close(_f32(st, "var"), sk.var_, 1e-5)
        _close(_f32(st, "scale"), sk.scale_, 1e-5)


@pytest.mark.parametrize("data", list(DATA))
@pytest.mark.parametrize("feature_range,clip", [((0, 1), False), ((-1, 3), False), ((-1, 1), True)])
def test_min_max_scaler(data, feature_range, clip):
    X, Q = _data(data)
    ours = ml.MinMaxScaler(feature_range=feature_range, clip=clip)
    st, sk = _compare(ours, preprocessing.MinMaxScaler(feature_range=feature_range, clip=clip), X, Q, 4e-6)
    assert ours._est.get_params()["feature_range"] == "%g,%g" % feature_range
    np.testing.assert_array_equal(_f32(st, "data_min"), sk.data_min_.astype(np.float32))
    np.testing.assert_array_equal(_f32(st, "data_max"), sk.data_max_.astype(np.float32))
    _close(_f32(st, "scale"), sk.scale_)
    _close(_f32(st, "min"), sk.min_)


@pytest.mark.parametrize("data", list(DATA))
def test_max_abs_scaler(data):
    X, Q = _data(data)
    st, sk = _compare(ml.MaxAbsScaler(), preprocessing.MaxAbsScaler(), X, Q, 1e-6)
    np.testing.assert_array_equal(_f32(st, "max_abs"), sk.max_abs_.astype(np.float32))


@pytest.mark.parametrize("data", list(DATA))
@pytest.mark.parametrize("quantile_range", [(25.0, 75.0), (10.0, 90.0), (0.0, 100.0), (33.3, 50.0)])
@pytest.mark.parametrize("with_centering,with_scaling", [(True, True), (False, True), (True, False)])
def test_robust_scaler(data, quantile_range, with_centering, with_scaling):
    X, Q = _data(data)
    st, sk = _compare(ml.RobustScaler(quantile_range=quantile_range, with_centering=with_centering,
                                      with_scaling=with_scaling),
                      preprocessing.RobustScaler(quantile_range=quantile_range, with_centering=with_centering,
                                                 with_scaling=with_scaling), X, Q, 4e-6)
    # The statistics are binary64 numpy values rounded once to float32: equal to scikit-learn's
    # float64 ones rounded to float32 (the data are float32 values, so both sort the same numbers).
    if with_centering:
        np.testing.assert_array_equal(_f32(st, "center"), sk.center_.astype(np.float32))
    if with_scaling:
        np.testing.assert_array_equal(_f32(st, "scale"), sk.scale_.astype(np.float32))


@pytest.mark.parametrize("data", list(DATA))
@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
def test_normalizer(data, norm):
    X, Q = _data(data)
    X = X.copy()
    X[3] = 0.0  # a zero row stays zero
    _compare(ml.Normalizer(norm=norm), preprocessing.Normalizer(norm=norm), X, Q, 1e-6)
    assert np.all(ml.Normalizer(norm=norm).fit(X).transform(X)[3] == 0.0)


def test_pipeline_with_a_bitlearn_scaler():
    """A bitlearn scaler in a scikit-learn pipeline before a bitlearn model: the same score within
    float32 noise as scikit-learn's scaler before it."""
    from sklearn.pipeline import make_pipeline
    X, y = load_breast_cancer(return_X_y=True)
    X = X.astype(np.float32)
    ours = make_pipeline(ml.StandardScaler(), ml.LogisticRegression()).fit(X, y).score(X, y)
    theirs = make_pipeline(preprocessing.StandardScaler(), ml.LogisticRegression()).fit(X, y).score(X, y)
    assert ours == pytest.approx(theirs, abs=0.01)
    assert ours > 0.95


@pytest.mark.parametrize("data", list(DATA))
@pytest.mark.parametrize("degree", [1, 2, 3])
@pytest.mark.parametrize("interaction_only", [False, True])
@pytest.mark.parametrize("include_bias", [True, False])
def test_polynomial_features_equal_sklearn_on_float32(data, degree, interaction_only, include_bias):
    """scikit-learn multiplies float32 columns in float32 in the same order (x_i1 (x_i2 (...))): the
    outputs are identical, and the column order is its powers_ order."""
    X, Q = _data(data)
    X, Q = X[:, :8], Q[:, :8]  # 8 features: 165 columns at degree 3
    ours = ml.PolynomialFeatures(degree=degree, interaction_only=interaction_only, include_bias=include_bias)
    theirs = preprocessing.PolynomialFeatures(degree=degree, interaction_only=interaction_only,
                                              include_bias=include_bias)
    a = ours.fit_transform(X)
    b = theirs.fit_transform(X)
    assert b.dtype == np.float32
    assert _state(ours)["n_output_features"] == theirs.n_output_features_
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ours.transform(Q), theirs.transform(Q))
