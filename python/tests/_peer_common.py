"""Pieces shared by the scikit-learn peer tests: the data sets by name, a bitlearn estimator's
stored state, fitting bitlearn (float32) and scikit-learn (float64 on the same values) on the same
rows, and the comparisons relative to scikit-learn's scale."""
import json

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits, load_iris, load_wine

LOADERS = {"breast_cancer": load_breast_cancer, "diabetes": load_diabetes, "digits": load_digits, "iris": load_iris,
           "wine": load_wine}


def features(name, rows=None, varying=False):
    """The feature matrix of data set `name` (float64): its first `rows` rows (all when None), only
    the columns that vary over them when `varying`."""
    X = LOADERS[name]().data[:rows]
    return X[:, X.std(axis=0) > 0] if varying else X


def train_and_shifted(name):
    """The float32 rows of `name`, and every 4th of them scaled by 1.1 and shifted by 0.5 (rows the
    fit has not seen, some outside its range)."""
    X = features(name).astype(np.float32)
    return X, (X[::4] * np.float32(1.1) + np.float32(0.5))


def state(est):
    """The stored state of a fitted bitlearn estimator (its model file's "state")."""
    return json.loads(est._est.state_json())


def state_array(st, key, dtype):
    """A state field holding the hex of a little-endian array ("<f4" or "<f8")."""
    return np.frombuffer(bytes.fromhex(st[key]), dtype=dtype)


def fit_pair(ours, theirs, X):
    """ours fitted on float32 X, theirs on the same values in float64."""
    return ours.fit(X), theirs.fit(X.astype(np.float64))


def transform_pair(ours, theirs, X):
    """The transforms of X by ours (float32) and theirs (float64 on the same values)."""
    return ours.transform(X), theirs.transform(X.astype(np.float64))


def axis_signs(ours, theirs, axis=0):
    """The sign per column (axis=0) or row (axis=1) that aligns ours with theirs."""
    return np.sign(np.sum(ours * theirs, axis=axis))


def assert_within_scale(ours, theirs, tol):
    """Every entry within tol times the largest magnitude of theirs."""
    assert np.max(np.abs(ours - theirs)) <= tol * np.max(np.abs(theirs))


def assert_within_column_scale(ours, theirs, rtol):
    """Every entry within rtol times its column's largest magnitude in theirs (at least 1)."""
    theirs = np.asarray(theirs, dtype=np.float64)
    tol = rtol * np.maximum(1.0, np.abs(theirs).max(axis=0))
    err = np.abs(np.asarray(ours, np.float64) - theirs)
    assert np.all(err <= tol), np.max(err / tol)


def query_ndcg(score, rel, qid, k, w=None):
    """Mean NDCG@k over the queries (gain 2^rel - 1, log2 discount, ties in row order; a query
    without relevant rows counts 1), each query weighted by the mean of its rows' weights w."""
    num = den = 0.0
    for q in np.unique(qid):
        rows = np.flatnonzero(qid == q)
        order = np.argsort(-score[rows], kind="stable")
        r = rel[rows].astype(np.float64)
        disc = 1.0 / np.log2(np.arange(len(rows)) + 2.0)
        dcg = np.sum((2.0 ** r[order][:k] - 1.0) * disc[:k])
        ideal = np.sum((2.0 ** np.sort(r)[::-1][:k] - 1.0) * disc[:k])
        wq = 1.0 if w is None else float(np.mean(w[rows].astype(np.float64)))
        num += wq * (dcg / ideal if ideal > 0 else 1.0)
        den += wq
    return num / den
