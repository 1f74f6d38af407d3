"""tsne against scikit-learn's TSNE(method="exact") and TSNE(method="barnes_hut").

Data: the first 300 rows of digits (raw pixel values) and three 5-D blobs (300 rows); float32 for
bitlearn, float64 for scikit-learn.

Both start from the same embedding: bitlearn's init="pca" (the library's PCA of X, divided by the
standard deviation of its first column, times 1e-4), rebuilt here and given to scikit-learn as an
ndarray init.

The joint probabilities P: with a vanishing learning rate (1e-300) and early_exaggeration=1 the
embedding stays at its start for 250 iterations, so kl_divergence_ is KL(P || Q(start)); scikit-learn's
P (sklearn.manifold._t_sne._joint_probabilities on the same squared distances) and its _kl_divergence
at the same start give it within 1e-10 relative (measured at most 3e-15).

A full run (max_iter=1000, the other defaults): kl_divergence_ within 5% of scikit-learn's and the
trustworthiness (5 neighbors) of the two embeddings within 0.02 (measured: digits 0.2615 vs 0.2684,
0.9939 vs 0.9928; blobs 0.4685 vs 0.4698, 0.9814 vs 0.9833). init="random" (Philox normals here,
NumPy's there): trustworthiness within 0.02 of scikit-learn's on 120 blob rows.

method="barnes_hut" (angle=0.5, the same pca start) against scikit-learn's barnes_hut on the first 500
and 1500 rows of digits: trustworthiness within 0.01 and kl_divergence_ within 5% (measured: 500 rows
kl 0.3957 vs 0.3946, trustworthiness 0.9958 vs 0.9958; 1500 rows kl 0.6682 vs 0.6692, 0.9956 vs
0.9955); angle=0.2 within 0.01 trustworthiness of angle=0.5. The two descents differ in rounding
(scikit-learn's float64 arrays, numpy's summation order) and follow separate paths after a few hundred
iterations, so only such summaries are compared.
"""
import numpy as np
import pytest
from sklearn import manifold
from sklearn.datasets import load_digits, make_blobs
from sklearn.manifold import _t_sne

from bitlearn import ml


def _data(name, n=300):
    if name == "blobs":
        return make_blobs(n, n_features=5, centers=3, random_state=0)[0].astype(np.float32)
    return load_digits().data[:n].astype(np.float32)


def _pca_start(X, k=2):
    z = ml.PCA(n_components=k).fit(X).transform(X).astype(np.float64)
    return z / np.sqrt(np.mean((z[:, 0] - np.mean(z[:, 0])) ** 2)) * 1e-4


def _sq_distances(X):
    X64 = X.astype(np.float64)
    return ((X64[:, None, :] - X64[None, :, :]) ** 2).sum(axis=-1)


@pytest.mark.parametrize("data", ["digits", "blobs"])
@pytest.mark.parametrize("perplexity", [30.0, 10.0])
def test_joint_probabilities_match_sklearn(data, perplexity):
    X = _data(data)
    n = X.shape[0]
    ours = ml.TSNE(perplexity=perplexity, early_exaggeration=1.0, learning_rate=1e-300, max_iter=250).fit(X)
    start = _pca_start(X)
    np.testing.assert_allclose(ours.embedding_, start, rtol=1e-6, atol=0)  # it did not move
    P = _t_sne._joint_probabilities(_sq_distances(X), perplexity, 0)
    want, _ = _t_sne._kl_divergence(start.ravel(), P, 1, n, 2)
    assert ours.kl_divergence_ == pytest.approx(want, rel=1e-10)
    print(f"{data} perplexity {perplexity}: kl at the start, relative difference "
          f"{abs(ours.kl_divergence_ / want - 1):.1e}")
    assert ours.n_iter_ == 249


@pytest.mark.parametrize("data", ["digits", "blobs"])
def test_full_run_matches_sklearn(data):
    X = _data(data)
    ours = ml.TSNE()
    emb = ours.fit_transform(X)
    theirs = manifold.TSNE(method="exact", init=_pca_start(X), random_state=0)
    ref = theirs.fit_transform(X.astype(np.float64))
    assert emb.shape == ref.shape == (300, 2) and emb.dtype == np.float32
    assert ours.learning_rate_ == theirs.learning_rate_ == 50.0
    assert ours.kl_divergence_ == pytest.approx(theirs.kl_divergence_, rel=0.05)
    t_ours = manifold.trustworthiness(X, emb, n_neighbors=5)
    t_theirs = manifold.trustworthiness(X, ref, n_neighbors=5)
    assert abs(t_ours - t_theirs) <= 0.02
    assert t_ours > 0.9
    print(f"{data}: kl {ours.kl_divergence_:.4f} vs {theirs.kl_divergence_:.4f}, trustworthiness "
          f"{t_ours:.4f} vs {t_theirs:.4f}, n_iter {ours.n_iter_} vs {theirs.n_iter_}")
    assert not hasattr(ours, "transform")


def test_random_init_and_refusals():
    X = _data("blobs", 120)
    a = ml.TSNE(init="random", random_state=3).fit_transform(X)
    np.testing.assert_array_equal(ml.TSNE(init="random", random_state=3).fit_transform(X), a)
    assert not np.array_equal(ml.TSNE(init="random", random_state=4).fit_transform(X), a)
    ref = manifold.TSNE(method="exact", init="random", random_state=0).fit_transform(X.astype(np.float64))
    t_ours, t_theirs = (manifold.trustworthiness(X, e, n_neighbors=5) for e in (a, ref))
    assert abs(t_ours - t_theirs) <= 0.02
    with pytest.raises(ValueError, match="n_components=4 must be at most 3"):
        ml.TSNE(method="barnes_hut", n_components=4, init="random").fit(X)
    with pytest.raises(ValueError, match="angle"):
        ml.TSNE(method="barnes_hut", angle=1.5).fit(X)
    with pytest.raises(ValueError, match="perplexity"):
        ml.TSNE(perplexity=200).fit(X)
    with pytest.raises(ValueError, match="max_iter"):
        ml.TSNE(max_iter=100).fit(X)


@pytest.mark.parametrize("n", [500, 1500])
def test_barnes_hut_matches_sklearn(n):
    X = _data("digits", n)
    ours = ml.TSNE(method="barnes_hut")
    emb = ours.fit_transform(X)
    theirs = manifold.TSNE(method="barnes_hut", init=_pca_start(X), random_state=0)
    ref = theirs.fit_transform(X.astype(np.float64))
    assert emb.shape == ref.shape == (n, 2)
    assert ours.learning_rate_ == pytest.approx(theirs.learning_rate_)
    t_ours = manifold.trustworthiness(X, emb, n_neighbors=5)
    t_theirs = manifold.trustworthiness(X, ref, n_neighbors=5)
    print(f"digits {n}: kl {ours.kl_divergence_:.4f} vs {theirs.kl_divergence_:.4f}, trustworthiness "
          f"{t_ours:.4f} vs {t_theirs:.4f}, n_iter {ours.n_iter_} vs {theirs.n_iter_}")
    assert abs(t_ours - t_theirs) <= 0.01
    assert t_ours > 0.95
    assert ours.kl_divergence_ == pytest.approx(theirs.kl_divergence_, rel=0.05)
    # The same fit at angle=0.2 (a finer tree) stays close to the default's quality.
    fine = ml.TSNE(method="barnes_hut", angle=0.2).fit_transform(X)
    assert abs(manifold.trustworthiness(X, fine, n_neighbors=5) - t_ours) <= 0.01
