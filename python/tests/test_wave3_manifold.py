"""mds and isomap against scikit-learn's MDS and Isomap.

mds against scikit-learn's MDS (metric SMACOF) on iris, wine and the first 300 rows of digits
(standardized, float32 for bitlearn; scikit-learn fits them in float64).

From the classical-scaling start (init="classical_mds": one deterministic run in both, the solution
unique up to the sign of each axis): the same iteration count, stress_ within 1e-6 relative
(measured 3e-9), the embedding within 1e-6 of its largest magnitude after sign alignment (measured
3.9e-8) and trustworthiness within 1e-4 (equal, but for 9e-6 from a rank tie of iris's duplicate
rows); the same with a precomputed dissimilarity matrix. From random
starts (Philox against NumPy, n_init=4): stress_ at most 1% above scikit-learn's (measured from 0.2%
above to 1.7% below) and trustworthiness (5 neighbors) at most 0.01 below it (measured at least its).

Isomap (10 neighbors, 2 components, Dijkstra and Floyd-Warshall; every other row of an 800-point
swiss roll, of wine and of 300 digits): the embedding within 1e-6 of its largest magnitude after sign
alignment (measured 5e-8), the same trustworthiness, and the held-out rows' transform within 1e-6
(measured 4.8e-8; not on digits, whose integer pixels tie among a held-out row's 10th neighbors,
which the two libraries break differently).
"""
import numpy as np
import pytest
from sklearn import manifold
from sklearn.datasets import make_swiss_roll
from sklearn.metrics import pairwise_distances
from sklearn.preprocessing import StandardScaler

from _peer_common import assert_within_scale, axis_signs, features, fit_pair, transform_pair
from bitlearn import ml

_DATA = ["digits", "iris", "wine"]


def _data(name):
    return StandardScaler().fit_transform(features(name, rows=300, varying=True)).astype(np.float32)


@pytest.mark.parametrize("data", _DATA)
@pytest.mark.parametrize("precomputed", [False, True])
def test_mds_matches_sklearn_from_classical_scaling(data, precomputed):
    X = _data(data)
    Xin = pairwise_distances(X.astype(np.float64)).astype(np.float32) if precomputed else X
    metric = "precomputed" if precomputed else "euclidean"
    ours, theirs = fit_pair(ml.MDS(init="classical_mds", metric=metric),
                            manifold.MDS(init="classical_mds", metric=metric, n_init=1), Xin)
    assert ours.embedding_.shape == theirs.embedding_.shape == (len(X), 2)
    assert ours.n_iter_ == theirs.n_iter_
    np.testing.assert_allclose(ours.stress_, theirs.stress_, rtol=1e-6)
    assert_within_scale(ours.embedding_ * axis_signs(ours.embedding_, theirs.embedding_), theirs.embedding_, 1e-6)
    t_ours = manifold.trustworthiness(X, ours.embedding_, n_neighbors=5)
    t_theirs = manifold.trustworthiness(X, theirs.embedding_, n_neighbors=5)
    assert abs(t_ours - t_theirs) <= 1e-4  # iris's duplicate rows: one neighbor-rank tie moves it 9e-6


@pytest.mark.parametrize("data", _DATA)
def test_mds_random_starts_fit_as_well_as_sklearn(data):
    X = _data(data)
    ours, theirs = fit_pair(ml.MDS(n_init=4), manifold.MDS(init="random", n_init=4, random_state=0), X)
    assert ours.stress_ <= 1.01 * theirs.stress_
    t_ours = manifold.trustworthiness(X, ours.embedding_, n_neighbors=5)
    t_theirs = manifold.trustworthiness(X, theirs.embedding_, n_neighbors=5)
    assert t_ours >= t_theirs - 0.01
    np.testing.assert_array_equal(ml.MDS(n_init=4).fit_transform(X), ours.embedding_)


def _isomap_data(name):
    if name == "swiss_roll":
        X, _ = make_swiss_roll(800, random_state=0)
        return X.astype(np.float32)
    return _data(name)


@pytest.mark.parametrize("data", ["swiss_roll", "wine", "digits"])
@pytest.mark.parametrize("path_method", ["auto", "FW"])
def test_isomap_matches_sklearn(data, path_method):
    X = _isomap_data(data)
    train, test = X[::2], X[1::2]
    kw = dict(n_neighbors=10, n_components=2, path_method=path_method)
    ours, theirs = fit_pair(ml.Isomap(**kw), manifold.Isomap(**kw), train)
    sign = axis_signs(ours.embedding_, theirs.embedding_)
    assert_within_scale(ours.embedding_ * sign, theirs.embedding_, 1e-6)
    assert manifold.trustworthiness(train, ours.embedding_, n_neighbors=5) == pytest.approx(
        manifold.trustworthiness(train, theirs.embedding_, n_neighbors=5), abs=1e-9)
    if data == "digits":  # integer pixels: held-out rows meet ties among their 10th neighbors
        return
    a, b = transform_pair(ours, theirs, test)
    assert_within_scale(a * sign, b, 1e-6)
