"""simple_imputer, ordinal_encoder and one_hot_encoder against scikit-learn.

simple_imputer on diabetes, wine and breast_cancer (float32) with every 11th value set to NaN:
statistics_ and the transforms equal scikit-learn's within float32 rounding (most_frequent and
constant exactly). The encoders on integer-valued columns (digits' pixel values, the rounded wine and
breast_cancer features): categories_, the codes and the one-hot blocks (their column order included)
equal scikit-learn's exactly, for every handle_unknown and drop setting, on the training rows and on
rows holding unseen values.
"""
import json

import numpy as np
import pytest
from sklearn import impute, preprocessing
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits, load_wine

from bitlearn import ml

FLOAT_DATA = {"diabetes": load_diabetes, "wine": load_wine, "breast_cancer": load_breast_cancer}


def _state(est):
    return json.loads(est._est.state_json())


def _f32(state, key):
    return np.frombuffer(bytes.fromhex(state[key]), dtype="<f4")


def _with_gaps(name):
    X = FLOAT_DATA[name]().data.astype(np.float32)
    X.reshape(-1)[::11] = np.nan
    Q = X[::3] * np.float32(1.1) + np.float32(0.5)
    Q.reshape(-1)[::5] = np.nan
    return X, Q


@pytest.mark.parametrize("data", list(FLOAT_DATA))
@pytest.mark.parametrize("strategy", ["mean", "median", "most_frequent", "constant"])
def test_simple_imputer(data, strategy):
    X, Q = _with_gaps(data)
    kw = dict(fill_value=-3.25) if strategy == "constant" else {}
    ours = ml.SimpleImputer(strategy=strategy, **kw)
    theirs = impute.SimpleImputer(strategy=strategy, **kw).fit(X.astype(np.float64))
    a = ours.fit_transform(X)
    assert a.dtype == np.float32 and a.shape == X.shape and not np.isnan(a).any()
    stats = _f32(_state(ours), "statistics")
    want = theirs.statistics_.astype(np.float32)
    if strategy in ("most_frequent", "constant"):
        np.testing.assert_array_equal(stats, want)
    else:  # binary64 statistics rounded once: within one float32 ulp of scikit-learn's
        np.testing.assert_allclose(stats, theirs.statistics_, rtol=2e-7, atol=0)
    observed = ~np.isnan(X)
    np.testing.assert_array_equal(a[observed], X[observed])
    np.testing.assert_allclose(a, theirs.transform(X.astype(np.float64)), rtol=2e-7, atol=0)
    np.testing.assert_allclose(ours.transform(Q), theirs.transform(Q.astype(np.float64)), rtol=2e-7, atol=0)


def test_simple_imputer_refuses_an_all_missing_column():
    X = load_wine().data.astype(np.float32)
    X[:, 2] = np.nan
    with pytest.raises(Exception, match="column 2 has no observed value"):
        ml.SimpleImputer().fit(X)
    # strategy=constant keeps the column (as scikit-learn does).
    out = ml.SimpleImputer(strategy="constant", fill_value=1.5).fit_transform(X)
    assert np.all(out[:, 2] == np.float32(1.5))


def _categorical(name):
    if name == "digits":
        X = load_digits().data.astype(np.float32)
    else:
        X = {"wine": load_wine, "breast_cancer": load_breast_cancer}[name]().data
        X = np.round(X / X.std(axis=0) * 2).astype(np.float32)  # a few integer categories per column
    return X, X[::3], X[::4] + np.float32(1)  # training rows, seen rows, rows with unseen values


CAT_DATA = ["digits", "wine", "breast_cancer"]


def _categories(est):
    st = _state(est)
    return np.split(_f32(st, "categories"), np.cumsum(st["n_categories"])[:-1])


@pytest.mark.parametrize("data", CAT_DATA)
@pytest.mark.parametrize("handle_unknown", ["error", "use_encoded_value"])
def test_ordinal_encoder(data, handle_unknown):
    X, seen, unseen = _categorical(data)
    kw = dict(unknown_value=-1) if handle_unknown == "use_encoded_value" else {}
    ours = ml.OrdinalEncoder(handle_unknown=handle_unknown, **kw).fit(X)
    theirs = preprocessing.OrdinalEncoder(handle_unknown=handle_unknown, **kw).fit(X)
    for a, b in zip(_categories(ours), theirs.categories_):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ours.transform(X), theirs.transform(X))
    np.testing.assert_array_equal(ours.transform(seen), theirs.transform(seen))
    if handle_unknown == "error":
        with pytest.raises(Exception, match="unknown category"):
            ours.transform(unseen)
    else:
        np.testing.assert_array_equal(ours.transform(unseen), theirs.transform(unseen))


@pytest.mark.parametrize("data", CAT_DATA)
@pytest.mark.parametrize("drop", [None, "first", "if_binary"])
@pytest.mark.parametrize("handle_unknown", ["error", "ignore"])
@pytest.mark.filterwarnings("ignore:Found unknown categories")
def test_one_hot_encoder(data, drop, handle_unknown):
    X, seen, unseen = _categorical(data)
    ours = ml.OneHotEncoder(drop=drop, handle_unknown=handle_unknown).fit(X)
    theirs = preprocessing.OneHotEncoder(drop=drop, handle_unknown=handle_unknown, sparse_output=False).fit(X)
    a = ours.transform(X)
    assert a.dtype == np.float32
    np.testing.assert_array_equal(a, theirs.transform(X))
    np.testing.assert_array_equal(ours.transform(seen), theirs.transform(seen))
    if handle_unknown == "error":
        with pytest.raises(Exception, match="unknown category"):
            ours.transform(unseen)
    else:
        np.testing.assert_array_equal(ours.transform(unseen), theirs.transform(unseen))
