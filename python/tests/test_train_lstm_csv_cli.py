"""`bitlearn train --model lstm --data seq.csv --time-steps T`: each CSV row is T time steps of
F = n_features / T features, step-major. The LSTM learns a sequence task (which of two frequencies
a noisy, randomly phased signal has) to above 95% held-out accuracy, its checkpoint has the same bytes at
1, 2 and 3 threads and after --stop-at + --resume, `bitlearn predict` reads it (class names, proba
columns by class), bad layouts and missing values are refused with clear messages, and its accuracy
is within a loose bound of PyTorch's nn.LSTM trained the same way (when torch is installed)."""
import hashlib
import subprocess

import numpy as np
import pytest

T, F = 24, 2


def _sequences(n, seed):
    """Class 'slow' / 'fast': the frequency of feature 0 (random phase, noise); feature 1 is noise."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    t = np.arange(T)
    freq = np.where(y == 0, 0.15, 0.45)[:, None]
    phase = rng.uniform(0, 2 * np.pi, (n, 1))
    x0 = np.sin(2 * np.pi * freq * t / 2 + phase) + rng.normal(scale=0.3, size=(n, T))
    x1 = rng.normal(size=(n, T))
    X = np.stack([x0, x1], axis=2).round(4)  # [n, T, F]
    return X, np.array(["slow", "fast"])[y]


def _write(path, X, labels, nan_at=None):
    n = X.shape[0]
    flat = X.reshape(n, T * F)  # step-major: step t = columns t*F .. t*F+F-1
    cols = [f"t{t}_f{f}" for t in range(T) for f in range(F)]
    with open(path, "w") as out:
        out.write(",".join(cols + ["label"]) + "\n")
        for i in range(n):
            cells = [repr(float(v)) for v in flat[i]]
            if nan_at is not None and i == nan_at[0]:
                cells[nan_at[1]] = ""
            out.write(",".join(cells + [labels[i]]) + "\n")


def _train(cli, *args, ok=True):
    r = subprocess.run([cli, "train", *map(str, args)], capture_output=True, text=True)
    if ok:
        assert r.returncode == 0, r.stdout + r.stderr
    return r


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("seq")
    X, y = _sequences(1200, 1)
    Xt, yt = _sequences(400, 2)
    _write(d / "train.csv", X, y)
    _write(d / "test.csv", Xt, yt)
    return d, (X, y, Xt, yt)


BASE = ["--model", "lstm", "--target", "label", "--width", 24]
COMMON = BASE + ["--time-steps", T]


def test_learns_a_sequence_task_and_predicts(cli, data):
    d, (X, y, Xt, yt) = data
    ck = d / "lstm.safetensors"
    out = _train(cli, *COMMON, "--data", d / "train.csv", "--steps", 400, "--checkpoint", ck).stdout
    assert "model lstm" in out and "48 features" in out
    acc = float(out.split("validation accuracy: ")[1].split()[0])
    assert acc >= 0.95, out
    r = subprocess.run([cli, "predict", "--model", ck, "--data", d / "test.csv", "--out", d / "p.csv"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = (d / "p.csv").read_text().splitlines()
    assert lines[0] == "label"
    pred = np.array(lines[1:])
    assert pred.shape == yt.shape
    test_acc = float(np.mean(pred == yt))
    assert test_acc >= 0.95
    r = subprocess.run([cli, "predict", "--model", ck, "--data", d / "test.csv", "--out", d / "pp.csv",
                        "--output", "proba"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rows = (d / "pp.csv").read_text().splitlines()
    assert rows[0] == "proba_fast,proba_slow"  # classes ascending by name
    P = np.array([[float(v) for v in row.split(",")] for row in rows[1:]])
    assert np.allclose(P.sum(axis=1), 1.0, atol=1e-5)
    assert np.array_equal(np.array(["fast", "slow"])[P.argmax(axis=1)], pred)
    test_lstm_accuracy_against_pytorch.bitlearn_accuracy = test_acc


def test_checkpoint_bytes_at_1_2_3_threads_and_on_resume(cli, data):
    d, _ = data
    run = [*COMMON, "--data", d / "train.csv", "--steps", 60]
    hashes = []
    for t in (1, 2, 3):
        _train(cli, *run, "--threads", t, "--checkpoint", d / f"t{t}.safetensors")
        hashes.append(_sha(d / f"t{t}.safetensors"))
    assert hashes[0] == hashes[1] == hashes[2]
    r = d / "r.safetensors"
    out = _train(cli, *run, "--threads", 2, "--checkpoint", r, "--stop-at", 25).stdout
    assert "stopped after step 25" in out
    out = _train(cli, *run, "--threads", 3, "--checkpoint", r, "--resume").stdout
    assert "resumed from" in out and "after step 25" in out
    assert _sha(r) == hashes[0]


def test_bad_input_is_refused_clearly(cli, data, tmp_path):
    d, (X, y, _, _) = data
    r = _train(cli, *BASE, "--data", d / "train.csv", "--time-steps", 5, "--steps", 2, ok=False)
    assert r.returncode == 2 and "--time-steps 5 does not divide the 48 feature columns" in r.stderr
    r = _train(cli, "--model", "lstm", "--data", d / "train.csv", "--target", "label", "--steps", 2, ok=False)
    assert r.returncode == 2 and "--model lstm on a CSV file needs --time-steps T" in r.stderr
    assert "step-major" in r.stderr
    r = _train(cli, "--model", "mlp", "--data", d / "train.csv", "--target", "label", "--time-steps", 4,
               "--steps", 2, ok=False)
    assert r.returncode == 2 and "--time-steps goes with --model lstm on a CSV file" in r.stderr
    r = _train(cli, "--model", "lstm", "--time-steps", 4, "--steps", 2, ok=False)  # Fashion-MNIST
    assert r.returncode == 2 and "--time-steps" in r.stderr
    r = _train(cli, *BASE, "--data", d / "train.csv", "--time-steps", 0, "--steps", 2, ok=False)
    assert r.returncode == 2 and "--time-steps must be >= 1, got 0" in r.stderr
    _write(tmp_path / "nan.csv", X[:50], y[:50], nan_at=(7, 13))
    r = _train(cli, *COMMON, "--data", tmp_path / "nan.csv", "--steps", 2, ok=False)
    assert r.returncode == 2
    assert "feature column 't6_f1' is missing on data row 8" in r.stderr


def test_lstm_accuracy_against_pytorch(data):
    torch = pytest.importorskip("torch")
    _, (X, y, Xt, yt) = data
    torch.manual_seed(0)
    classes = np.array(["fast", "slow"])
    yi = np.searchsorted(classes, y)
    mean, sd = X.reshape(len(X), -1).mean(0), X.reshape(len(X), -1).std(0)
    norm = lambda A: torch.tensor(((A.reshape(len(A), -1) - mean) / sd).reshape(len(A), T, F), dtype=torch.float32)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(F, 24, batch_first=True)
            self.head = torch.nn.Linear(24, 2)

        def forward(self, x):
            return self.head(self.lstm(x)[0][:, -1])

    net = Net()
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    Xtr, ytr = norm(X), torch.tensor(yi)
    g = np.random.default_rng(0)
    for _ in range(400):
        b = g.integers(0, len(X), 64)
        loss = torch.nn.functional.cross_entropy(net(Xtr[b]), ytr[b])
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()
    with torch.no_grad():
        torch_acc = float((net(norm(Xt)).argmax(1).numpy() == np.searchsorted(classes, yt)).mean())
    ours = getattr(test_lstm_accuracy_against_pytorch, "bitlearn_accuracy", None)
    if ours is None:
        pytest.skip("run with test_learns_a_sequence_task_and_predicts")
    assert ours >= torch_acc - 0.05, (ours, torch_acc)
