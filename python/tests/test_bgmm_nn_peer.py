"""bayesian_gaussian_mixture against scikit-learn's BayesianGaussianMixture.

With init_params=kmeans bitlearn starts from its own k-means labels; the stick-breaking prior makes the
fit depend on the order of the components, so scikit-learn is started from the same labels (its
_initialize_parameters replaced by the one-hot of bitlearn's k-means labels, in a subclass). Then the
variational updates follow the same path: the lower bound agrees within 1e-4 relative, the labels are the same partition (adjusted Rand index
1), and weights, means, covariances, degrees of freedom and mean precisions agree up to the order of
the components, for the four covariance types and both weight priors.

nearest_neighbors against scikit-learn's NearestNeighbors (algorithm="brute") on the float32 values
of the same data, for every metric: the same indices (random data, no ties) and distances within
1e-6 relative (euclidean: 1e-5 absolute, bitlearn's binary32 GEMM formula); kneighbors() without X
drops each row itself as scikit-learn does; kneighbors_classifier / kneighbors_regressor with a
metric predict as scikit-learn's."""
import numpy as np
import pytest
from sklearn import mixture, neighbors
from sklearn.datasets import load_iris, make_blobs
from sklearn.metrics import adjusted_rand_score

from bitlearn import ml

TYPES = ["full", "tied", "diag", "spherical"]
PRIORS = ["dirichlet_process", "dirichlet_distribution"]


def _iris():
    return load_iris(return_X_y=True)[0], 3


def _blobs():
    X, _ = make_blobs(n_samples=600, centers=4, n_features=3, cluster_std=[0.5, 1.0, 0.7, 0.4],
                      random_state=3)
    return X, 4


DATA = {"iris": _iris, "blobs": _blobs}


class _SameInit(mixture.BayesianGaussianMixture):
    """scikit-learn's BayesianGaussianMixture started from bitlearn's k-means labels."""

    def _initialize_parameters(self, X, random_state, xp=None):
        labels = ml.KMeans(n_clusters=self.n_components).fit(X).labels_
        resp = np.zeros((len(X), self.n_components))
        resp[np.arange(len(X)), labels] = 1
        self._initialize(X, resp)


def _order(means, ref_means):
    d = ((ref_means[:, None, :] - means[None, :, :]) ** 2).sum(-1)
    perm = d.argmin(1)
    assert sorted(perm) == list(range(len(perm)))
    return perm


def _rel(a, b):
    return abs(a - b) / max(1.0, abs(b))


@pytest.mark.parametrize("prior", PRIORS)
@pytest.mark.parametrize("data", sorted(DATA))
@pytest.mark.parametrize("cov", TYPES)
def test_bgmm_kmeans_init_matches_sklearn(data, cov, prior):
    X, k = DATA[data]()
    kw = dict(n_components=k, covariance_type=cov, weight_concentration_prior_type=prior, tol=1e-6,
              max_iter=1000)
    mine = ml.BayesianGaussianMixture(**kw).fit(X)
    ref = _SameInit(random_state=0, **kw).fit(X)
    assert mine.converged_ and ref.converged_
    assert _rel(mine.lower_bound_, ref.lower_bound_) < 1e-4, (mine.lower_bound_, ref.lower_bound_)
    assert adjusted_rand_score(mine.predict(X), ref.predict(X)) == 1.0
    perm = _order(mine.means_.astype(np.float64), ref.means_)
    np.testing.assert_allclose(mine.weights_[perm], ref.weights_, atol=1e-4, rtol=1e-4)
    np.testing.assert_allclose(mine.means_[perm], ref.means_, atol=1e-4, rtol=1e-4)
    cov_mine = mine.covariances_ if cov == "tied" else mine.covariances_[perm]
    np.testing.assert_allclose(cov_mine, ref.covariances_, atol=1e-4, rtol=1e-4)
    np.testing.assert_allclose(mine.mean_precision_[perm], ref.mean_precision_, rtol=1e-4)
    dof = mine.degrees_of_freedom_ if cov == "tied" else mine.degrees_of_freedom_[perm]
    np.testing.assert_allclose(dof, ref.degrees_of_freedom_, rtol=1e-4)
    np.testing.assert_allclose(mine.predict_proba(X)[:, perm], ref.predict_proba(X), atol=1e-3)
    np.testing.assert_allclose(mine.score_samples(X), ref.score_samples(X), rtol=1e-4, atol=1e-4)


def test_bgmm_priors_given_as_numbers():
    X, k = _iris()
    kw = dict(n_components=k, weight_concentration_prior=0.01, mean_precision_prior=0.5,
              degrees_of_freedom_prior=6.0, covariance_type="diag", tol=1e-6, max_iter=1000)
    mine = ml.BayesianGaussianMixture(covariance_prior=0.3, mean_prior=1.0, **kw).fit(X)
    ref = _SameInit(covariance_prior=np.full(4, 0.3), mean_prior=np.ones(4), random_state=0, **kw).fit(X)
    assert _rel(mine.lower_bound_, ref.lower_bound_) < 1e-4
    perm = _order(mine.means_.astype(np.float64), ref.means_)
    np.testing.assert_allclose(mine.means_[perm], ref.means_, atol=1e-4, rtol=1e-4)
    np.testing.assert_allclose(mine.weights_[perm], ref.weights_, atol=1e-4, rtol=1e-4)


METRICS = [("euclidean", 2), ("manhattan", 2), ("chebyshev", 2), ("minkowski", 3.0), ("minkowski", 1),
           ("minkowski", 2), ("cosine", 2), ("haversine", 2)]


def _nn_data(metric, n, seed):
    rng = np.random.RandomState(seed)
    if metric == "haversine":
        X = np.column_stack([rng.uniform(-1.5, 1.5, n), rng.uniform(-3.1, 3.1, n)])
    else:
        X = rng.normal(size=(n, 6))
    return X.astype(np.float32).astype(np.float64)


@pytest.mark.parametrize("metric,p", METRICS)
def test_nearest_neighbors_matches_sklearn(metric, p):
    X, Q = _nn_data(metric, 500, 1), _nn_data(metric, 120, 2)
    mine = ml.NearestNeighbors(n_neighbors=8, metric=metric, p=p).fit(X)
    ref = neighbors.NearestNeighbors(n_neighbors=8, metric=metric, p=p, algorithm="brute").fit(X)
    d1, i1 = mine.kneighbors(Q)
    d2, i2 = ref.kneighbors(Q)
    np.testing.assert_array_equal(i1, i2)
    if metric == "euclidean" or (metric == "minkowski" and p == 2):
        np.testing.assert_allclose(d1, d2, atol=1e-5)
    else:
        np.testing.assert_allclose(d1, d2, rtol=1e-6, atol=1e-9)
    e1, j1 = mine.kneighbors(n_neighbors=3)
    e2, j2 = ref.kneighbors(n_neighbors=3)
    np.testing.assert_array_equal(j1, j2)
    np.testing.assert_array_equal(mine.kneighbors(Q, 2, return_distance=False), i2[:, :2])


@pytest.mark.parametrize("metric", ["manhattan", "chebyshev", "cosine"])
def test_kneighbors_estimators_with_a_metric(metric):
    X, y = load_iris(return_X_y=True)
    X = X.astype(np.float32).astype(np.float64) + np.random.RandomState(0).normal(scale=1e-3, size=X.shape)
    X = X.astype(np.float32).astype(np.float64)
    mine = ml.KNeighborsClassifier(n_neighbors=5, metric=metric).fit(X, y)
    ref = neighbors.KNeighborsClassifier(n_neighbors=5, metric=metric, algorithm="brute").fit(X, y)
    np.testing.assert_array_equal(mine.predict(X), ref.predict(X))
    mine = ml.KNeighborsRegressor(n_neighbors=4, metric=metric, weights="distance").fit(X, X[:, 0])
    ref = neighbors.KNeighborsRegressor(n_neighbors=4, metric=metric, weights="distance", algorithm="brute").fit(X, X[:, 0])
    np.testing.assert_allclose(mine.predict(X + 0.01), ref.predict(X + 0.01), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("affinity", ["rbf", "nearest_neighbors"])
def test_spectral_clustering_same_partition_as_sklearn(affinity):
    from sklearn.cluster import SpectralClustering

    X, _ = make_blobs(n_samples=300, centers=4, n_features=3, cluster_std=0.8, random_state=5)
    mine = ml.SpectralClustering(n_clusters=4, affinity=affinity, gamma=0.5).fit(X)
    ref = SpectralClustering(n_clusters=4, affinity=affinity, gamma=0.5, random_state=0).fit(X)
    assert adjusted_rand_score(mine.labels_, ref.labels_) == 1.0
    assert mine.fit_predict(X).shape == (300,)


def test_spectral_clustering_rings():
    from sklearn.cluster import SpectralClustering
    from sklearn.datasets import make_circles

    X, y = make_circles(n_samples=300, factor=0.4, noise=0.03, random_state=0)
    mine = ml.SpectralClustering(n_clusters=2, affinity="nearest_neighbors").fit(X)
    ref = SpectralClustering(n_clusters=2, affinity="nearest_neighbors", random_state=0).fit(X)
    assert adjusted_rand_score(mine.labels_, ref.labels_) == 1.0
    assert adjusted_rand_score(mine.labels_, y) == 1.0
