"""HistGradientBoostingRegressor / Classifier's losses, early stopping and monotonic constraints
against scikit-learn's twins with the same parameters.

The two libraries bin, quantize and split differently (bitlearn: float32 gradients summed as
integers, its own binning), so the trees differ; what must agree is the quality of the fit: the
held-out loss of each loss function within LOSS_MARGIN (relative) of scikit-learn's, accuracy within
ACC_MARGIN, the early-stopping iteration count within N_ITER_RATIO, and monotonic constraints held
exactly on a grid."""
import numpy as np
import pytest
import sklearn.ensemble
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits
from sklearn.metrics import (mean_absolute_error, mean_gamma_deviance, mean_pinball_loss, mean_poisson_deviance,
                             mean_tweedie_deviance)
from sklearn.model_selection import train_test_split

from bitlearn import ml

LOSS_MARGIN = 0.06
ACC_MARGIN = 0.03
N_ITER_RATIO = 2.0
COMMON = {"max_iter": 100, "learning_rate": 0.1, "max_leaf_nodes": 15, "min_samples_leaf": 10}


def _diabetes():
    X, y = load_diabetes(return_X_y=True)
    return train_test_split(X.astype(np.float32), y.astype(np.float32), test_size=0.3, random_state=0)


def _metric(loss, y, pred, quantile=None):
    if loss == "absolute_error":
        return mean_absolute_error(y, pred)
    if loss == "quantile":
        return mean_pinball_loss(y, pred, alpha=quantile)
    if loss == "poisson":
        return mean_poisson_deviance(y, pred)
    return mean_gamma_deviance(y, pred)


@pytest.mark.parametrize("loss,extra", [("absolute_error", {}), ("quantile", {"quantile": 0.8}),
                                        ("quantile", {"quantile": 0.2}), ("poisson", {}), ("gamma", {})])
def test_regression_losses_against_scikit_learn(loss, extra):
    Xtr, Xte, ytr, yte = _diabetes()
    params = dict(COMMON, loss=loss, **extra)
    mine = ml.HistGradientBoostingRegressor(**params).fit(Xtr, ytr)
    theirs = sklearn.ensemble.HistGradientBoostingRegressor(early_stopping=False, **params).fit(
        Xtr.astype(np.float64), ytr.astype(np.float64))
    q = extra.get("quantile")
    ours = _metric(loss, yte, mine.predict(Xte).astype(np.float64), q)
    ref = _metric(loss, yte, theirs.predict(Xte.astype(np.float64)), q)
    assert ours <= ref * (1 + LOSS_MARGIN), (loss, ours, ref)
    if loss in ("poisson", "gamma"):
        assert np.all(mine.predict(Xte) > 0)
    if loss == "quantile":  # the share of targets below the predicted quantile is near scikit-learn's
        ours_share = np.mean(yte <= mine.predict(Xte))
        ref_share = np.mean(yte <= theirs.predict(Xte.astype(np.float64)))
        assert abs(ours_share - ref_share) < 0.08, (ours_share, ref_share)


def test_tweedie_beats_the_mean():
    # scikit-learn's HistGradientBoostingRegressor has no Tweedie loss: the model must beat the
    # constant mean by the deviance of the same power.
    Xtr, Xte, ytr, yte = _diabetes()
    mine = ml.HistGradientBoostingRegressor(loss="tweedie", power=1.5, **COMMON).fit(Xtr, ytr)
    ours = mean_tweedie_deviance(yte, mine.predict(Xte).astype(np.float64), power=1.5)
    const = mean_tweedie_deviance(yte, np.full(len(yte), ytr.mean(), dtype=np.float64), power=1.5)
    assert ours < 0.9 * const


def _synthetic(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 8)).astype(np.float32)
    y = (np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.5 * X[:, 3] + 0.5 * rng.normal(size=n)).astype(np.float32)
    return X, y


def test_early_stopping_auto_on_large_data():
    X, y = _synthetic(20000)
    Xte, yte = _synthetic(4000, seed=1)
    params = {"max_iter": 1000, "learning_rate": 0.1, "early_stopping": "auto", "n_iter_no_change": 10,
              "validation_fraction": 0.1, "random_state": 0}
    mine = ml.HistGradientBoostingRegressor(**params).fit(X, y)
    theirs = sklearn.ensemble.HistGradientBoostingRegressor(**params).fit(X.astype(np.float64), y.astype(np.float64))
    assert mine.n_iter_ < 1000
    ratio = mine.n_iter_ / theirs.n_iter_
    assert 1 / N_ITER_RATIO <= ratio <= N_ITER_RATIO, (mine.n_iter_, theirs.n_iter_)
    assert len(mine.train_score_) == mine.n_iter_ + 1 and len(mine.validation_score_) == mine.n_iter_ + 1
    # Scores are -loss (half squared error) as scikit-learn's, of the same size at the same iteration
    # (on different held-out rows: each library draws its own split).
    k = min(mine.n_iter_, theirs.n_iter_)
    assert abs(mine.train_score_[k] - theirs.train_score_[k]) < 0.05 * abs(theirs.train_score_[k])
    assert abs(mine.validation_score_[k] - theirs.validation_score_[k]) < 0.15 * abs(theirs.validation_score_[k])
    assert mine.score(Xte, yte) >= theirs.score(Xte.astype(np.float64), yte) - 0.02


@pytest.mark.parametrize("loader", [load_breast_cancer, load_digits])
def test_classifier_early_stopping(loader):
    X, y = loader(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X.astype(np.float32), y, test_size=0.3, random_state=0, stratify=y)
    params = {"max_iter": 300, "learning_rate": 0.1, "early_stopping": True, "n_iter_no_change": 5,
              "validation_fraction": 0.15, "random_state": 0}
    mine = ml.HistGradientBoostingClassifier(**params).fit(Xtr, ytr)
    theirs = sklearn.ensemble.HistGradientBoostingClassifier(**params).fit(Xtr.astype(np.float64), ytr)
    assert mine.n_iter_ < 300
    assert theirs.n_iter_ / (2 * N_ITER_RATIO) <= mine.n_iter_ <= theirs.n_iter_ * 2 * N_ITER_RATIO, (
        mine.n_iter_, theirs.n_iter_)
    assert mine.score(Xte, yte) >= theirs.score(Xte.astype(np.float64), yte) - ACC_MARGIN


def test_monotonic_constraints_against_scikit_learn():
    Xtr, Xte, ytr, yte = _diabetes()
    cst = [0, 0, 1, 1, 0, 0, -1, 0, 1, 0]  # bmi, bp, s5 up; s3 down
    mine = ml.HistGradientBoostingRegressor(monotonic_cst=cst, **COMMON).fit(Xtr, ytr)
    theirs = sklearn.ensemble.HistGradientBoostingRegressor(monotonic_cst=cst, early_stopping=False, **COMMON).fit(
        Xtr.astype(np.float64), ytr.astype(np.float64))
    assert mine.score(Xte, yte) >= theirs.score(Xte.astype(np.float64), yte) - 0.05
    for f, c in enumerate(cst):
        if c == 0:
            continue
        grid = np.linspace(Xtr[:, f].min(), Xtr[:, f].max(), 60, dtype=np.float32)
        for row in Xte[:10]:
            Z = np.repeat(row[None, :], len(grid), axis=0)
            Z[:, f] = grid
            d = np.diff(mine.predict(Z).astype(np.float64))
            assert np.all(c * d >= 0), (f, c)
    # The parameter round-trips through the model file.
    again = ml.HistGradientBoostingRegressor(monotonic_cst=cst, **COMMON).fit(Xtr, ytr)
    assert np.array_equal(again.predict(Xte), mine.predict(Xte))


def test_bad_targets_are_refused():
    Xtr, _, ytr, _ = _diabetes()
    with pytest.raises(Exception, match="y >= 0"):
        ml.HistGradientBoostingRegressor(loss="poisson").fit(Xtr, ytr - 100)
    with pytest.raises(Exception, match="y > 0"):
        ml.HistGradientBoostingRegressor(loss="gamma").fit(Xtr, ytr * 0)
    with pytest.raises(Exception, match="monotonic_cst"):
        ml.HistGradientBoostingRegressor(monotonic_cst=[1, 0]).fit(Xtr, ytr)


def test_huber_against_lightgbm():
    lgb = pytest.importorskip("lightgbm")
    Xtr, Xte, ytr, yte = _diabetes()
    mine = ml.HistGradientBoostingRegressor(loss="huber", alpha=30.0, **COMMON).fit(Xtr, ytr)
    theirs = lgb.LGBMRegressor(objective="huber", alpha=30.0, n_estimators=100, learning_rate=0.1, num_leaves=15,
                               min_child_samples=10, max_bin=255, verbose=-1).fit(Xtr, ytr)
    ours = mean_absolute_error(yte, mine.predict(Xte))
    ref = mean_absolute_error(yte, theirs.predict(Xte))
    assert ours <= ref * (1 + LOSS_MARGIN), (ours, ref)


def test_interaction_constraints_against_scikit_learn():
    Xtr, Xte, ytr, yte = _diabetes()
    cst = [[0, 1, 2], [2, 3, 4, 5], [6, 7, 8, 9]]
    mine = ml.HistGradientBoostingRegressor(interaction_cst=cst, **COMMON).fit(Xtr, ytr)
    theirs = sklearn.ensemble.HistGradientBoostingRegressor(interaction_cst=cst, early_stopping=False, **COMMON).fit(
        Xtr.astype(np.float64), ytr.astype(np.float64))
    assert mine.score(Xte, yte) >= theirs.score(Xte.astype(np.float64), yte) - 0.05
    import json
    for t in json.loads(mine._est.state_json())["trees"]:  # every path stays within one group
        feature, left, right = t["feature"], t["left"], t["right"]
        stack = [(0, frozenset())]
        while stack:
            node, used = stack.pop()
            if feature[node] < 0:
                assert any(used <= set(g) for g in cst), used
                continue
            used = used | {feature[node]}
            stack += [(left[node], used), (right[node], used)]
