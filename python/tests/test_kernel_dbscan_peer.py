"""KernelRidge and DBSCAN against scikit-learn.

KernelRidge: bitlearn builds the kernel matrix and solves (K + alpha I) c = y by Cholesky in
binary32, scikit-learn in float64, so predictions agree to a small relative error (measured
against the largest prediction): 1e-4, or cond(K + alpha I) * 2^-21 where the system is worse
conditioned (a small multiple of binary32's unit roundoff times the condition number bounds the
solve's error; measured: 6e-6 or less for every kernel but the linear one on diabetes, 3.3e-4,
whose K + I has a condition number near 1.5e3).

DBSCAN: the labelling rule is scikit-learn's (clusters numbered from the lowest unlabeled core
point, a border point keeps its first cluster), so the label arrays are identical, given both
libraries see the same float32 data and no pair of rows lies within rounding of eps."""
import numpy as np
import pytest
import sklearn.cluster
import sklearn.kernel_ridge
from sklearn.datasets import load_diabetes, load_iris, make_blobs, make_moons, make_regression
from sklearn.metrics import adjusted_rand_score
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.preprocessing import StandardScaler

from bitlearn import ml

KR_TOL = 1e-4

_KERNELS = [
    dict(kernel="linear", alpha=1.0),
    dict(kernel="rbf", alpha=0.1),
    dict(kernel="rbf", alpha=1.0, gamma=0.5),
    dict(kernel="poly", alpha=1.0, degree=2),
    dict(kernel="poly", alpha=1.0, degree=3, gamma=0.05, coef0=1.0),
    dict(kernel="sigmoid", alpha=1.0, gamma=0.01, coef0=0.0),
    dict(kernel="laplacian", alpha=0.1),
]


def _diabetes():
    X, y = load_diabetes(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    return X.astype(np.float32), y.astype(np.float32)


def _regression():
    X, y = make_regression(n_samples=300, n_features=6, noise=5.0, random_state=0)
    X = StandardScaler().fit_transform(X)
    return X.astype(np.float32), (y / np.std(y)).astype(np.float32)


@pytest.mark.parametrize("data", [_diabetes, _regression], ids=["diabetes", "make_regression"])
@pytest.mark.parametrize("params", _KERNELS, ids=lambda p: "-".join(f"{k}={v}" for k, v in p.items()))
def test_kernel_ridge_predictions(data, params):
    X, y = data()
    Xtr, Xte, ytr = X[:-60], X[-60:], y[:-60]
    ref = sklearn.kernel_ridge.KernelRidge(**params).fit(Xtr.astype(np.float64), ytr.astype(np.float64))
    ours = ml.KernelRidge(**params).fit(Xtr, ytr)
    kw = {k: v for k, v in params.items() if k not in ("kernel", "alpha")}
    K = pairwise_kernels(Xtr.astype(np.float64), metric=params["kernel"], filter_params=True, **kw)
    tol = max(KR_TOL, np.linalg.cond(K + params["alpha"] * np.eye(len(K))) * 2.0 ** -21)
    for Z in (Xtr, Xte):
        want = ref.predict(Z.astype(np.float64))
        got = ours.predict(Z)
        err = np.max(np.abs(got - want)) / np.max(np.abs(want))
        assert err < tol, f"relative error {err:.3g} (tolerance {tol:.3g})"
    np.testing.assert_allclose(ours.dual_coef_, ref.dual_coef_, rtol=0,
                               atol=5e-3 * np.max(np.abs(ref.dual_coef_)))
    np.testing.assert_array_equal(ours.X_fit_, Xtr)


def _blobs():
    X, _ = make_blobs(n_samples=300, centers=3, cluster_std=0.6, random_state=0)
    return X.astype(np.float32)


def _moons():
    X, _ = make_moons(n_samples=300, noise=0.06, random_state=0)
    return X.astype(np.float32)


def _iris():
    X, _ = load_iris(return_X_y=True)
    return StandardScaler().fit_transform(X).astype(np.float32)


@pytest.mark.parametrize("data,eps_list", [(_blobs, (0.3, 0.5, 0.8)), (_moons, (0.1, 0.2, 0.3)),
                                           (_iris, (0.5, 0.8, 1.0))], ids=["blobs", "moons", "iris"])
@pytest.mark.parametrize("min_samples", [3, 5, 10])
def test_dbscan_labels(data, eps_list, min_samples):
    X = data()
    for eps in eps_list:
        ref = sklearn.cluster.DBSCAN(eps=eps, min_samples=min_samples).fit(X.astype(np.float64))
        ours = ml.DBSCAN(eps=eps, min_samples=min_samples).fit(X)
        assert adjusted_rand_score(ref.labels_, ours.labels_) == 1.0
        np.testing.assert_array_equal(ours.labels_, ref.labels_)
        np.testing.assert_array_equal(ours.core_sample_indices_, ref.core_sample_indices_)
        np.testing.assert_array_equal(ours.components_, X[ref.core_sample_indices_])
        np.testing.assert_array_equal(ml.DBSCAN(eps=eps, min_samples=min_samples).fit_predict(X), ref.labels_)


def test_dbscan_interface():
    est = ml.DBSCAN()
    assert not hasattr(est, "predict")  # as scikit-learn's DBSCAN: labels come from fit
    with pytest.raises(Exception, match="eps"):
        ml.DBSCAN(eps=0.0).fit(_iris())
    with pytest.raises(Exception, match="euclidean"):
        ml.DBSCAN(metric="manhattan").fit(_iris())
