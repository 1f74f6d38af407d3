"""umap against umap-learn 0.5's UMAP.

The fuzzy graph: bitlearn's graph_ (before pruning) against umap.umap_.fuzzy_simplicial_set given the
same exact neighbors (computed here in float64: the row itself first, then ascending distance, the
lower index first among equals), on digits (1797 rows, integer pixels, so some rows have equal
distances at the n_neighbors boundary) and 600 rows of 8-D blobs. Entries of rows whose n_neighbors-th
and next distances differ (where both libraries must pick the same neighbors) agree within 2e-5:
umap-learn keeps rho and sigma in float32 (a rounding of 6e-8 relative to distances of 20 to 100
times sigma moves exp(-(d - rho) / sigma) by a few 1e-6; measured at most 2.6e-6 and 3.1e-6 at
n_neighbors=15, 8.4e-6 and 6.2e-6 at n_neighbors=5), bitlearn in binary64. The entry sets are equal
there.

The curve parameters a, b against umap.umap_.find_ab_params (scipy's curve_fit) within 1e-6 relative
(measured 1e-7: scipy's stopping tolerance).

The embedding of digits (defaults, random_state=0): trustworthiness (5 neighbors) within 0.01 of
umap-learn's or better, and the 5-nearest-neighbor classifier's 5-fold accuracy on the embedding within
0.01 of umap-learn's or better (measured 0.9885 vs 0.9899 and 0.9772 vs 0.9761). The two layouts
draw different negative samples (Philox here, umap-learn's Tausworthe generator there), so only such
summaries are compared. init="random" on the same data within 0.02 trustworthiness.

transform of new rows (fit on the first 1500 digits, the other 297 transformed; umap-learn's scheme:
memberships with rho = 0, the weighted mean of the neighbors' embeddings as the start, n_epochs / 3
epochs at learning_rate / 4 against the fixed training embedding): the 5-nearest-neighbor classifier
of the training embedding scores the transformed rows within 0.02 of umap-learn's (measured 0.9293
vs 0.9360).
"""
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits, make_blobs
from sklearn.manifold import trustworthiness
from sklearn.model_selection import cross_val_score
from sklearn.neighbors import KNeighborsClassifier

from bitlearn import ml

umap = pytest.importorskip("umap")


def _data(name):
    if name == "blobs":
        return make_blobs(600, n_features=8, centers=4, random_state=0)[0].astype(np.float32)
    return load_digits().data.astype(np.float32)


def _exact_knn(X, k):
    """Indices and distances [n, k] (the row itself first), and whether row i's k-th and (k+1)-th
    distances differ."""
    X64 = X.astype(np.float64)
    D = np.sqrt(((X64[:, None, :] - X64[None, :, :]) ** 2).sum(-1))
    np.fill_diagonal(D, -1.0)
    idx = np.argsort(D, axis=1, kind="stable")
    np.fill_diagonal(D, 0.0)
    S = np.take_along_axis(D, idx, 1)
    return idx[:, :k], S[:, :k], S[:, k - 1] != S[:, k]


@pytest.mark.parametrize("data", ["digits", "blobs"])
@pytest.mark.parametrize("n_neighbors", [15, 5])
def test_fuzzy_graph_matches_umap_learn(data, n_neighbors):
    X = _data(data)
    ours = ml.UMAP(n_neighbors=n_neighbors, n_epochs=11, random_state=0).fit(X)
    ki, kd, tie_free = _exact_knn(X, n_neighbors)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs, _, _ = umap.umap_.fuzzy_simplicial_set(X, n_neighbors, np.random.RandomState(0), "euclidean",
                                                       knn_indices=ki, knn_dists=kd.astype(np.float32))
    G1, G2 = ours.graph_.toarray(), theirs.toarray()
    assert np.array_equal(G1, G1.T)
    both = tie_free[:, None] & tie_free[None, :]
    assert tie_free.mean() > 0.9
    assert np.array_equal(G1[both] > 0, G2[both] > 0)
    diff = np.abs(G1 - G2)[both].max()
    print(f"{data} n_neighbors={n_neighbors}: graph max difference {diff:.1e} over {both.mean():.3f} of entries")
    assert diff < 2e-5


@pytest.mark.parametrize("spread,min_dist", [(1.0, 0.1), (1.0, 0.5), (2.0, 0.0), (0.5, 0.25)])
def test_curve_parameters_match_umap_learn(spread, min_dist):
    X = _data("blobs")[:60]
    ours = ml.UMAP(spread=spread, min_dist=min_dist, n_epochs=0).fit(X)
    a, b = umap.umap_.find_ab_params(spread, min_dist)
    assert ours._a == pytest.approx(a, rel=1e-6)
    assert ours._b == pytest.approx(b, rel=1e-6)


def _scores(X, y, E):
    return (trustworthiness(X, E, n_neighbors=5),
            cross_val_score(KNeighborsClassifier(5), E, y, cv=5).mean())


def test_digits_embedding_quality_against_umap_learn():
    digits = load_digits()
    X, y = digits.data.astype(np.float32), digits.target
    ours = ml.UMAP(random_state=0).fit(X)
    assert ours.embedding_.shape == (X.shape[0], 2)
    assert np.array_equal(ours.fit_transform(X), ours.embedding_)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = umap.UMAP(random_state=0).fit(X)
    t_ours, acc_ours = _scores(X, y, ours.embedding_)
    t_theirs, acc_theirs = _scores(X, y, theirs.embedding_)
    print(f"digits: trustworthiness {t_ours:.4f} vs {t_theirs:.4f}, 5-NN accuracy {acc_ours:.4f} vs {acc_theirs:.4f}")
    assert t_ours >= t_theirs - 0.01
    assert acc_ours >= acc_theirs - 0.01
    rand = ml.UMAP(init="random", random_state=0).fit(X)
    t_rand, _ = _scores(X, y, rand.embedding_)
    print(f"digits init=random: trustworthiness {t_rand:.4f}")
    assert t_rand >= t_theirs - 0.02


def test_transform_of_new_rows_against_umap_learn():
    digits = load_digits()
    X, y = digits.data.astype(np.float32), digits.target
    Xtr, ytr, Xte, yte = X[:1500], y[:1500], X[1500:], y[1500:]
    accs = []
    for make in (lambda: ml.UMAP(random_state=0), lambda: umap.UMAP(random_state=0)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = make().fit(Xtr)
            T = m.transform(Xte)
        assert T.shape == (Xte.shape[0], 2)
        accs.append(KNeighborsClassifier(5).fit(m.embedding_, ytr).score(T, yte))
    print(f"digits rows 1500..1796 transformed: 5-NN accuracy {accs[0]:.4f} vs {accs[1]:.4f}")
    assert accs[0] >= accs[1] - 0.02


def test_refusals_are_named():
    X = _data("blobs")[:20]
    with pytest.raises(Exception, match="n_neighbors=20 must be less than n_samples=20"):
        ml.UMAP(n_neighbors=20).fit(X)
    with pytest.raises(Exception, match="only metric=euclidean"):
        ml.UMAP(metric="cosine").fit(X)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(Exception):
        ml.UMAP().fit(bad)
