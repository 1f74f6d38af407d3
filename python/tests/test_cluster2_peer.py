"""AgglomerativeClustering and MeanShift against scikit-learn.

AgglomerativeClustering: bitlearn builds the tree as scipy's linkage (nearest-neighbor chain for
ward, complete and average) and scikit-learn's own spanning tree (single) do, with the same
binary64 distances and Lance-Williams updates, then numbers the merges and cuts the tree as
scikit-learn's _hc_cut. On data without tied distances (iris is jittered, since it holds duplicate
rows) children_ and labels_ are identical and distances_ agree to rounding.

MeanShift: the climbs, the (count, coordinates) ordering, the removal of near-duplicates and the
labelling follow scikit-learn; bitlearn averages in binary64 where scikit-learn averages float32
rows in float32, so the centers agree to about 1e-6 and the labels are identical when no row lies
within rounding of a bandwidth. estimate_bandwidth is the same mean of k-th neighbor distances."""
import numpy as np
import pytest
import sklearn.cluster
from sklearn.datasets import load_iris, make_blobs, make_moons
from sklearn.preprocessing import StandardScaler

from bitlearn import ml


def _blobs():
    X, _ = make_blobs(n_samples=300, centers=3, cluster_std=0.6, random_state=0)
    return X.astype(np.float32)


def _moons():
    X, _ = make_moons(n_samples=300, noise=0.06, random_state=0)
    return X.astype(np.float32)


def _iris():
    X, _ = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    X = X + np.random.default_rng(0).uniform(-1e-3, 1e-3, X.shape)  # breaks the ties of duplicate rows
    return X.astype(np.float32)


_DATA = [(_blobs, "blobs"), (_moons, "moons"), (_iris, "iris")]


@pytest.mark.parametrize("data", [d for d, _ in _DATA], ids=[i for _, i in _DATA])
@pytest.mark.parametrize("linkage", ["ward", "complete", "average", "single"])
def test_agglomerative_tree_and_labels(data, linkage):
    X = data()
    for n_clusters in (2, 3, 5):
        ref = sklearn.cluster.AgglomerativeClustering(n_clusters=n_clusters, linkage=linkage,
                                                      compute_distances=True).fit(X)
        ours = ml.AgglomerativeClustering(n_clusters=n_clusters, linkage=linkage).fit(X)
        np.testing.assert_array_equal(ours.children_, ref.children_)
        np.testing.assert_array_equal(ours.labels_, ref.labels_)
        np.testing.assert_allclose(ours.distances_, ref.distances_, rtol=1e-12, atol=1e-12)
        assert ours.n_leaves_ == ref.n_leaves_ and ours.n_clusters_ == ref.n_clusters_
        assert ours.n_connected_components_ == ref.n_connected_components_
        np.testing.assert_array_equal(
            ml.AgglomerativeClustering(n_clusters=n_clusters, linkage=linkage).fit_predict(X), ref.labels_)


@pytest.mark.parametrize("linkage", ["complete", "average", "single"])
def test_agglomerative_manhattan(linkage):
    X = _iris()
    ref = sklearn.cluster.AgglomerativeClustering(n_clusters=3, linkage=linkage, metric="manhattan").fit(X)
    ours = ml.AgglomerativeClustering(n_clusters=3, linkage=linkage, metric="manhattan").fit(X)
    np.testing.assert_array_equal(ours.children_, ref.children_)
    np.testing.assert_array_equal(ours.labels_, ref.labels_)


@pytest.mark.parametrize("data", [d for d, _ in _DATA], ids=[i for _, i in _DATA])
@pytest.mark.parametrize("linkage", ["ward", "average", "single"])
def test_agglomerative_distance_threshold(data, linkage):
    X = data()
    full = sklearn.cluster.AgglomerativeClustering(n_clusters=2, linkage=linkage, compute_distances=True).fit(X)
    for q in (0.5, 0.9, 0.99):
        th = float(np.quantile(full.distances_, q))
        ref = sklearn.cluster.AgglomerativeClustering(n_clusters=None, distance_threshold=th, linkage=linkage).fit(X)
        ours = ml.AgglomerativeClustering(n_clusters=None, distance_threshold=th, linkage=linkage).fit(X)
        assert ours.n_clusters_ == ref.n_clusters_
        np.testing.assert_array_equal(ours.labels_, ref.labels_)
        np.testing.assert_array_equal(ours.children_, ref.children_)


def test_agglomerative_interface():
    est = ml.AgglomerativeClustering()
    assert not hasattr(est, "predict")  # as scikit-learn's: labels come from fit
    with pytest.raises(Exception, match="ward"):
        ml.AgglomerativeClustering(metric="manhattan").fit(_iris())
    with pytest.raises(Exception, match="exactly one"):
        ml.AgglomerativeClustering(distance_threshold=1.0).fit(_iris())


@pytest.mark.parametrize("bandwidth", [0.8, 1.0, 2.0, 3.5, None])
def test_mean_shift_blobs(bandwidth):
    X = _blobs()
    ref = sklearn.cluster.MeanShift(bandwidth=bandwidth).fit(X)
    ours = ml.MeanShift(bandwidth=bandwidth).fit(X)
    assert ours.cluster_centers_.shape == ref.cluster_centers_.shape
    np.testing.assert_allclose(ours.cluster_centers_, ref.cluster_centers_, atol=1e-4, rtol=0)
    np.testing.assert_array_equal(ours.labels_, ref.labels_)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    assert ours.n_iter_ == ref.n_iter_


@pytest.mark.parametrize("bandwidth", [0.8, 1.5])
def test_mean_shift_bin_seeding_and_cluster_all(bandwidth):
    X = np.vstack([_blobs(), np.array([[20.0, 20.0]], np.float32)])
    for kw in (dict(bin_seeding=True), dict(bin_seeding=True, min_bin_freq=3, cluster_all=False)):
        ref = sklearn.cluster.MeanShift(bandwidth=bandwidth, **kw).fit(X)
        ours = ml.MeanShift(bandwidth=bandwidth, **kw).fit(X)
        np.testing.assert_allclose(ours.cluster_centers_, ref.cluster_centers_, atol=1e-4, rtol=0)
        np.testing.assert_array_equal(ours.labels_, ref.labels_)


@pytest.mark.parametrize("data", [d for d, _ in _DATA], ids=[i for _, i in _DATA])
def test_estimate_bandwidth(data):
    X = data()
    ref = sklearn.cluster.estimate_bandwidth(X)
    ours = ml.MeanShift(max_iter=0).fit(X)
    import json
    h = np.frombuffer(bytes.fromhex(json.loads(ours._est.state_json())["bandwidth_f64"]), "<f8")[0]
    assert abs(h - ref) <= 1e-5 * ref
