"""truncated_svd, kernel_pca and factor_analysis against scikit-learn's TruncatedSVD, KernelPCA and
FactorAnalysis on digits, wine and diabetes (float32 data; scikit-learn fits them in float64).

TruncatedSVD, both algorithms: singular values within 1e-4 relative (measured: at most 9e-6, the
smallest of wine's 5 through the Gram matrix), explained_variance_ratio_ within 1e-6 (measured 7e-8),
components (the same sign rule) within 1e-3 (measured 3e-5: digits' randomized sketch) and the
projection within 1e-3 of its largest magnitude. KernelPCA on standardized data, every kernel:
eigenvalues_ within 1e-5 relative (measured 6e-7), eigenvectors_ within 1e-5 up to sign (measured
3e-7) and the projection of held-out rows within 1e-5 of its largest magnitude (measured 6e-7).
FactorAnalysis against scikit-learn's exact svd_method="lapack": the same iteration count, the last
loglike_ within 1e-6 relative (measured 5e-8), noise_variance_ within 1e-4 (measured 1.4e-5 relative),
components_ up to sign within 1e-5 of their largest magnitude (measured 2.5e-6) and the projection
within 1e-5 of its largest magnitude (measured 4e-6).
NMF (non-negative data: diabetes shifted to its column minima), 5 components: from nndsvd and nndsvda
both solvers run scikit-learn's iterations (the same n_iter_), reconstruction_err_ within 1e-5
relative (measured 4e-7), components_ within 1e-3 of their largest entry, transform's error within
0.1% of scikit-learn's; from random (other random numbers) the error within 5% of scikit-learn's or
lower.
"""
import warnings

import numpy as np
import pytest
from sklearn import decomposition
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

from _peer_common import assert_within_scale, axis_signs, features, fit_pair, transform_pair
from bitlearn import ml

_DATA = ["diabetes", "digits", "wine"]


def _data(name):
    return features(name).astype(np.float32)


@pytest.mark.parametrize("data", _DATA)
@pytest.mark.parametrize("algorithm", ["arpack", "randomized"])
def test_truncated_svd_matches_sklearn(data, algorithm):
    X = _data(data)
    ours, theirs = fit_pair(ml.TruncatedSVD(n_components=5, algorithm=algorithm),
                            decomposition.TruncatedSVD(n_components=5, algorithm=algorithm, random_state=0), X)
    np.testing.assert_allclose(ours.singular_values_, theirs.singular_values_, rtol=1e-4)
    np.testing.assert_allclose(ours.explained_variance_ratio_, theirs.explained_variance_ratio_, atol=1e-6)
    np.testing.assert_allclose(ours.explained_variance_, theirs.explained_variance_, rtol=1e-4)
    np.testing.assert_allclose(ours.components_, theirs.components_, atol=1e-3)
    a, b = transform_pair(ours, theirs, X)
    assert a.dtype == np.float32 and a.shape == (X.shape[0], 5)
    assert_within_scale(a, b, 1e-3)


@pytest.mark.parametrize("data", _DATA)
@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly", "cosine", "sigmoid"])
def test_kernel_pca_matches_sklearn(data, kernel):
    X = StandardScaler().fit_transform(_data(data)).astype(np.float32)
    train, test = X[::2], X[1::2]
    kw = dict(kernel=kernel, n_components=4, gamma=0.5 / X.shape[1])
    ours, theirs = fit_pair(ml.KernelPCA(**kw), decomposition.KernelPCA(**kw), train)
    np.testing.assert_allclose(ours.eigenvalues_, theirs.eigenvalues_, rtol=1e-5)
    sign = axis_signs(ours.eigenvectors_, theirs.eigenvectors_)
    np.testing.assert_allclose(ours.eigenvectors_ * sign, theirs.eigenvectors_, atol=1e-5)
    a, b = transform_pair(ours, theirs, test)
    assert_within_scale(a * sign, b, 1e-5)


def test_kernel_pca_default_keeps_the_positive_spectrum():
    # Linear kernel on diabetes (10 features): the centered kernel has rank 10; scikit-learn's
    # n_components=None keeps the same 10 components.
    X = _data("diabetes")
    ours, theirs = fit_pair(ml.KernelPCA(), decomposition.KernelPCA(), X)
    assert ours.eigenvalues_.shape == theirs.eigenvalues_.shape == (10,)
    np.testing.assert_allclose(ours.eigenvalues_, theirs.eigenvalues_, rtol=1e-4)


@pytest.mark.parametrize("data", _DATA)
@pytest.mark.parametrize("n_components", [2, 5])
def test_factor_analysis_matches_sklearn(data, n_components):
    # scikit-learn's exact SVD (svd_method="lapack"): the same EM, so the same iteration count;
    # components_ up to the sign of each factor.
    X = _data(data)
    ours, theirs = fit_pair(ml.FactorAnalysis(n_components=n_components),
                            decomposition.FactorAnalysis(n_components=n_components, svd_method="lapack"), X)
    assert ours.n_iter_ == theirs.n_iter_
    assert ours.loglike_[-1] == pytest.approx(theirs.loglike_[-1], rel=1e-6)
    np.testing.assert_allclose(ours.noise_variance_, theirs.noise_variance_, rtol=1e-4,
                               atol=1e-4 * np.max(theirs.noise_variance_))
    sign = axis_signs(ours.components_, theirs.components_, axis=1)[:, None]
    scale = np.max(np.abs(theirs.components_))
    np.testing.assert_allclose(ours.components_ * sign, theirs.components_, atol=1e-5 * scale)
    a, b = transform_pair(ours, theirs, X)
    assert_within_scale(a * sign.T, b, 1e-5)


def _nonnegative(name):
    X = _data(name)
    return X - X.min(axis=0) if X.min() < 0 else X  # diabetes is centered: shifted to >= 0


@pytest.mark.parametrize("data", _DATA)
@pytest.mark.parametrize("solver", ["cd", "mu"])
@pytest.mark.parametrize("init", ["nndsvd", "nndsvda"])
def test_nmf_matches_sklearn_from_nndsvd(data, solver, init):
    # The SVD-based inits do not depend on the random numbers: the same iterations as scikit-learn's.
    X = _nonnegative(data)
    ours = ml.NMF(n_components=5, solver=solver, init=init).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        theirs = decomposition.NMF(n_components=5, solver=solver, init=init, random_state=0).fit(X.astype(np.float64))
    assert ours.n_iter_ == theirs.n_iter_
    assert ours.reconstruction_err_ == pytest.approx(theirs.reconstruction_err_, rel=1e-5)
    scale = np.max(theirs.components_)
    np.testing.assert_allclose(ours.components_, theirs.components_, atol=1e-3 * scale)
    a, b = transform_pair(ours, theirs, X)
    assert np.linalg.norm(X - a @ ours.components_) <= 1.001 * np.linalg.norm(X - b @ theirs.components_)


@pytest.mark.parametrize("data", _DATA)
@pytest.mark.parametrize("solver", ["cd", "mu"])
def test_nmf_random_init_fits_as_well(data, solver):
    # Philox draws, not NumPy's: another start, so the error is compared (within 5% or better).
    X = _nonnegative(data)
    ours = ml.NMF(n_components=5, solver=solver, init="random").fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        theirs = decomposition.NMF(n_components=5, solver=solver, init="random", random_state=0).fit(X.astype(np.float64))
    assert ours.reconstruction_err_ <= 1.05 * theirs.reconstruction_err_
