"""HistGradientBoostingRegressor / Classifier(categorical_features=[...]) against scikit-learn's twins.

The data hold a 20-category column whose effect on y is a scrambled table (the codes' numeric order
says nothing) with some missing values, plus numeric columns. Both libraries split the category
column by the same ordering method but bin, quantize and break ties differently, so the trees
differ; what must agree is the quality of the fit: held-out R^2 and accuracy within MARGIN of
scikit-learn's (at a full and at a small tree budget), and at the small budget (where the numeric
order cannot be carved into the categories) the categorical fit must beat bitlearn's own numeric
fit of the same column by GAIN. Measured (2-core x86-64, the seeds below), ours / scikit-learn /
ours numeric:
  FULL:  R^2 0.9472 / 0.9472 / 0.9432, accuracy 0.9300 / 0.9265 / 0.9185
  SMALL: R^2 0.8293 / 0.8292 / 0.6228, accuracy 0.8600 / 0.8600 / 0.8210

The support rule (which categories of a node join the search: scikit-learn's MIN_CAT_SUPPORT
counts rows when the hessians are constant and the hessian sum in units of the node's mean
hessian when they vary) is held on data with only a categorical column, where the trees depend
on nothing but the category splits: binary classification with near-pure categories (their
hessians shrink as their probabilities grow extreme) and small mixed ones, weighted squared error
and Poisson. There the predictions equal scikit-learn's up to float32 rounding (the same trees),
and a transcription of scikit-learn's search run on scikit-learn's own gradients shows that
counting rows instead would change the root split of most iterations."""
import pickle

import numpy as np
import pytest
import sklearn.ensemble
from sklearn.base import clone
from sklearn.metrics import accuracy_score, r2_score

from bitlearn import ml

MARGIN = 0.01
GAIN = 0.03
N_CATS = 20
FULL = {"max_iter": 100, "learning_rate": 0.1, "max_leaf_nodes": 15, "min_samples_leaf": 20}
SMALL = {"max_iter": 30, "learning_rate": 0.1, "max_leaf_nodes": 4, "min_samples_leaf": 20}


def _data(n, seed):
    rng = np.random.default_rng(seed)
    effect = np.random.default_rng(7).normal(0.0, 1.5, N_CATS)
    cat = rng.integers(0, N_CATS, n).astype(np.float64)
    x = rng.normal(size=(n, 3))
    miss = rng.random(n) < 0.05
    score = np.where(miss, 0.8, effect[cat.astype(int)]) + np.sin(2.0 * x[:, 0]) + 0.5 * x[:, 1]
    score += 0.3 * rng.normal(size=n)
    cat[miss] = np.nan
    X = np.column_stack([cat, x]).astype(np.float32)
    return X, score.astype(np.float32)


def _fit_pair(kind, common):
    Xtr, str_ = _data(4000, 1)
    Xte, ste = _data(2000, 2)
    if kind == "classifier":
        cut = np.median(str_)
        ytr, yte = (str_ > cut).astype(np.int64), (ste > cut).astype(np.int64)
        ours_cls, theirs_cls, metric = ml.HistGradientBoostingClassifier, sklearn.ensemble.HistGradientBoostingClassifier, accuracy_score
    else:
        ytr, yte = str_, ste
        ours_cls, theirs_cls, metric = ml.HistGradientBoostingRegressor, sklearn.ensemble.HistGradientBoostingRegressor, r2_score
    cat = ours_cls(categorical_features=[0], **common).fit(Xtr, ytr)
    num = ours_cls(**common).fit(Xtr, ytr)
    ref = theirs_cls(categorical_features=[0], early_stopping=False, **common).fit(Xtr.astype(np.float64), ytr)
    return (metric(yte, cat.predict(Xte)), metric(yte, num.predict(Xte)),
            metric(yte, ref.predict(Xte.astype(np.float64))), cat, Xte)


@pytest.mark.parametrize("kind", ["regressor", "classifier"])
@pytest.mark.parametrize("budget", ["full", "small"])
def test_categorical_against_scikit_learn(kind, budget):
    ours, numeric, theirs, _, _ = _fit_pair(kind, FULL if budget == "full" else SMALL)
    print(f"{kind} {budget}: categorical {ours:.4f} numeric {numeric:.4f} scikit-learn {theirs:.4f}")
    assert ours >= theirs - MARGIN, (ours, theirs)
    if budget == "small":
        assert ours >= numeric + GAIN, (ours, numeric)


def test_unseen_category_goes_where_missing_goes():
    _, _, _, est, Xte = _fit_pair("regressor", SMALL)
    nan = Xte.copy()
    nan[:, 0] = np.nan
    want = est.predict(nan)
    for v in (20.0, 254.0, 300.0, -1.0, 2.5):
        odd = Xte.copy()
        odd[:, 0] = v
        np.testing.assert_array_equal(est.predict(odd), want)


def test_parameter_round_trip_and_errors():
    Xtr, ytr = _data(600, 3)
    est = ml.HistGradientBoostingRegressor(categorical_features=[0], max_iter=5).fit(Xtr, ytr)
    assert est.get_params()["categorical_features"] == [0]
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict(Xtr), est.predict(Xtr))
    np.testing.assert_array_equal(clone(est).fit(Xtr, ytr).predict(Xtr), est.predict(Xtr))
    bad = Xtr.copy()
    bad[3, 0] = 2.5
    with pytest.raises(Exception, match="categorical feature 0 has value 2.5 at row 3"):
        ml.HistGradientBoostingRegressor(categorical_features=[0], max_iter=5).fit(bad, ytr)
    with pytest.raises(Exception, match="categorical and cannot have a monotonic"):
        ml.HistGradientBoostingRegressor(categorical_features=[0], monotonic_cst=[1, 0, 0, 0]).fit(Xtr, ytr)


def _sklearn_categorical_split(codes, g, h, by_hessian, min_samples_leaf):
    """The left set scikit-learn's categorical search picks at a node holding every row (codes, g,
    h: its rows), with support counted by hessian (scikit-learn) or by rows (by_hessian=False)."""
    n, G, H = len(codes), g.sum(), h.sum()
    kept = []
    for c in np.unique(codes):
        m = codes == c
        rows, gc, hc = m.sum(), g[m].sum(), h[m].sum()
        if (hc * n / H if by_hessian else rows) >= 10:
            kept.append((gc / (hc + 10), c, gc, hc, rows))
    if len(kept) < 2:
        return None
    kept.sort()
    k, best, best_gain = len(kept), None, -1.0
    for direction in (1, -1):
        gl = hl = nl = 0.0
        left = []
        for i in range((k + 1) // 2 if direction == 1 else (k + 1) // 2 - 1):
            _, c, gc, hc, rows = kept[i] if direction == 1 else kept[k - 1 - i]
            gl, hl, nl = gl + gc, hl + hc, nl + rows
            left.append(int(c))
            if nl < min_samples_leaf or n - nl < min_samples_leaf:
                continue
            gain = gl * gl / hl + (G - gl) ** 2 / (H - hl) - G * G / H
            if gain > best_gain:
                best, best_gain = sorted(left), gain
    return best


def _extreme_binary(seed):
    """One categorical column of 40 codes: 30 categories of distinct sizes (15-73 rows) whose labels
    are near-pure (p 0.02 / 0.98) or mixed (0.3 / 0.7), and 10 small ones (5-9 rows) of distinct
    (rows, positives), so that no two categories share their sums (no ties in the order)."""
    rng = np.random.default_rng(seed)
    sizes, small = rng.permutation(np.arange(15, 75, 2)), rng.permutation(10)
    codes, y, big = [], [], 0
    for c in range(40):
        if c % 4 == 3:
            j = small[c // 4]
            n_c, pos = 5 + j % 5, 1 + j // 5
            lab = np.zeros(n_c, np.int64)
            lab[rng.permutation(n_c)[:pos]] = 1
        else:
            n_c, big = sizes[big], big + 1
            lab = (rng.random(n_c) < rng.choice([0.02, 0.98, 0.3, 0.7])).astype(np.int64)
        codes += [c] * n_c
        y += list(lab)
    return np.array(codes, np.float32).reshape(-1, 1), np.array(y)


def _weighted_counts(seed):
    """One categorical column of 30 codes of distinct sizes (12-70 rows), Poisson counts of mean
    0.05 .. 8 and a weight per category (0.05 .. 4)."""
    rng = np.random.default_rng(seed)
    sizes = rng.permutation(np.arange(12, 72, 2))
    codes, y, w = [], [], []
    for c in range(30):
        codes += [c] * sizes[c]
        y += list(rng.poisson(rng.choice([0.05, 0.5, 2.0, 8.0]), sizes[c]).astype(float))
        w += [rng.choice([0.05, 0.3, 1.0, 4.0])] * sizes[c]
    return np.array(codes, np.float32).reshape(-1, 1), np.array(y, np.float32), np.array(w, np.float32)


SUPPORT = {"max_iter": 40, "learning_rate": 0.3, "max_leaf_nodes": 8, "min_samples_leaf": 10}


def _root_rules_disagree(codes, stages):
    """How many iterations' root splits change when the support counts rows; stages yields
    (g, h) of every iteration (float32, as scikit-learn computes them)."""
    return sum(_sklearn_categorical_split(codes, g, h, True, SUPPORT["min_samples_leaf"])
               != _sklearn_categorical_split(codes, g, h, False, SUPPORT["min_samples_leaf"])
               for g, h in stages)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_support_rule_classifier_matches_scikit_learn(seed):
    X, y = _extreme_binary(seed)
    ours = ml.HistGradientBoostingClassifier(categorical_features=[0], **SUPPORT).fit(X, y)
    ref = sklearn.ensemble.HistGradientBoostingClassifier(categorical_features=[0], early_stopping=False,
                                                          **SUPPORT).fit(X.astype(np.float64), y)
    # The data discriminate: counting rows changes the root split of most iterations.
    codes = X[:, 0].astype(int)
    raws = [np.full(len(y), ref._baseline_prediction.ravel()[0])]
    raws += list(ref.staged_decision_function(X.astype(np.float64)))[:-1]

    def grad_hess(raw):
        p = (1.0 / (1.0 + np.exp(-raw))).astype(np.float32)
        return (p - y).astype(np.float64), (p * (1.0 - p)).astype(np.float64)

    differ = _root_rules_disagree(codes, (grad_hess(r) for r in raws))
    assert differ >= 20, differ
    # The same trees: every code's probability within float32 rounding of scikit-learn's.
    probe = np.arange(40, dtype=np.float32).reshape(-1, 1)
    gap = np.abs(ours.predict_proba(probe) - ref.predict_proba(probe.astype(np.float64))).max()
    print(f"seed {seed}: root splits changed by row counting {differ}/40, max |p - p_sklearn| {gap:.2e}")
    assert gap < 1e-5, gap
    assert accuracy_score(y, ours.predict(X)) == accuracy_score(y, ref.predict(X.astype(np.float64)))


@pytest.mark.parametrize("loss,weighted", [("squared_error", True), ("poisson", False), ("poisson", True)])
def test_support_rule_regressor_matches_scikit_learn(loss, weighted):
    X, y, w = _weighted_counts(0)
    sw = w if weighted else None
    common = dict(SUPPORT, max_iter=30)
    ours = ml.HistGradientBoostingRegressor(loss=loss, categorical_features=[0], **common).fit(X, y, sample_weight=sw)
    ref = sklearn.ensemble.HistGradientBoostingRegressor(loss=loss, categorical_features=[0], early_stopping=False,
                                                         **common).fit(X.astype(np.float64), y, sample_weight=sw)
    codes = X[:, 0].astype(int)
    ww = np.ones_like(y) if sw is None else w
    if loss == "squared_error":  # the first iteration: hessians are the weights
        base = float((w * y).sum() / w.sum())
        stages = [(ww * (base - y).astype(np.float64), ww.astype(np.float64))]
    else:  # log link: g = w (exp(raw) - y), h = w exp(raw)
        raws = [np.log(p) for p in ref.staged_predict(X.astype(np.float64))][:-1]
        stages = [(ww * (np.exp(r) - y), ww * np.exp(r)) for r in raws]
    assert _root_rules_disagree(codes, stages) >= 1
    probe = np.arange(30, dtype=np.float32).reshape(-1, 1)
    a, b = ours.predict(probe), ref.predict(probe.astype(np.float64))
    rel = np.abs(a - b).max() / np.abs(b).max()  # float32 rounding of values up to ~9
    print(f"{loss} weighted={weighted}: max |pred - pred_sklearn| / max |pred_sklearn| {rel:.2e}")
    assert rel < 1e-5, rel


def test_held_out_rows_are_checked():
    # early_stopping holds rows of X out for validation: a bad code there is refused as in a
    # training row, naming the row of X.
    Xtr, ytr = _data(600, 4)
    for row in (3, 4, 5, 6, 7, 300, 599):
        bad = Xtr.copy()
        bad[row, 0] = -1.0
        with pytest.raises(Exception, match=f"categorical feature 0 has value -1 at row {row};"):
            ml.HistGradientBoostingRegressor(categorical_features=[0], max_iter=5, early_stopping=True,
                                             validation_fraction=0.5).fit(bad, ytr)
