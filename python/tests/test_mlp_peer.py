"""MLPClassifier and MLPRegressor against scikit-learn's twins with the same architecture and
solver settings, on scikit-learn's bundled datasets with standardized features.

The two libraries draw different initial weights and batch orders (bitlearn: Philox streams under
random_state, uniform in +-1/sqrt(fan_in); scikit-learn: its own generator, Glorot-uniform), and
bitlearn trains in binary32, so the fitted networks differ; what must agree is the quality of the
fit: held-out accuracy within ACC_MARGIN, R^2 within R2_MARGIN, and the final training loss of the
same order."""
import warnings

import numpy as np
import pytest
import sklearn.neural_network
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from bitlearn import ml

ACC_MARGIN = 0.03
R2_MARGIN = 0.06


def _standardized(loader):
    X, y = loader(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0)
    scaler = StandardScaler().fit(Xtr)
    return scaler.transform(Xtr), scaler.transform(Xte), ytr, yte


CASES = [
    ("MLPClassifier", {"hidden_layer_sizes": (64,)}, "breast_cancer"),
    ("MLPClassifier", {"hidden_layer_sizes": (64, 32)}, "digits"),
    ("MLPClassifier", {"hidden_layer_sizes": (32,), "solver": "sgd", "learning_rate_init": 0.05,
                       "activation": "logistic"}, "digits"),
    ("MLPClassifier", {"hidden_layer_sizes": (16,), "activation": "tanh", "alpha": 0.01}, "breast_cancer"),
    ("MLPRegressor", {"hidden_layer_sizes": (16,), "learning_rate_init": 0.01, "max_iter": 300, "alpha": 1.0},
     "diabetes"),
    ("MLPRegressor", {"hidden_layer_sizes": (16, 8), "learning_rate_init": 0.01, "max_iter": 400, "alpha": 0.1},
     "diabetes"),
]
DATA = {"breast_cancer": load_breast_cancer, "digits": load_digits, "diabetes": load_diabetes}


@pytest.mark.parametrize("cls,params,data", CASES, ids=[f"{c}-{d}-{i}" for i, (c, _, d) in enumerate(CASES)])
def test_mlp_against_scikit_learn(cls, params, data):
    Xtr, Xte, ytr, yte = _standardized(DATA[data])
    mine = getattr(ml, cls)(**params).fit(Xtr, ytr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ref = getattr(sklearn.neural_network, cls)(random_state=0, **params).fit(Xtr, ytr)
    got, want = mine.score(Xte, yte), ref.score(Xte, yte)
    margin = ACC_MARGIN if cls == "MLPClassifier" else R2_MARGIN
    assert got >= want - margin, (got, want)
    assert 1 <= mine.n_iter_ <= params.get("max_iter", 200)
    assert len(mine.loss_curve_) == mine.n_iter_ and mine.loss_ == mine.loss_curve_[-1]
    assert 0.5 * ref.loss_ <= mine.loss_ <= 2.0 * ref.loss_ + 0.02, (mine.loss_, ref.loss_)
    if cls == "MLPClassifier":
        p = mine.predict_proba(Xte)
        assert p.shape == (len(Xte), len(ref.classes_))
        np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-5)
        np.testing.assert_array_equal(mine.classes_, ref.classes_)
        np.testing.assert_array_equal(mine.predict(Xte), mine.classes_[np.argmax(p, axis=1)])


def test_mlp_model_is_a_function_of_random_state():
    Xtr, Xte, ytr, _ = _standardized(load_breast_cancer)
    a = ml.MLPClassifier(hidden_layer_sizes=(8,), max_iter=5, random_state=3).fit(Xtr, ytr)
    b = ml.MLPClassifier(hidden_layer_sizes=(8,), max_iter=5, random_state=3).fit(Xtr, ytr)
    c = ml.MLPClassifier(hidden_layer_sizes=(8,), max_iter=5, random_state=4).fit(Xtr, ytr)
    assert np.array_equal(a.predict_proba(Xte), b.predict_proba(Xte))
    assert not np.array_equal(a.predict_proba(Xte), c.predict_proba(Xte))


def test_mlp_refusals_are_named():
    Xtr, _, ytr, _ = _standardized(load_diabetes)
    with pytest.raises(Exception, match="hidden_layer_sizes"):
        ml.MLPRegressor(hidden_layer_sizes=(0,)).fit(Xtr, ytr)
    with pytest.raises(Exception, match="solver"):
        ml.MLPRegressor(solver="lbfgs").fit(Xtr, ytr)
    with pytest.raises(Exception, match="diverged"):
        ml.MLPRegressor(hidden_layer_sizes=(8,), solver="sgd", learning_rate_init=0.1, max_iter=100).fit(Xtr, ytr)
