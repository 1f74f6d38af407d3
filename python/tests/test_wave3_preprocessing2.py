"""quantile_transformer and power_transformer against scikit-learn.

On diabetes, wine and breast_cancer (float32 for bitlearn, float64 for scikit-learn, which sees the
same float32 values): quantile_transformer's quantiles equal scikit-learn's quantiles_ bit for bit
(numpy's linear percentiles of the same values at the same references; scikit-learn without
subsampling), its uniform transform equals scikit-learn's float64 output rounded to float32 and the
normal one is within a float32 rounding of it, on the training rows and on shifted rows (outside
the fitted range included); power_transformer's lambdas agree with scipy's Brent searches within
their tolerance, its transforms (standardized or not, yeo-johnson and box-cox) within 1e-5 relative
to each column's scale.
"""
import warnings

import numpy as np
import pytest
from sklearn import preprocessing
from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine

from _peer_common import assert_within_column_scale, features, state, state_array, train_and_shifted
from bitlearn import ml

DATA = ["diabetes", "wine", "breast_cancer"]


@pytest.mark.parametrize("data", DATA)
@pytest.mark.parametrize("n_quantiles", [7, 100, 1000])
@pytest.mark.parametrize("output_distribution", ["uniform", "normal"])
def test_quantile_transformer(data, n_quantiles, output_distribution):
    X, Q = train_and_shifted(data)
    ours = ml.QuantileTransformer(n_quantiles=n_quantiles, output_distribution=output_distribution)
    theirs = preprocessing.QuantileTransformer(n_quantiles=n_quantiles, output_distribution=output_distribution,
                                               subsample=None)
    with warnings.catch_warnings():  # scikit-learn warns where n_quantiles exceeds the row count
        warnings.simplefilter("ignore", UserWarning)
        theirs.fit(X.astype(np.float64))
    a = ours.fit_transform(X)
    assert a.dtype == np.float32 and a.shape == X.shape
    st = state(ours)
    assert st["n_quantiles"] == theirs.n_quantiles_
    np.testing.assert_array_equal(state_array(st, "quantiles_f64", "<f8").reshape(-1, X.shape[1]), theirs.quantiles_)
    for rows in (X, Q):
        want = theirs.transform(rows.astype(np.float64))
        got = ours.transform(rows)
        if output_distribution == "uniform":  # the same binary64 arithmetic, rounded once
            np.testing.assert_array_equal(got, want.astype(np.float32))
        else:  # Phi^-1 within 1e-15 relative of scipy's: at most one float32 rounding apart
            np.testing.assert_allclose(got, want, rtol=1.2e-7, atol=1e-30)


def _positive(X, train):
    """Each column mapped by the training rows' range to [0.5, 1.5] (at least 0.25): a column of
    narrow range far from 0 has a Box-Cox optimum of lambda near -100, whose unstandardized
    transform overflows float32 (bitlearn refuses it; scikit-learn returns inf)."""
    lo, width = train.min(axis=0), train.max(axis=0) - train.min(axis=0)
    return np.maximum((X - lo) / width + np.float32(0.5), np.float32(0.25)).astype(np.float32)


@pytest.mark.parametrize("data", DATA)
@pytest.mark.parametrize("method", ["yeo-johnson", "box-cox"])
@pytest.mark.parametrize("standardize", [True, False])
def test_power_transformer(data, method, standardize):
    X, Q = train_and_shifted(data)
    if method == "box-cox":
        X, Q = _positive(X, X), _positive(Q, X)
    ours = ml.PowerTransformer(method=method, standardize=standardize)
    theirs = preprocessing.PowerTransformer(method=method, standardize=standardize).fit(X.astype(np.float64))
    a = ours.fit_transform(X)
    assert a.dtype == np.float32 and a.shape == X.shape
    lambdas = state_array(state(ours), "lambdas_f64", "<f8")
    # Both are Brent searches stopped at about 1.5e-8 (1 + |lambda|): the maxima agree that closely,
    # up to the flatness of the likelihood around them.
    np.testing.assert_allclose(lambdas, theirs.lambdas_, rtol=0, atol=2e-5 * (1 + np.abs(theirs.lambdas_)).max())
    assert_within_column_scale(a, theirs.transform(X.astype(np.float64)), 2e-5)
    assert_within_column_scale(ours.transform(Q), theirs.transform(Q.astype(np.float64)), 2e-5)


def test_power_transformer_refuses_non_positive_box_cox():
    X = load_diabetes().data.astype(np.float32)
    with pytest.raises(Exception, match="strictly positive"):
        ml.PowerTransformer(method="box-cox").fit(X)


def test_quantile_then_bitlearn_model_in_a_pipeline():
    """A bitlearn quantile_transformer in a scikit-learn pipeline before a bitlearn model: the same
    score as scikit-learn's transformer before it."""
    from sklearn.pipeline import make_pipeline
    X, y = load_breast_cancer(return_X_y=True)
    X = X.astype(np.float32)
    ours = make_pipeline(ml.QuantileTransformer(output_distribution="normal"), ml.LogisticRegression())
    theirs = make_pipeline(preprocessing.QuantileTransformer(output_distribution="normal", subsample=None),
                           ml.LogisticRegression())
    assert ours.fit(X, y).score(X, y) == pytest.approx(theirs.fit(X, y).score(X, y), abs=0.005)


def _with_gaps(name, every=11):
    X = features(name).astype(np.float32)
    X.reshape(-1)[::every] = np.nan
    Q = X[::3] * np.float32(1.1) + np.float32(0.5)
    Q.reshape(-1)[::5] = np.nan
    Q[0] = np.nan  # a row without donors: the column means
    return X, Q


@pytest.mark.parametrize("data", DATA)
@pytest.mark.parametrize("weights", ["uniform", "distance"])
@pytest.mark.parametrize("n_neighbors", [1, 5])
def test_knn_imputer(data, weights, n_neighbors):
    """The imputed values equal scikit-learn's (float64 on the same float32 values) within float32
    rounding; observed entries are untouched."""
    from sklearn.impute import KNNImputer
    X, Q = _with_gaps(data)
    ours = ml.KNNImputer(n_neighbors=n_neighbors, weights=weights)
    theirs = KNNImputer(n_neighbors=n_neighbors, weights=weights).fit(X.astype(np.float64))
    a = ours.fit_transform(X)
    assert a.dtype == np.float32 and not np.isnan(a).any()
    observed = ~np.isnan(X)
    np.testing.assert_array_equal(a[observed], X[observed])
    for rows, got in ((X, a), (Q, ours.transform(Q))):
        want = theirs.transform(rows.astype(np.float64))
        assert_within_column_scale(got, want, 2e-7)


def test_knn_imputer_refuses_an_all_missing_column():
    X = load_wine().data.astype(np.float32)
    X[:, 2] = np.nan
    with pytest.raises(Exception, match="column 2 has no observed value"):
        ml.KNNImputer().fit(X)
