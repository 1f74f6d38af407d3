"""sample_weight against scikit-learn for the estimators whose weights scale a per-row bound or
draw: SVC, NuSVC, SVR, NuSVR and OneClassSVM (C_i = C w_i in the dual box) fitted with the same
weights give scikit-learn's decision values (the solvers' tolerance); rows of weight 0 take no
part; all-ones weights give the unweighted model file."""
import numpy as np
import pytest
import sklearn.svm as sksvm

from bitlearn import ml


def _weights(n):
    return ((np.arange(n) * 7 + 3) % 5).astype(np.float32) * 0.5  # 0, 0.5, ..., 2: zeros included


def _data(kind, n=300, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 4).astype(np.float32)
    if kind == "classes":
        y = (X[:, 0] + 0.5 * X[:, 1] - 0.7 * X[:, 2] + 0.6 * rng.randn(n) > 0).astype(np.int64)
        y[::7] = 2  # a third class
        X[y == 2, 3] += 1.5
        return X, y
    return X, (np.sin(X[:, 0]) + 0.5 * X[:, 1] * X[:, 2] + 0.1 * rng.randn(n)).astype(np.float32)


SVM = [("SVC", {"C": 2.0, "gamma": 0.3}, "classes"),
       ("SVC", {"C": 0.5, "kernel": "linear"}, "classes"),
       ("NuSVC", {"nu": 0.3, "gamma": 0.3}, "classes"),
       ("SVR", {"C": 3.0, "epsilon": 0.05, "gamma": 0.3}, "values"),
       ("NuSVR", {"C": 3.0, "nu": 0.4, "gamma": 0.3}, "values"),
       ("OneClassSVM", {"nu": 0.2, "gamma": 0.3}, "values")]


@pytest.mark.parametrize("cls,params,kind", SVM, ids=[f"{c[0]}-{i}" for i, c in enumerate(SVM)])
def test_weighted_svm_matches_scikit_learn(cls, params, kind):
    X, y = _data(kind)
    w = _weights(len(X))
    params = {**params, "tol": 1e-6}
    fit_y = None if cls == "OneClassSVM" else y
    ours = getattr(ml, cls)(**params).fit(X, fit_y, sample_weight=w)
    theirs = getattr(sksvm, cls)(**params).fit(X.astype(np.float64), fit_y, sample_weight=w.astype(np.float64))
    Q = _data(kind, 200, 1)[0]
    a = ours.predict(Q) if cls in ("SVR", "NuSVR") else ours.decision_function(Q)
    b = theirs.predict(Q) if cls in ("SVR", "NuSVR") else theirs.decision_function(Q.astype(np.float64))
    scale = max(1.0, np.max(np.abs(b)))
    assert np.max(np.abs(np.asarray(a, np.float64) - b)) <= 1e-4 * scale
    # scikit-learn's support_ counts the rows of positive weight only; ours counts all rows.
    np.testing.assert_array_equal(np.sort(ours.support_), np.sort(np.flatnonzero(w > 0)[theirs.support_]))
    assert np.all(w[ours.support_] > 0)  # rows of weight 0 are never support vectors
    # The weights matter: the unweighted fit is farther from scikit-learn's weighted one.
    plain = getattr(ml, cls)(**params).fit(X, fit_y)
    c = plain.predict(Q) if cls in ("SVR", "NuSVR") else plain.decision_function(Q)
    assert np.max(np.abs(np.asarray(c, np.float64) - b)) > 10 * np.max(np.abs(np.asarray(a, np.float64) - b))


@pytest.mark.parametrize("cls", ["SVC", "SVR", "NuSVC", "NuSVR", "OneClassSVM"])
def test_svm_all_ones_give_the_unweighted_model_file(cls):
    X, y = _data("classes" if cls in ("SVC", "NuSVC") else "values", 120)
    fit_y = None if cls == "OneClassSVM" else y
    params = {"nu": 0.3} if cls == "NuSVC" else {}
    base = getattr(ml, cls)(**params).fit(X, fit_y).model_file_text()
    assert getattr(ml, cls)(**params).fit(X, fit_y, sample_weight=np.ones(len(X))).model_file_text() == base


LINEAR = [("LinearSVC", {"C": 0.7}, "classes"),
          ("LinearSVC", {"C": 0.7, "loss": "hinge"}, "classes"),
          ("LinearSVR", {"C": 2.0, "epsilon": 0.1}, "values"),
          ("LinearSVR", {"C": 2.0, "loss": "squared_epsilon_insensitive"}, "values")]


@pytest.mark.parametrize("cls,params,kind", LINEAR, ids=[f"{c[0]}-{i}" for i, c in enumerate(LINEAR)])
def test_weighted_linear_svm_matches_scikit_learn(cls, params, kind):
    X, y = _data(kind)
    w = _weights(len(X)) + 0.25
    params = {**params, "tol": 1e-8, "max_iter": 100000}
    if "squared" in params.get("loss", "squared") or cls == "LinearSVC" and "loss" not in params:
        params["dual"] = True
    ours = getattr(ml, cls)(**params).fit(X, y, sample_weight=w)
    theirs = getattr(sksvm, cls)(**params).fit(X.astype(np.float64), y, sample_weight=w.astype(np.float64))
    a = np.concatenate([np.ravel(ours.coef_), np.ravel(ours.intercept_)]).astype(np.float64)
    b = np.concatenate([np.ravel(theirs.coef_), np.ravel(theirs.intercept_)])
    scale = max(1.0, np.max(np.abs(b)))
    assert np.max(np.abs(a - b)) <= 1e-4 * scale, (a, b)
    plain = getattr(ml, cls)(**params).fit(X, y)
    c = np.concatenate([np.ravel(plain.coef_), np.ravel(plain.intercept_)]).astype(np.float64)
    assert np.max(np.abs(c - b)) > 5 * np.max(np.abs(a - b))


@pytest.mark.parametrize("cls", ["AdaBoostClassifier", "AdaBoostRegressor", "BaggingClassifier", "BaggingRegressor"])
def test_weighted_adaboost_and_bagging_match_scikit_learn(cls):
    import sklearn.ensemble as ske
    import sklearn.tree as skt
    rng = np.random.RandomState(4)
    n = 1500
    X = rng.randn(n, 5).astype(np.float32)
    clean = X[:, 0] + 0.5 * X[:, 1] - X[:, 2] * X[:, 3]
    classify = "Classifier" in cls
    y = (clean > 0).astype(np.float32) if classify else clean.astype(np.float32)
    noisy = np.arange(n) % 3 == 0  # scrambled rows, weight 0
    y_train = y.copy()
    y_train[noisy] = (1 - y[noisy]) if classify else rng.randn(noisy.sum()).astype(np.float32) * 5
    w = np.where(noisy, 0.0, 0.5 + (np.arange(n) % 4)).astype(np.float32)
    depth = 3
    tree = "decision_tree_classifier" if classify else "decision_tree_regressor"
    peer_tree = (skt.DecisionTreeClassifier if classify else skt.DecisionTreeRegressor)(max_depth=depth)
    n_est = 40 if "AdaBoost" in cls else 20
    ours = getattr(ml, cls)(estimator=f"{tree}(max_depth={depth})", n_estimators=n_est)
    theirs = getattr(ske, cls)(estimator=peer_tree, n_estimators=n_est, random_state=0)
    plain = getattr(ml, cls)(estimator=f"{tree}(max_depth={depth})", n_estimators=n_est)
    ours.fit(X, y_train, sample_weight=w)
    theirs.fit(X.astype(np.float64), y_train, sample_weight=w.astype(np.float64))
    plain.fit(X, y_train)
    s_ours, s_theirs, s_plain = ours.score(X, y), theirs.score(X, y), plain.score(X, y)
    assert abs(s_ours - s_theirs) < 0.04, (s_ours, s_theirs)
    assert s_ours > s_plain + 0.02, (s_ours, s_plain)
    ones = getattr(ml, cls)(estimator=f"{tree}(max_depth={depth})", n_estimators=5)
    assert ones.fit(X, y, sample_weight=np.ones(n)).model_file_text() == \
        getattr(ml, cls)(estimator=f"{tree}(max_depth={depth})", n_estimators=5).fit(X, y).model_file_text()


def _matched(ours, theirs):
    order = [int(np.argmin(((theirs - c) ** 2).sum(1))) for c in ours]
    assert sorted(order) == list(range(len(theirs)))
    return theirs[order]


def test_weighted_bisecting_kmeans_matches_scikit_learn():
    from sklearn.cluster import BisectingKMeans
    from sklearn.datasets import make_blobs
    X, _ = make_blobs(n_samples=900, centers=5, cluster_std=0.7, random_state=5)
    X = X.astype(np.float32)
    w = _weights(len(X)) + 0.25
    ours = ml.BisectingKMeans(n_clusters=5).fit(X, sample_weight=w)
    theirs = BisectingKMeans(n_clusters=5, random_state=0).fit(X.astype(np.float64), sample_weight=w)
    np.testing.assert_allclose(ours.cluster_centers_, _matched(ours.cluster_centers_, theirs.cluster_centers_),
                               rtol=1e-4, atol=1e-4)
    assert abs(ours.inertia_ - theirs.inertia_) <= 1e-4 * theirs.inertia_
    assert ml.BisectingKMeans(n_clusters=5).fit(X, sample_weight=np.ones(len(X))).model_file_text() == \
        ml.BisectingKMeans(n_clusters=5).fit(X).model_file_text()


def test_weighted_minibatch_kmeans_matches_scikit_learn():
    from sklearn.cluster import MiniBatchKMeans
    from sklearn.datasets import make_blobs
    X, _ = make_blobs(n_samples=3000, centers=4, cluster_std=0.6, random_state=6)
    X = X.astype(np.float32)
    w = _weights(len(X)) + 0.25
    ours = ml.MiniBatchKMeans(n_clusters=4, batch_size=256).fit(X, sample_weight=w)
    theirs = MiniBatchKMeans(n_clusters=4, batch_size=256, n_init=1, random_state=0).fit(X.astype(np.float64),
                                                                                       sample_weight=w)
    np.testing.assert_allclose(ours.cluster_centers_, _matched(ours.cluster_centers_, theirs.cluster_centers_),
                               atol=0.05)
    assert abs(ours.inertia_ - theirs.inertia_) <= 0.01 * theirs.inertia_
    assert ml.MiniBatchKMeans(n_clusters=4).fit(X, sample_weight=np.ones(len(X))).model_file_text() == \
        ml.MiniBatchKMeans(n_clusters=4).fit(X).model_file_text()


@pytest.mark.parametrize("cls", ["SGDClassifier", "SGDRegressor"])
def test_weighted_sgd_matches_scikit_learn(cls):
    import sklearn.linear_model as sklm
    rng = np.random.RandomState(7)
    n = 3000
    X = rng.randn(n, 5).astype(np.float32)
    clean = X[:, 0] + 0.5 * X[:, 1] - X[:, 2] + 0.3 * X[:, 4]
    classify = cls == "SGDClassifier"
    y = (clean > 0).astype(np.float32) if classify else clean.astype(np.float32)
    noisy = np.arange(n) % 3 == 0  # scrambled rows, weight 0
    y_train = y.copy()
    y_train[noisy] = (1 - y[noisy]) if classify else rng.randn(noisy.sum()).astype(np.float32) * 5 + 4
    w = np.where(noisy, 0.0, 0.5 + (np.arange(n) % 4)).astype(np.float32)
    ours = getattr(ml, cls)().fit(X, y_train, sample_weight=w)
    theirs = getattr(sklm, cls)(random_state=0).fit(X.astype(np.float64), y_train, sample_weight=w.astype(np.float64))
    plain = getattr(ml, cls)().fit(X, y_train)
    s_ours, s_theirs, s_plain = ours.score(X, y), theirs.score(X, y), plain.score(X, y)
    assert abs(s_ours - s_theirs) < 0.03, (s_ours, s_theirs)
    assert s_ours > s_plain + 0.03, (s_ours, s_plain)
    assert getattr(ml, cls)().fit(X, y, sample_weight=np.ones(n)).model_file_text() == \
        getattr(ml, cls)().fit(X, y).model_file_text()
