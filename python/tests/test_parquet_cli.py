"""Parquet input of the `bitlearn` program: a table written by pyarrow (several row groups, every
numeric type, nulls, plain and dictionary-encoded strings) gives the same model file, predictions and
cross-validation scores, byte for byte, as the same table written as CSV; damaged files and columns
the reader cannot represent exit with code 2 and a message naming the file and the cause."""
import json
import subprocess

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

N = 240


def _run(cli, *args):
    return subprocess.run([cli, *map(str, args)], capture_output=True, text=True)


def _ok(cli, *args):
    r = _run(cli, *args)
    assert r.returncode == 0, r.stderr
    return r


def _f32_text(v):
    return "" if np.isnan(v) else repr(float(np.float32(v)))


def _tables(tmp_path):
    """The same table as Parquet (dictionary strings, row groups of 50) and as CSV."""
    rng = np.random.default_rng(11)
    x1 = rng.normal(size=N).astype(np.float32)
    x2 = rng.normal(size=N).astype(np.float32).astype(np.float64)  # a double column of f32 values
    x3 = rng.integers(-50, 50, size=N).astype(np.int32)
    x4 = rng.random(N) < 0.4
    color = np.array(["red", "green", "blue"])[rng.integers(0, 3, N)]
    y = (1.5 * x1 - 2.0 * x2 + 0.05 * x3 + 1.0 * x4 + (color == "red") * 0.7
         + rng.normal(scale=0.1, size=N)).astype(np.float32)
    label = np.where(y > 0.3, "high", "low")
    gaps = rng.random(N) < 0.1  # nulls in a column the models leave out (--ignore)
    noisy = np.where(gaps, np.nan, rng.normal(size=N)).astype(np.float32)
    table = pa.table({
        "x1": pa.array(x1, pa.float32()),
        "x2": pa.array(x2, pa.float64()),
        "x3": pa.array(x3, pa.int32()),
        "x4": pa.array(x4, pa.bool_()),
        "color": pa.array(color, pa.string()).dictionary_encode(),
        "noisy": pa.array(noisy, pa.float32(), mask=gaps),
        "label": pa.array(label, pa.string()),
        "y": pa.array(y, pa.float32()),
    })
    pq_path = tmp_path / "t.parquet"
    pq.write_table(table, pq_path, row_group_size=50, use_dictionary=True)
    assert pq.ParquetFile(pq_path).metadata.num_row_groups == 5
    csv_path = tmp_path / "t.csv"
    with open(csv_path, "w") as f:
        f.write(",".join(table.column_names) + "\n")
        for i in range(N):
            f.write(",".join([_f32_text(x1[i]), _f32_text(x2[i]), str(x3[i]), "1" if x4[i] else "0", color[i],
                              _f32_text(noisy[i]), label[i], _f32_text(y[i])]) + "\n")
    return pq_path, csv_path


@pytest.fixture
def tables(cli, tmp_path):
    pq_path, csv_path = _tables(tmp_path)
    r = _run(cli, "fit", "--model", "ridge", "--data", pq_path, "--target", "y", "--ignore", "label,noisy,color",
             "--out", tmp_path / "probe.json", "--quiet")
    if "this build has no Parquet reader" in r.stderr:
        pytest.skip("this build has no Parquet reader (Apache Arrow C++ not found at configure)")
    assert r.returncode == 0, r.stderr
    return pq_path, csv_path


@pytest.mark.parametrize("model,target,extra", [
    ("ridge", "y", ["--ignore", "label,noisy", "--categorical", "color"]),
    ("logistic_regression", "label", ["--ignore", "y,noisy", "--categorical", "color"]),
    ("decision_tree_classifier", "label", ["--ignore", "y,noisy,color"]),
    ("hist_gradient_boosting_regressor", "y", ["--ignore", "label,color", "--param", "max_iter=20"]),
])
def test_fit_and_predict_match_the_csv_byte_for_byte(cli, tmp_path, tables, model, target, extra):
    pq_path, csv_path = tables
    out = {}
    for kind, path in (("pq", pq_path), ("csv", csv_path)):
        _ok(cli, "fit", "--model", model, "--data", path, "--target", target, *extra,
            "--out", tmp_path / f"{kind}.json", "--quiet")
        _ok(cli, "predict", "--model", tmp_path / f"{kind}.json", "--data", path, "--out", tmp_path / f"{kind}.csv")
        out[kind] = ((tmp_path / f"{kind}.json").read_bytes(), (tmp_path / f"{kind}.csv").read_bytes())
    assert out["pq"][0] == out["csv"][0]
    assert out["pq"][1] == out["csv"][1]
    # A model fitted on the CSV predicts the Parquet file as it predicts the CSV.
    _ok(cli, "predict", "--model", tmp_path / "csv.json", "--data", pq_path, "--out", tmp_path / "cross.csv")
    assert (tmp_path / "cross.csv").read_bytes() == out["csv"][1]


def test_cv_and_evaluate_match_the_csv(cli, tmp_path, tables):
    pq_path, csv_path = tables
    got = {}
    for kind, path in (("pq", pq_path), ("csv", csv_path)):
        _ok(cli, "cv", "--model", "logistic_regression", "--data", path, "--target", "label", "--ignore", "y,noisy",
            "--categorical", "color", "--folds", 4, "--json", tmp_path / f"cv_{kind}.json")
        _ok(cli, "fit", "--model", "ridge", "--data", path, "--target", "y", "--ignore", "label,noisy,color",
            "--out", tmp_path / f"m_{kind}.json", "--quiet")
        _ok(cli, "evaluate", "--model", tmp_path / f"m_{kind}.json", "--data", path, "--target", "y",
            "--json", tmp_path / f"ev_{kind}.json")
        metrics = json.loads((tmp_path / f"ev_{kind}.json").read_text())
        assert metrics.pop("data") == str(path) and metrics.pop("model") == str(tmp_path / f"m_{kind}.json")
        got[kind] = (json.loads((tmp_path / f"cv_{kind}.json").read_text()), metrics)
    assert got["pq"][0]["scores"] == got["csv"][0]["scores"]
    assert got["pq"][0]["test_fold"] == got["csv"][0]["test_fold"]
    assert got["pq"][1] == got["csv"][1]  # the metrics, to the last bit (JSON keeps 17 digits)


def test_nulls_are_missing_values(cli, tmp_path, tables):
    pq_path, _ = tables
    # A null in a feature column is NaN, which a linear model refuses naming the first null's row.
    first = pq.read_table(pq_path).column("noisy").to_pylist().index(None)
    r = _run(cli, "fit", "--model", "ridge", "--data", pq_path, "--target", "y", "--features", "x1,noisy",
             "--out", tmp_path / "m.json")
    assert r.returncode == 2, r.stderr
    assert f"non-finite value at row {first}, column 1" in r.stderr, r.stderr
    # A null in the target is refused naming the row, as an empty CSV cell is.
    t = pa.table({"x": pa.array([1.0, 2.0, 3.0]), "y": pa.array([1.0, None, 3.0])})
    pq.write_table(t, tmp_path / "null_target.parquet")
    r = _run(cli, "fit", "--model", "ridge", "--data", tmp_path / "null_target.parquet", "--target", "y",
             "--out", tmp_path / "m.json")
    assert r.returncode == 2 and "target column 'y' is missing or NaN on data row 2" in r.stderr, r.stderr


def _expect_refused(cli, tmp_path, path, *needles):
    r = _run(cli, "fit", "--model", "ridge", "--data", path, "--target", "y", "--out", tmp_path / "m.json")
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr and "terminate" not in r.stderr
    for n in needles:
        assert n in r.stderr, r.stderr
    return r


def test_hostile_files_exit_2_with_a_clear_message(cli, tmp_path, tables):
    pq_path, _ = tables
    good = pq_path.read_bytes()
    cases = {
        "empty.parquet": (b"", ["not a Parquet file", "0 bytes"]),
        "noise.parquet": (np.random.default_rng(1).integers(0, 256, 5000, dtype=np.uint8).tobytes(),
                          ["not a Parquet file", "does not start with PAR1"]),
        "truncated.parquet": (good[: len(good) // 2], ["truncated or damaged", "does not end with PAR1"]),
        "cut_footer.parquet": (good[:100] + good[-8:], ["damaged Parquet file"]),
    }
    for name, (data, needles) in cases.items():
        p = tmp_path / name
        p.write_bytes(data)
        _expect_refused(cli, tmp_path, p, name, *needles)
    # A Parquet file under another name is recognised by its magic.
    renamed = tmp_path / "table.dat"
    renamed.write_bytes(good)
    _ok(cli, "fit", "--model", "ridge", "--data", renamed, "--target", "y", "--ignore", "label,noisy,color",
        "--out", tmp_path / "m.json", "--quiet")
    # A list column is named with its type.
    t = pa.table({"y": [1.0, 2.0], "tags": pa.array([[1], [2, 3]], pa.list_(pa.int64()))})
    pq.write_table(t, tmp_path / "list.parquet")
    _expect_refused(cli, tmp_path, tmp_path / "list.parquet", "column 'tags'", "list<")
    # A directory named .parquet.
    (tmp_path / "dir.parquet").mkdir()
    _expect_refused(cli, tmp_path, tmp_path / "dir.parquet", "is a directory")
