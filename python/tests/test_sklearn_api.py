"""bitlearn.ml inside scikit-learn (Pipeline, GridSearchCV, cross_val_score), accuracy against
scikit-learn on its bundled datasets, pickling, and errors for bad input."""
import pickle

import numpy as np
import pytest
import sklearn.cluster
import sklearn.decomposition
import sklearn.ensemble
import sklearn.linear_model
import sklearn.neighbors
import sklearn.tree
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits, load_wine
from sklearn.model_selection import GridSearchCV, cross_val_score, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import bitlearn as bl
from bitlearn import ml

DATA = {"diabetes": load_diabetes, "breast_cancer": load_breast_cancer, "wine": load_wine,
        "digits": load_digits}

# (bitlearn class, scikit-learn class, params, dataset, tolerance on the score difference).
# Deterministic solvers of the same objective agree to float32 rounding; randomized ensembles
# only within their seed-to-seed noise (docs/ml-trees.md).
ACCURACY = [
    ("LinearRegression", sklearn.linear_model.LinearRegression, {}, "diabetes", 1e-4),
    ("Ridge", sklearn.linear_model.Ridge, {"alpha": 0.5}, "diabetes", 1e-4),
    ("Lasso", sklearn.linear_model.Lasso, {"alpha": 0.1}, "diabetes", 1e-3),
    ("ElasticNet", sklearn.linear_model.ElasticNet, {"alpha": 0.01, "l1_ratio": 0.5}, "diabetes", 1e-3),
    ("BayesianRidge", sklearn.linear_model.BayesianRidge, {}, "diabetes", 1e-3),
    ("KNeighborsRegressor", sklearn.neighbors.KNeighborsRegressor, {"n_neighbors": 5}, "diabetes", 1e-4),
    ("LogisticRegression", sklearn.linear_model.LogisticRegression, {"max_iter": 5000}, "breast_cancer", 0.02),
    ("KNeighborsClassifier", sklearn.neighbors.KNeighborsClassifier, {"n_neighbors": 5}, "breast_cancer", 1e-9),
    ("DecisionTreeClassifier", sklearn.tree.DecisionTreeClassifier, {"max_depth": 4}, "breast_cancer", 0.05),
    ("RandomForestClassifier", sklearn.ensemble.RandomForestClassifier, {"n_estimators": 50}, "wine", 0.06),
    ("HistGradientBoostingClassifier", sklearn.ensemble.HistGradientBoostingClassifier, {"max_iter": 50},
     "breast_cancer", 0.04),
    ("HistGradientBoostingRegressor", sklearn.ensemble.HistGradientBoostingRegressor, {"max_iter": 50},
     "diabetes", 0.08),
    ("LogisticRegression", sklearn.linear_model.LogisticRegression, {"max_iter": 5000}, "digits", 0.02),
    ("KNeighborsClassifier", sklearn.neighbors.KNeighborsClassifier, {"n_neighbors": 3}, "digits", 1e-9),
]


@pytest.mark.parametrize("ours,theirs,params,data,tol", ACCURACY,
                         ids=[f"{a[0]}-{a[3]}" for a in ACCURACY])
def test_accuracy_against_scikit_learn(ours, theirs, params, data, tol):
    X, y = DATA[data](return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=0)
    if ours == "LogisticRegression":  # both on standardized features (lbfgs needs it on raw data)
        s = StandardScaler().fit(Xtr)
        Xtr, Xte = s.transform(Xtr), s.transform(Xte)
    mine = getattr(ml, ours)(**params).fit(Xtr, ytr).score(Xte, yte)
    ref = theirs(**params, **({"random_state": 0} if "random_state" in theirs().get_params() else {}))
    ref = ref.fit(Xtr, ytr).score(Xte, yte)
    assert abs(mine - ref) <= tol, (mine, ref)


def test_kmeans_and_pca_against_scikit_learn():
    X, _ = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    ours = ml.KMeans(n_clusters=3).fit(X)
    ref = sklearn.cluster.KMeans(n_clusters=3, n_init=10, random_state=0).fit(X)
    # one k-means++ start against the best of ten: a local optimum within 0.5%
    assert abs(ours.inertia_ - ref.inertia_) / ref.inertia_ < 5e-3
    p = ml.PCA(n_components=3).fit(X)
    r = sklearn.decomposition.PCA(n_components=3).fit(X)
    np.testing.assert_allclose(p.explained_variance_, r.explained_variance_, rtol=1e-4)
    np.testing.assert_allclose(np.abs(p.components_), np.abs(r.components_), atol=2e-3)


def test_pipeline_gridsearch_cross_val_score():
    X, y = load_breast_cancer(return_X_y=True)
    pipe = make_pipeline(StandardScaler(), ml.LogisticRegression(max_iter=300))
    scores = cross_val_score(pipe, X, y, cv=3)
    assert scores.min() > 0.9
    grid = GridSearchCV(ml.Ridge(), {"alpha": [0.1, 1.0, 10.0]}, cv=3).fit(*load_diabetes(return_X_y=True))
    assert grid.best_params_["alpha"] in (0.1, 1.0, 10.0)
    assert isinstance(grid.best_estimator_, ml.Ridge)
    # Two runs of the grid give the same bits.
    again = GridSearchCV(ml.Ridge(), {"alpha": [0.1, 1.0, 10.0]}, cv=3).fit(*load_diabetes(return_X_y=True))
    assert grid.best_estimator_.model_file_text() == again.best_estimator_.model_file_text()


def test_string_labels_and_pickle():
    X, y = load_wine(return_X_y=True)
    names = np.array(["barolo", "grignolino", "barbera"])[y]
    m = ml.RandomForestClassifier(n_estimators=10).fit(X, names)
    assert set(m.classes_) == set(names)
    assert set(m.predict(X[:5])) <= set(names)
    m2 = pickle.loads(pickle.dumps(m))
    assert m2.predict(X).tolist() == m.predict(X).tolist()
    assert m2.predict_proba(X).tobytes() == m.predict_proba(X).tobytes()


def test_fitted_attributes():
    X, y = load_diabetes(return_X_y=True)
    r = ml.Ridge().fit(X, y)
    assert r.coef_.shape == (10,) and isinstance(r.intercept_, np.floating) and r.n_features_in_ == 10
    c = ml.LogisticRegression().fit(*load_wine(return_X_y=True))
    assert c.coef_.shape == (3, 13) and c.classes_.tolist() == [0, 1, 2]
    k = ml.KMeans(n_clusters=4).fit(X)
    assert k.cluster_centers_.shape == (4, 10) and k.labels_.shape == (442,)


def test_bad_input_raises_clear_python_errors():
    X, y = load_diabetes(return_X_y=True)
    with pytest.raises(ValueError, match="NaN"):
        ml.Ridge().fit(X, np.where(np.arange(len(y)) == 3, np.nan, y))
    with pytest.raises(ValueError, match="features"):
        ml.Ridge().fit(X, y).predict(X[:, :3])
    with pytest.raises(ValueError):
        ml.Ridge().fit(X[:10], y[:9])
    with pytest.raises(bl.Error, match="alpha"):
        ml.Ridge(alpha="lots").fit(X, y)
    with pytest.raises(bl.Error, match="criterion"):
        ml.DecisionTreeClassifier(criterion="best").fit(X, y > 100)
    with pytest.raises(TypeError):
        ml.Ridge(alpha=[1, 2j]).fit(X, y)
    with pytest.raises(ValueError, match="n_jobs"):
        ml.Ridge(n_jobs=0).fit(X, y)
    Xf = np.asfortranarray(X)  # non-contiguous input is copied
    assert ml.Ridge().fit(Xf, y).predict(Xf).tobytes() == ml.Ridge().fit(X, y).predict(X).tobytes()


def test_device_cuda():
    X, y = load_diabetes(return_X_y=True)
    if not bl.cuda_available():
        with pytest.raises(bl.Error, match="CUDA"):
            ml.Ridge(device="cuda").fit(X, y)
        return
    a = ml.Ridge(device="cuda").fit(X, y)
    b = ml.Ridge().fit(X, y)
    assert a.model_file_text() == b.model_file_text()


def test_isotonic_regression_against_scikit_learn():
    """scikit-learn's generic checks skip one-dimensional estimators; this is its test."""
    import sklearn.isotonic
    X, y = load_diabetes(return_X_y=True)
    x = X[:, 2]  # bmi
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=0.25, random_state=0)
    ours = ml.IsotonicRegression().fit(xtr, ytr)
    ref = sklearn.isotonic.IsotonicRegression(out_of_bounds="clip").fit(xtr, ytr)
    assert abs(ours.score(xte.reshape(-1, 1), yte) - ref.score(xte, yte)) < 1e-4
    assert ours.predict(xte).shape == (len(xte),)
    with pytest.raises(ValueError, match="one feature"):
        ml.IsotonicRegression().fit(X, y)
    assert pickle.loads(pickle.dumps(ours)).predict(xte).tobytes() == ours.predict(xte).tobytes()


def test_worker_processes_give_the_same_scores():
    """cross_val_score with n_jobs=2 pickles the estimators into worker processes (joblib)."""
    X, y = load_diabetes(return_X_y=True)
    a = cross_val_score(ml.Ridge(), X, y, cv=3, n_jobs=2)
    b = cross_val_score(ml.Ridge(), X, y, cv=3)
    assert a.tobytes() == b.tobytes()


def test_iteration_limit_gives_a_convergence_warning():
    """A solver stopped by max_iter warns as scikit-learn does (ConvergenceWarning) and keeps the
    model; a converged fit gives no warning; the warning changes no bit."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    with pytest.warns(ConvergenceWarning, match="stopped at max_iter=2 before converging"):
        starved = ml.LogisticRegression(max_iter=2).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        again = ml.LogisticRegression(max_iter=2).fit(X, y)
    assert starved.coef_.tobytes() == again.coef_.tobytes()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        ml.LogisticRegression(max_iter=1000).fit(X, y)
    with pytest.warns(ConvergenceWarning, match="sgd_classifier stopped at max_iter=1"):
        ml.SGDClassifier(max_iter=1).fit(X, y)


@pytest.mark.parametrize("cls,kw", [("LogisticRegression", {}), ("SGDClassifier", {"random_state": 0})])
def test_decision_function_matches_scikit_learn_shapes_and_predict(cls, kw):
    """decision_function: [n] for two classes, [n, k] for more; predict thresholds it (binary: > 0,
    else argmax), as scikit-learn's linear classifiers; X coef_^T + intercept_ within float32."""
    for loader in (load_breast_cancer, load_wine):
        X, y = loader(return_X_y=True)
        X = StandardScaler().fit_transform(X).astype(np.float32)
        est = getattr(ml, cls)(**kw).fit(X, y)
        d = est.decision_function(X)
        ref = getattr(sklearn.linear_model, cls)(**kw).fit(X, y).decision_function(X)
        assert d.shape == ref.shape
        pred = est.classes_[(d > 0).astype(int)] if d.ndim == 1 else est.classes_[np.argmax(d, axis=1)]
        assert np.array_equal(pred, est.predict(X))
        manual = X.astype(np.float64) @ est.coef_.T.astype(np.float64) + est.intercept_
        np.testing.assert_allclose(d, manual.reshape(d.shape), rtol=1e-4, atol=1e-4)
