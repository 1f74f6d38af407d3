"""spectral_embedding and locally_linear_embedding against scikit-learn's SpectralEmbedding and
LocallyLinearEmbedding.

Data: a 300-point swiss roll, three 5-D blobs (300 rows) and the first 300 rows of digits
(standardized); float32 for bitlearn, float64 for scikit-learn.

SpectralEmbedding (eigen_solver="arpack" there, a dense binary64 decomposition here), where the
graph is connected (the small Laplacian eigenvalues then distinct): nearest_neighbors with 10
neighbors and with the default (n_samples / 10) and rbf with the default gamma. Both apply the same
sign rule, so the embeddings are compared as they are: within 1e-6 of their largest magnitude
(measured at most 6e-8). Blobs under nearest_neighbors make a disconnected graph (the eigenvalue 0
of the Laplacian repeated, its eigenvectors any basis of the components), so only rbf is compared
there; digits with 10 neighbors likewise.

LocallyLinearEmbedding (eigen_solver="dense" there), method="standard": on the swiss roll and
digits (connected neighbor graphs), the embedding within 1e-6 of its largest magnitude after sign
alignment (measured 4e-8), reconstruction_error_ within 1e-6 relative (measured 6e-8) and the
transform of held-out rows within 1e-5 (the weighted sums of the embedding rows). method="ltsa" on
the swiss roll: the same bounds (measured 5e-8, 3e-8 relative, 5e-9); not on digits, whose LTSA
matrix has many eigenvalues at rounding level (its bottom eigenvectors any basis of that space, on
both sides).
"""
import numpy as np
import pytest
from sklearn import manifold
from sklearn.datasets import load_digits, make_blobs, make_swiss_roll
from sklearn.preprocessing import StandardScaler

from bitlearn import ml


def _data(name, n=300):
    if name == "swiss_roll":
        return make_swiss_roll(n, random_state=0)[0].astype(np.float32)
    if name == "blobs":
        return make_blobs(n, n_features=5, centers=3, random_state=0)[0].astype(np.float32)
    X = load_digits().data[:n]
    return StandardScaler().fit_transform(X[:, X.std(axis=0) > 0]).astype(np.float32)


_SPECTRAL_CASES = [("swiss_roll", "nearest_neighbors", {"n_neighbors": 10}),
                   ("swiss_roll", "nearest_neighbors", {}),
                   ("swiss_roll", "rbf", {}),
                   ("blobs", "rbf", {}),
                   ("digits", "nearest_neighbors", {}),
                   ("digits", "rbf", {})]


@pytest.mark.parametrize("data,affinity,kw", _SPECTRAL_CASES)
def test_spectral_embedding_matches_sklearn(data, affinity, kw):
    X = _data(data)
    ours = ml.SpectralEmbedding(affinity=affinity, **kw)
    emb = ours.fit_transform(X)
    theirs = manifold.SpectralEmbedding(affinity=affinity, eigen_solver="arpack", random_state=0, **kw)
    ref = theirs.fit_transform(X.astype(np.float64))
    assert emb.shape == ref.shape == (300, 2)
    assert np.max(np.abs(emb - ref)) <= 1e-6 * np.max(np.abs(ref))
    np.testing.assert_array_equal(ours.embedding_, emb)
    assert not hasattr(ours, "transform")


def test_spectral_embedding_rbf_gamma_and_components():
    X = _data("swiss_roll")
    emb = ml.SpectralEmbedding(affinity="rbf", gamma=0.05, n_components=3).fit_transform(X)
    ref = manifold.SpectralEmbedding(affinity="rbf", gamma=0.05, n_components=3, random_state=0).fit_transform(
        X.astype(np.float64))
    assert np.max(np.abs(emb - ref)) <= 1e-6 * np.max(np.abs(ref))


@pytest.mark.parametrize("data", ["swiss_roll", "digits"])
@pytest.mark.parametrize("n_neighbors", [10, 12])
def test_lle_matches_sklearn(data, n_neighbors):
    X = _data(data, 400)
    train, test = X[:300], X[300:]
    ours = ml.LocallyLinearEmbedding(n_neighbors=n_neighbors).fit(train)
    theirs = manifold.LocallyLinearEmbedding(n_neighbors=n_neighbors, eigen_solver="dense").fit(
        train.astype(np.float64))
    sign = np.sign(np.sum(ours.embedding_ * theirs.embedding_, axis=0))
    scale = np.max(np.abs(theirs.embedding_))
    assert np.max(np.abs(ours.embedding_ * sign - theirs.embedding_)) <= 1e-6 * scale
    assert ours.reconstruction_error_ == pytest.approx(theirs.reconstruction_error_, rel=1e-6)
    np.testing.assert_array_equal(ml.LocallyLinearEmbedding(n_neighbors=n_neighbors).fit_transform(train),
                                  ours.embedding_)
    a, b = ours.transform(test), theirs.transform(test.astype(np.float64))
    assert np.max(np.abs(a * sign - b)) <= 1e-5 * scale


@pytest.mark.parametrize("n_neighbors", [10, 12])
def test_ltsa_matches_sklearn(n_neighbors):
    X = _data("swiss_roll", 400)
    train, test = X[:300], X[300:]
    ours = ml.LocallyLinearEmbedding(n_neighbors=n_neighbors, method="ltsa").fit(train)
    theirs = manifold.LocallyLinearEmbedding(n_neighbors=n_neighbors, method="ltsa", eigen_solver="dense").fit(
        train.astype(np.float64))
    sign = np.sign(np.sum(ours.embedding_ * theirs.embedding_, axis=0))
    scale = np.max(np.abs(theirs.embedding_))
    assert np.max(np.abs(ours.embedding_ * sign - theirs.embedding_)) <= 1e-6 * scale
    assert ours.reconstruction_error_ == pytest.approx(theirs.reconstruction_error_, rel=1e-6)
    a, b = ours.transform(test), theirs.transform(test.astype(np.float64))
    assert np.max(np.abs(a * sign - b)) <= 1e-5 * scale


def test_lle_refuses_other_methods_by_name():
    for method in ("modified", "hessian"):
        with pytest.raises(ValueError, match="method"):
            ml.LocallyLinearEmbedding(method=method).fit(_data("swiss_roll"))
