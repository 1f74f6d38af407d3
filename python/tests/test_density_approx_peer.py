"""kernel_density, rbf_sampler, nystroem and bisecting_kmeans against scikit-learn.

KernelDensity: score_samples within 1e-4 relative of scikit-learn's (its default atol = rtol = 0 is
exact too) for every kernel with bandwidth 1, scott and silverman on iris and make_blobs (measured:
at most 2e-7), -inf at the same rows; score the sum of score_samples; sample's shapes and spread.
RBFSampler and Nystroem draw from bitlearn's Philox streams, not NumPy's, so the features differ;
the checks are that Z Z^T approximates the exact kernel about as well as scikit-learn's does (mean
absolute error within 1.5x of scikit-learn's plus a small floor) and that Ridge on the features
scores about the same (cross-validated R^2 within 0.02 on standardized diabetes).
BisectingKMeans: on separated blobs the partition equals the true one (adjusted Rand index 1, as
scikit-learn's) and the inertia is within 1% of scikit-learn's, for both strategies and inits."""
import numpy as np
import pytest
from sklearn import cluster, kernel_approximation, neighbors
from sklearn.datasets import load_diabetes, load_iris, make_blobs
from sklearn.linear_model import Ridge
from sklearn.metrics import adjusted_rand_score
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.model_selection import cross_val_score
from sklearn.preprocessing import StandardScaler

from bitlearn import ml

KERNELS = ["gaussian", "tophat", "epanechnikov", "exponential", "linear", "cosine"]


def _data(name):
    if name == "iris":
        X = load_iris().data
    else:
        X, _ = make_blobs(n_samples=300, n_features=5, centers=4, random_state=0)
    return X.astype(np.float32)


@pytest.mark.parametrize("data", ["iris", "blobs"])
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("bandwidth", [1.0, "scott", "silverman"])
def test_kernel_density_matches_sklearn(data, kernel, bandwidth):
    X = _data(data)
    Q = X[::3] + np.float32(0.05)
    ours = ml.KernelDensity(kernel=kernel, bandwidth=bandwidth).fit(X)
    theirs = neighbors.KernelDensity(kernel=kernel, bandwidth=bandwidth).fit(X.astype(np.float64))
    assert ours.bandwidth_ == pytest.approx(theirs.bandwidth_, rel=1e-6)
    a = ours.score_samples(Q)
    b = theirs.score_samples(Q.astype(np.float64))
    # scikit-learn's cosine normalization is negative for 4 features (log gives NaN): the same here.
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    np.testing.assert_array_equal(np.isfinite(a), np.isfinite(b))
    fin = np.isfinite(b)
    np.testing.assert_allclose(a[fin], b[fin], rtol=1e-4, atol=1e-4)
    if fin.all():
        assert ours.score(Q) == pytest.approx(float(np.sum(a.astype(np.float32).astype(np.float64))), rel=1e-6)
        assert ours.score(Q) == pytest.approx(theirs.score(Q.astype(np.float64)), rel=1e-4)


@pytest.mark.parametrize("kernel", ["gaussian", "tophat"])
def test_kernel_density_sample(kernel):
    X = _data("blobs")
    kde = ml.KernelDensity(kernel=kernel, bandwidth=0.5).fit(X)
    S = kde.sample(4000, random_state=0)
    assert S.shape == (4000, 5)
    np.testing.assert_allclose(S.mean(axis=0), X.mean(axis=0), atol=0.3)
    with pytest.raises(NotImplementedError):
        ml.KernelDensity(kernel="linear").fit(X).sample(2)


def _diabetes():
    X, y = load_diabetes(return_X_y=True)
    return StandardScaler().fit_transform(X).astype(np.float32), y


def _gram_error(Z, K):
    Z = Z.astype(np.float64)
    return np.abs(Z @ Z.T - K).mean() / np.abs(K).mean()


@pytest.mark.parametrize("n_components", [50, 300, 1000])
def test_rbf_sampler_approximates_the_kernel(n_components):
    X, y = _diabetes()
    K = pairwise_kernels(X.astype(np.float64), metric="rbf", gamma=0.05)
    ours = ml.RBFSampler(gamma=0.05, n_components=n_components).fit(X)
    theirs = kernel_approximation.RBFSampler(gamma=0.05, n_components=n_components, random_state=0).fit(X)
    Za, Zb = ours.transform(X), theirs.transform(X)
    assert Za.shape == Zb.shape and Za.dtype == np.float32
    assert ours.random_weights_.shape == theirs.random_weights_.shape
    assert _gram_error(Za, K) < 1.5 * _gram_error(Zb, K) + 0.01
    ra = cross_val_score(Ridge(alpha=1.0), Za, y, cv=5).mean()
    rb = cross_val_score(Ridge(alpha=1.0), Zb, y, cv=5).mean()
    assert abs(ra - rb) < 0.02


@pytest.mark.parametrize("kernel,params", [("rbf", dict(gamma=0.05)), ("linear", {}),
                                           ("poly", dict(gamma=0.1, degree=2)), ("sigmoid", dict(gamma=0.01))])
@pytest.mark.parametrize("n_components", [50, 200])
def test_nystroem_approximates_the_kernel(kernel, params, n_components):
    X, y = _diabetes()
    K = pairwise_kernels(X.astype(np.float64), metric=kernel, **params)
    ours = ml.Nystroem(kernel=kernel, n_components=n_components, **params).fit(X)
    theirs = kernel_approximation.Nystroem(kernel=kernel, n_components=n_components, random_state=0,
                                           **params).fit(X)
    Za, Zb = ours.transform(X), theirs.transform(X)
    assert Za.shape == Zb.shape
    assert ours.components_.shape == theirs.components_.shape
    np.testing.assert_array_equal(ours.components_, X[ours.component_indices_])
    assert _gram_error(Za, K) < 1.5 * _gram_error(Zb, K) + 2e-3
    ra = cross_val_score(Ridge(alpha=1.0), Za, y, cv=5).mean()
    rb = cross_val_score(Ridge(alpha=1.0), Zb, y, cv=5).mean()
    assert abs(ra - rb) < 0.02


@pytest.mark.parametrize("strategy", ["biggest_inertia", "largest_cluster"])
@pytest.mark.parametrize("init", ["random", "k-means++"])
def test_bisecting_kmeans_matches_sklearn_on_blobs(strategy, init):
    X, y = make_blobs(n_samples=600, n_features=4, centers=6, cluster_std=0.5, random_state=1)
    X = X.astype(np.float32)
    ours = ml.BisectingKMeans(n_clusters=6, bisecting_strategy=strategy, init=init).fit(X)
    theirs = cluster.BisectingKMeans(n_clusters=6, bisecting_strategy=strategy, init=init,
                                     random_state=0).fit(X.astype(np.float64))
    assert adjusted_rand_score(ours.labels_, y) == 1.0
    assert adjusted_rand_score(ours.labels_, theirs.labels_) == 1.0
    assert ours.inertia_ == pytest.approx(theirs.inertia_, rel=0.01)
    assert -ours.score(X) == pytest.approx(theirs.inertia_, rel=0.01)
    np.testing.assert_array_equal(ours.predict(X), ours.labels_)
    assert ours.cluster_centers_.shape == (6, 4)
