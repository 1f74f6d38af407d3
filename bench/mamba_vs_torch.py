#!/usr/bin/env python3
"""Prefill and decode tokens/s of bitlearn (bench_llm) and PyTorch on Mamba and Mamba-2, with ratios.

PyTorch runs the two architectures written here in plain torch (no transformers needed), the way
transformers' own torch path computes them: in_proj, causal depthwise conv1d, SiLU, the selective
scan as a loop over tokens (Mamba's slow path; Mamba-2's decode path; transformers' Mamba-2 prefill
uses the chunked SSD algorithm instead), gate, out_proj; decode keeps conv and ssm states. float32,
TF32 off. The fixture logits are checked against reference.safetensors (logits_f64) first.

  python3 bench/mamba_vs_torch.py --bench build/bench/bench_llm [--device cpu|cuda] [--threads N]
                                  [--decode 32] [--repeat 3] [--big [--prompt 128]]

--big also writes random models shaped like mamba-130m and mamba2-130m (hidden 768, 24 layers) to a
temporary folder and times both on them with a prompt of --prompt tokens.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import torch
import torch.nn.functional as F
from safetensors.torch import load_file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "data", "hf")
MODELS = ["mamba", "mamba2"]


class TorchMamba:
    """Mamba / Mamba-2 in plain torch from an HF config dict and state dict (batch 1)."""

    def __init__(self, cfg, sd, device):
        self.v2 = cfg["model_type"] == "mamba2"
        self.sd = {k: v.to(device=device, dtype=torch.float32) for k, v in sd.items()}
        self.C, self.L, self.N, self.K = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["state_size"], cfg["conv_kernel"]
        self.eps = cfg.get("layer_norm_epsilon", 1e-5)
        self.I = int(cfg.get("expand", 2) * self.C) if self.v2 else cfg.get("intermediate_size", 2 * self.C)
        if self.v2:
            self.H, self.P, self.G = cfg["num_heads"], cfg["head_dim"], cfg.get("n_groups", 1)
        else:
            self.R = cfg["time_step_rank"]
        self.A = [-torch.exp(self.sd[f"backbone.layers.{l}.mixer.A_log"]) for l in range(self.L)]
        self.head = self.sd.get("lm_head.weight", self.sd["backbone.embeddings.weight"])
        self.device = device

    def rms(self, x, w):
        return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))

    def conv(self, x, state, w, b):
        """x [T, Cc], state [K-1, Cc] -> out [T, Cc], new state."""
        win = torch.cat((state, x), 0)
        T = x.shape[0]
        out = b + sum(w[:, 0, k] * win[k:k + T] for k in range(self.K))
        return out, win[-(self.K - 1):]

    def forward(self, ids, cache=None):
        sd = self.sd
        h = sd["backbone.embeddings.weight"][ids]
        T = ids.shape[0]
        if cache is not None and not cache:
            cc = self.I + (2 * self.G * self.N if self.v2 else 0)
            for _ in range(self.L):
                st = torch.zeros(self.H, self.P, self.N, device=self.device) if self.v2 else torch.zeros(self.I, self.N, device=self.device)
                cache.append([torch.zeros(self.K - 1, cc, device=self.device), st])
        for l in range(self.L):
            m = f"backbone.layers.{l}.mixer."
            x = self.rms(h, sd[f"backbone.layers.{l}.norm.weight"])
            proj = x @ sd[m + "in_proj.weight"].T
            conv_state, ssm = (cache[l] if cache is not None else
                               [torch.zeros(self.K - 1, (self.I + 2 * self.G * self.N) if self.v2 else self.I, device=self.device),
                                torch.zeros(self.H, self.P, self.N, device=self.device) if self.v2 else torch.zeros(self.I, self.N, device=self.device)])
            I, N = self.I, self.N
            if not self.v2:
                xs, z = proj[:, :I], proj[:, I:]
                xc, conv_state = self.conv(xs, conv_state, sd[m + "conv1d.weight"], sd[m + "conv1d.bias"])
                xc = F.silu(xc)
                s = xc @ sd[m + "x_proj.weight"].T
                dt = F.softplus(s[:, :self.R] @ sd[m + "dt_proj.weight"].T + sd[m + "dt_proj.bias"])
                Bm, Cm = s[:, self.R:self.R + N], s[:, self.R + N:]
                dA = torch.exp(self.A[l][None] * dt[:, :, None])          # [T, I, N]
                dBx = dt[:, :, None] * Bm[:, None, :] * xc[:, :, None]    # [T, I, N]
                ys = []
                for t in range(T):
                    ssm = dA[t] * ssm + dBx[t]
                    ys.append(ssm @ Cm[t])
                y = (torch.stack(ys) + xc * sd[m + "D"]) * F.silu(z)
            else:
                G, H, P = self.G, self.H, self.P
                cc = I + 2 * G * N
                z, xbc, dt = proj[:, :I], proj[:, I:I + cc], proj[:, I + cc:]
                xbc, conv_state = self.conv(xbc, conv_state, sd[m + "conv1d.weight"], sd[m + "conv1d.bias"])
                xbc = F.silu(xbc)
                xs = xbc[:, :I].reshape(T, H, P)
                Bm = xbc[:, I:I + G * N].reshape(T, G, N).repeat_interleave(H // G, 1)
                Cm = xbc[:, I + G * N:].reshape(T, G, N).repeat_interleave(H // G, 1)
                dt = F.softplus(dt + sd[m + "dt_bias"])
                dA = torch.exp(dt * self.A[l])                             # [T, H]
                ys = []
                for t in range(T):
                    ssm = ssm * dA[t][:, None, None] + (dt[t][:, None] * xs[t])[:, :, None] * Bm[t][:, None, :]
                    ys.append((ssm @ Cm[t][:, :, None])[..., 0] + sd[m + "D"][:, None] * xs[t])
                y = torch.stack(ys).reshape(T, I) * F.silu(z)
                y = self.rms(y, sd[m + "norm.weight"])
            if cache is not None:
                cache[l] = [conv_state, ssm]
            h = h + y @ sd[m + "out_proj.weight"].T
        h = self.rms(h, sd["backbone.norm_f.weight"])
        return h @ self.head.T


def ids_for(n, vocab, device):
    return torch.tensor([(i * 7919 + 13) % vocab for i in range(n)], device=device)


def timed(fn, device, min_time=0.5):
    def sync():
        if device == "cuda":
            torch.cuda.synchronize()
    fn(); sync()
    reps, t0 = 0, time.perf_counter()
    while True:
        fn(); sync(); reps += 1
        el = time.perf_counter() - t0
        if el >= min_time or reps >= 50:
            return el / reps


def torch_rates(model, vocab, prompt, decode, device):
    ids = ids_for(prompt + decode, vocab, device)
    with torch.no_grad():
        prefill = timed(lambda: model.forward(ids[:prompt]), device)

        def run_decode():
            cache = []
            model.forward(ids[:prompt], cache)
            t0 = time.perf_counter()
            for t in range(decode):
                model.forward(ids[prompt + t: prompt + t + 1], cache)
            if device == "cuda":
                torch.cuda.synchronize()
            return time.perf_counter() - t0
        run_decode()
        dec = min(run_decode() for _ in range(3))
    return prompt / prefill, decode / dec


def big_model(kind, root):
    """Writes a random model shaped like mamba-130m / mamba2-130m under root; returns its folder."""
    from safetensors.torch import save_file
    g = torch.Generator().manual_seed(7)
    C, L, V, N, K = 768, 24, 50280, 16 if kind == "mamba" else 128, 4
    I = 2 * C
    cfg = {"model_type": kind, "hidden_size": C, "num_hidden_layers": L, "vocab_size": V, "state_size": N,
           "conv_kernel": K, "expand": 2, "layer_norm_epsilon": 1e-5, "hidden_act": "silu", "use_bias": False,
           "use_conv_bias": True, "tie_word_embeddings": True}
    def rnd(*shape, a=0.05):
        return torch.rand(*shape, generator=g) * 2 * a - a
    sd = {"backbone.embeddings.weight": rnd(V, C), "backbone.norm_f.weight": torch.ones(C)}
    if kind == "mamba":
        R = 48
        cfg.update(intermediate_size=I, time_step_rank=R)
    else:
        H, P = 24, 64
        cfg.update(num_heads=H, head_dim=P, n_groups=1, chunk_size=256)
    for l in range(L):
        m = f"backbone.layers.{l}.mixer."
        sd[f"backbone.layers.{l}.norm.weight"] = torch.ones(C)
        cc = I if kind == "mamba" else I + 2 * N
        sd[m + "conv1d.weight"], sd[m + "conv1d.bias"] = rnd(cc, 1, K, a=0.3), rnd(cc, a=0.1)
        sd[m + "out_proj.weight"] = rnd(C, I, a=0.02)
        if kind == "mamba":
            sd[m + "in_proj.weight"] = rnd(2 * I, C)
            sd[m + "x_proj.weight"] = rnd(R + 2 * N, I)
            sd[m + "dt_proj.weight"], sd[m + "dt_proj.bias"] = rnd(I, R, a=0.1), rnd(I, a=1.0) - 3.0
            sd[m + "A_log"], sd[m + "D"] = torch.log(torch.arange(1, N + 1).float()).repeat(I, 1), torch.ones(I)
        else:
            sd[m + "in_proj.weight"] = rnd(2 * I + 2 * N + H, C)
            sd[m + "dt_bias"], sd[m + "A_log"], sd[m + "D"] = rnd(H, a=1.0) - 3.0, torch.log(torch.arange(1, H + 1).float()), torch.ones(H)
            sd[m + "norm.weight"] = torch.ones(I)
    d = os.path.join(root, kind + "-130m")
    os.makedirs(d, exist_ok=True)
    json.dump(cfg, open(os.path.join(d, "config.json"), "w"))
    save_file({k: v.contiguous() for k, v in sd.items()}, os.path.join(d, "model.safetensors"))
    return d


def ours(bench, device, name, decode, threads, model_dir=None, prompt=48):
    env = dict(os.environ, BL_LLM_DEVICE=device, BL_LLM_DECODE=str(decode), BL_LLM_ONLY=name)
    if model_dir:
        env.update(BL_LLM_DIR=model_dir, BL_LLM_PROMPT=str(prompt))
    if threads:
        env["BITLEARN_THREADS"] = str(threads)
    out = subprocess.run([bench, "--benchmark_format=json", "--benchmark_min_time=0.5s"], env=env,
                         check=True, capture_output=True, text=True).stdout
    rates = {}
    for b in json.loads(out)["benchmarks"]:
        kind, bname, _ = b["name"].split("/")[:3]
        rates[(bname, kind)] = b["tokens_per_s"]
    return rates


def median(v):
    v = sorted(v)
    return v[len(v) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", default=os.path.join(ROOT, "build", "bench", "bench_llm"))
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--decode", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--big", action="store_true")
    ap.add_argument("--prompt", type=int, default=128)
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    if args.threads:
        torch.set_num_threads(args.threads)
    dev = args.device
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} device {dev}, torch {torch.__version__}, threads {torch.get_num_threads()}, "
          f"load {os.getloadavg()[0]:.1f}; median of {args.repeat} interleaved runs")
    print("| model | phase | bitlearn tok/s | torch tok/s | ratio |")
    print("|---|---|---|---|---|")
    import tempfile
    tmp = tempfile.mkdtemp(prefix="bl_mamba_bench_")
    runs = [(name, os.path.join(FIXTURES, name), None, 48) for name in MODELS]
    if args.big:
        for kind in MODELS:
            d = big_model(kind, tmp)
            runs.append((os.path.basename(d), d, d, args.prompt))
    for name, d, model_dir, prompt in runs:
        cfg = json.load(open(os.path.join(d, "config.json")))
        model = TorchMamba(cfg, load_file(os.path.join(d, "model.safetensors")), dev)
        if model_dir is None:
            ref = load_file(os.path.join(d, "reference.safetensors"))
            with torch.no_grad():
                got = model.forward(ref["input_ids"].to(dev)).double().cpu()
            err = (got - ref["logits_f64"].double()).abs().max().item()
            if err > 1e-4:
                print(f"warning: torch {name} logits differ from logits_f64 by {err:.2e}", file=sys.stderr)
        mine, theirs = {"prefill": [], "decode": []}, {"prefill": [], "decode": []}
        for _ in range(args.repeat):
            r = ours(args.bench, dev, name, args.decode, args.threads, model_dir, prompt)
            pre, dec = torch_rates(model, cfg["vocab_size"], prompt, args.decode, dev)
            mine["prefill"].append(r[(name, "prefill")]); mine["decode"].append(r[(name, "decode")])
            theirs["prefill"].append(pre); theirs["decode"].append(dec)
        for kind in ("prefill", "decode"):
            a, b = median(mine[kind]), median(theirs[kind])
            print(f"| {name} | {kind} ({prompt if kind == 'prefill' else args.decode} tok) | {a:,.0f} | {b:,.0f} | {a / b:.2f} |")
    import shutil
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
