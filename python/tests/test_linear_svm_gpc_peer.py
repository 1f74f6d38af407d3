"""LinearSVC, LinearSVR and GaussianProcessClassifier against scikit-learn.

LinearSVC / LinearSVR: both libraries solve the same dual problems by coordinate descent (bitlearn
in binary64 without shrinking, rows visited in a Philox permutation; liblinear with shrinking and
its own generator), so at tol=1e-6 the coefficients and intercepts agree to about 1e-6 relative
(measured: at most 1.2e-6 for the classifiers, 1.4e-4 for epsilon_insensitive regression, whose
relative stopping rule is looser, 7e-6 for squared_epsilon_insensitive); the bound asserted is 1e-3 of the largest coefficient.
GaussianProcessClassifier: with the optimizer off both compute the same Laplace approximation
and the same erf approximation of the logistic integral: probabilities within 1e-5 (measured
4e-8), log marginal likelihood within 1e-6 relative (measured 1e-15); with the L-BFGS optimizer
the likelihood reached is at least scikit-learn's (to 1e-4 relative)."""
import warnings

import numpy as np
import pytest
import sklearn.svm
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris, load_wine, make_classification
from sklearn.gaussian_process import GaussianProcessClassifier as SkGPC
from sklearn.gaussian_process.kernels import RBF, ConstantKernel as C, Matern
from sklearn.preprocessing import StandardScaler

from bitlearn import ml


def _f32(a):
    return np.asarray(a, dtype=np.float32).astype(np.float64)


def _classification(name):
    if name == "blobs":
        X, y = make_classification(n_samples=80, n_features=4, random_state=0)
    else:
        X, y = {"iris": load_iris, "wine": load_wine, "breast_cancer": load_breast_cancer}[name](return_X_y=True)
    return _f32(StandardScaler().fit_transform(X)), y


def _diabetes():
    X, y = load_diabetes(return_X_y=True)
    return _f32(StandardScaler().fit_transform(X)), _f32((y - y.mean()) / y.std())


def _rel(a, b):
    return np.max(np.abs(np.ravel(a) - np.ravel(b))) / np.max(np.abs(b))


@pytest.mark.parametrize("data", ["breast_cancer", "iris", "wine"])
@pytest.mark.parametrize("loss", ["squared_hinge", "hinge"])
@pytest.mark.parametrize("C_", [0.1, 1.0])
def test_linear_svc_matches_sklearn(data, loss, C_):
    X, y = _classification(data)
    ref = sklearn.svm.LinearSVC(C=C_, loss=loss, tol=1e-6, max_iter=200000, dual=True, random_state=0).fit(X, y)
    mine = ml.LinearSVC(C=C_, loss=loss, tol=1e-6, max_iter=200000).fit(X, y)
    assert mine.coef_.shape == ref.coef_.shape and mine.intercept_.shape == ref.intercept_.shape
    assert _rel(mine.coef_, ref.coef_) <= 1e-3
    assert np.max(np.abs(mine.intercept_ - ref.intercept_)) <= 1e-3 * np.max(np.abs(ref.coef_))
    d, r = mine.decision_function(X), ref.decision_function(X)
    assert np.max(np.abs(d - r)) <= 1e-3 * max(1.0, np.max(np.abs(r)))
    near = np.abs(r) < 1e-3 if r.ndim == 1 else np.sort(r, axis=1)[:, -1] - np.sort(r, axis=1)[:, -2] < 1e-3
    assert np.all((mine.predict(X) == ref.predict(X)) | near)
    np.testing.assert_array_equal(mine.classes_, ref.classes_)


@pytest.mark.parametrize("loss", ["epsilon_insensitive", "squared_epsilon_insensitive"])
@pytest.mark.parametrize("epsilon", [0.0, 0.1])
@pytest.mark.parametrize("C_", [0.1, 1.0])
def test_linear_svr_matches_sklearn(loss, epsilon, C_):
    X, y = _diabetes()
    ref = sklearn.svm.LinearSVR(C=C_, loss=loss, epsilon=epsilon, tol=1e-6, max_iter=200000, dual=True,
                                random_state=0).fit(X, y)
    mine = ml.LinearSVR(C=C_, loss=loss, epsilon=epsilon, tol=1e-6, max_iter=200000).fit(X, y)
    assert _rel(mine.coef_, ref.coef_) <= 1e-3
    assert abs(float(mine.intercept_) - float(ref.intercept_[0])) <= 1e-3 * np.max(np.abs(ref.coef_))
    assert np.max(np.abs(mine.predict(X) - ref.predict(X))) <= 1e-3 * np.max(np.abs(ref.predict(X)))


def test_linear_svm_options():
    X, y = _classification("breast_cancer")
    # intercept_scaling: the intercept column is regularized, so the solution depends on it
    for s in (0.5, 5.0):
        ref = sklearn.svm.LinearSVC(intercept_scaling=s, tol=1e-6, max_iter=200000, dual=True).fit(X, y)
        mine = ml.LinearSVC(intercept_scaling=s, tol=1e-6, max_iter=200000).fit(X, y)
        assert _rel(mine.coef_, ref.coef_) <= 1e-3
        assert abs(mine.intercept_[0] - ref.intercept_[0]) <= 1e-3 * np.max(np.abs(ref.coef_))
    ref = sklearn.svm.LinearSVC(fit_intercept=False, tol=1e-6, max_iter=200000, dual=True).fit(X, y)
    mine = ml.LinearSVC(fit_intercept=False, tol=1e-6, max_iter=200000).fit(X, y)
    assert _rel(mine.coef_, ref.coef_) <= 1e-3 and mine.intercept_[0] == 0
    # max_iter reached: the model is kept and a ConvergenceWarning is raised, as scikit-learn
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ml.LinearSVC(max_iter=2, tol=1e-9).fit(X, y)
    assert any("max_iter=2" in str(x.message) for x in w)
    with pytest.raises(Exception, match="penalty=l1"):
        ml.LinearSVC(penalty="l1").fit(X, y)


KERNELS = [(None, "none"), (C(2.0) * RBF(1.5), "2.0 * RBF(1.5)"), (Matern(1.0, nu=1.5), "Matern(1.0, nu=1.5)"),
           (C(1.0) * Matern(2.0, nu=2.5), "1.0 * Matern(2.0, nu=2.5)")]


@pytest.mark.parametrize("data", ["blobs", "iris"])
@pytest.mark.parametrize("kernel,text", KERNELS)
def test_gpc_fixed_kernel_matches_sklearn(data, kernel, text):
    X, y = _classification(data)
    ref = SkGPC(kernel=kernel, optimizer=None).fit(X, y)
    mine = ml.GaussianProcessClassifier(kernel=text, optimizer="none").fit(X, y)
    Xt = X[:40] + 0.1
    assert np.max(np.abs(mine.predict_proba(Xt) - ref.predict_proba(Xt))) <= 1e-5
    np.testing.assert_array_equal(mine.predict(Xt), ref.predict(Xt))
    lml = ref.log_marginal_likelihood_value_
    assert abs(mine.log_marginal_likelihood_value_ - lml) <= 1e-6 * abs(lml)


@pytest.mark.parametrize("data", ["blobs", "iris"])
def test_gpc_optimizer(data):
    X, y = _classification(data)
    ref = SkGPC(kernel=C(1.0) * RBF(1.0), random_state=0).fit(X, y)
    mine = ml.GaussianProcessClassifier(kernel="1.0 * RBF(1.0)").fit(X, y)
    lml = ref.log_marginal_likelihood_value_
    assert mine.log_marginal_likelihood_value_ >= lml - 1e-4 * abs(lml)
    assert np.max(np.abs(mine.predict_proba(X) - ref.predict_proba(X))) <= 1e-3
    assert np.mean(mine.predict(X) == ref.predict(X)) >= 0.98
    kernels = mine.kernel_ if isinstance(mine.kernel_, list) else [mine.kernel_]
    assert len(kernels) == (1 if len(np.unique(y)) == 2 else len(np.unique(y)))
    assert all("RBF" in k for k in kernels)
