#!/usr/bin/env python3
"""Training-step time of bitlearn's MLP, CNN and LSTM classifiers against the same models in PyTorch.

Both sides train the same architecture (bitlearn/nn/zoo.h) with the same batch size and optimizer on
Fashion-MNIST images; the time of one step (forward, backward, update) is the mean over the timed
steps after warm-up. On CUDA, PyTorch runs in fp32 with TF32 off. Prints one line per model with
both times and the ratio torch_time / bitlearn_time (>= 1 means bitlearn is faster).

With --repeat R every model is timed R times, each round running every bitlearn binary and then
PyTorch (interleaved, so a shared machine's load hits all sides alike); the medians are printed
with the raw times and the load average. --bitlearn takes a comma-separated list of binaries (for
example a build before and after a change); each gets its own ratio.

usage: bench/nn_vs_torch.py [--bitlearn build/bitlearn[,other/bitlearn]] [--device cpu|cuda]
                            [--threads N] [--steps N] [--repeat R] [--models mlp,cnn,lstm]
"""
import argparse
import gzip
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn as tnn

DATA = "/usr/share/datasets/fashion-mnist"


def load_images(data, n):
    with gzip.open(os.path.join(data, "train-images-idx3-ubyte.gz")) as f:
        x = np.frombuffer(f.read(), np.uint8, offset=16)[: n * 784].reshape(n, 784)
    with gzip.open(os.path.join(data, "train-labels-idx1-ubyte.gz")) as f:
        y = np.frombuffer(f.read(), np.uint8, offset=8)[:n]
    return torch.tensor(x, dtype=torch.float32) / 255.0, torch.tensor(y, dtype=torch.int64)


class Residual(tnn.Module):
    def __init__(self, c):
        super().__init__()
        self.c1 = tnn.Conv2d(c, c, 3, padding=1, bias=False)
        self.b1 = tnn.BatchNorm2d(c)
        self.c2 = tnn.Conv2d(c, c, 3, padding=1, bias=False)
        self.b2 = tnn.BatchNorm2d(c)

    def forward(self, x):
        h = torch.relu(self.b1(self.c1(x)))
        return torch.relu(x + self.b2(self.c2(h)))


class Nhwc(tnn.Module):
    """Flattens in bitlearn's channels-last order, so both Linear heads see the same layout."""

    def forward(self, x):
        return x.permute(0, 2, 3, 1)


class LstmClassifier(tnn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.lstm = tnn.LSTM(28, hidden, batch_first=True)
        self.head = tnn.Linear(hidden, 10)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


def torch_model(name, width):
    if name == "mlp":
        w = width or 256
        m = tnn.Sequential(tnn.Linear(784, w), tnn.ReLU(), tnn.Linear(w, w // 2), tnn.ReLU(), tnn.Linear(w // 2, 10))
        return m, (lambda p: torch.optim.AdamW(p, 1e-3, weight_decay=1e-4)), 128, (-1, 784)
    if name == "cnn":
        c = width or 16
        m = tnn.Sequential(tnn.Conv2d(1, c, 3, padding=1, bias=False), tnn.BatchNorm2d(c), tnn.ReLU(), tnn.MaxPool2d(2),
                           Residual(c), tnn.Conv2d(c, 2 * c, 3, padding=1, bias=False), tnn.BatchNorm2d(2 * c),
                           tnn.ReLU(), tnn.MaxPool2d(2), Nhwc(), tnn.Flatten(), tnn.Linear(7 * 7 * 2 * c, 10))
        opt = lambda p: torch.optim.SGD(p, 0.05, momentum=0.9, nesterov=True, weight_decay=5e-4)
        return m, opt, 64, (-1, 1, 28, 28)
    m = LstmClassifier(width or 64)
    return m, (lambda p: torch.optim.Adam(p, 3e-3)), 64, (-1, 28, 28)


def time_torch(name, device, steps, width, x, y):
    torch.manual_seed(0)
    model, make_opt, batch, shape = torch_model(name, width)
    model = model.to(device)
    opt = make_opt(model.parameters())
    x, y = x.to(device), y.to(device)
    g = torch.Generator().manual_seed(1)
    loss_fn = tnn.CrossEntropyLoss()

    def step(i):
        idx = torch.randint(0, x.shape[0], (batch,), generator=g).to(device)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x[idx].reshape(shape)), y[idx])
        loss.backward()
        if name != "mlp":
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0 if name == "cnn" else 1.0)
        opt.step()
        return loss

    for i in range(3):
        step(i)
    if device == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for i in range(steps):
        step(i)
    if device == "cuda":
        torch.cuda.synchronize()
    return (time.perf_counter() - t0) / steps * 1e3


def time_bitlearn(exe, name, device, steps, threads, width, data):
    cmd = [exe, "train", "--model", name, "--device", device, "--steps", str(steps + 1), "--no-eval",
           "--train-subset", "4096", "--data", data]
    if threads:
        cmd += ["--threads", str(threads)]
    if width:
        cmd += ["--width", str(width)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    m = re.search(r"time per step: ([0-9.]+) ms", out)
    if not m:
        sys.exit("bitlearn train printed no step time:\n" + out)
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bitlearn", default="build/bitlearn")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--width", type=int, default=0)
    ap.add_argument("--models", default="mlp,cnn,lstm")
    ap.add_argument("--data", default=DATA)
    a = ap.parse_args()
    if a.device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    if a.threads:
        torch.set_num_threads(a.threads)
    x, y = load_images(a.data, 4096)
    exes = a.bitlearn.split(",")
    print(f"device {a.device}, threads {a.threads or torch.get_num_threads()}, torch {torch.__version__}, "
          f"{a.steps} timed steps, {a.repeat} interleaved repeat(s), load average {os.getloadavg()[0]:.1f}")
    for name in a.models.split(","):
        ours = {e: [] for e in exes}
        theirs = []
        for _ in range(a.repeat):
            for e in exes:
                ours[e].append(time_bitlearn(e, name, a.device, a.steps, a.threads, a.width, a.data))
            theirs.append(time_torch(name, a.device, a.steps, a.width, x, y))
        t = statistics.median(theirs)
        raw = lambda v: ", ".join(f"{q:.1f}" for q in v)
        line = f"{name:6} torch {t:9.3f} ms/step"
        if a.repeat > 1:
            line += f" [{raw(theirs)}]"
        for e in exes:
            o = statistics.median(ours[e])
            line += f" | {e}: {o:9.3f} ms/step, ratio torch/bitlearn {t / o:6.3f}"
            if a.repeat > 1:
                line += f" [{raw(ours[e])}]"
        print(line, flush=True)
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
