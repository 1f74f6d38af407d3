"""`bitlearn cv --grid` against scikit-learn's GridSearchCV on the same (unshuffled) folds, and the
`pipeline` estimator of `bitlearn fit` / `predict` / `cv` against its steps run by hand and against
scikit-learn's Pipeline, with `fit --weights` going to the last step as scikit-learn's
Pipeline.fit(X, y, STEP__sample_weight=w)."""
import csv
import json
import subprocess

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression as SkLogisticRegression
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold, cross_val_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler as SkStandardScaler

from bitlearn import ml

from test_cv_cli import DATA, _xy


def _run(cli, *args, ok=True):
    r = subprocess.run([cli, *map(str, args)], capture_output=True, text=True)
    if ok:
        assert r.returncode == 0, r.stderr
    return r


def _grid(cli, tmp_path, *args, name="grid.json"):
    r = _run(cli, "cv", *args, "--json", tmp_path / name)
    return json.loads((tmp_path / name).read_text()), r.stdout


def _table(stdout):
    """The printed rows of the grid table: (rank, mean text, std text, params text)."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:3] == ["rank", "mean", "std"]) + 1
    rows = []
    for line in lines[start:]:
        if line.startswith("best:"):
            break
        rank, mean, std, params = line.split(maxsplit=3)
        rows.append((int(rank), mean, std, params))
    return rows


def _check_against(got, stdout, search):
    res = search.cv_results_
    n = len(res["params"])
    assert len(got["cv_results"]["params"]) == n
    assert got["cv_results"]["mean_test_score"] == pytest.approx(list(res["mean_test_score"]), abs=1e-12)
    assert got["cv_results"]["std_test_score"] == pytest.approx(list(res["std_test_score"]), abs=1e-12)
    assert got["cv_results"]["rank_test_score"] == list(res["rank_test_score"])
    for f in range(search.n_splits_):
        key = f"split{f}_test_score"
        assert got["cv_results"][key] == pytest.approx(list(res[key]), abs=1e-12)
    assert got["best_index"] == search.best_index_
    assert got["best_score"] == pytest.approx(search.best_score_, abs=1e-12)
    table = _table(stdout)
    assert [r[0] for r in table] == list(res["rank_test_score"])
    # The printed digits are scikit-learn's to six places.
    assert [r[1] for r in table] == [f"{m:.6f}" for m in res["mean_test_score"]]
    assert [r[2] for r in table] == [f"{s:.6f}" for s in res["std_test_score"]]
    assert f"best: " in stdout


def test_grid_classifier_matches_gridsearchcv(cli, tmp_path):
    path = DATA / "breast_cancer_std_train.csv"
    X, y = _xy(path)
    got, out = _grid(cli, tmp_path, "--model", "logistic_regression", "--data", path, "--target", "target",
                     "--grid", "C=0.01,0.1,1,10", "--grid", "penalty=l1,l2", "--param", "max_iter=2000")
    # ParameterGrid's order: keys sorted ("C" < "penalty"), the last changing fastest.
    assert got["cv_results"]["params"][:3] == [{"C": "0.01", "penalty": "l1"}, {"C": "0.01", "penalty": "l2"},
                                              {"C": "0.1", "penalty": "l1"}]
    search = GridSearchCV(ml.LogisticRegression(max_iter=2000), {"C": [0.01, 0.1, 1, 10], "penalty": ["l1", "l2"]},
                          cv=StratifiedKFold(5)).fit(X, y)
    _check_against(got, out, search)
    assert got["best_params"] == {k: str(v) for k, v in search.best_params_.items()}


@pytest.mark.parametrize("scoring", ["neg_mean_squared_error", "r2", "neg_mean_absolute_error"])
def test_grid_regressor_scoring_matches_gridsearchcv(cli, tmp_path, scoring):
    path = DATA / "diabetes_std_train.csv"
    X, y = _xy(path)
    got, out = _grid(cli, tmp_path, "--model", "ridge", "--data", path, "--target", "target", "--folds", 4,
                     "--grid", "alpha=0.01,0.1,1,10,100", "--scoring", scoring)
    search = GridSearchCV(ml.Ridge(), {"alpha": [0.01, 0.1, 1, 10, 100]}, cv=KFold(4), scoring=scoring).fit(X, y)
    assert got["metric"] == scoring
    _check_against(got, out, search)


@pytest.mark.parametrize("scoring", ["f1_macro", "roc_auc", "neg_log_loss"])
def test_grid_classifier_scoring_matches_gridsearchcv(cli, tmp_path, scoring):
    path = DATA / "breast_cancer_std_train.csv"
    X, y = _xy(path)
    got, out = _grid(cli, tmp_path, "--model", "logistic_regression", "--data", path, "--target", "target",
                     "--grid", "C=0.05,0.5,5", "--scoring", scoring)
    search = GridSearchCV(ml.LogisticRegression(), {"C": [0.05, 0.5, 5]}, cv=StratifiedKFold(5),
                          scoring=scoring).fit(X, y)
    if scoring == "neg_log_loss":  # float32 probabilities: scikit-learn neither renormalizes nor uses float64
        assert got["cv_results"]["mean_test_score"] == pytest.approx(list(search.cv_results_["mean_test_score"]),
                                                                     rel=1e-5)
        assert got["cv_results"]["rank_test_score"] == list(search.cv_results_["rank_test_score"])
    else:
        _check_against(got, out, search)


def test_grid_over_a_pipeline_matches_gridsearchcv(cli, tmp_path):
    path = DATA / "breast_cancer_train.csv"
    X, y = _xy(path)
    got, out = _grid(cli, tmp_path, "--model", "pipeline", "--data", path, "--target", "target",
                     "--param", "steps=standard_scaler;logistic_regression(max_iter=2000)",
                     "--grid", "logistic_regression__C=0.03,0.3,3")
    assert got["stratified"] is True  # the last step is a classifier
    pipe = Pipeline([("standard_scaler", ml.StandardScaler()),
                     ("logistic_regression", ml.LogisticRegression(max_iter=2000))])
    search = GridSearchCV(pipe, {"logistic_regression__C": [0.03, 0.3, 3]}, cv=StratifiedKFold(5)).fit(X, y)
    _check_against(got, out, search)


def test_pipeline_close_to_scikit_learn_pipeline(cli, tmp_path):
    path = DATA / "breast_cancer_train.csv"
    X, y = _xy(path)
    got, _ = _grid(cli, tmp_path, "--model", "pipeline", "--data", path, "--target", "target",
                   "--param", "steps=standard_scaler;logistic_regression(C=0.5)")
    sk = cross_val_score(Pipeline([("s", SkStandardScaler()), ("l", SkLogisticRegression(C=0.5))]), X, y,
                         cv=StratifiedKFold(5))
    # Different solvers reach the same optimum: at most a row or two of a fold differ.
    assert np.max(np.abs(np.array(got["scores"]) - sk)) <= 2.5 / 85
    assert got["mean"] == pytest.approx(sk.mean(), abs=0.01)


def test_fit_predict_pipeline_equals_steps_by_hand(cli, tmp_path):
    train, test = DATA / "wine_train.csv", DATA / "wine_test.csv"
    X, y = _xy(train)
    Xt, _ = _xy(test)
    steps = "standard_scaler;pca(n_components=5);logistic_regression(C=0.5,max_iter=3000)"
    model = tmp_path / "pipe.json"
    _run(cli, "fit", "--model", "pipeline", "--param", f"steps={steps}", "--data", train, "--target", "target",
         "--out", model, "--quiet")
    j = json.loads(model.read_text())
    assert j["estimator"] == "pipeline" and len(j["state"]["steps"]) == 3
    _run(cli, "predict", "--model", model, "--data", test, "--out", tmp_path / "p.csv", "--quiet")
    with open(tmp_path / "p.csv", newline="") as f:
        got = np.array([float(r[-1]) for r in list(csv.reader(f))[1:]])
    scaler = ml.StandardScaler().fit(X)
    pca = ml.PCA(n_components=5).fit(scaler.transform(X))
    logreg = ml.LogisticRegression(C=0.5, max_iter=3000).fit(pca.transform(scaler.transform(X)), y)
    expected = logreg.predict(pca.transform(scaler.transform(Xt)))
    np.testing.assert_array_equal(got, expected)
    # cv --refit of the same parameters writes the same model file.
    _run(cli, "cv", "--model", "pipeline", "--param", f"steps={steps}", "--data", train, "--target", "target",
         "--refit", tmp_path / "refit.json")
    assert json.loads((tmp_path / "refit.json").read_text()) == j


def test_grid_refit_writes_the_best(cli, tmp_path):
    path = DATA / "diabetes_std_train.csv"
    got, out = _grid(cli, tmp_path, "--model", "ridge", "--data", path, "--target", "target",
                     "--grid", "alpha=0.1,1,10,100,1000", "--refit", tmp_path / "best.json")
    best = got["best_params"]["alpha"]
    assert float(json.loads((tmp_path / "best.json").read_text())["params"]["alpha"]) == float(best)
    _run(cli, "fit", "--model", "ridge", "--param", f"alpha={best}", "--data", path, "--target", "target",
         "--out", tmp_path / "fit.json", "--quiet")
    assert (tmp_path / "fit.json").read_text() == (tmp_path / "best.json").read_text()
    assert f"refit ridge (alpha={best})" in out


def test_grid_same_output_at_threads_1_2_3(cli, tmp_path):
    path = DATA / "wine_train.csv"
    outs = []
    for t in (1, 2, 3):
        got, out = _grid(cli, tmp_path, "--model", "pipeline", "--data", path, "--target", "target",
                         "--param", "steps=standard_scaler;pca;logistic_regression(max_iter=3000)",
                         "--grid", "pca__n_components=2,4,8", "--grid", "logistic_regression__C=0.1,1",
                         "--threads", t, "--refit", tmp_path / f"m{t}.json", name=f"g{t}.json")
        outs.append((json.dumps(got), out.replace(f"m{t}.json", ""), (tmp_path / f"m{t}.json").read_text()))
    assert outs[0] == outs[1] == outs[2]


@pytest.mark.parametrize("args,message", [
    (["--model", "ridge", "--grid", "alhpa=1,2"], "ridge: unknown parameter 'alhpa'"),
    (["--model", "ridge", "--grid", "alpha=1,,2"], "--grid alpha=1,,2: an empty value"),
    (["--model", "ridge", "--grid", "alpha"], "expected key=value1,value2"),
    (["--model", "ridge", "--grid", "alpha=1", "--grid", "alpha=2"], "names parameter alpha twice"),
    (["--model", "ridge", "--grid", "alpha=x"], "ridge: parameter alpha=x: expected a number"),
    (["--model", "ridge", "--scoring", "accuracy"], "--scoring accuracy: not a scorer for a regressor"),
    (["--model", "pipeline", "--param", "steps=standard_scaler;ridge", "--grid", "lasso__alpha=1"],
     "no step named 'lasso' (steps: standard_scaler, ridge)"),
    (["--model", "pipeline", "--param", "steps=ridge;standard_scaler"],
     "pipeline: step 0 'ridge' is not a transformer"),
    (["--model", "pipeline", "--param", "steps=standard_scaler;nosuch"], "unknown estimator 'nosuch'"),
])
def test_grid_errors_are_clear(cli, args, message):
    r = _run(cli, "cv", "--data", DATA / "diabetes_std_train.csv", "--target", "target", *args, ok=False)
    assert r.returncode == 2, r.stdout + r.stderr
    assert message in r.stderr, r.stderr


def _weights(n):
    return ((np.arange(n) * 7 + 3) % 5).astype(np.float32) * 0.5  # 0, 0.5, ..., 2: zeros included


def _with_weight_column(tmp_path, X, y, w):
    path = tmp_path / "weighted.csv"
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow([f"x{j}" for j in range(X.shape[1])] + ["target", "w"])
        for row, t, wi in zip(X, y, w):
            out.writerow([repr(float(v)) for v in row] + [repr(float(t)), repr(float(wi))])
    return path


def _f32_hex(text):
    return np.frombuffer(bytes.fromhex(text), dtype="<f4").astype(np.float64)


def test_fit_weights_go_to_the_last_step(cli, tmp_path):
    """`fit --weights` of a pipeline: the last step's weighted fit on the unweighted transformers'
    output (scikit-learn's Pipeline.fit(X, y, logisticregression__sample_weight=w)); the steps by hand
    give the same state bytes, and scikit-learn's Pipeline the same coefficients (float32
    tolerance: 1.3e-4 measured, 5e-4 asked)."""
    X, y = _xy(DATA / "breast_cancer_train.csv")
    w = _weights(len(y))
    path = _with_weight_column(tmp_path, X, y, w)
    params = {"C": 0.5, "tol": 1e-6, "max_iter": 2000}
    steps = "standard_scaler;logistic_regression(C=0.5,tol=1e-6,max_iter=2000)"
    outs = []
    for t in (1, 2, 3):
        r = _run(cli, "fit", "--model", "pipeline", "--param", f"steps={steps}", "--data", path, "--target", "target",
                 "--weights", "w", "--threads", t, "--out", tmp_path / f"m{t}.json")
        assert ", weights w" in r.stderr
        outs.append((tmp_path / f"m{t}.json").read_text())
    assert outs[0] == outs[1] == outs[2]
    j = json.loads(outs[0])
    assert j["sample_weight_column"] == "w" and "w" not in j["feature_names"]
    scaler = ml.StandardScaler().fit(X)
    logreg = ml.LogisticRegression(**params).fit(scaler.transform(X), y, sample_weight=w)
    assert j["state"]["steps"][0]["state"] == json.loads(scaler.model_file_text())["state"]  # unweighted
    assert j["state"]["steps"][1]["state"] == json.loads(logreg.model_file_text())["state"]
    sk = Pipeline([("standardscaler", SkStandardScaler()), ("logisticregression", SkLogisticRegression(**params))])
    sk.fit(X.astype(np.float64), y, logisticregression__sample_weight=w.astype(np.float64))
    st = j["state"]["steps"][1]["state"]
    a = np.concatenate([_f32_hex(st["coef"]), _f32_hex(st["intercept"])])
    b = np.concatenate([np.ravel(sk[-1].coef_), np.ravel(sk[-1].intercept_)])
    scale = max(1.0, np.max(np.abs(b)))
    assert np.max(np.abs(a - b)) <= 5e-4 * scale, (a, b)  # measured 1.3e-4
    # The weights matter: the unweighted pipeline is farther from scikit-learn's weighted one.
    _run(cli, "fit", "--model", "pipeline", "--param", f"steps={steps}", "--data", path, "--target", "target",
         "--ignore", "w", "--out", tmp_path / "plain.json", "--quiet")
    pst = json.loads((tmp_path / "plain.json").read_text())["state"]["steps"][1]["state"]
    c = np.concatenate([_f32_hex(pst["coef"]), _f32_hex(pst["intercept"])])
    assert np.max(np.abs(c - b)) > 10 * np.max(np.abs(a - b))


def test_fit_weights_refused_by_name_when_the_last_step_takes_none(cli, tmp_path):
    X, y = _xy(DATA / "breast_cancer_train.csv")
    path = _with_weight_column(tmp_path, X, y, _weights(len(y)))
    r = _run(cli, "fit", "--model", "pipeline", "--param", "steps=standard_scaler;kneighbors_classifier",
             "--data", path, "--target", "target", "--weights", "w", "--out", tmp_path / "k.json", ok=False)
    assert r.returncode != 0
    assert ("pipeline: sample_weight is not supported by this estimator: its final step 'kneighbors_classifier' "
            "does not take sample weights") in r.stderr, r.stderr
    assert not (tmp_path / "k.json").exists()
