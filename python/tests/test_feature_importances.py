"""feature_importances_ of the CART trees and forests (mean decrease in impurity): equal to a NumPy
float64 evaluation of scikit-learn's formula over bitlearn's own fitted trees, close to
scikit-learn's importances (its trees differ only where splits tie), the same bits at any thread
count, kept by pickling, and moved by sample weights."""
import json
import pickle

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_diabetes
import sklearn.ensemble as ske
import sklearn.tree as skt

from bitlearn import ml


def _f32(hexstr):
    return np.frombuffer(bytes.fromhex(hexstr), dtype="<f4")


def _reference(model, X, y, classifier, criterion="gini", w=None):
    """scikit-learn's mean decrease in impurity over the trees of the model file (no bootstrap)."""
    state = json.loads(model.model_file_text())["state"]
    classes = np.unique(y)
    w = np.ones(len(y)) if w is None else np.asarray(w, np.float64)
    out = np.zeros(X.shape[1])
    for t in state["trees"]:
        feat, left, right = np.array(t["feature"]), np.array(t["left"]), np.array(t["right"])
        thr = _f32(t["threshold"])
        m = len(feat)
        nw = np.zeros(m)
        stats = np.zeros((m, len(classes))) if classifier else np.zeros((m, 2))
        for i in range(len(y)):
            node = 0
            while True:
                nw[node] += w[i]
                if classifier:
                    stats[node, np.searchsorted(classes, y[i])] += w[i]
                else:
                    stats[node] += (w[i] * y[i], w[i] * float(y[i]) ** 2)
                if feat[node] < 0:
                    break
                node = left[node] if X[i, feat[node]] <= thr[node] else right[node]

        def imp(node):
            if nw[node] == 0:
                return 0.0
            if not classifier:
                mean = stats[node, 0] / nw[node]
                return stats[node, 1] / nw[node] - mean * mean
            p = stats[node] / nw[node]
            return -np.sum(p[p > 0] * np.log(p[p > 0])) if criterion == "entropy" else 1 - np.sum(p * p)

        tree_imp = np.zeros(X.shape[1])
        for node in range(m):
            if feat[node] >= 0:
                tree_imp[feat[node]] += nw[node] * imp(node) - nw[left[node]] * imp(left[node]) \
                    - nw[right[node]] * imp(right[node])
        if tree_imp.sum() > 0:
            tree_imp /= tree_imp.sum()
        out += tree_imp
    return out / out.sum() if out.sum() > 0 else out


CASES = [("DecisionTreeClassifier", load_breast_cancer, {}), ("DecisionTreeClassifier", load_breast_cancer,
                                                             {"criterion": "entropy"}),
         ("DecisionTreeRegressor", load_diabetes, {}), ("ExtraTreesRegressor", load_diabetes, {"n_estimators": 10}),
         ("ExtraTreesClassifier", load_breast_cancer, {"n_estimators": 10})]


@pytest.mark.parametrize("cls,data,extra", CASES, ids=[f"{c[0]}-{c[2]}" for c in CASES])
def test_importances_equal_the_float64_formula_over_our_trees(cls, data, extra):
    X, y = data(return_X_y=True)
    X = X.astype(np.float32)
    est = getattr(ml, cls)(max_depth=5, random_state=0, **extra).fit(X, y)
    ref = _reference(est, X, y, "Classifier" in cls, extra.get("criterion", "gini"))
    np.testing.assert_allclose(est.feature_importances_, ref, rtol=1e-9, atol=1e-12)
    assert abs(est.feature_importances_.sum() - 1.0) < 1e-12


@pytest.mark.parametrize("cls,data", [("DecisionTreeClassifier", load_breast_cancer),
                                      ("DecisionTreeRegressor", load_diabetes),
                                      ("RandomForestRegressor", load_diabetes)])
def test_importances_close_to_scikit_learn(cls, data):
    X, y = data(return_X_y=True)
    X = X.astype(np.float32)
    kw = dict(max_depth=4, random_state=0)
    if "Forest" in cls:
        kw["n_estimators"] = 200
    ours = getattr(ml, cls)(**kw).fit(X, y).feature_importances_
    theirs = getattr(skt if "Decision" in cls else ske, cls)(**kw).fit(X, y).feature_importances_
    assert np.argmax(ours) == np.argmax(theirs)
    assert np.corrcoef(ours, theirs)[0, 1] > 0.95
    assert np.abs(ours - theirs).max() < 0.1


def test_forest_importances_same_bits_at_any_thread_count_and_kept_by_pickle():
    X, y = load_breast_cancer(return_X_y=True)
    X = X.astype(np.float32)
    runs = [ml.RandomForestClassifier(n_estimators=20, max_depth=4, n_jobs=j).fit(X, y).feature_importances_
            for j in (1, 2, 3)]
    assert runs[0].tobytes() == runs[1].tobytes() == runs[2].tobytes()
    est = ml.RandomForestClassifier(n_estimators=20, max_depth=4).fit(X, y)
    again = pickle.loads(pickle.dumps(est))
    assert again.feature_importances_.tobytes() == est.feature_importances_.tobytes()


def test_weights_move_the_importances_as_the_formula_says():
    X, y = load_diabetes(return_X_y=True)
    X = X.astype(np.float32)
    w = (np.arange(len(y)) % 3).astype(np.float32)
    est = ml.DecisionTreeRegressor(max_depth=4).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(est.feature_importances_, _reference(est, X, y, False, w=w), rtol=1e-9, atol=1e-12)
    assert not np.allclose(est.feature_importances_, ml.DecisionTreeRegressor(max_depth=4).fit(X, y).feature_importances_)
