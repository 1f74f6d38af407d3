#!/usr/bin/env python3
"""Golden data and metrics for the second wave of linear estimators (sgd_classifier, sgd_regressor,
huber_regressor, quantile_regressor, poisson/gamma/tweedie_regressor, ard_regression, lars,
lasso_lars).

Writes into tests/data/ml_linear/:
  * <name>_std_{train,test}.csv: breast_cancer, iris and diabetes (75/25 split, random_state=0, as
    scripts/golden/ml_linear.py) with features standardized by the training split's mean and
    population std (SGD wants scaled features, as scikit-learn's documentation says);
  * outliers, counts, positive, tweedie_{train,test}.csv: synthetic data (numpy seed 0) with 5%
    gross outliers, Poisson counts, Gamma targets and compound Poisson-Gamma targets;
  * golden_models.json: scikit-learn's test metric, coefficients and intercept for every case; the
    unit tests (tests/ml_linear/test_linear_models_parity.cpp) hold ours within the tolerance.

    python3 scripts/golden/ml_linear_models.py
"""
import json
import os
import sys

import numpy as np
from sklearn import datasets
from sklearn import linear_model as lm
from sklearn.metrics import accuracy_score, d2_tweedie_score, mean_pinball_loss, r2_score
from sklearn.model_selection import train_test_split

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "data", "ml_linear")


def write_csv(path, X, y):
    cols = [f"f{j}" for j in range(X.shape[1])] + ["target"]
    with open(path, "w") as f:
        f.write(",".join(cols) + "\n")
        for row, t in zip(X, y):
            f.write(",".join(repr(float(v)) for v in row) + "," + repr(float(t)) + "\n")


def bundled(name):
    loader = {"diabetes": datasets.load_diabetes, "breast_cancer": datasets.load_breast_cancer,
              "iris": datasets.load_iris}[name]
    X, y = loader(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X.astype(np.float32), y.astype(np.float32), test_size=0.25,
                                          random_state=0)
    mu, sd = Xtr.mean(axis=0), Xtr.std(axis=0)
    sd[sd == 0] = 1
    return ((Xtr - mu) / sd).astype(np.float32), ((Xte - mu) / sd).astype(np.float32), ytr, yte


def synthetic(kind):
    rng = np.random.default_rng(0)
    n, d = 2000, 8
    X = rng.normal(size=(n, d)).astype(np.float32)
    w = rng.normal(scale=0.3, size=d)
    if kind == "outliers":
        y = X @ (w * 10) + 3 + rng.normal(scale=1.0, size=n)
        bad = rng.random(n) < 0.05
        y[bad] += rng.normal(scale=50.0, size=bad.sum())
    elif kind == "counts":
        y = rng.poisson(np.exp(X @ w + 0.5)).astype(float)
    elif kind == "positive":
        mu = np.exp(X @ w + 1.0)
        y = rng.gamma(shape=2.0, scale=mu / 2.0)
    else:  # compound Poisson-Gamma (Tweedie power in (1, 2)): many exact zeros
        lam = np.exp(X @ w)
        counts = rng.poisson(lam)
        y = np.array([rng.gamma(shape=2.0, scale=1.0, size=k).sum() for k in counts])
    y = y.astype(np.float32)
    return X[:1500], X[1500:], y[:1500], y[1500:]


# (case, dataset, our estimator, our params, sklearn model, metric, tolerance)
# metric: accuracy / r2 / d2 (higher is better, ours >= sklearn - tol) or pinball (lower is better,
# ours <= sklearn * (1 + tol)).
CASES = [
    ("sgd_hinge_cancer", "breast_cancer_std", "sgd_classifier", {}, lm.SGDClassifier(random_state=0),
     "accuracy", 0.03),
    ("sgd_log_cancer", "breast_cancer_std", "sgd_classifier", {"loss": "log_loss", "penalty": "elasticnet"},
     lm.SGDClassifier(loss="log_loss", penalty="elasticnet", random_state=0), "accuracy", 0.03),
    ("sgd_log_iris", "iris_std", "sgd_classifier", {"loss": "log_loss", "alpha": "0.001"},
     lm.SGDClassifier(loss="log_loss", alpha=0.001, random_state=0), "accuracy", 0.06),
    ("sgd_reg_diabetes", "diabetes_std", "sgd_regressor", {}, lm.SGDRegressor(random_state=0), "r2", 0.02),
    ("sgd_reg_huber_l1_outliers", "outliers", "sgd_regressor",
     {"loss": "huber", "epsilon": "1", "penalty": "l1", "learning_rate": "constant", "eta0": "0.01"},
     lm.SGDRegressor(loss="huber", epsilon=1.0, penalty="l1", learning_rate="constant", eta0=0.01,
                     random_state=0), "r2", 0.02),
    ("huber_outliers", "outliers", "huber_regressor", {}, lm.HuberRegressor(), "r2", 0.002),
    ("huber_diabetes", "diabetes_std", "huber_regressor", {"alpha": "0.01", "max_iter": "500"},
     lm.HuberRegressor(alpha=0.01, max_iter=500), "r2", 0.003),
    ("quantile_median_outliers", "outliers", "quantile_regressor", {"alpha": "0.01"},
     lm.QuantileRegressor(quantile=0.5, alpha=0.01), "pinball", 0.002),
    ("quantile_q80_diabetes", "diabetes_std", "quantile_regressor", {"quantile": "0.8", "alpha": "0.1"},
     lm.QuantileRegressor(quantile=0.8, alpha=0.1), "pinball", 0.002),
    ("poisson_counts", "counts", "poisson_regressor", {"alpha": "0.01"}, lm.PoissonRegressor(alpha=0.01),
     "d2", 0.002),
    ("gamma_positive", "positive", "gamma_regressor", {"alpha": "0.01"}, lm.GammaRegressor(alpha=0.01),
     "d2", 0.002),
    ("tweedie_1p5", "tweedie", "tweedie_regressor", {"power": "1.5", "alpha": "0.01"},
     lm.TweedieRegressor(power=1.5, alpha=0.01), "d2", 0.002),
    ("tweedie_normal_identity", "diabetes_std", "tweedie_regressor", {"alpha": "0.1"},
     lm.TweedieRegressor(power=0.0, alpha=0.1), "d2", 0.002),
    ("ard_diabetes", "diabetes_std", "ard_regression", {}, lm.ARDRegression(), "r2", 0.002),
    # scikit-learn's Lars ends this path at R^2 -0.81 (its last steps are numerically unstable here,
    # alphas_ rise again); the full Lars path is the least-squares fit, so the reference is OLS.
    ("lars_diabetes", "diabetes_std", "lars", {}, lm.LinearRegression(), "r2", 0.001),
    ("lars_5_diabetes", "diabetes_std", "lars", {"n_nonzero_coefs": "5"}, lm.Lars(n_nonzero_coefs=5), "r2", 0.001),
    ("lasso_lars_diabetes", "diabetes_std", "lasso_lars", {"alpha": "0.5"}, lm.LassoLars(alpha=0.5), "r2", 0.001),
]


def metric_value(metric, model, X, y, power=None):
    p = model.predict(X)
    if metric == "accuracy":
        return accuracy_score(y, p)
    if metric == "r2":
        return r2_score(y, p)
    if metric == "pinball":
        return mean_pinball_loss(y, p, alpha=model.quantile)
    return d2_tweedie_score(y, p, power=power)


def main():
    os.makedirs(OUT, exist_ok=True)
    splits = {}
    for name in ["breast_cancer", "iris", "diabetes"]:
        splits[name + "_std"] = bundled(name)
    for kind in ["outliers", "counts", "positive", "tweedie"]:
        splits[kind] = synthetic(kind)
    for name, (Xtr, Xte, ytr, yte) in splits.items():
        write_csv(os.path.join(OUT, f"{name}_train.csv"), Xtr, ytr)
        write_csv(os.path.join(OUT, f"{name}_test.csv"), Xte, yte)
    golden = {"cases": []}
    for case, ds, est, params, model, metric, tol in CASES:
        Xtr, Xte, ytr, yte = splits[ds]
        model.fit(Xtr.astype(np.float64), ytr.astype(np.float64))
        power = getattr(model, "power", {"poisson_regressor": 1.0, "gamma_regressor": 2.0}.get(est))
        value = metric_value(metric, model, Xte.astype(np.float64), yte, power)
        entry = {"case": case, "dataset": ds, "estimator": est, "params": params, "metric": metric,
                 "sklearn": float(value), "tolerance": tol}
        if power is not None:
            entry["power"] = float(power)
        if est != "sgd_classifier":
            entry["coef"] = [float(v) for v in np.ravel(model.coef_)]
            entry["intercept"] = float(np.ravel([model.intercept_])[0])
        if case == "lars_diabetes":
            entry["sklearn_lars"] = float(r2_score(yte, lm.Lars().fit(Xtr.astype(np.float64), ytr).predict(
                Xte.astype(np.float64))))
        golden["cases"].append(entry)
        print(f"{case:28s} {metric:8s} sklearn {value:.6f}")
    with open(os.path.join(OUT, "golden_models.json"), "w") as f:
        json.dump(golden, f, indent=1, sort_keys=True)
        f.write("\n")
    print("wrote", OUT)


if __name__ == "__main__":
    sys.exit(main())
