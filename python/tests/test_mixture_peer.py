"""gaussian_mixture against scikit-learn's GaussianMixture on iris and on make_blobs, for the four
covariance types.

With init_params=kmeans both start from k-means labels (bitlearn's own k-means, scikit-learn's
KMeans); on these data sets the two k-means runs find the same partition, so EM follows the same path:
the lower bound and score agree within 1e-4 relative (measured: about 1e-8), the labels are the same
partition (adjusted Rand index 1), and weights, means and covariances agree up to the order of the
components. The other inits draw from bitlearn's Philox streams, not NumPy's, and may reach another
local optimum; for them the check is that bitlearn's fitted mixture is a fixed point of
scikit-learn's EM (started there, scikit-learn's score moves by less than 1e-4 relative).
bic / aic are computed from score and the parameter count as scikit-learn's; sample draws with
NumPy and is not part of bitlearn's identity contract (only its shapes and moments are checked)."""
import numpy as np
import pytest
from sklearn import mixture
from sklearn.datasets import load_iris, make_blobs
from sklearn.metrics import adjusted_rand_score

from bitlearn import ml

TYPES = ["full", "tied", "diag", "spherical"]
REL = 1e-4


def _iris():
    return load_iris(return_X_y=True)[0], 3


def _blobs():
    X, _ = make_blobs(n_samples=600, centers=4, n_features=3, cluster_std=[0.5, 1.0, 0.7, 0.4],
                      random_state=3)
    return X, 4


DATA = {"iris": _iris, "blobs": _blobs}


def _order(means, ref_means):
    """The permutation of bitlearn's components that matches scikit-learn's (nearest means)."""
    d = ((ref_means[:, None, :] - means[None, :, :]) ** 2).sum(-1)
    perm = d.argmin(1)
    assert sorted(perm) == list(range(len(perm)))
    return perm


def _rel(a, b):
    return abs(a - b) / max(1.0, abs(b))


@pytest.mark.parametrize("data", sorted(DATA))
@pytest.mark.parametrize("cov", TYPES)
def test_kmeans_init_matches_sklearn(data, cov):
    X, k = DATA[data]()
    mine = ml.GaussianMixture(n_components=k, covariance_type=cov).fit(X)
    ref = mixture.GaussianMixture(n_components=k, covariance_type=cov, random_state=0).fit(X)
    assert mine.converged_ and ref.converged_
    assert _rel(mine.lower_bound_, ref.lower_bound_) < REL
    assert _rel(mine.score(X), ref.score(X)) < REL
    np.testing.assert_allclose(mine.score_samples(X), ref.score_samples(X), rtol=1e-4, atol=1e-4)
    assert adjusted_rand_score(mine.predict(X), ref.predict(X)) == 1.0
    perm = _order(mine.means_.astype(np.float64), ref.means_)
    np.testing.assert_allclose(mine.weights_[perm], ref.weights_, atol=1e-5)
    np.testing.assert_allclose(mine.means_[perm], ref.means_, atol=1e-4, rtol=1e-4)
    cov_mine = mine.covariances_ if cov == "tied" else mine.covariances_[perm]
    np.testing.assert_allclose(cov_mine, ref.covariances_, atol=1e-4, rtol=1e-4)
    np.testing.assert_allclose(mine.predict_proba(X)[:, perm], ref.predict_proba(X), atol=1e-4)
    n = len(X)
    assert _rel(mine.bic(X), ref.bic(X)) < REL and _rel(mine.aic(X), ref.aic(X)) < REL
    assert n == mine.predict(X).shape[0]


@pytest.mark.parametrize("init", ["k-means++", "random", "random_from_data"])
@pytest.mark.parametrize("cov", TYPES)
def test_fit_is_a_fixed_point_of_sklearn_em(init, cov):
    X, k = _iris()
    mine = ml.GaussianMixture(n_components=k, covariance_type=cov, init_params=init, n_init=2,
                              tol=1e-6, max_iter=500).fit(X)
    assert mine.converged_
    ref = mixture.GaussianMixture(n_components=k, covariance_type=cov, weights_init=mine.weights_ / mine.weights_.sum(),
                                  means_init=mine.means_, precisions_init=mine.precisions_, tol=1e-6,
                                  max_iter=500).fit(X)
    assert _rel(ref.score(X), mine.score(X)) < REL
    assert adjusted_rand_score(mine.predict(X), ref.predict(X)) == 1.0


def test_sample_shapes_and_moments():
    X, k = _blobs()
    gm = ml.GaussianMixture(n_components=k, covariance_type="full").fit(X)
    Xs, ys = gm.sample(20000)
    assert Xs.shape == (20000, 3) and ys.shape == (20000,)
    for j in range(k):
        np.testing.assert_allclose(Xs[ys == j].mean(0), gm.means_[j], atol=0.1)
    with pytest.raises(ValueError):
        gm.sample(0)
