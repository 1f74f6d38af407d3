"""sample_weight of VotingRegressor / VotingClassifier and StackingRegressor / StackingClassifier
against scikit-learn's ensembles fitted with the same members and weights: the members take the
weights (stacking: each fold's training rows' weights, then all of them), so the predictions agree
to the members' float32 tolerance; a member without weights is refused with its name."""
import numpy as np
import pytest
import sklearn.ensemble as ske
import sklearn.linear_model as skl

from bitlearn import ml


def _data(n=240, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 4).astype(np.float32)
    y = (X @ np.array([1.0, -2.0, 0.5, 0.0]) + 0.3 * rng.randn(n)).astype(np.float32)
    return X, y


def _weights(n):
    return ((np.arange(n) * 7 + 3) % 5).astype(np.float32) * 0.5 + 0.25


def test_voting_regressor_weights_match_scikit_learn():
    X, y = _data()
    w = _weights(len(X))
    ours = ml.VotingRegressor(estimators="ridge(alpha=0.5);ridge(alpha=8)").fit(X, y, sample_weight=w)
    theirs = ske.VotingRegressor([("a", skl.Ridge(alpha=0.5)), ("b", skl.Ridge(alpha=8))]).fit(
        X.astype(np.float64), y, sample_weight=w)
    Q = _data(100, 1)[0]
    np.testing.assert_allclose(ours.predict(Q), theirs.predict(Q.astype(np.float64)), rtol=1e-4, atol=1e-4)
    plain = ml.VotingRegressor(estimators="ridge(alpha=0.5);ridge(alpha=8)").fit(X, y)
    assert np.max(np.abs(plain.predict(Q) - ours.predict(Q))) > 1e-3  # the weights matter


def test_stacking_regressor_weights_match_scikit_learn():
    X, y = _data()
    w = _weights(len(X))
    ours = ml.StackingRegressor(estimators="ridge(alpha=0.5);ridge(alpha=30)", final_estimator="ridge(alpha=1)",
                                cv=3).fit(X, y, sample_weight=w)
    theirs = ske.StackingRegressor([("a", skl.Ridge(alpha=0.5)), ("b", skl.Ridge(alpha=30))],
                                   final_estimator=skl.Ridge(alpha=1), cv=3).fit(X.astype(np.float64), y,
                                                                                 sample_weight=w)
    Q = _data(100, 2)[0]
    np.testing.assert_allclose(ours.predict(Q), theirs.predict(Q.astype(np.float64)), rtol=1e-3, atol=1e-3)


def test_voting_classifier_weights_match_scikit_learn():
    X, y = _data()
    yc = (y > 0).astype(np.int64)
    w = _weights(len(X))
    ours = ml.VotingClassifier(estimators="logistic_regression;logistic_regression(C=0.1)", voting="soft").fit(
        X, yc, sample_weight=w)
    theirs = ske.VotingClassifier([("a", skl.LogisticRegression()), ("b", skl.LogisticRegression(C=0.1))],
                                  voting="soft").fit(X.astype(np.float64), yc, sample_weight=w)
    Q = _data(100, 3)[0]
    np.testing.assert_allclose(ours.predict_proba(Q), theirs.predict_proba(Q.astype(np.float64)), atol=2e-4)


@pytest.mark.parametrize("cls", ["VotingClassifier", "StackingClassifier"])
def test_a_member_without_weights_is_refused(cls):
    X, y = _data(90)
    yc = (y > 0).astype(np.int64)
    est = getattr(ml, cls)(estimators="logistic_regression;kneighbors_classifier")
    with pytest.raises(Exception, match="kneighbors_classifier does not take sample weights"):
        est.fit(X, yc, sample_weight=np.full(len(X), 2.0, np.float32))
