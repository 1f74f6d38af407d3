"""TreeSHAP of bitlearn's own trees (decision trees, forests, histogram gradient boosting) through
bitlearn._core.shap_values and `bitlearn predict --output shap`.

Oracles (the `shap` package is not in the environment): Shapley values by enumerating every
feature coalition, v(S) following the row on S and weighing both children by their training cover
elsewhere (path-dependent, as TreeSHAP). For a decision tree that scikit-learn grows identically
(same splits), the oracle runs on scikit-learn's own tree (tree_.value and
tree_.weighted_n_node_samples), so the recorded cover is checked against the peer's; for forests
and boosting it runs on the trees read from the model file. Each row's values add up to the
model's prediction (class fractions, regression value, raw boosting margin)."""
import csv
import json
import math
import subprocess

import numpy as np
import pytest

from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine

from bitlearn import Tensor, _core
from bitlearn.ml import estimator_class


def _shap(est, X):
    return _core.shap_values(est._est.to_json_text(), Tensor(np.ascontiguousarray(X, np.float32)))


def _weights(d):
    return np.array([math.factorial(s) * math.factorial(d - s - 1) / math.factorial(d) for s in range(d)])


def _shapley(v, d):
    """phi_j from v[mask] over all 2^d coalitions."""
    w = _weights(d)
    sizes = np.array([bin(m).count("1") for m in range(1 << d)])
    phi = np.zeros(d)
    for j in range(d):
        masks = np.array([m for m in range(1 << d) if not (m >> j) & 1])
        phi[j] = np.sum(w[sizes[masks]] * (v[masks | (1 << j)] - v[masks]))
    return phi


class _T:
    """A tree in arrays: feature (-1 leaf), threshold, left, right, default_left, cover, value [n, k]."""

    def __init__(self, feature, threshold, left, right, default_left, cover, value):
        self.feature, self.threshold, self.left, self.right = feature, threshold, left, right
        self.default_left, self.cover, self.value = default_left, cover, value

    def goes_left(self, x, node):
        v = x[self.feature[node]]
        return bool(self.default_left[node]) if np.isnan(v) else v <= self.threshold[node]

    def v(self, x, mask, node=0):
        f = self.feature[node]
        if f < 0:
            return self.value[node]
        l, r = self.left[node], self.right[node]
        if (mask >> f) & 1:
            return self.v(x, mask, l if self.goes_left(x, node) else r)
        return (self.cover[l] * self.v(x, mask, l) + self.cover[r] * self.v(x, mask, r)) / self.cover[node]


def _hex(text, dtype):
    return np.frombuffer(bytes.fromhex(text), dtype=dtype)


def _own_trees(est):
    state = json.loads(est._est.to_json_text())["state"]
    trees = []
    for t in state["trees"]:
        k = t["n_values"]
        trees.append(_T(np.array(t["feature"]), _hex(t["threshold"], "<f4"), np.array(t["left"]),
                        np.array(t["right"]), np.array(t["default_left"]), _hex(t["cover"], "<f8"),
                        _hex(t["value"], "<f4").astype(np.float64).reshape(-1, k)))
    return state, trees


def _oracle(trees, x, d, groups, base, divisor):
    """[groups * (d + 1)]: tree t's output c goes to group (t * n_values + c) % groups."""
    out = np.zeros((groups, d + 1))
    out[:, d] = base
    o = 0
    for t in trees:
        vals = np.array([t.v(x, m) for m in range(1 << d)]) / divisor  # [2^d, n_values]
        for c in range(vals.shape[1]):
            out[o % groups, :d] += _shapley(vals[:, c], d)
            out[o % groups, d] += vals[0, c]
            o += 1
    return out.ravel()


def _rel(a, b):
    scale = np.maximum(np.max(np.abs(b), axis=1, keepdims=True), 1e-300)
    return float(np.max(np.abs(a - b) / scale))


def _sklearn_tree(tree):
    # Thresholds rounded to float32 as bitlearn stores them (the structure check requires them equal):
    # scikit-learn's binary64 midpoint and its float32 rounding can route a row differently when the
    # row's value lies between them at a node the row does not reach, which TreeSHAP still reads.
    tr = tree.tree_
    return _T(tr.feature, tr.threshold.astype(np.float32), tr.children_left, tr.children_right,
              np.zeros(tr.node_count, int), tr.weighted_n_node_samples, tr.value[:, 0, :])


def _same_structure(ours, peer, a=0, b=0):
    """Walks both trees from the root; True when every split feature and threshold (to float32) agree."""
    if (ours.feature[a] < 0) != (peer.feature[b] < 0):
        return False
    if ours.feature[a] < 0:
        return True
    if ours.feature[a] != peer.feature[b] or peer.threshold[b] != ours.threshold[a]:
        return False
    return (_same_structure(ours, peer, ours.left[a], peer.left[b]) and
            _same_structure(ours, peer, ours.right[a], peer.right[b]))


def _covers_equal(ours, peer, a=0, b=0):
    if ours.cover[a] != peer.cover[b]:
        return False
    if ours.feature[a] < 0:
        return True
    return _covers_equal(ours, peer, ours.left[a], peer.left[b]) and _covers_equal(ours, peer, ours.right[a],
                                                                                     peer.right[b])


@pytest.mark.parametrize("kind", ["regressor", "classifier"])
def test_decision_tree_against_scikit_learn_tree(kind):
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
    if kind == "regressor":
        X, y = load_diabetes(return_X_y=True)
        X = X[:, :8]
    else:
        X, y = load_wine(return_X_y=True)
        X = X[:, :8]
    X = X.astype(np.float32)
    d = X.shape[1]
    cls = estimator_class(f"decision_tree_{kind}")
    ours = cls(max_depth=4).fit(X, y)
    Peer = DecisionTreeRegressor if kind == "regressor" else DecisionTreeClassifier
    peer = Peer(max_depth=4, random_state=0).fit(X, y)
    _, (t,) = _own_trees(ours)
    pt = _sklearn_tree(peer)
    assert _same_structure(t, pt), "scikit-learn grew a different tree; pick other data"
    assert _covers_equal(t, pt)  # cover == weighted_n_node_samples, exactly
    if kind == "classifier":  # scikit-learn >= 1.4 stores fractions; older versions counts
        pt.value = pt.value / pt.value.sum(axis=1, keepdims=True)
    groups = 1 if kind == "regressor" else len(np.unique(y))
    rows = X[::9][:20]
    phi = _shap(ours, rows)
    assert phi.shape == (len(rows), groups * (d + 1))
    ref = np.stack([_oracle([pt], x, d, groups, np.zeros(groups), 1.0) for x in rows])
    err = _rel(phi, ref)
    assert err < 1e-6, err  # the peer's leaf values are float64, ours float32
    pred = ours.predict(rows) if kind == "regressor" else ours.predict_proba(rows)
    sums = phi.reshape(len(rows), groups, d + 1).sum(axis=2)
    np.testing.assert_allclose(sums, np.asarray(pred, np.float64).reshape(len(rows), groups), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name,params,data", [
    ("random_forest_classifier", dict(n_estimators=4, max_depth=3), "binary"),
    ("random_forest_regressor", dict(n_estimators=3, max_depth=3), "regression"),
    ("extra_trees_classifier", dict(n_estimators=3, max_depth=3), "multiclass"),
    ("hist_gradient_boosting_classifier", dict(max_iter=4, max_leaf_nodes=6), "multiclass"),
    ("hist_gradient_boosting_classifier", dict(max_iter=4, max_leaf_nodes=6), "binary"),
    ("hist_gradient_boosting_regressor", dict(max_iter=5, grow_policy="depthwise", max_depth=3), "regression"),
    ("hist_gradient_boosting_regressor", dict(max_iter=4, grow_policy="symmetric", max_depth=3), "regression"),
])
def test_ensembles_against_enumeration(name, params, data):
    if data == "regression":
        X, y = load_diabetes(return_X_y=True)
    elif data == "binary":
        X, y = load_breast_cancer(return_X_y=True)
    else:
        X, y = load_wine(return_X_y=True)
    X = X[:, :7].astype(np.float32)
    if name.startswith("hist"):
        X[np.random.RandomState(5).rand(*X.shape) < 0.05] = np.nan
    d = X.shape[1]
    est = estimator_class(name)(**params).fit(X, y)
    state, trees = _own_trees(est)
    if "base" in state:
        groups, base, divisor = state["n_groups"], _hex(state["base"], "<f4").astype(np.float64), 1.0
    else:
        groups = trees[0].value.shape[1]
        base, divisor = np.zeros(groups), float(len(trees))
    rows = X[::17][:12]
    phi = _shap(est, rows)
    ref = np.stack([_oracle(trees, x, d, groups, base, divisor) for x in rows])
    err = _rel(phi, ref)
    assert err < 1e-12, err
    sums = phi.reshape(len(rows), groups, d + 1).sum(axis=2)
    if "base" in state and name.endswith("classifier"):
        raw = sums if groups > 1 else np.concatenate([-sums, sums], axis=1) / 2
        proba = np.exp(raw - raw.max(axis=1, keepdims=True))
        proba /= proba.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(proba, est.predict_proba(rows), rtol=1e-5, atol=1e-6)
    elif name.endswith("classifier"):
        np.testing.assert_allclose(sums, est.predict_proba(rows), rtol=1e-6, atol=1e-7)
    else:
        np.testing.assert_allclose(sums[:, 0], est.predict(rows), rtol=1e-5, atol=1e-5)


def _run(cli, *args):
    r = subprocess.run([cli, *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r


@pytest.mark.parametrize("model", ["random_forest_classifier", "hist_gradient_boosting_regressor"])
def test_cli_fit_then_predict_shap(cli, tmp_path, model):
    X, y = load_wine(return_X_y=True) if model.endswith("classifier") else load_diabetes(return_X_y=True)
    X = X[:, :5].astype(np.float32)
    names = [f"f{j}" for j in range(5)]
    path = tmp_path / "data.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(names + ["target"])
        for row, t in zip(X, y):
            w.writerow([repr(float(v)) for v in row] + [int(t) if model.endswith("classifier") else float(t)])
    params = ["--param", "n_estimators=3"] if model.startswith("random") else ["--param", "max_iter=5"]
    _run(cli, "fit", "--model", model, "--data", path, "--target", "target", *params, "--out", tmp_path / "m.json")
    _run(cli, "predict", "--model", tmp_path / "m.json", "--data", path, "--output", "shap", "--out",
         tmp_path / "shap.csv")
    with open(tmp_path / "shap.csv") as f:
        rows = list(csv.reader(f))
    header, values = rows[0], np.array(rows[1:], dtype=np.float64)
    groups = values.shape[1] // 6
    assert header[:6] == ([f"shap_0_{n}" for n in names] + ["shap_0_expected_value"] if groups > 1
                          else [f"shap_{n}" for n in names] + ["shap_expected_value"])
    with open(tmp_path / "m.json") as f:
        text = f.read()
    direct = _core.shap_values(text, Tensor(np.ascontiguousarray(X)))
    np.testing.assert_array_equal(values, direct)  # %.17g round-trips binary64
    _run(cli, "predict", "--model", tmp_path / "m.json", "--data", path, "--output",
         "proba" if model.endswith("classifier") else "predict", "--out", tmp_path / "pred.csv")
    with open(tmp_path / "pred.csv") as f:
        pred = np.array(list(csv.reader(f))[1:], dtype=np.float64)
    sums = values.reshape(len(values), groups, 6).sum(axis=2)
    np.testing.assert_allclose(sums, pred.reshape(len(values), -1), rtol=1e-5, atol=1e-6)


def test_model_file_without_cover_refuses_shap():
    X, y = load_wine(return_X_y=True)
    X = X.astype(np.float32)
    est = estimator_class("random_forest_classifier")(n_estimators=2).fit(X, y)
    model = json.loads(est._est.to_json_text())
    for t in model["state"]["trees"]:
        del t["cover"]
    with pytest.raises(Exception, match="has no training cover.*refit"):
        _core.shap_values(json.dumps(model), Tensor(np.ascontiguousarray(X)))


@pytest.mark.parametrize("name,params", [("random_forest_regressor", dict(n_estimators=5, max_depth=4)),
                                         ("hist_gradient_boosting_classifier", dict(max_iter=5))])
def test_pred_contribs_method_of_own_tree_models(name, params):
    """The Python classes of bitlearn's own tree models offer pred_contribs(X), as the imported ones
    do: the binding's values, adding up to the raw output."""
    X, y = load_diabetes(return_X_y=True) if name.endswith("regressor") else load_breast_cancer(return_X_y=True)
    X = X[:120].astype(np.float32)
    y = (y[:120] if name.endswith("regressor") else y[:120]).astype(np.float32)
    est = estimator_class(name)(**params).fit(X, y)
    phi = est.pred_contribs(X)
    assert phi.dtype == np.float64 and phi.shape == (len(X), X.shape[1] + 1)
    direct = np.asarray(_core.shap_values(est._est.to_json_text(), Tensor(np.ascontiguousarray(X))))
    assert np.array_equal(phi.reshape(-1), direct.reshape(-1))
    total = phi.sum(axis=1)
    if name.endswith("regressor"):
        np.testing.assert_allclose(total, est.predict(X), rtol=1e-5, atol=1e-4)
    else:
        p = est.predict_proba(X)[:, 1].astype(np.float64)  # the margin through the float32 sigmoid
        np.testing.assert_allclose(1.0 / (1.0 + np.exp(-total)), p, rtol=1e-5, atol=1e-6)
    assert not hasattr(estimator_class("hist_gradient_boosting_ranker"), "pred_contribs")
