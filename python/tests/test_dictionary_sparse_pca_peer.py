"""dictionary_learning and sparse_pca against scikit-learn's DictionaryLearning and SparsePCA
(fit_algorithm / method "cd", the coordinate descent both share) on standardized diabetes and wine
(float32 data; scikit-learn fits them in float64).

With n_components at most n_features both start from the same exact SVD and follow the same steps:
the iteration count within 2% (measured: equal), the last cost error_ within 1e-6 relative (measured
3e-8), components_ within 1e-4 of their largest magnitude up to sign (measured 5e-5), the lasso
code of transform as sparse as scikit-learn's within 1% of the entries (measured: the same count of
nonzeros) and its cost 0.5 ||X - U V||^2 + alpha ||U||_1 within 1e-6 relative (measured 6e-9). The
omp and threshold codes have scikit-learn's sparse_encode's nonzeros on our components and its values
within 1e-4 of the largest (measured 4e-8). split_sign: the split lasso codes within 1e-3 of the
largest (measured 4e-5). positive_code with positive_dict: the cost within 5% of scikit-learn's or
lower (measured equal to 2e-8). SparsePCA: the iteration count and the last cost as above (measured:
equal, 3e-8), components_ within 1e-4 (measured 5e-5), the zero count within 2% of the entries
(measured: equal), transform within 1e-3 of its largest magnitude (measured 3e-5).
With n_components above n_features (iris) the unused atoms are redrawn from other random numbers
(Philox, not NumPy's): the cost within 5% of scikit-learn's or lower (measured equal to 3e-8).
"""
import warnings

import numpy as np
import pytest
from sklearn import decomposition
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

from _peer_common import features
from bitlearn import ml

_CASES = [("diabetes", 5, 1.0), ("diabetes", 8, 0.5), ("wine", 5, 1.0), ("wine", 8, 0.5)]


def _data(name):
    return StandardScaler().fit_transform(features(name)).astype(np.float32)


def _cost(X, U, V, alpha):
    X, U, V = (np.asarray(a, dtype=np.float64) for a in (X, U, V))
    return 0.5 * np.sum((X - U @ V) ** 2) + alpha * np.abs(U).sum()


def _theirs(cls, X, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return cls(random_state=0, **kw).fit(X.astype(np.float64))


def _ours(cls, X, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return cls(**kw).fit(X)


def _aligned(ours, theirs):
    """ours' rows with the sign of theirs."""
    return ours * np.sign(np.sum(ours * theirs, axis=1, keepdims=True))


@pytest.mark.parametrize("data,k,alpha", _CASES)
def test_dictionary_learning_follows_sklearn(data, k, alpha):
    X = _data(data)
    kw = dict(n_components=k, alpha=alpha, transform_algorithm="lasso_cd")
    ours = _ours(ml.DictionaryLearning, X, **kw)
    theirs = _theirs(decomposition.DictionaryLearning, X, fit_algorithm="cd", **kw)
    assert abs(ours.n_iter_ - theirs.n_iter_) <= max(2, 0.02 * theirs.n_iter_)
    assert ours.error_[-1] == pytest.approx(theirs.error_[-1], rel=1e-6)
    v = theirs.components_
    assert np.max(np.abs(_aligned(ours.components_, v) - v)) <= 1e-4 * np.max(np.abs(v))
    a, b = ours.transform(X), theirs.transform(X.astype(np.float64))
    assert a.dtype == np.float32 and a.shape == (X.shape[0], k)
    assert abs(np.count_nonzero(a) - np.count_nonzero(b)) <= 0.01 * a.size
    assert _cost(X, a, ours.components_, alpha) == pytest.approx(_cost(X, b, v, alpha), rel=1e-6)
    assert np.linalg.norm(X - a @ ours.components_) <= 1.001 * np.linalg.norm(X - b @ v)


@pytest.mark.parametrize("data", ["diabetes", "wine"])
@pytest.mark.parametrize("algorithm,extra", [("omp", {}), ("omp", {"transform_n_nonzero_coefs": 3}),
                                             ("threshold", {"transform_alpha": 0.3})])
def test_omp_and_threshold_codes_equal_sklearns_on_our_atoms(data, algorithm, extra):
    X = _data(data)
    ours = _ours(ml.DictionaryLearning, X, n_components=6, alpha=1.0, transform_algorithm=algorithm, **extra)
    coder = decomposition.SparseCoder(ours.components_.astype(np.float64), transform_algorithm=algorithm,
                                      transform_n_nonzero_coefs=extra.get("transform_n_nonzero_coefs"),
                                      transform_alpha=extra.get("transform_alpha", 1.0))
    a, b = ours.transform(X), coder.transform(X.astype(np.float64))
    assert np.array_equal(a != 0, b != 0)
    assert np.max(np.abs(a - b)) <= 1e-4 * np.max(np.abs(b))


def test_split_sign_codes_match_sklearn():
    X = _data("wine")
    kw = dict(n_components=5, alpha=1.0, transform_algorithm="lasso_cd", split_sign=True)
    ours = _ours(ml.DictionaryLearning, X, **kw)
    theirs = _theirs(decomposition.DictionaryLearning, X, fit_algorithm="cd", **kw)
    a, b = ours.transform(X), theirs.transform(X.astype(np.float64))
    assert a.shape == b.shape == (X.shape[0], 10) and np.all(a >= 0)
    assert np.max(np.abs(a - b)) <= 1e-3 * np.max(np.abs(b))


def test_positive_constraints_fit_as_well():
    X = _data("wine")
    kw = dict(n_components=5, alpha=0.5, positive_code=True, positive_dict=True, transform_algorithm="lasso_cd")
    ours = _ours(ml.DictionaryLearning, X, **kw)
    theirs = _theirs(decomposition.DictionaryLearning, X, fit_algorithm="cd", **kw)
    assert np.all(ours.components_ >= 0) and np.all(ours.transform(X) >= 0)
    assert ours.error_[-1] <= 1.05 * theirs.error_[-1]


@pytest.mark.parametrize("k,alpha", [(5, 1.0), (8, 0.5)])
def test_more_atoms_than_features_fits_as_well(k, alpha):
    X = _data("iris")
    kw = dict(n_components=k, alpha=alpha, transform_algorithm="lasso_cd")
    ours = _ours(ml.DictionaryLearning, X, **kw)
    theirs = _theirs(decomposition.DictionaryLearning, X, fit_algorithm="cd", **kw)
    assert ours.error_[-1] <= 1.05 * theirs.error_[-1]
    a, b = ours.transform(X), theirs.transform(X.astype(np.float64))
    assert _cost(X, a, ours.components_, alpha) <= 1.05 * _cost(X, b, theirs.components_, alpha)


@pytest.mark.parametrize("data", ["diabetes", "wine"])
@pytest.mark.parametrize("k,alpha", [(4, 1.0), (6, 3.0)])
def test_sparse_pca_follows_sklearn(data, k, alpha):
    X = _data(data)
    ours = _ours(ml.SparsePCA, X, n_components=k, alpha=alpha)
    theirs = _theirs(decomposition.SparsePCA, X, n_components=k, alpha=alpha, method="cd")
    assert abs(ours.n_iter_ - theirs.n_iter_) <= max(2, 0.02 * theirs.n_iter_)
    assert ours.error_[-1] == pytest.approx(theirs.error_[-1], rel=1e-6)
    np.testing.assert_allclose(ours.mean_, theirs.mean_, atol=1e-6)
    assert ours.n_components_ == theirs.n_components_ == k
    np.testing.assert_allclose(ours.components_, theirs.components_, atol=1e-4)
    assert abs(np.sum(ours.components_ == 0) - np.sum(theirs.components_ == 0)) <= 0.02 * ours.components_.size
    a, b = ours.transform(X), theirs.transform(X.astype(np.float64))
    assert np.max(np.abs(a - b)) <= 1e-3 * np.max(np.abs(b))


# lars and lasso_lars (lars.cpp's binary32 path on the rounded Gram matrix D D^T and correlations D x):
# the codes against scikit-learn's sparse_encode (float64) on our components, the same nonzeros (up
# to entries below 1e-5 of the largest) and values within 1e-5 of the largest magnitude (measured
# 1.4e-7 to 2.2e-6).
@pytest.mark.parametrize("data", ["diabetes", "wine"])
@pytest.mark.parametrize("algorithm,extra", [("lasso_lars", {"transform_alpha": 1.0}),
                                             ("lasso_lars", {"transform_alpha": 0.2}),
                                             ("lars", {}), ("lars", {"transform_n_nonzero_coefs": 3})])
def test_lars_codes_equal_sklearns_sparse_encode_on_our_atoms(data, algorithm, extra):
    X = _data(data)
    ours = _ours(ml.DictionaryLearning, X, n_components=6, alpha=1.0, transform_algorithm=algorithm, **extra)
    D = ours.components_.astype(np.float64)
    if algorithm == "lars":
        nnz = extra.get("transform_n_nonzero_coefs", int(min(max(X.shape[1] / 10, 1), 6)))
        b = decomposition.sparse_encode(X.astype(np.float64), D, algorithm="lars", n_nonzero_coefs=nnz)
    else:
        b = decomposition.sparse_encode(X.astype(np.float64), D, algorithm="lasso_lars",
                                        alpha=extra["transform_alpha"], max_iter=1000)
    a = ours.transform(X)
    err = np.max(np.abs(a - b)) / np.max(np.abs(b))
    print(f"{data} {algorithm} {extra}: max |ours - sklearn| / max |sklearn| = {err:.2e}")
    # The same nonzeros, up to entries within the rounding of zero (binary32 path).
    tiny = 1e-5 * np.max(np.abs(b))
    assert np.all(((a != 0) == (b != 0)) | ((np.abs(a) <= tiny) & (np.abs(b) <= tiny)))
    assert err <= 1e-5


# Two of the cases, each at most 200 iterations on both sides (scikit-learn's lars fit takes
# minutes at its default of 1000).
@pytest.mark.parametrize("data,k,alpha", [_CASES[0], _CASES[3]])
def test_fit_algorithm_lars_reaches_sklearns_cost(data, k, alpha):
    X = _data(data)
    kw = dict(n_components=k, alpha=alpha, transform_algorithm="lasso_lars", max_iter=200)
    ours = _ours(ml.DictionaryLearning, X, fit_algorithm="lars", **kw)
    theirs = _theirs(decomposition.DictionaryLearning, X, fit_algorithm="lars", **kw)
    a, b = ours.transform(X), theirs.transform(X.astype(np.float64))
    rec_ours = np.linalg.norm(X - a @ ours.components_)
    rec_theirs = np.linalg.norm(X - b @ theirs.components_)
    print(f"{data} k={k} alpha={alpha}: cost {ours.error_[-1]:.6g} vs {theirs.error_[-1]:.6g}, "
          f"iterations {ours.n_iter_} vs {theirs.n_iter_}, reconstruction {rec_ours:.6g} vs {rec_theirs:.6g}")
    assert ours.error_[-1] <= 1.03 * theirs.error_[-1]
    assert rec_ours <= 1.03 * rec_theirs
    assert _cost(X, a, ours.components_, alpha) <= 1.03 * _cost(X, b, theirs.components_, alpha)


def test_lars_fit_and_codes_are_the_same_at_every_thread_count():
    import bitlearn
    X = _data("wine")
    before = bitlearn.num_threads()
    outs = []
    try:
        for t in (1, 2, 3):
            bitlearn.set_num_threads(t)
            m = _ours(ml.DictionaryLearning, X, n_components=6, alpha=0.5, fit_algorithm="lars",
                      transform_algorithm="lasso_lars")
            m2 = _ours(ml.DictionaryLearning, X, n_components=6, alpha=0.5, transform_algorithm="lars")
            outs.append(m.components_.tobytes() + np.asarray(m.error_).tobytes() + m.transform(X).tobytes() +
                        m2.transform(X).tobytes())
    finally:
        bitlearn.set_num_threads(before)
    assert outs[0] == outs[1] == outs[2]


def test_lars_refusals_are_named():
    X = _data("wine")
    with pytest.raises(Exception, match="transform_n_nonzero_coefs"):
        ml.DictionaryLearning(n_components=4, transform_algorithm="lars", transform_n_nonzero_coefs=0).fit(X)
    with pytest.raises(Exception, match="alpha"):
        ml.DictionaryLearning(n_components=4, alpha=-1.0, fit_algorithm="lars").fit(X)
    with pytest.raises(Exception, match="transform_alpha"):
        ml.DictionaryLearning(n_components=4, transform_algorithm="lasso_lars", transform_alpha=-0.5).fit(X)
    with pytest.raises(Exception, match="positive_code=true needs fit_algorithm=cd"):
        ml.DictionaryLearning(n_components=4, fit_algorithm="lars", positive_code=True,
                              transform_algorithm="lasso_cd").fit(X)
    with pytest.raises(Exception, match="lasso_lars has no positive variant"):
        ml.DictionaryLearning(n_components=4, transform_algorithm="lasso_lars", positive_code=True).fit(X)
    with pytest.raises(Exception, match="fit_algorithm"):
        ml.DictionaryLearning(n_components=4, fit_algorithm="omp").fit(X)
