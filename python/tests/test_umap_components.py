"""umap's start on a graph of several connected components, against umap-learn 0.5's
multi_component_layout (spectral_layout's path when scipy's connected_components finds more than one).

Three cases whose pruned fuzzy graph splits (checked here with scipy on bitlearn's own graph_):
  - 4 blobs far apart in 10-D (n_components 2: 4 <= 2 * dim, meta points +-e_1, +-e_2);
  - 7 blobs (more components than 2 * dim: the meta points are the spectral embedding of the
    components' centroids);
  - 3 blobs and a far pair of rows at n_neighbors=2 (tiny components of fewer than 2 * dim rows start
    as uniform points about their meta point).
The embedding keeps every component apart (each row's nearest rows in the embedding, up to 5, are
of its own component), and trustworthiness (5 neighbors) is within 0.02 of
umap-learn's on the same data and parameters, or better. The bytes are equal at 1, 2 and 3 threads.
"""
import warnings

import numpy as np
import pytest
import scipy.sparse
from scipy.sparse.csgraph import connected_components
from sklearn.datasets import make_blobs
from sklearn.manifold import trustworthiness

import bitlearn
from bitlearn import ml

umap = pytest.importorskip("umap")


def _blobs(centers, n=240, seed=0, scale=10.0):
    rng = np.random.default_rng(seed)
    c = rng.normal(size=(centers, 10)) * scale
    X, y = make_blobs(n, n_features=10, centers=c, cluster_std=0.5, random_state=seed)
    return X.astype(np.float32), y


def _with_pair(seed=0):
    X, y = _blobs(3, n=150, seed=seed)
    pair = np.full((2, 10), 80.0, dtype=np.float32)
    pair[1, 0] += 0.3
    return np.vstack([X, pair]), np.concatenate([y, [3, 3]])


CASES = {
    "4 blobs": (lambda: _blobs(4), dict(n_neighbors=15)),
    "7 blobs": (lambda: _blobs(7, n=350), dict(n_neighbors=15)),
    "3 blobs and a pair": (_with_pair, dict(n_neighbors=2)),
}


def _graph_components(model, n_epochs=500):
    """scipy's components of the graph the layout uses: graph_ without entries below max / n_epochs."""
    g = scipy.sparse.csr_matrix(model.graph_, copy=True)
    g.data[g.data < g.data.max() / n_epochs] = 0.0
    g.eliminate_zeros()
    return connected_components(g, directed=False)


def _fit(X, threads=None, **kw):
    before = bitlearn.num_threads()
    if threads:
        bitlearn.set_num_threads(threads)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ml.UMAP(random_state=0, **kw).fit(X)
    finally:
        bitlearn.set_num_threads(before)


@pytest.mark.parametrize("case", list(CASES))
def test_components_stay_apart_as_umap_learns(case):
    make, kw = CASES[case]
    X, _ = make()
    ours = _fit(X, **kw)
    nc, labels = _graph_components(ours)
    assert nc > 1
    E = ours.embedding_
    assert np.all(np.isfinite(E))
    # Each row's nearest rows in the embedding (up to 5, fewer in a smaller component) lie in its own
    # component.
    D = ((E[:, None, :].astype(np.float64) - E[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(D, np.inf)
    order = np.argsort(D, axis=1, kind="stable")
    sizes = np.bincount(labels)
    for i in range(X.shape[0]):
        m = min(5, sizes[labels[i]] - 1)
        assert np.all(labels[order[i, :m]] == labels[i]), f"row {i} lies among another component's rows"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = umap.UMAP(random_state=0, **kw).fit(X)
    t_ours = trustworthiness(X, E, n_neighbors=5)
    t_theirs = trustworthiness(X, theirs.embedding_, n_neighbors=5)
    print(f"{case}: {nc} components, trustworthiness {t_ours:.4f} vs umap-learn {t_theirs:.4f}")
    assert t_ours >= t_theirs - 0.02


@pytest.mark.parametrize("case", list(CASES))
def test_component_start_is_the_same_at_every_thread_count(case):
    make, kw = CASES[case]
    X, _ = make()
    outs = [_fit(X, threads=t, **kw).embedding_.tobytes() for t in (1, 2, 3)]
    assert outs[0] == outs[1] == outs[2]


def test_one_component_keeps_the_start():
    # A connected graph (one blob) takes the whole-graph spectral start, as before.
    X, _ = _blobs(1, n=120)
    ours = _fit(X)
    nc, _ = _graph_components(ours)
    assert nc == 1
    assert np.all(np.isfinite(ours.embedding_))
