"""LightGBM text-model import (`lightgbm_model`, bitlearn.ml.LightGBMModel) against LightGBM itself:
models trained by LightGBM on scikit-learn data sets (regression with NaN, binary, multiclass,
Poisson, a categorical feature), saved as text, then evaluated by bitlearn through Python and through
`bitlearn fit` / `bitlearn predict`.

Raw scores: bitlearn adds the leaf values in binary64 in tree order as LightGBM does, so its float32
margins must equal LightGBM's float64 raw scores rounded to float32, every one. Probabilities and
transformed predictions use bitlearn's own binary64 exp (not the C library's): compared to
LightGBM's rounded to float32, within one float32 ulp (the count of exact ones is printed)."""
import csv
import subprocess

import numpy as np
import pytest

lgb = pytest.importorskip("lightgbm")
from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine  # noqa: E402

from bitlearn.ml import LightGBMModel  # noqa: E402
from bitlearn import Tensor  # noqa: E402

PARAMS = dict(num_threads=1, verbose=-1, seed=0, deterministic=True, learning_rate=0.1)


def _with_nan(X, fraction, seed):
    X = X.astype(np.float32).copy()
    X[np.random.RandomState(seed).rand(*X.shape) < fraction] = np.nan
    return X


def _cases():
    Xd, yd = load_diabetes(return_X_y=True)
    Xb, yb = load_breast_cancer(return_X_y=True)
    Xw, yw = load_wine(return_X_y=True)
    Xd = _with_nan(Xd, 0.08, 1)
    Xc = Xd.copy()
    Xc[:, 1] = (Xd[:, 1] > 0).astype(np.float32)  # diabetes' sex column as categories 0 / 1
    Xc[:, 2] = np.floor(np.nan_to_num(Xd[:, 2]) * 40 + 4).clip(0, 9)  # a 10-category feature
    return {
        "regression": (dict(PARAMS, objective="regression", num_leaves=15), Xd, yd, 60, {}),
        "binary": (dict(PARAMS, objective="binary", num_leaves=7), _with_nan(Xb, 0.03, 2), yb, 40, {}),
        "multiclass": (dict(PARAMS, objective="multiclass", num_class=3, num_leaves=7), Xw.astype(np.float32), yw, 30, {}),
        "poisson": (dict(PARAMS, objective="poisson", num_leaves=7), Xd, yd, 40, {}),
        "categorical": (dict(PARAMS, objective="regression", num_leaves=8, min_data_per_group=5, cat_smooth=1.0), Xc, yd,
                        30, {"categorical_feature": [1, 2]}),
    }


CASES = _cases()


def _train(name, tmp_path):
    params, X, y, rounds, ds = CASES[name]
    booster = lgb.train(params, lgb.Dataset(X, y, **ds), rounds)
    path = tmp_path / f"{name}.txt"
    booster.save_model(str(path))
    return lgb.Booster(model_file=str(path)), path, X


def _f32_ulp(a):
    a = np.abs(np.asarray(a, np.float32))
    return np.nextafter(a, np.float32(np.inf)) - a


@pytest.mark.parametrize("name", list(CASES))
def test_margins_bit_equal_and_predictions(name, tmp_path):
    booster, path, X = _train(name, tmp_path)
    est = LightGBMModel(model_file=str(path)).fit(X)
    margin = np.asarray(est._est.transform(Tensor(np.ascontiguousarray(X))).to("cpu"))
    want = booster.predict(X, raw_score=True).astype(np.float32).reshape(margin.shape)
    assert np.array_equal(margin.view(np.uint32), want.view(np.uint32)), \
        f"{np.sum(margin != want)} of {margin.size} margins differ from LightGBM's"
    pred = booster.predict(X)
    if name in ("binary", "multiclass"):
        proba = np.asarray(est._est.predict_proba(Tensor(np.ascontiguousarray(X))).to("cpu"))
        ref = np.column_stack([1.0 - pred, pred]) if name == "binary" else pred
        ref32 = ref.astype(np.float32)
        assert np.all(np.abs(proba - ref32) <= _f32_ulp(ref32)), name
        print(f"{name}: {np.sum(proba == ref32)} / {proba.size} probabilities equal LightGBM's (float32)")
        labels = est.predict(X)
        assert np.array_equal(labels, (pred > 0.5).astype(np.float32) if name == "binary" else np.argmax(pred, 1))
    else:
        got = est.predict(X)
        ref32 = pred.astype(np.float32)
        assert np.all(np.abs(got - ref32) <= _f32_ulp(ref32)), name
        print(f"{name}: {np.sum(got == ref32)} / {got.size} predictions equal LightGBM's (float32)")


def _write_csv(path, X):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow([f"f{j}" for j in range(X.shape[1])])
        for row in X:
            w.writerow(["" if np.isnan(v) else repr(float(v)) for v in row])


def _read_csv(path):
    with open(path) as f:
        rows = list(csv.reader(f))
    return rows[0], np.array([[float(v) for v in r] for r in rows[1:]])


@pytest.mark.parametrize("name", ["regression", "multiclass"])
def test_cli_predict_and_shap(name, tmp_path, cli):
    booster, path, X = _train(name, tmp_path)
    _write_csv(tmp_path / "x.csv", X)
    r = subprocess.run([cli, "fit", "--model", "lightgbm_model", "--param", f"model_file={path}", "--data",
                        str(tmp_path / "x.csv"), "--out", str(tmp_path / "m.json"), "--quiet"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    for output in ("transform", "shap"):
        r = subprocess.run([cli, "predict", "--model", str(tmp_path / "m.json"), "--data", str(tmp_path / "x.csv"),
                            "--out", str(tmp_path / f"{output}.csv"), "--output", output], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    _, margin = _read_csv(tmp_path / "transform.csv")
    want = booster.predict(X, raw_score=True).astype(np.float32).reshape(margin.shape)
    assert np.array_equal(margin.astype(np.float32), want)
    header, shap = _read_csv(tmp_path / "shap.csv")
    ref = booster.predict(X, pred_contrib=True)
    assert shap.shape == ref.shape and header[-1].endswith("expected_value")
    scale = np.max(np.abs(ref), axis=1, keepdims=True)
    assert np.max(np.abs(shap - ref) / scale) < 1e-9


def test_refusals(tmp_path):
    booster, path, X = _train("binary", tmp_path)
    with pytest.raises(ValueError, match="features"):
        LightGBMModel(model_file=str(path)).fit(X[:, :5])
    text = path.read_text()
    bad = tmp_path / "bad.txt"
    bad.write_text(text[: len(text) // 3])
    with pytest.raises(ValueError, match="truncated"):
        LightGBMModel(model_file=str(bad)).fit(X)
    bad.write_text(text.replace("objective=binary sigmoid:1", "objective=cross_entropy_lambda"))
    with pytest.raises(ValueError, match="not supported"):
        LightGBMModel(model_file=str(bad)).fit(X)


def test_single_leaf_model(tmp_path):
    """A model whose only tree is one leaf (no split was possible): margins and SHAP values."""
    X = np.random.RandomState(0).randn(50, 3).astype(np.float32)
    booster = lgb.train(dict(PARAMS, objective="regression", min_data_in_leaf=40, num_leaves=4),
                        lgb.Dataset(X, X[:, 0]), 3)
    path = tmp_path / "one_leaf.txt"
    booster.save_model(str(path))
    est = LightGBMModel(model_file=str(path)).fit(X)
    margin = np.asarray(est._est.transform(Tensor(np.ascontiguousarray(X))).to("cpu")).ravel()
    assert np.array_equal(margin, booster.predict(X, raw_score=True).astype(np.float32))
    assert np.allclose(est.pred_contribs(X), booster.predict(X, pred_contrib=True), rtol=0, atol=1e-15)
