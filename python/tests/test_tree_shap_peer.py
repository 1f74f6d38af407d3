"""TreeSHAP (src/ml/tree/tree_shap.h) of the imported tree models against the peers' own SHAP
values: LightGBM's predict(pred_contrib=True) and XGBoost's predict(pred_contribs=True), on models
trained on scikit-learn data sets. Both peers use the same path-dependent algorithm with the cover
in their model files (LightGBM: row counts; XGBoost: hessian sums); bitlearn computes in binary64
(XGBoost in float32), so the agreement is checked to 1e-6 of each row's largest |value| (1e-9 for
LightGBM). Each row's values add up to its margin."""
import numpy as np
import pytest

from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine

from bitlearn.ml import LightGBMModel, XGBoostModel


def _data(kind):
    if kind == "regression":
        X, y = load_diabetes(return_X_y=True)
    elif kind == "binary":
        X, y = load_breast_cancer(return_X_y=True)
    else:
        X, y = load_wine(return_X_y=True)
    X = X.astype(np.float32)
    X[np.random.RandomState(3).rand(*X.shape) < 0.05] = np.nan
    return X, y


def _check(ours, ref, margin, groups, d, tol):
    assert ours.shape == ref.shape, (ours.shape, ref.shape)
    scale = np.maximum(np.max(np.abs(ref), axis=1, keepdims=True), 1e-30)
    err = np.max(np.abs(ours - ref) / scale)
    assert err < tol, err
    sums = ours.reshape(len(ours), groups, d + 1).sum(axis=2)
    assert np.allclose(sums, margin.reshape(len(ours), groups), rtol=1e-6, atol=1e-6)
    return err


@pytest.mark.parametrize("kind", ["regression", "binary", "multiclass"])
def test_lightgbm_pred_contrib(kind, tmp_path):
    lgb = pytest.importorskip("lightgbm")
    X, y = _data(kind)
    params = dict(num_threads=1, verbose=-1, seed=0, num_leaves=15, learning_rate=0.1,
                  objective={"regression": "regression", "binary": "binary", "multiclass": "multiclass"}[kind])
    if kind == "multiclass":
        params["num_class"] = 3
    booster = lgb.train(params, lgb.Dataset(X, y), 40)
    path = tmp_path / "m.txt"
    booster.save_model(str(path))
    est = LightGBMModel(model_file=str(path)).fit(X)
    ours = est.pred_contribs(X)
    ref = booster.predict(X, pred_contrib=True)
    groups = 3 if kind == "multiclass" else 1
    err = _check(ours, ref, booster.predict(X, raw_score=True), groups, X.shape[1], 1e-9)
    print(f"LightGBM {kind}: largest relative SHAP difference {err:.3g}")


@pytest.mark.parametrize("kind", ["regression", "binary", "multiclass"])
def test_xgboost_pred_contribs(kind, tmp_path):
    xgb = pytest.importorskip("xgboost")
    X, y = _data(kind)
    params = dict(tree_method="hist", seed=0, nthread=1, max_depth=4, eta=0.2,
                  objective={"regression": "reg:squarederror", "binary": "binary:logistic",
                             "multiclass": "multi:softprob"}[kind])
    if kind == "multiclass":
        params["num_class"] = 3
    dm = xgb.DMatrix(X, y, missing=np.nan)
    booster = xgb.train(params, dm, 30)
    path = tmp_path / "m.json"
    booster.save_model(str(path))
    est = XGBoostModel(model_file=str(path)).fit(X)
    ours = est.pred_contribs(X)
    ref = booster.predict(dm, pred_contribs=True).astype(np.float64)
    ref = ref.reshape(len(X), -1)  # multiclass: [n, k, d + 1] -> [n, k * (d + 1)]
    groups = 3 if kind == "multiclass" else 1
    margin = booster.predict(dm, output_margin=True).astype(np.float64)
    err = _check(ours, ref, margin, groups, X.shape[1], 1e-5)
    print(f"XGBoost {xgb.__version__} {kind}: largest relative SHAP difference {err:.3g}")


def test_shap_refused_for_other_estimators():
    from bitlearn import _core, Tensor
    from bitlearn.ml import Ridge
    X, y = _data("regression")
    X = np.nan_to_num(X)
    est = Ridge().fit(X, y)
    with pytest.raises(ValueError, match="SHAP"):
        _core.shap_values(est._est.to_json_text(), Tensor(np.ascontiguousarray(X)))
