"""`bitlearn fit --categorical`: one-hot columns as scikit-learn's OneHotEncoder makes them (same
categories, same order), a fit on them that agrees with scikit-learn's on the encoded matrix, and
predict / evaluate applying the model's categories (an unseen category is refused)."""
import csv
import json
import subprocess

import numpy as np
from sklearn.linear_model import Ridge
from sklearn.preprocessing import OneHotEncoder
from sklearn.tree import DecisionTreeClassifier


def _run(cli, *args, ok=True):
    r = subprocess.run([cli, *map(str, args)], capture_output=True, text=True)
    if ok:
        assert r.returncode == 0, r.stderr
    return r


def _table(tmp_path, n=60, seed=3):
    rng = np.random.default_rng(seed)
    colors = np.array(["red", "green", "blue", "Ünïcode"])[rng.integers(0, 4, n)]
    sizes = rng.integers(1, 4, n) * 10  # numbers, one-hot by value: 10 < 20 < 30
    x = rng.normal(size=n).round(3)
    y = (colors == "red") * 2.0 - (colors == "blue") * 1.0 + sizes / 10.0 + x + rng.normal(scale=0.1, size=n).round(3)
    path = tmp_path / "t.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["color", "x", "size", "y", "label"])
        for i in range(n):
            w.writerow([colors[i], x[i], sizes[i], round(float(y[i]), 3), "hi" if y[i] > 2 else "lo"])
    return path, colors, sizes, x, y


def test_one_hot_columns_and_ridge_match_scikit_learn(cli, tmp_path):
    path, colors, sizes, x, _ = _table(tmp_path)
    _run(cli, "fit", "--model", "ridge", "--data", path, "--target", "y", "--ignore", "label", "--categorical",
         "color,size", "--param", "alpha=0.5", "--out", tmp_path / "m.json", "--quiet")
    model = json.loads((tmp_path / "m.json").read_text())
    enc = OneHotEncoder(sparse_output=False).fit(np.column_stack([colors, sizes.astype(str)]))
    # The same categories in the same order (numbers by value).
    assert [c["values"] for c in model["categories"]] == [list(enc.categories_[0]), ["10", "20", "30"]]
    names = [f"color={v}" for v in enc.categories_[0]] + ["x"] + [f"size={v}" for v in (10, 20, 30)]
    assert model["feature_names"] == names and model["input_columns"] == ["color", "x", "size"]
    # The fit on the encoded matrix agrees with scikit-learn's Ridge on the same matrix.
    onehot_c = OneHotEncoder(sparse_output=False).fit_transform(colors.reshape(-1, 1))
    onehot_s = OneHotEncoder(sparse_output=False).fit_transform(sizes.reshape(-1, 1))
    X = np.column_stack([onehot_c, x, onehot_s]).astype(np.float32)
    y = np.array([float(r["y"]) for r in csv.DictReader(open(path))], dtype=np.float32)
    ref = Ridge(alpha=0.5).fit(X.astype(np.float64), y.astype(np.float64))
    _run(cli, "predict", "--model", tmp_path / "m.json", "--data", path, "--out", tmp_path / "p.csv")
    got = np.array([float(r["y"]) for r in csv.DictReader(open(tmp_path / "p.csv"))])
    np.testing.assert_allclose(got, ref.predict(X.astype(np.float64)), rtol=1e-4, atol=1e-4)
    out = _run(cli, "evaluate", "--model", tmp_path / "m.json", "--data", path).stdout
    assert "r2" in out


def test_tree_on_one_hot_and_text_labels(cli, tmp_path):
    path, colors, sizes, x, _ = _table(tmp_path, n=80, seed=5)
    _run(cli, "fit", "--model", "decision_tree_classifier", "--data", path, "--target", "label", "--ignore", "y",
         "--categorical", "color", "--param", "max_depth=3", "--out", tmp_path / "m.json", "--quiet")
    onehot = OneHotEncoder(sparse_output=False).fit_transform(colors.reshape(-1, 1))
    X = np.column_stack([onehot, x, sizes]).astype(np.float32)
    labels = np.array([r["label"] for r in csv.DictReader(open(path))])
    ref = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, labels)
    _run(cli, "predict", "--model", tmp_path / "m.json", "--data", path, "--out", tmp_path / "p.csv")
    got = np.array([r["label"] for r in csv.DictReader(open(tmp_path / "p.csv"))])
    # Ties between equally good splits may be broken differently; the training accuracy agrees.
    assert abs(np.mean(got == labels) - ref.score(X, labels)) < 1e-9


def test_unseen_category_and_bad_requests_are_refused(cli, tmp_path):
    path, *_ = _table(tmp_path)
    _run(cli, "fit", "--model", "ridge", "--data", path, "--target", "y", "--ignore", "label", "--categorical", "color",
         "--out", tmp_path / "m.json", "--quiet")
    (tmp_path / "new.csv").write_text("color,x,size,y,label\npurple,0.1,10,1,lo\n")
    r = _run(cli, "predict", "--model", tmp_path / "m.json", "--data", tmp_path / "new.csv", "--out", tmp_path / "p.csv",
             ok=False)
    assert r.returncode == 2 and "holds 'purple', a category the model was not fitted on" in r.stderr
    assert not (tmp_path / "p.csv").exists()
    r = _run(cli, "fit", "--model", "ridge", "--data", path, "--target", "y", "--ignore", "label", "--out",
             tmp_path / "m2.json", ok=False)
    assert r.returncode == 2 and "one-hot encoded with --categorical" in r.stderr
    r = _run(cli, "fit", "--model", "ridge", "--data", path, "--target", "y", "--ignore", "label", "--categorical", "y",
             "--out", tmp_path / "m3.json", ok=False)
    assert r.returncode == 2 and "--categorical names 'y', which is not a feature column" in r.stderr
    # A model file whose categories disagree with its feature names.
    model = json.loads((tmp_path / "m.json").read_text())
    model["categories"][0]["values"].append("zzz")
    (tmp_path / "bad.json").write_text(json.dumps(model))
    r = _run(cli, "predict", "--model", tmp_path / "bad.json", "--data", path, "--out", tmp_path / "p.csv", ok=False)
    assert r.returncode == 2 and "feature_names are not the one-hot columns" in r.stderr
