"""spline_transformer and target_encoder against scikit-learn.

On diabetes, wine and breast_cancer (float32 for bitlearn, float64 for scikit-learn, which sees the
same float32 values): spline_transformer's base knots equal scikit-learn's (numpy's linspace and
linear percentiles of the same values), its output is within 1e-6 of scikit-learn's (relative
beyond 1) for every extrapolation, degree 0 to 3, uniform and quantile knots, with and without the
bias spline, on the training rows and on shifted rows (outside the knots); linear extrapolation at
degree 0 and 1 against scikit-learn fitted one column at a time (its multi-column output is wrong
there: the loop's raised degree carries over to the next columns). target_encoder (columns
binned into categories): categories_ equal, encodings_ and target_mean_ within 1e-12 relative
(continuous, binary and multiclass targets, smooth auto and numbers), transform within a float32 rounding
(an unseen category: the target mean), fit_transform without shuffle equal to scikit-learn's (the
same KFold / StratifiedKFold folds); with shuffle the folds come from the library's Philox
permutation, so only the shape and transform after fit are compared.
"""
import json

import numpy as np
import pytest
from sklearn import preprocessing
from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine
from sklearn.model_selection import KFold, StratifiedKFold

from bitlearn import ml

DATA = {"diabetes": load_diabetes, "wine": load_wine, "breast_cancer": load_breast_cancer}


def _state(est):
    return json.loads(est._est.state_json())


def _f64(state, key):
    return np.frombuffer(bytes.fromhex(state[key]), dtype="<f8")


def _spline_data(name, knots):
    X = DATA[name]().data.astype(np.float32)
    if knots == "quantile":  # columns whose 5 quantile knots are distinct (no tied percentiles)
        q = np.percentile(X.astype(np.float64), np.linspace(0, 100, 5), axis=0)
        X = np.ascontiguousarray(X[:, np.all(np.diff(q, axis=0) > 0, axis=0)])
    return X, np.ascontiguousarray(X[::3] * np.float32(1.2) - np.float32(0.1) * X.std(axis=0))


def _theirs_transform(theirs, params, X, rows):
    """scikit-learn's output; linear extrapolation at degree 0 or 1 one column at a time (scikit-learn
    1.9 raises its loop's degree to 2 at the first column and keeps it for the next columns, which
    then take their end knots from the wrong positions)."""
    if params["extrapolation"] != "linear" or params["degree"] > 1:
        return theirs.transform(rows.astype(np.float64))
    return np.hstack([preprocessing.SplineTransformer(**params).fit(X[:, [j]].astype(np.float64))
                      .transform(rows[:, [j]].astype(np.float64)) for j in range(X.shape[1])])


@pytest.mark.parametrize("data", list(DATA))
@pytest.mark.parametrize("knots", ["uniform", "quantile"])
@pytest.mark.parametrize("extrapolation", ["error", "constant", "linear", "continue", "periodic"])
@pytest.mark.parametrize("degree", [0, 1, 2, 3])
def test_spline_transformer(data, knots, extrapolation, degree):
    if degree == 0 and extrapolation == "constant":
        pytest.skip("scikit-learn's constant extrapolation fails at degree 0 (f_max[-0:] is the whole row)")
    X, Q = _spline_data(data, knots)
    include_bias = degree != 2
    params = dict(n_knots=5, degree=degree, knots=knots, extrapolation=extrapolation, include_bias=include_bias)
    ours = ml.SplineTransformer(**params).fit(X)
    theirs = preprocessing.SplineTransformer(**params).fit(X.astype(np.float64))
    base = _f64(_state(ours), "base_knots_f64").reshape(5, -1)
    want_knots = np.stack([s.t[degree:degree + 5] for s in theirs.bsplines_], axis=1)
    np.testing.assert_allclose(base, want_knots, rtol=1e-15, atol=0)
    for rows in ([X] if extrapolation == "error" else [X, Q]):
        want = _theirs_transform(theirs, params, X, rows)
        got = ours.transform(rows)
        assert got.dtype == np.float32 and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_spline_transformer_error_extrapolation_refuses_outside():
    X, Q = _spline_data("wine", "uniform")
    ours = ml.SplineTransformer(extrapolation="error").fit(X)
    with pytest.raises(Exception, match="beyond the limits of the knots"):
        ours.transform(Q)


def _categories(name, bins=6):
    """Four columns of a data set binned into `bins` categories (values 0, 1.5, 3, ...), and the target."""
    ds = DATA[name]()
    X = ds.data[:, :4]
    edges = np.quantile(X, np.linspace(0, 1, bins + 1)[1:-1], axis=0)
    C = np.stack([np.searchsorted(edges[:, j], X[:, j]) for j in range(4)], axis=1)
    return (1.5 * C).astype(np.float32), ds.target.astype(np.float64)


TARGETS = {"diabetes": "continuous", "breast_cancer": "binary", "wine": "multiclass"}


@pytest.mark.parametrize("data", list(DATA))
@pytest.mark.parametrize("smooth", ["auto", 0.0, 4.0])
def test_target_encoder(data, smooth):
    X, y = _categories(data)
    target_type = TARGETS[data]
    ours = ml.TargetEncoder(smooth=smooth, target_type=target_type).fit(X, y)
    theirs = preprocessing.TargetEncoder(smooth=smooth, target_type=target_type).fit(X.astype(np.float64), y)
    st = _state(ours)
    cats = np.frombuffer(bytes.fromhex(st["categories"]), dtype="<f4")
    enc = _f64(st, "encodings_f64")
    k = st.get("n_classes", 2) if target_type == "multiclass" else 1
    at = at_enc = 0
    for j, n in enumerate(st["n_categories"]):
        np.testing.assert_array_equal(cats[at:at + n], theirs.categories_[j])
        for c in range(k):  # column j, class c: scikit-learn's encodings_[j * k + c]
            np.testing.assert_allclose(enc[at_enc:at_enc + n], theirs.encodings_[j * k + c], rtol=1e-12, atol=1e-15)
            at_enc += n
        at += n
    np.testing.assert_allclose(_f64(st, "target_mean_f64"), np.atleast_1d(theirs.target_mean_), rtol=1e-14)
    if target_type != "continuous":
        np.testing.assert_array_equal(np.frombuffer(bytes.fromhex(st["classes"]), dtype="<f4"), theirs.classes_)
    assert st["target_type"] == theirs.target_type_
    # transform: the training rows and rows with unseen categories.
    T = X[:40].copy()
    T[::3, 1] = 99.0
    want = theirs.transform(T.astype(np.float64))
    got = ours.transform(T)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    # fit_transform without shuffle: scikit-learn's folds, so the same cross-fitted values.
    ours_cf = ml.TargetEncoder(smooth=smooth, target_type=target_type, shuffle=False)
    # (scikit-learn 1.9 deprecates its shuffle parameter: its unshuffled splitter passed as cv)
    splitter = KFold(5) if target_type == "continuous" else StratifiedKFold(5)
    theirs_cf = preprocessing.TargetEncoder(smooth=smooth, target_type=target_type, cv=splitter)
    np.testing.assert_allclose(ours_cf.fit_transform(X, y), theirs_cf.fit_transform(X.astype(np.float64), y),
                               rtol=1e-6, atol=1e-7)
    # With shuffle: the library's own folds (Philox permutation); the fitted encodings are unchanged.
    shuffled = ml.TargetEncoder(smooth=smooth, target_type=target_type, random_state=3)
    out = shuffled.fit_transform(X, y)
    assert out.shape == (X.shape[0], X.shape[1] * k) and np.all(np.isfinite(out))
    np.testing.assert_array_equal(shuffled.transform(T), got)


def test_target_encoder_auto_type_and_refusals():
    X, y = _categories("breast_cancer")
    assert _state(ml.TargetEncoder().fit(X, y))["target_type"] == "binary"
    Xd, yd = _categories("diabetes")
    # Integral diabetes targets: multiclass for scikit-learn's type_of_target and here.
    assert _state(ml.TargetEncoder().fit(Xd, yd))["target_type"] == "multiclass"
    assert _state(ml.TargetEncoder().fit(Xd, yd + 0.5))["target_type"] == "continuous"
    with pytest.raises(ValueError, match="requires y"):
        ml.TargetEncoder().fit(X)


def test_target_encoder_fitted_attributes():
    X, y = _categories("wine")
    ours = ml.TargetEncoder().fit(X, y)
    theirs = preprocessing.TargetEncoder().fit(X.astype(np.float64), y)
    assert ours.target_type_ == theirs.target_type_ == "multiclass"
    np.testing.assert_array_equal(ours.classes_, theirs.classes_)
    np.testing.assert_allclose(ours.target_mean_, theirs.target_mean_, rtol=1e-14)
    assert len(ours.categories_) == len(theirs.categories_) and len(ours.encodings_) == len(theirs.encodings_)
    for a, b in zip(ours.categories_, theirs.categories_):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(ours.encodings_, theirs.encodings_):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
