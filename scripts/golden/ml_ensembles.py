#!/usr/bin/env python3
"""Golden numbers of the ensemble estimators' accuracy parity test
(tests/ml_trees/test_ensembles.cpp, EnsembleParity.*): the data sets and the peers' test scores
(scikit-learn 1.9 / XGBoost 3.x) in tests/data/ml/ensembles/parity.json.

    python3 scripts/golden/ml_ensembles.py

Data: make_classification (3 classes) and make_regression, 1000 rows x 10 features, 70/30 split
(random_state 0); for isolation_forest 500 normal rows plus 25 uniform outliers. Floats are stored
as hex of their little-endian binary32 bytes. Each case names our estimator + parameters, the
peer, its score, and the tolerance the test allows on |ours - peer| (different random draws in
bagging / forests / DART; one test row is 0.33 points of accuracy). Symmetric (oblivious) trees have
no peer here (CatBoost is not installed), so their case is one-sided: at least XGBoost's depth-wise
score minus the tolerance.
"""
import json
import os

import numpy as np


def hexf(a):
    return np.ascontiguousarray(a, dtype="<f4").tobytes().hex()


def main():
    import xgboost as xgb
    from sklearn import datasets, ensemble, linear_model, tree
    from sklearn.model_selection import train_test_split

    out = {"sets": {}, "cases": []}
    Xc, yc = datasets.make_classification(n_samples=1000, n_features=10, n_informative=6, n_classes=3,
                                          random_state=0)
    Xr, yr = datasets.make_regression(n_samples=1000, n_features=10, n_informative=6, noise=5.0, random_state=0)
    sets = {}
    for name, X, y in (("cls", Xc, yc), ("reg", Xr, yr)):
        X = X.astype(np.float32)
        y = y.astype(np.float32)
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0)
        sets[name] = (Xtr, Xte, ytr, yte)
        out["sets"][name] = {"n_train": len(Xtr), "n_test": len(Xte), "d": X.shape[1], "X_train": hexf(Xtr),
                             "y_train": hexf(ytr), "X_test": hexf(Xte), "y_test": hexf(yte)}

    def case(set_name, ours, params, peer_name, make, tol, one_sided=False):
        Xtr, Xte, ytr, yte = sets[set_name]
        est = make()
        est.fit(Xtr, ytr)
        score = float(est.score(Xte, yte))
        out["cases"].append({"set": set_name, "estimator": ours, "params": params, "peer": peer_name,
                             "peer_score": score, "tolerance": tol, "one_sided": one_sided})
        print("%-28s %-60s %-40s %.4f" % (ours, json.dumps(params), peer_name, score))

    dt_c = "decision_tree_classifier(max_depth=5)"
    dt_r = "decision_tree_regressor(max_depth=6)"
    case("cls", "bagging_classifier", {}, "BaggingClassifier(random_state=0)",
         lambda: ensemble.BaggingClassifier(random_state=0), 0.04)
    case("reg", "bagging_regressor", {}, "BaggingRegressor(random_state=0)",
         lambda: ensemble.BaggingRegressor(random_state=0), 0.04)
    case("cls", "voting_classifier", {"estimators": "logistic_regression;" + dt_c, "voting": "soft"},
         "VotingClassifier(LR, DT(max_depth=5), soft)",
         lambda: ensemble.VotingClassifier([("lr", linear_model.LogisticRegression(max_iter=1000)),
                                            ("dt", tree.DecisionTreeClassifier(max_depth=5, random_state=0))],
                                           voting="soft"), 0.03)
    case("cls", "voting_classifier", {"estimators": "logistic_regression;" + dt_c + ";random_forest_classifier(n_estimators=50)"},
         "VotingClassifier(LR, DT, RF(50), hard)",
         lambda: ensemble.VotingClassifier([("lr", linear_model.LogisticRegression(max_iter=1000)),
                                            ("dt", tree.DecisionTreeClassifier(max_depth=5, random_state=0)),
                                            ("rf", ensemble.RandomForestClassifier(n_estimators=50, random_state=0))]),
         0.04)
    case("reg", "voting_regressor", {"estimators": "ridge;" + dt_r}, "VotingRegressor(Ridge, DT(max_depth=6))",
         lambda: ensemble.VotingRegressor([("r", linear_model.Ridge()),
                                           ("dt", tree.DecisionTreeRegressor(max_depth=6, random_state=0))]), 0.02)
    case("cls", "stacking_classifier", {"estimators": "logistic_regression;" + dt_c},
         "StackingClassifier(LR, DT(max_depth=5); final LR)",
         lambda: ensemble.StackingClassifier([("lr", linear_model.LogisticRegression(max_iter=1000)),
                                              ("dt", tree.DecisionTreeClassifier(max_depth=5, random_state=0))],
                                             final_estimator=linear_model.LogisticRegression()), 0.03)
    case("reg", "stacking_regressor", {"estimators": "ridge;" + dt_r, "final_estimator": "ridge"},
         "StackingRegressor(Ridge, DT(max_depth=6); final Ridge)",
         lambda: ensemble.StackingRegressor([("r", linear_model.Ridge()),
                                             ("dt", tree.DecisionTreeRegressor(max_depth=6, random_state=0))],
                                            final_estimator=linear_model.Ridge()), 0.02)
    case("cls", "adaboost_classifier", {}, "AdaBoostClassifier() (SAMME, stumps)",
         lambda: ensemble.AdaBoostClassifier(random_state=0), 0.03)
    case("reg", "adaboost_regressor", {}, "AdaBoostRegressor(random_state=0) (R2, depth 3)",
         lambda: ensemble.AdaBoostRegressor(random_state=0), 0.04)
    xgb_like = {"grow_policy": "depthwise", "max_depth": "6", "max_leaf_nodes": "none", "min_samples_leaf": "1",
                "min_child_weight": "1", "l2_regularization": "1", "learning_rate": "0.3", "max_iter": "100"}
    case("cls", "hist_gradient_boosting_classifier", dict(xgb_like, booster="dart", rate_drop="0.1"),
         "XGBClassifier(booster=dart, rate_drop=0.1, hist)",
         lambda: xgb.XGBClassifier(booster="dart", rate_drop=0.1, tree_method="hist", n_estimators=100,
                                   n_jobs=1, random_state=0), 0.04)
    case("reg", "hist_gradient_boosting_regressor", dict(xgb_like, booster="dart", rate_drop="0.1"),
         "XGBRegressor(booster=dart, rate_drop=0.1, hist)",
         lambda: xgb.XGBRegressor(booster="dart", rate_drop=0.1, tree_method="hist", n_estimators=100,
                                  n_jobs=1, random_state=0), 0.03)
    sym = {"grow_policy": "symmetric", "max_depth": "6", "min_samples_leaf": "1", "l2_regularization": "3",
           "learning_rate": "0.1", "max_iter": "200"}
    case("cls", "hist_gradient_boosting_classifier", sym, "XGBClassifier(hist, depth 6, 200 trees, lr 0.1)",
         lambda: xgb.XGBClassifier(tree_method="hist", max_depth=6, n_estimators=200, learning_rate=0.1,
                                   n_jobs=1), 0.04, one_sided=True)
    case("reg", "hist_gradient_boosting_regressor", sym, "XGBRegressor(hist, depth 6, 200 trees, lr 0.1)",
         lambda: xgb.XGBRegressor(tree_method="hist", max_depth=6, n_estimators=200, learning_rate=0.1,
                                  n_jobs=1), 0.03, one_sided=True)

    # Isolation forest: agreement of outlier labels with scikit-learn's, contamination 0.05.
    rng = np.random.RandomState(0)
    inliers = rng.normal(size=(500, 4)).astype(np.float32)
    outliers = rng.uniform(-6, 6, size=(25, 4)).astype(np.float32)
    Xi = np.vstack([inliers, outliers]).astype(np.float32)
    iso = ensemble.IsolationForest(contamination=0.05, random_state=0).fit(Xi)
    out["isolation_forest"] = {"n": len(Xi), "d": 4, "X": hexf(Xi), "contamination": "0.05",
                               "sklearn_predict": hexf(iso.predict(Xi).astype(np.float32)),
                               "sklearn_score_samples": hexf(iso.score_samples(Xi).astype(np.float32))}
    path = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "ml", "ensembles", "parity.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print("wrote", os.path.normpath(path))


if __name__ == "__main__":
    main()
