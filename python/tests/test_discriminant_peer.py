"""Linear and quadratic discriminant analysis against scikit-learn: class probabilities,
decision_function, predictions and the LDA transform on scikit-learn's bundled datasets and on
make_classification.

bitlearn sums the class statistics in binary64, does the small d x d algebra in binary64 and rounds
the model to binary32 once; scikit-learn works in float64. Probabilities agree to about 1e-5 and a
prediction may differ only where scikit-learn's two best classes are within 1e-3 of each other (a
near tie). transform columns may differ from scikit-learn's in sign only."""
import numpy as np
import pytest
import sklearn.discriminant_analysis as sda
from sklearn.datasets import load_breast_cancer, load_iris, load_wine, make_classification
from sklearn.model_selection import train_test_split

from bitlearn import ml

PROBA_TOL = 1e-3
TIE = 1e-3


def _split(loader):
    X, y = loader(return_X_y=True)
    return train_test_split(X, y, test_size=0.3, random_state=0)


def _generated(n_classes):
    X, y = make_classification(n_samples=600, n_features=12, n_informative=6, n_redundant=0,
                               n_classes=n_classes, n_clusters_per_class=1, random_state=n_classes)
    return train_test_split(X, y, test_size=0.3, random_state=0)


DATA = {"iris": lambda: _split(load_iris), "wine": lambda: _split(load_wine),
        "breast_cancer": lambda: _split(load_breast_cancer),
        "generated2": lambda: _generated(2), "generated4": lambda: _generated(4)}


def _compare(mine, ref, Xte):
    pred, want = mine.predict(Xte), ref.predict(Xte)
    p, q = mine.predict_proba(Xte), ref.predict_proba(Xte)
    assert p.shape == q.shape
    assert np.max(np.abs(p - q)) <= PROBA_TOL, np.max(np.abs(p - q))
    top2 = np.sort(q, axis=1)[:, -2:]
    near_tie = (top2[:, 1] - top2[:, 0]) < TIE
    assert np.all((pred == want) | near_tie), np.flatnonzero(pred != want)
    assert np.sum(pred != want) <= 2
    d, e = mine.decision_function(Xte), ref.decision_function(Xte)
    assert d.shape == e.shape
    np.testing.assert_allclose(d, e, rtol=1e-4, atol=1e-3 * max(1.0, np.max(np.abs(e))))
    np.testing.assert_array_equal(mine.classes_, ref.classes_)


LDA_CASES = [
    ({}, "iris"), ({}, "wine"), ({}, "breast_cancer"), ({}, "generated2"), ({}, "generated4"),
    ({"solver": "lsqr"}, "iris"), ({"solver": "lsqr"}, "wine"), ({"solver": "lsqr"}, "breast_cancer"),
    ({"solver": "lsqr"}, "generated4"),
    ({"solver": "eigen"}, "iris"), ({"solver": "eigen"}, "wine"), ({"solver": "eigen"}, "generated2"),
    ({"solver": "lsqr", "shrinkage": "auto"}, "wine"), ({"solver": "lsqr", "shrinkage": 0.3}, "breast_cancer"),
    ({"solver": "eigen", "shrinkage": "auto"}, "breast_cancer"), ({"solver": "eigen", "shrinkage": 0.5}, "generated4"),
    ({"n_components": 1}, "iris"),
]


@pytest.mark.parametrize("params,data", LDA_CASES, ids=[f"{d}-{i}" for i, (_, d) in enumerate(LDA_CASES)])
def test_lda_against_scikit_learn(params, data):
    Xtr, Xte, ytr, yte = DATA[data]()
    mine = ml.LinearDiscriminantAnalysis(**params).fit(Xtr, ytr)
    ref = sda.LinearDiscriminantAnalysis(**params).fit(Xtr, ytr)
    _compare(mine, ref, Xte)
    assert abs(mine.score(Xte, yte) - ref.score(Xte, yte)) <= 2.0 / len(yte)
    scale = max(1.0, np.max(np.abs(ref.coef_)))
    np.testing.assert_allclose(mine.coef_, ref.coef_, rtol=1e-3, atol=1e-4 * scale)
    if params.get("solver", "svd") != "lsqr":
        t = mine.transform(Xte)
        r = ref.transform(Xte)
        assert t.shape == r.shape
        sign = np.sign(np.sum(t * r, axis=0))
        np.testing.assert_allclose(t * sign, r, rtol=1e-3, atol=1e-4 * max(1.0, np.max(np.abs(r))))


QDA_CASES = [({}, "iris"), ({}, "wine"), ({"reg_param": 0.01}, "breast_cancer"), ({}, "generated2"),
             ({}, "generated4"), ({"reg_param": 0.3}, "wine"), ({"reg_param": 0.5}, "generated4")]


@pytest.mark.parametrize("params,data", QDA_CASES, ids=[f"{d}-{i}" for i, (_, d) in enumerate(QDA_CASES)])
def test_qda_against_scikit_learn(params, data):
    Xtr, Xte, ytr, yte = DATA[data]()
    mine = ml.QuadraticDiscriminantAnalysis(**params).fit(Xtr, ytr)
    ref = sda.QuadraticDiscriminantAnalysis(**params).fit(Xtr, ytr)
    _compare(mine, ref, Xte)
    assert abs(mine.score(Xte, yte) - ref.score(Xte, yte)) <= 2.0 / len(yte)


def test_discriminant_bad_input_is_a_clear_error():
    Xtr, _, ytr, _ = DATA["iris"]()
    with pytest.raises(Exception, match="not supported with solver=svd"):
        ml.LinearDiscriminantAnalysis(shrinkage="auto").fit(Xtr, ytr)
    with pytest.raises(Exception, match="shrinkage"):
        ml.LinearDiscriminantAnalysis(solver="lsqr", shrinkage=1.5).fit(Xtr, ytr)
    with pytest.raises(Exception, match="n_components"):
        ml.LinearDiscriminantAnalysis(n_components=3).fit(Xtr, ytr)
    with pytest.raises(Exception, match="only 1 sample in class"):
        ml.QuadraticDiscriminantAnalysis().fit(Xtr[:51], np.r_[ytr[:50], 99])
    Xd = np.c_[Xtr, Xtr[:, 0]]
    with pytest.raises(Exception, match="collinear"):
        ml.QuadraticDiscriminantAnalysis().fit(Xd, ytr)
    with pytest.raises(Exception, match="singular"):
        ml.LinearDiscriminantAnalysis(solver="lsqr").fit(Xd, ytr)
    # svd drops the repeated direction: the same probabilities as without it.
    a = ml.LinearDiscriminantAnalysis().fit(Xd, ytr).predict_proba(Xd)
    b = ml.LinearDiscriminantAnalysis().fit(Xtr, ytr).predict_proba(Xtr)
    np.testing.assert_allclose(a, b, atol=1e-4)
