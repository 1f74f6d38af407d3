"""One instance of every estimator class for scikit-learn's estimator checks, with the checks
that cannot pass by design (each with its reason; docs/python.md lists them)."""
from bitlearn import _core, ml

# Small settings keep the suite fast; meta-estimators get members.
_ARGS = {
    "voting_classifier": dict(estimators="logistic_regression;decision_tree_classifier(max_depth=3)"),
    "voting_regressor": dict(estimators="ridge;decision_tree_regressor(max_depth=3)"),
    "stacking_classifier": dict(estimators="logistic_regression;decision_tree_classifier(max_depth=3)"),
    "stacking_regressor": dict(estimators="ridge;decision_tree_regressor(max_depth=3)"),
    "random_forest_classifier": dict(n_estimators=10),
    "random_forest_regressor": dict(n_estimators=10),
    "extra_trees_classifier": dict(n_estimators=10),
    "extra_trees_regressor": dict(n_estimators=10),
    "isolation_forest": dict(n_estimators=20),
    "hist_gradient_boosting_classifier": dict(max_iter=20),
    "hist_gradient_boosting_regressor": dict(max_iter=20),
    "kmeans": dict(n_clusters=3),
    "minibatch_kmeans": dict(n_clusters=3),
    # The checks' data sets have 30 rows or fewer; the perplexity must stay below the row count
    # (scikit-learn runs its own checks of TSNE with perplexity=2 for the same reason).
    "tsne": dict(perplexity=2),
    # umap: n_neighbors must stay below the row count too (umap-learn truncates it with a warning).
    "umap": dict(n_neighbors=2),
}
# Not an estimator one fits: it imports an XGBoost model file (fit only checks X against it).
SKIPPED = {"xgboost_model": "imports a trained XGBoost model file; it does not learn from X, y"}
SKIPPED["hist_gradient_boosting_ranker"] = (
    "a ranker: fit needs query ids and integer relevance labels; test_hgb_ranking_peer.py tests it against LightGBM")
SKIPPED["lightgbm_model"] = "imports a trained LightGBM text model; it does not learn from X, y"
# Forecasters (src/ml/timeseries/) fit one ordered series y (fit(y, X=None)); scikit-learn's checks
# fit shuffled X, y tables. python/tests/test_timeseries_peer.py tests them against statsmodels.
SKIPPED.update({name: "a time-series forecaster: fit reads y as one ordered series, not an X, y table"
                for name in ml._FORECASTER})

EXPECTED = {
    "bagging_classifier": {
        "check_fit2d_1feature": "a bootstrap sample of the 10-row check data can hold one class, "
                                "which the library refuses with its own message (no n_features in it)",
    },
}
# umap's transform lays new rows out together, as umap-learn's: the pruning threshold is the batch's
# largest membership and the negative samples are keyed by the position of each row's edges, so a
# row's result depends on the other rows of the batch, and transform(X) of the training rows is
# not the fitted embedding_ (fit_transform).
EXPECTED["umap"] = {
    c: "transform lays a batch of new rows out together (umap-learn's transform): the result of a row "
       "depends on the batch, and transform of the training rows is not embedding_"
    for c in ("check_transformer_general", "check_transformer_data_not_an_array",
              "check_methods_sample_order_invariance", "check_methods_subset_invariance")}
# The encoders learn the values seen at fit as categories: this check transforms other continuous
# rows, whose values are unseen categories, refused under the default handle_unknown="error".
for _name in ("ordinal_encoder", "one_hot_encoder"):
    EXPECTED[_name] = {"check_fit_idempotent": "continuous test rows hold categories unseen at fit, refused "
                                               "by the default handle_unknown=\"error\" (as scikit-learn's)"}


def instances():
    out = []
    for name in ml._REGISTRY:
        if name in SKIPPED:
            continue
        out.append(ml.estimator_class(name)(**_ARGS.get(name, {})))
    return out


# Weighted fits compute in float32: a fit with integer weights and the fit of the repeated rows agree
# to float32 rounding (about 1e-6 relative), not to this check's rtol of 1e-7.
# python/tests/test_sample_weight.py checks the equivalence at float32 tolerances.
WEIGHTED = {"check_sample_weight_equivalence_on_dense_data":
            "float32 computation: weighted and repeated-row fits agree to about 1e-6 relative, not 1e-7"}


def expected_failed_checks(est):
    out = dict(EXPECTED.get(est._registry_name, {}))
    if _core.Estimator.make(est._registry_name).supports_sample_weight:
        out.update(WEIGHTED)
    return out
