"""`bitlearn predict` progress bar: a long prediction of an estimator that reports while predicting
(kernel ridge, kernel SVM, Gaussian process, kernel PCA, isolation forest, bagging) draws the bar on
a terminal; with --quiet, or with stderr piped, nothing is drawn; and the predictions are the same
bytes whether the bar was drawn or not."""
import os
import pty
import subprocess

import numpy as np
import pytest


def _write(path, X, y=None):
    cols = [f"x{j}" for j in range(X.shape[1])]
    with open(path, "w") as f:
        f.write(",".join(cols + (["y"] if y is not None else [])) + "\n")
        for i in range(X.shape[0]):
            row = [repr(float(v)) for v in X[i]]
            if y is not None:
                row.append(repr(float(y[i])))
            f.write(",".join(row) + "\n")


def _on_terminal(args):
    """Runs args with stderr on a pseudo-terminal; returns (exit code, what the terminal received)."""
    master, slave = pty.openpty()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    got = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the slave side closed (the program ended)
            break
        if not chunk:
            break
        got += chunk
    os.close(master)
    return p.wait(), got.decode("utf-8", "replace")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("progress")
    rng = np.random.default_rng(0)
    Xtr = rng.normal(size=(3000, 8)).round(4)
    ytr = (np.sin(Xtr[:, 0]) + Xtr[:, 1] * Xtr[:, 2] > 0).astype(float)
    Xte = rng.normal(size=(100000, 8)).round(4)
    _write(d / "train.csv", Xtr, ytr)
    _write(d / "test.csv", Xte)
    return d


# (model, fit params, predict output); each takes well over 0.5 s on 10^5 rows on two cores.
CASES = [
    ("kernel_ridge", ["kernel=rbf", "alpha=0.1"], "predict"),
    ("svc", ["kernel=rbf", "C=1"], "decision"),
]


@pytest.mark.parametrize("model,params,output", CASES)
def test_long_predict_draws_a_bar_on_a_terminal_only(cli, data, model, params, output):
    m = data / f"{model}.json"
    fit = [cli, "fit", "--model", model, "--data", data / "train.csv", "--target", "y", "--out", m, "--quiet"]
    for p in params:
        fit += ["--param", p]
    r = subprocess.run(list(map(str, fit)), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    base = [cli, "predict", "--model", m, "--data", data / "test.csv", "--output", output]

    rc, tty = _on_terminal(list(map(str, base + ["--out", data / "tty.csv"])))
    assert rc == 0, tty
    assert "\r[" in tty and "%" in tty, f"no progress bar drawn on a terminal: {tty!r}"
    assert "100%" in tty or "#" in tty

    rc, quiet = _on_terminal(list(map(str, base + ["--out", data / "quiet.csv", "--quiet"])))
    assert rc == 0, quiet
    assert quiet == "", f"--quiet drew something: {quiet!r}"

    r = subprocess.run(list(map(str, base + ["--out", data / "pipe.csv"])), capture_output=True)
    assert r.returncode == 0, r.stderr
    assert r.stderr == b"", f"a piped stderr received {r.stderr!r}"

    tty_bytes = (data / "tty.csv").read_bytes()
    assert tty_bytes == (data / "quiet.csv").read_bytes() == (data / "pipe.csv").read_bytes()
    assert len(tty_bytes.splitlines()) == 100001
