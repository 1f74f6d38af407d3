"""bitlearn.nn: the MLP, CNN and LSTM of `bitlearn train` built and trained from Python. The same
settings give the same checkpoint bytes (SHA-256) and the same per-step losses as the program; a
checkpoint moves between the two (load, resume); bad input raises a clear exception."""
import hashlib
import os
import re
import subprocess

import numpy as np
import pytest

import bitlearn as bl
import bitlearn.nn as bnn

FASHION = "/usr/share/datasets/fashion-mnist"
SUBSET = 256


@pytest.fixture(scope="module")
def fashion():
    if not os.path.exists(os.path.join(FASHION, "train-images-idx3-ubyte.gz")):
        pytest.skip(f"Fashion-MNIST is not installed ({FASHION})")
    return bnn.load_fashion_mnist(FASHION)


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def run_cli(cli, *args):
    r = subprocess.run([cli, "train", *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


def printed_losses(stdout):
    """The command's "step N  loss X" lines as {N: "X"}."""
    return {int(m.group(1)): m.group(2) for m in re.finditer(r"^step\s+(\d+)\s+loss (\S+)$", stdout, re.M)}


def window_means(losses, steps, every=0):
    """What the command prints from per-step losses: every 100 steps and at the last, the mean
    (binary64, in step order) of the steps since the previous point, with 4 decimals. Points: the
    printed steps, and on your data also every `every` steps (the loss curve's points)."""
    out, window, n = {}, 0.0, 0
    for step, loss in enumerate(losses):
        window += float(loss)
        n += 1
        done = step + 1
        printed = done % 100 == 0 or done == steps
        if printed:
            out[done] = "%.4f" % (window / n)
        if printed or (every and done % every == 0):
            window, n = 0.0, 0
    return out


# (class, --model, constructor settings, fit settings, extra command options)
CASES = [
    (bnn.MLP, "mlp", {"width": 16}, {"steps": 130}, ["--width", 16]),
    (bnn.MLP, "mlp", {"width": 32, "depth": 3}, {"steps": 20, "optimizer": "sgd", "lr": 0.1, "batch_size": 32},
     ["--width", 32, "--depth", 3, "--optimizer", "sgd", "--lr", 0.1, "--batch", 32]),
    (bnn.MLP, "mlp", {"width": 8}, {"steps": 20, "optimizer": "momentum"}, ["--width", 8, "--optimizer", "momentum"]),
    (bnn.MLP, "mlp", {"width": 8}, {"steps": 20, "optimizer": "adam", "lr": 2e-3},
     ["--width", 8, "--optimizer", "adam", "--lr", 2e-3]),
    (bnn.CNN, "cnn", {"width": 4}, {"steps": 6}, ["--width", 4]),
    (bnn.CNN, "cnn", {"width": 4}, {"steps": 4, "optimizer": "adamw"}, ["--width", 4, "--optimizer", "adamw"]),
    (bnn.LSTM, "lstm", {"width": 8}, {"steps": 12}, ["--width", 8]),
    (bnn.LSTM, "lstm", {"width": 8}, {"steps": 8, "optimizer": "momentum", "batch_size": 16},
     ["--width", 8, "--optimizer", "momentum", "--batch", 16]),
]


@pytest.mark.parametrize("cls,name,ctor,fit,flags", CASES,
                         ids=[f"{c[1]}-{c[3].get('optimizer', 'default')}" for c in CASES])
def test_checkpoint_and_losses_equal_the_program(cli, tmp_path, fashion, cls, name, ctor, fit, flags):
    X, y, _, _ = fashion
    seed = 5
    py = tmp_path / "py.safetensors"
    seen = []
    net = cls(seed=seed, **ctor).fit(X[:SUBSET], y[:SUBSET], checkpoint=py,
                                     callback=lambda step, loss: seen.append((step, loss)), **fit)
    prog = tmp_path / "cli.safetensors"
    out = run_cli(cli, "--model", name, "--seed", seed, "--steps", fit["steps"], "--train-subset", SUBSET,
                  "--checkpoint", prog, "--threads", 1, "--no-eval", *flags)
    assert sha256(py) == sha256(prog)
    # save() right after fit writes the same bytes as the run's final checkpoint
    again = tmp_path / "saved.safetensors"
    net.save(again)
    assert sha256(again) == sha256(prog)
    # the per-step losses: one per step, the callback's, and the lines the program printed from them
    steps = fit["steps"]
    assert net.loss_history_.dtype == np.float32 and net.loss_history_.shape == (steps,)
    assert [s for s, _ in seen] == list(range(steps))
    assert np.array_equal(np.array([l for _, l in seen], dtype=np.float32).view(np.uint32),
                          net.loss_history_.view(np.uint32))
    assert window_means(net.loss_history_, steps) == printed_losses(out)


def test_losses_bitwise_equal_across_thread_counts(fashion):
    X, y, _, _ = fashion
    saved = bl.num_threads()
    runs = []
    try:
        for threads in (1, 2, 3):
            bl.set_num_threads(threads)
            m = bnn.CNN(width=4, seed=2).fit(X[:128], y[:128], steps=5)
            runs.append((m.loss_history_.view(np.uint32).copy(), m.predict_proba(X[:64]).view(np.uint32).copy()))
    finally:
        bl.set_num_threads(saved)
    for losses, proba in runs[1:]:
        assert np.array_equal(losses, runs[0][0])
        assert np.array_equal(proba, runs[0][1])


def test_python_checkpoint_resumes_in_the_program(cli, tmp_path, fashion):
    """A Python run stopped after step 7 (by its callback) and resumed by `bitlearn train --resume`
    ends with the bytes of one uninterrupted Python run."""
    X, y, _, _ = fashion
    whole = tmp_path / "whole.safetensors"
    bnn.MLP(width=16, seed=9).fit(X[:SUBSET], y[:SUBSET], steps=15, checkpoint=whole)
    part = tmp_path / "part.safetensors"

    def stop(step, loss):
        if step == 7:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        bnn.MLP(width=16, seed=9).fit(X[:SUBSET], y[:SUBSET], steps=15, checkpoint=part, checkpoint_every=1,
                                      callback=stop)
    assert sha256(part) != sha256(whole)
    out = run_cli(cli, "--model", "mlp", "--width", 16, "--seed", 9, "--steps", 15, "--train-subset", SUBSET,
                  "--checkpoint", part, "--resume", "--no-eval")
    assert "resumed from" in out and "after step 7" in out
    assert sha256(part) == sha256(whole)
    # and back: Python resumes a program's checkpoint
    prog = tmp_path / "prog.safetensors"
    run_cli(cli, "--model", "mlp", "--width", 16, "--seed", 9, "--steps", 15, "--train-subset", SUBSET,
            "--checkpoint", prog, "--checkpoint-every", 4, "--no-eval")
    m = bnn.MLP(width=16, seed=9).fit(X[:SUBSET], y[:SUBSET], steps=20, checkpoint=prog, resume=True)
    assert m.first_step_ == 15 and m.loss_history_.shape == (5,)


def test_load_program_checkpoint_predicts_and_scores_as_the_program(cli, tmp_path, fashion):
    X, y, Xt, yt = fashion
    prog = tmp_path / "cli.safetensors"
    out = run_cli(cli, "--model", "mlp", "--width", 16, "--seed", 4, "--steps", 30, "--train-subset", SUBSET,
                  "--checkpoint", prog)
    loaded = bnn.load(prog)
    assert isinstance(loaded, bnn.MLP) and loaded.hidden == [16, 8] and loaded.optimizer == "adamw"
    accuracy = float(re.search(r"test accuracy: (\S+)", out).group(1))
    assert "%.4f" % loaded.score(Xt, yt) == "%.4f" % accuracy
    trained = bnn.MLP(width=16, seed=4).fit(X[:SUBSET], y[:SUBSET], steps=30)
    assert np.array_equal(trained.decision_function(Xt[:200]).view(np.uint32),
                          loaded.decision_function(Xt[:200]).view(np.uint32))
    assert np.array_equal(trained.predict(Xt[:200]), loaded.predict(Xt[:200]))
    # save of a loaded checkpoint rewrites its bytes
    copy = tmp_path / "copy.safetensors"
    loaded.save(copy)
    assert sha256(copy) == sha256(prog)


@pytest.mark.parametrize("cls,kw", [(bnn.CNN, {"width": 4}), (bnn.LSTM, {"width": 8})])
def test_load_infers_cnn_and_lstm(tmp_path, fashion, cls, kw):
    X, y, Xt, _ = fashion
    path = tmp_path / "m.safetensors"
    m = cls(seed=1, **kw).fit(X[:128], y[:128], steps=3, checkpoint=path)
    back = cls.load(path)
    assert type(back) is cls and back.width == kw["width"]
    assert np.array_equal(m.predict_proba(Xt[:50]).view(np.uint32), back.predict_proba(Xt[:50]).view(np.uint32))
    with pytest.raises(ValueError, match="holds a"):
        (bnn.MLP if cls is not bnn.MLP else bnn.CNN).load(path)


def test_predictions_shapes_labels_and_epochs():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 6)).astype(np.float32)
    y = np.where(X[:, 0] + X[:, 1] > 0, "yes", "no")
    m = bnn.MLP(width=16, depth=1, seed=3, lr=1e-2).fit(X, y, epochs=10, batch_size=30)
    assert m.loss_history_.shape == (40,)  # 10 passes of 120 // 30 steps
    assert list(m.classes_) == ["no", "yes"]
    p = m.predict_proba(X)
    assert p.shape == (120, 2) and p.dtype == np.float32
    assert np.allclose(p.sum(axis=1), 1, atol=1e-5)
    assert set(m.predict(X)) <= {"no", "yes"}
    assert m.score(X, y) > 0.8
    assert m.n_parameters_ == 6 * 16 + 16 + 16 * 2 + 2
    assert set(m.state_dict()) == {"param.0.weight", "param.0.bias", "param.2.weight", "param.2.bias"}
    assert m.get_params()["width"] == 16 and "MLP(" in repr(m)
    # float64 input is rounded to float32 once: the same run as float32 input
    m64 = bnn.MLP(width=16, depth=1, seed=3, lr=1e-2).fit(X.astype(np.float64), y, epochs=10, batch_size=30)
    assert np.array_equal(m64.loss_history_.view(np.uint32), m.loss_history_.view(np.uint32))
    # batch larger than the data is clamped to the rows
    small = bnn.MLP(width=4, seed=1).fit(X[:10], y[:10], steps=2)
    assert small.loss_history_.shape == (2,)


def test_sequences_for_the_lstm():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(64, 5, 3)).astype(np.float32)
    y = (X[:, -1, 0] > 0).astype(np.int64)
    m = bnn.LSTM(width=6, seed=2).fit(X, y, steps=10, batch_size=16)
    assert m.predict(X).shape == (64,)
    with pytest.raises(ValueError, match="input shape"):
        m.predict(X[:, :4, :])


def test_loaders(fashion, tmp_path):
    X, y, Xt, yt = fashion
    assert X.shape == (60000, 28, 28) and X.dtype == np.float32 and y.dtype == np.int64
    assert Xt.shape == (10000, 28, 28) and float(X.max()) == 1.0 and float(X.min()) == 0.0
    Xi, yi = bnn.load_idx(os.path.join(FASHION, "t10k-images-idx3-ubyte.gz"),
                          os.path.join(FASHION, "t10k-labels-idx1-ubyte.gz"))
    assert np.array_equal(Xi, Xt) and np.array_equal(yi, yt)
    for k, name in enumerate(["cat", "dog"]):
        (tmp_path / name).mkdir()
        for i in range(3):
            pixels = bytes((17 * (i + k) + j) % 256 for j in range(8 * 8))
            (tmp_path / name / f"{i}.pgm").write_bytes(b"P5\n8 8\n255\n" + pixels)
    Xf, yf, classes = bnn.load_image_folder(tmp_path)
    assert Xf.shape == (6, 8, 8) and classes == ["cat", "dog"] and list(yf) == [0, 0, 0, 1, 1, 1]
    m = bnn.CNN(width=2, seed=1).fit(Xf, yf, steps=2)
    assert m.predict(Xf).shape == (6,)


def test_bad_input_raises_clear_errors(tmp_path):
    X = np.zeros((20, 4), dtype=np.float32)
    y = np.arange(20) % 2
    with pytest.raises(TypeError, match="numbers"):
        bnn.MLP().fit(np.array([["a"] * 4] * 20), y, steps=1)
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        bnn.MLP().fit(np.zeros(20, dtype=np.float32), y, steps=1)
    with pytest.raises(ValueError, match="20 rows but y has 19"):
        bnn.MLP().fit(X, y[:19], steps=1)
    with pytest.raises(ValueError, match="NaN"):
        bnn.MLP().fit(X, np.where(y == 0, np.nan, 1.0), steps=1)
    bad = X.copy()
    bad[3, 1] = np.inf
    with pytest.raises(ValueError, match="NaN or infinite"):
        bnn.MLP().fit(bad, y, steps=1)
    with pytest.raises(ValueError, match="optimizer must be one of"):
        bnn.MLP(optimizer="lbfgs").fit(X, y, steps=1)
    with pytest.raises(ValueError, match="lr must be"):
        bnn.MLP().fit(X, y, steps=1, lr=-1)
    with pytest.raises(ValueError, match="steps must be"):
        bnn.MLP().fit(X, y, steps=0)
    with pytest.raises(ValueError, match="at least 2 classes"):
        bnn.MLP().fit(X, np.zeros(20), steps=1)
    with pytest.raises(ValueError, match="one label per row"):
        bnn.MLP().fit(X, np.zeros((20, 2)), steps=1)
    with pytest.raises(ValueError, match="not a square image"):
        bnn.CNN().fit(X[:, :3], y, steps=1)
    with pytest.raises(ValueError, match="multiple of 4"):
        bnn.CNN().fit(np.zeros((20, 6, 6), dtype=np.float32), y, steps=1)
    with pytest.raises(ValueError):  # bitlearn.Error: the device name
        bnn.MLP(device="tpu").fit(X, y, steps=1)
    with pytest.raises(RuntimeError, match="not fitted"):
        bnn.MLP().predict(X)
    with pytest.raises(ValueError, match="no parameter"):
        bnn.MLP().set_params(widht=3)
    m = bnn.MLP(width=4).fit(X, y, steps=1)
    with pytest.raises(ValueError, match="input shape"):
        m.predict(np.zeros((2, 5), dtype=np.float32))
    with pytest.raises(ValueError, match="resume=True needs"):
        bnn.MLP().fit(X, y, steps=1, resume=True)
    junk = tmp_path / "junk.safetensors"
    junk.write_bytes(b"not a checkpoint at all")
    with pytest.raises(ValueError, match="not a safetensors"):
        bnn.load(junk)
    with pytest.raises(ValueError, match="callback"):
        bnn.MLP(width=4).fit(X, y, steps=3, callback=lambda s, l: (_ for _ in ()).throw(ValueError("callback")))


def test_program_checkpoint_of_idx_files_loads(cli, tmp_path):
    """`bitlearn train --data IMAGES --labels LABELS` (the user-data route) writes a checkpoint of the
    same networks: it loads, predicts 10 classes and scores like the program's validation report."""
    images = os.path.join(FASHION, "t10k-images-idx3-ubyte.gz")
    labels = os.path.join(FASHION, "t10k-labels-idx1-ubyte.gz")
    if not os.path.exists(images):
        pytest.skip("Fashion-MNIST is not installed")
    path = tmp_path / "idx.safetensors"
    run_cli(cli, "--model", "mlp", "--width", 16, "--steps", 40, "--data", images, "--labels", labels,
            "--checkpoint", path)
    net = bnn.load(path)
    X, y = bnn.load_idx(images, labels)
    assert isinstance(net, bnn.MLP) and list(net.classes_) == list(range(10))
    assert net.predict_proba(X[:3]).shape == (3, 10)
    assert net.score(X, y) > 0.3
    # a CSV run's checkpoint (standardized columns, class names) is refused by name
    csv = tmp_path / "t.csv"
    rng = np.random.default_rng(0)
    csv.write_text("a,b,t\n" + "".join(f"{u:.3f},{v:.3f},{'xy'[int(u > v)]}\n" for u, v in rng.random((40, 2))))
    run_cli(cli, "--model", "mlp", "--steps", 3, "--data", csv, "--target", "t", "--checkpoint", tmp_path / "c.st")
    with pytest.raises(ValueError, match="FILE.csv"):
        bnn.load(tmp_path / "c.st")


def image_folder(root, n_per_class=12, side=8, seed=0):
    rng = np.random.default_rng(seed)
    for k, name in enumerate(["ankle", "bag", "coat"]):
        (root / name).mkdir(parents=True)
        for i in range(n_per_class):
            base = np.zeros((side, side), dtype=np.int64)
            base[:, k * side // 3:(k + 1) * side // 3] = 200
            pixels = np.clip(base + rng.integers(0, 56, size=(side, side)), 0, 255).astype(np.uint8)
            (root / name / f"{i:02d}.pgm").write_bytes(b"P5\n%d %d\n255\n" % (side, side) + pixels.tobytes())
    return root


FILE_CASES = [
    ("mlp", bnn.MLP, {"width": 16}, {"steps": 30}, ["--width", 16, "--steps", 30], "idx"),
    ("mlp", bnn.MLP, {"width": 8, "depth": 1}, {"epochs": 2, "batch_size": 200, "optimizer": "adam"},
     ["--width", 8, "--depth", 1, "--epochs", 2, "--batch", 200, "--optimizer", "adam"], "idx"),
    ("cnn", bnn.CNN, {"width": 4}, {"steps": 12}, ["--width", 4, "--steps", 12], "folder"),
    ("cnn", bnn.CNN, {"width": 4}, {"steps": 10, "lr": 0.02}, ["--width", 4, "--steps", 10, "--lr", 0.02], "test"),
    ("mlp", bnn.MLP, {"width": 8}, {"steps": 25, "val_fraction": 0.3, "checkpoint_every": 10},
     ["--width", 8, "--steps", 25, "--val-fraction", 0.3, "--checkpoint-every", 10], "folder"),
]


@pytest.mark.parametrize("name,cls,ctor,fit,flags,source", FILE_CASES,
                         ids=[f"{c[0]}-{c[5]}-{i}" for i, c in enumerate(FILE_CASES)])
def test_fit_files_equals_the_program_on_your_data(cli, tmp_path, name, cls, ctor, fit, flags, source):
    """`bitlearn train --data IMAGES --labels LABELS` / `--data FOLDER [--test FOLDER]`: the same split,
    schedule and data description, so the same checkpoint bytes and held-out accuracy."""
    if source == "idx":
        images = os.path.join(FASHION, "t10k-images-idx3-ubyte.gz")
        labels = os.path.join(FASHION, "t10k-labels-idx1-ubyte.gz")
        if not os.path.exists(images):
            pytest.skip("Fashion-MNIST is not installed")
        data, where = [images], {"labels": labels}
        flags = flags + ["--data", images, "--labels", labels]
    else:
        folder = image_folder(tmp_path / "train")
        data, where = [folder], {}
        flags = flags + ["--data", folder]
        if source == "test":
            held = image_folder(tmp_path / "held", n_per_class=4, seed=1)
            where["test"] = held
            flags = flags + ["--test", held]
    py, prog = tmp_path / "py.safetensors", tmp_path / "cli.safetensors"
    net = cls(seed=3, **ctor).fit_files(*data, checkpoint=py, **where, **fit)
    out = run_cli(cli, "--model", name, "--seed", 3, "--checkpoint", prog, *flags)
    assert sha256(py) == sha256(prog)
    part = "test" if source == "test" else "validation"
    printed = re.search(part + r" accuracy: (\S+)", out).group(1)
    assert "%.4f" % net.validation_score_ == printed
    lines = {int(m.group(1)): m.group(2) for m in re.finditer(r"^step\s+(\d+)\s+loss (\S+)\s", out, re.M)}
    steps = len(net.loss_history_)
    assert window_means(net.loss_history_, steps, every=max(1, steps // 50)) == lines
    # the loaded checkpoint keeps its data description: save writes the same bytes again
    again = tmp_path / "again.safetensors"
    bnn.load(prog).save(again)
    assert sha256(again) == sha256(prog)
    if source != "idx":
        assert list(net.classes_) == ["ankle", "bag", "coat"]
        assert list(bnn.load(prog).classes_) == ["ankle", "bag", "coat"]


def write_png(path, rgb):
    """An 8-bit RGB PNG (colour type 2, no interlace) of the uint8 array rgb [height, width, 3]."""
    import struct
    import zlib

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    h, w, _ = rgb.shape
    rows = b"".join(b"\x00" + rgb[r].tobytes() for r in range(h))  # filter 0 (none) on every row
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def colour_folder(root, n_per_class=10, side=8, seed=0):
    """Three classes told apart by their colour (red, green, blue), with noise."""
    rng = np.random.default_rng(seed)
    for k, name in enumerate(["red", "green", "blue"]):
        (root / name).mkdir(parents=True)
        for i in range(n_per_class):
            rgb = rng.integers(0, 80, size=(side, side, 3))
            rgb[:, :, k] += 150
            write_png(root / name / f"{i:02d}.png", rgb.astype(np.uint8))
    return root


def test_fit_files_takes_colour_images_as_the_program(cli, tmp_path):
    """`bitlearn train --model cnn --data FOLDER` on colour PNG images (the first convolution reads
    3 planes): fit_files gives the same checkpoint bytes and validation accuracy; the program's
    checkpoint loads as a colour CNN that predicts as the Python network does."""
    folder = colour_folder(tmp_path / "train")
    try:
        X, y, names = bnn.load_image_folder(folder)
    except ValueError as e:
        if "no PNG support" in str(e):
            pytest.skip("this build reads no PNG images")
        raise
    assert X.shape == (30, 8, 8, 3) and names == ["blue", "green", "red"]
    py, prog = tmp_path / "py.safetensors", tmp_path / "cli.safetensors"
    net = bnn.CNN(width=4, seed=5).fit_files(folder, checkpoint=py, steps=12)
    out = run_cli(cli, "--model", "cnn", "--width", 4, "--steps", 12, "--seed", 5, "--data", folder,
                  "--checkpoint", prog)
    assert "8x8x3" in out
    assert sha256(py) == sha256(prog)
    assert "%.4f" % net.validation_score_ == re.search(r"validation accuracy: (\S+)", out).group(1)
    assert net.input_geometry_ == (8, 8, 3) and net.n_features_in_ == 192
    loaded = bnn.load(prog)
    assert isinstance(loaded, bnn.CNN) and loaded.input_geometry_ == (8, 8, 3)
    assert list(loaded.classes_) == ["blue", "green", "red"]
    assert np.array_equal(loaded.decision_function(X), net.decision_function(X))
    assert np.array_equal(loaded.predict(X.reshape(30, -1)), net.predict(X))
    again = tmp_path / "again.safetensors"
    loaded.save(again)
    assert sha256(again) == sha256(prog)
    # arrays of colour images train too; a grey image is refused by the colour network
    m = bnn.CNN(width=2, seed=1).fit(X, y, steps=3)
    assert m.predict(X).shape == (30,) and m.input_geometry_ == (8, 8, 3)
    with pytest.raises(ValueError, match="input shape"):
        m.predict(X[:, :, :, 0])
