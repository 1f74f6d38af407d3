#!/usr/bin/env python3
"""Prefill and decode tokens/s of bitlearn (bench_llm) and PyTorch side by side, with ratios.

PyTorch runs the same architectures, written here in plain torch (no transformers needed): GPT-2
and the Llama family (llama, mistral, qwen2, phi3, gemma) from the fixture files, plus a random
GPT-2 124M-shaped model; F.scaled_dot_product_attention, a KV cache for decode, float32, TF32 off.
Its fixture logits are also checked against reference.safetensors (logits_f64) as a sanity test.

  python3 bench/llm_vs_torch.py --bench build/bench/bench_llm [--device cpu|cuda] [--threads N]
                                [--only MODEL] [--decode 32] [--prompt 128] [--markdown]
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

import torch
import torch.nn.functional as F
from safetensors.torch import load_file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "data", "hf")
MODELS = ["gpt2", "llama", "qwen2", "mistral", "phi3", "gemma"]


class TorchLM:
    """A decoder-only model in plain torch, from an HF config dict and a state dict."""

    def __init__(self, cfg, sd, device):
        self.cfg = cfg
        self.t = cfg["model_type"]
        self.sd = {k: v.to(device=device, dtype=torch.float32) for k, v in sd.items()}
        self.device = device
        if self.t == "gpt2":
            self.C, self.L, self.H = cfg["n_embd"], cfg["n_layer"], cfg["n_head"]
            self.G, self.D = self.H, self.C // self.H
            self.p = "transformer." if "transformer.wte.weight" in sd else ""
        else:
            self.C, self.L, self.H = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["num_attention_heads"]
            self.G = cfg.get("num_key_value_heads") or self.H
            self.D = cfg.get("head_dim") or self.C // self.H
            rp = cfg.get("rope_parameters") or {}
            theta = rp.get("rope_theta", cfg.get("rope_theta", 10000.0))
            inv = 1.0 / (theta ** (torch.arange(0, self.D, 2, dtype=torch.int64).float() / self.D))
            self.inv_freq = inv.to(device)
            self.window = cfg.get("sliding_window") if self.t in ("mistral", "phi3") else None
            self.eps = cfg.get("rms_norm_eps", 1e-6)
        self.lm_head = self.sd.get("lm_head.weight")
        if self.lm_head is None:
            self.lm_head = self.sd[(self.p if self.t == "gpt2" else "model.") + ("wte.weight" if self.t == "gpt2" else "embed_tokens.weight")]

    def rms(self, x, w):
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return x * (1.0 + w) if self.t == "gemma" else x * w

    def rope(self, x, pos):
        freqs = pos[:, None].float() * self.inv_freq[None, :]
        emb = torch.cat((freqs, freqs), -1)
        cos, sin = emb.cos()[None, None], emb.sin()[None, None]
        x1, x2 = x[..., : self.D // 2], x[..., self.D // 2:]
        return x * cos + torch.cat((-x2, x1), -1) * sin

    def attend(self, q, k, v, start):
        # q [1, H, T, D], k/v [1, G, S, D]; causal with offset `start`, optional sliding window.
        T, S = q.shape[2], k.shape[2]
        if self.G != self.H:
            k = k.repeat_interleave(self.H // self.G, 1)
            v = v.repeat_interleave(self.H // self.G, 1)
        qi = torch.arange(start, start + T, device=q.device)[:, None]
        kj = torch.arange(S, device=q.device)[None, :]
        mask = kj <= qi
        if getattr(self, "window", None):
            mask = mask & (kj > qi - self.window)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)

    @torch.inference_mode()
    def forward(self, ids, cache=None):
        sd, T = self.sd, ids.shape[0]
        start = 0 if cache is None or not cache else cache[0][0].shape[2]
        pos = torch.arange(start, start + T, device=self.device)
        if self.t == "gpt2":
            p = self.p
            h = sd[p + "wte.weight"][ids] + sd[p + "wpe.weight"][pos]
            for l in range(self.L):
                b = f"{p}h.{l}."
                x = F.layer_norm(h, (self.C,), sd[b + "ln_1.weight"], sd[b + "ln_1.bias"], 1e-5)
                qkv = x @ sd[b + "attn.c_attn.weight"] + sd[b + "attn.c_attn.bias"]
                q, k, v = [t.view(T, self.H, self.D).transpose(0, 1)[None] for t in qkv.split(self.C, -1)]
                k, v = self.cached(cache, l, k, v)
                a = self.attend(q, k, v, start)[0].transpose(0, 1).reshape(T, self.C)
                h = h + a @ sd[b + "attn.c_proj.weight"] + sd[b + "attn.c_proj.bias"]
                x = F.layer_norm(h, (self.C,), sd[b + "ln_2.weight"], sd[b + "ln_2.bias"], 1e-5)
                x = F.gelu(x @ sd[b + "mlp.c_fc.weight"] + sd[b + "mlp.c_fc.bias"], approximate="tanh")
                h = h + x @ sd[b + "mlp.c_proj.weight"] + sd[b + "mlp.c_proj.bias"]
            h = F.layer_norm(h, (self.C,), sd[p + "ln_f.weight"], sd[p + "ln_f.bias"], 1e-5)
            return h @ self.lm_head.T
        h = sd["model.embed_tokens.weight"][ids]
        if self.t == "gemma":
            h = h * torch.tensor(self.C ** 0.5, dtype=h.dtype)
        act = (lambda x: F.gelu(x, approximate="tanh")) if self.t == "gemma" else F.silu
        for l in range(self.L):
            b = f"model.layers.{l}."
            x = self.rms(h, sd[b + "input_layernorm.weight"])
            if self.t == "phi3":
                q, k, v = (x @ sd[b + "self_attn.qkv_proj.weight"].T).split(
                    [self.H * self.D, self.G * self.D, self.G * self.D], -1)
            else:
                q, k, v = [x @ sd[b + f"self_attn.{n}_proj.weight"].T + (sd[b + f"self_attn.{n}_proj.bias"]
                           if b + f"self_attn.{n}_proj.bias" in sd else 0) for n in "qkv"]
            q = self.rope(q.view(T, self.H, self.D).transpose(0, 1)[None], pos)
            k = self.rope(k.view(T, self.G, self.D).transpose(0, 1)[None], pos)
            v = v.view(T, self.G, self.D).transpose(0, 1)[None]
            k, v = self.cached(cache, l, k, v)
            a = self.attend(q, k, v, start)[0].transpose(0, 1).reshape(T, self.H * self.D)
            h = h + a @ sd[b + "self_attn.o_proj.weight"].T
            x = self.rms(h, sd[b + "post_attention_layernorm.weight"])
            if self.t == "phi3":
                g, u = (x @ sd[b + "mlp.gate_up_proj.weight"].T).chunk(2, -1)
            else:
                g, u = x @ sd[b + "mlp.gate_proj.weight"].T, x @ sd[b + "mlp.up_proj.weight"].T
            h = h + (act(g) * u) @ sd[b + "mlp.down_proj.weight"].T
        h = self.rms(h, sd["model.norm.weight"])
        return h @ self.lm_head.T

    @staticmethod
    def cached(cache, l, k, v):
        if cache is None:
            return k, v
        if len(cache) <= l:
            cache.append((k, v))
        else:
            cache[l] = (torch.cat((cache[l][0], k), 2), torch.cat((cache[l][1], v), 2))
        return cache[l]


GPT2_POSITIONS = 1024


def gpt2_124m(device):
    cfg = {"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257,
           "n_positions": GPT2_POSITIONS}
    g = torch.Generator().manual_seed(0)
    sd = {"wte.weight": torch.rand(50257, 768, generator=g) * 0.1 - 0.05, "wpe.weight": torch.rand(1024, 768, generator=g) * 0.04 - 0.02,
          "ln_f.weight": torch.ones(768), "ln_f.bias": torch.zeros(768)}
    for l in range(12):
        b = f"h.{l}."
        for n, shape in [("attn.c_attn", (768, 2304)), ("attn.c_proj", (768, 768)), ("mlp.c_fc", (768, 3072)), ("mlp.c_proj", (3072, 768))]:
            sd[b + n + ".weight"] = torch.rand(*shape, generator=g) * 0.08 - 0.04
            sd[b + n + ".bias"] = torch.zeros(shape[1])
        for n in ("ln_1", "ln_2"):
            sd[b + n + ".weight"], sd[b + n + ".bias"] = torch.ones(768), torch.zeros(768)
    return TorchLM(cfg, sd, device)


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


def ours(bench, device, only, prompt, decode, threads):
    env = dict(os.environ, BL_LLM_DEVICE=device, BL_LLM_DECODE=str(decode), BL_LLM_PROMPT=str(prompt))
    if only:
        env["BL_LLM_ONLY"] = only
    if threads:
        env["BITLEARN_THREADS"] = str(threads)
    run = subprocess.run([bench, "--benchmark_format=json", "--benchmark_min_time=0.5s"], env=env,
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"{bench} failed (exit {run.returncode}):\n{run.stderr[-2000:]}")
    out = run.stdout
    rates = {}
    for b in json.loads(out)["benchmarks"]:
        kind, name, _ = b["name"].split("/")[:3]
        rates[(name, kind)] = b["tokens_per_s"]
    return rates


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", default=os.path.join(ROOT, "build", "bench", "bench_llm"))
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--only", default="")
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--decode", type=int, default=32)
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    if args.threads:
        torch.set_num_threads(args.threads)
    dev = args.device
    names = [args.only] if args.only else MODELS + ["gpt2-124m"]
    if "gpt2-124m" in names and args.prompt + args.decode > GPT2_POSITIONS:
        ap.error(f"--prompt {args.prompt} + --decode {args.decode} exceed the {GPT2_POSITIONS} positions of the "
                 "GPT-2 124M shape")
    ours_rates = ours(args.bench, dev, args.only, args.prompt, args.decode, args.threads)
    print(f"# {time.strftime('%Y-%m-%d')} device {dev}, torch {torch.__version__}, threads {torch.get_num_threads()}")
    print("| model | phase | bitlearn tok/s | torch tok/s | ratio |")
    print("|---|---|---|---|---|")
    for name in names:
        if name == "gpt2-124m":
            model, vocab, prompt = gpt2_124m(dev), 50257, args.prompt
        else:
            d = os.path.join(FIXTURES, name)
            cfg = json.load(open(os.path.join(d, "config.json")))
            model, vocab, prompt = TorchLM(cfg, load_file(os.path.join(d, "model.safetensors")), dev), cfg["vocab_size"], 48
            ref = load_file(os.path.join(d, "reference.safetensors"))
            got = model.forward(ref["input_ids"].to(dev)).double().cpu()
            err = (got - ref["logits_f64"]).abs().max().item()
            if err > 1e-4:
                print(f"warning: torch {name} logits differ from logits_f64 by {err:.2e}", file=sys.stderr)
        pre, dec = torch_rates(model, vocab, prompt, args.decode, dev)
        for kind, theirs in (("prefill", pre), ("decode", dec)):
            mine = ours_rates.get((name, kind), float("nan"))
            print(f"| {name} | {kind} ({prompt if kind == 'prefill' else args.decode} tok) | {mine:,.0f} | {theirs:,.0f} | {mine / theirs:.2f} |")


if __name__ == "__main__":
    main()
