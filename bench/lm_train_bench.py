#!/usr/bin/env python3
"""Language-model training speed of bitlearn and PyTorch side by side, in one run.

Arms (--only picks some):
  162m  the seed-shaped Llama (lm preset llama-162m: 12 x 768, 12 heads, SwiGLU 2048, untied,
        vocabulary 50257), batch 4 x 2048 tokens, on CUDA
  124m  the GPT-2 124M shape (12 x 768, 12 heads, tied, vocabulary 50257), batch 8 x 1024, on CUDA
  cpu   llama-tiny (4 x 256, 8 / 4 heads, SwiGLU 688, vocabulary 4096), batch 4 x 128, on the CPU
        with 2 threads on both sides

Both sides train the same shape (bench/lm_train_driver writes the config.json that PyTorch builds
its model from) on uniform random token ids: the driver's synthetic_vocab data (a token file of
random ids over the whole vocabulary), torch.randint on the PyTorch side. A step is the whole
training step on both: forward, mean cross-entropy, backward, global-norm clipping at 1.0, AdamW.
PyTorch: eager transformers models, SDPA attention, float32 with TF32 off, AdamW(fused=False).
tokens/s is batch * T over the median step time of the steps after the first two. Peak memory:
bitlearn's caching allocator's peak bytes in use (blocks, rounded up as it allocates) and
torch.cuda.max_memory_allocated.

  python3 bench/lm_train_bench.py --driver build/bench/lm_train_driver [--only 162m,124m,cpu]
      [--steps 12] [--cpu-steps 6] [--work /tmp/lm_bench] [--out lm_train_bench.json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def fail_setup(msg):
    print("lm_train_bench: error: " + msg, file=sys.stderr)
    sys.exit(2)


def import_torch():
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as e:
        fail_setup("this benchmark needs torch and transformers (%s)" % e)
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    return torch


ARMS = {
    "162m": {"model": "llama-162m", "vocab": 50257, "batch": 4, "seq_len": 2048, "device": "cuda"},
    "124m": {"model": "gpt2-124m", "vocab": 50257, "batch": 8, "seq_len": 1024, "device": "cuda"},
    "cpu": {"model": "llama-tiny", "vocab": 4096, "batch": 4, "seq_len": 128, "device": "cpu", "threads": 2},
}


def run_driver(driver, args, what, timeout):
    cmd = [driver] + ["%s=%s" % (k, v) for k, v in args.items()]
    t0 = time.time()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError("the driver ran past %d s (%s): %s" % (timeout, what, " ".join(cmd)))
    if p.returncode != 0:
        raise RuntimeError("the driver failed (%s, exit %d): %s\n%s" % (what, p.returncode, " ".join(cmd),
                                                                       p.stderr[-3000:]))
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if not lines:
        raise RuntimeError("the driver printed no JSON line (%s)" % what)
    res = json.loads(lines[-1])
    res["process_s"] = time.time() - t0
    return res


def median_after_warmup(times):
    timed = times[2:] if len(times) > 2 else times
    return statistics.median(timed)


def torch_arm(torch, cfg_dict, arm, steps):
    import transformers
    import torch.nn.functional as F
    dev = torch.device(arm["device"])
    d = dict(cfg_dict)
    model_type = d.pop("model_type")
    d.pop("architectures", None)
    d.pop("torch_dtype", None)
    cfg = transformers.AutoConfig.for_model(model_type, **d)
    cls = {"llama": transformers.LlamaForCausalLM, "gpt2": transformers.GPT2LMHeadModel}[model_type]
    old_threads = torch.get_num_threads()
    if "threads" in arm:
        torch.set_num_threads(arm["threads"])
    try:
        if dev.type == "cuda":
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
        torch.manual_seed(1)
        try:
            with dev:
                model = cls._from_config(cfg, attn_implementation="sdpa")
        except (TypeError, ValueError):
            cfg._attn_implementation = "sdpa"
            with dev:
                model = cls(cfg)
        model = model.to(device=dev, dtype=torch.float32)
        model.train()
        decay, no_decay = [], []
        for n, p in model.named_parameters():
            (no_decay if p.ndim < 2 or "embed" in n or "wte" in n or "wpe" in n else decay).append(p)
        opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                                lr=3e-4, betas=(0.9, 0.95), eps=1e-8, fused=False)
        params = list(model.parameters())
        B, T, V = arm["batch"], arm["seq_len"], cfg.vocab_size
        gen = torch.Generator(device=dev).manual_seed(1)
        times, losses = [], []
        for _ in range(steps):
            ids = torch.randint(0, V, (B, T + 1), device=dev, generator=gen)
            if dev.type == "cuda":
                torch.cuda.synchronize()
            t0 = time.perf_counter()
            logits = model(input_ids=ids[:, :-1], use_cache=False).logits
            loss = F.cross_entropy(logits.reshape(-1, V), ids[:, 1:].reshape(-1))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
            losses.append(float(loss.item()))  # a sync, as bitlearn's per-step loss read is
            if dev.type == "cuda":
                torch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
            del logits, loss
        step_s = median_after_warmup(times)
        out = {"attn_implementation": getattr(model.config, "_attn_implementation", None), "median_step_s": step_s, "tokens_per_s": B * T / step_s, "step_s": times, "losses": losses,
               "parameters": sum(p.numel() for p in params)}
        if dev.type == "cuda":
            out["peak_cuda_bytes"] = int(torch.cuda.max_memory_allocated())
        del model, opt, params
        if dev.type == "cuda":
            torch.cuda.empty_cache()
        return out
    finally:
        torch.set_num_threads(old_threads)


def gib(x):
    return "%.2f" % (x / 2 ** 30) if x is not None else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--driver", required=True, help="path of the lm_train_driver program")
    ap.add_argument("--only", default="162m,124m,cpu", help="comma-separated arms: 162m, 124m, cpu")
    ap.add_argument("--steps", type=int, default=12, help="steps of the CUDA arms (first two untimed)")
    ap.add_argument("--cpu-steps", type=int, default=6, help="steps of the CPU arm")
    ap.add_argument("--work", default="/tmp/lm_train_bench", help="folder for the driver's files")
    ap.add_argument("--out", default="lm_train_bench.json", help="JSON results")
    ap.add_argument("--driver-timeout", type=int, default=300, help="seconds per driver run")
    ap.add_argument("--bitlearn-only", action="store_true", help="run the driver side only (no torch)")
    a = ap.parse_args()
    a.driver = os.path.abspath(a.driver)
    if not os.access(a.driver, os.X_OK):
        fail_setup("--driver %s is not an executable (build the lm_train_driver target with -DBITLEARN_BENCH=ON)"
                   % a.driver)
    arms = [x for x in a.only.split(",") if x]
    unknown = [x for x in arms if x not in ARMS]
    if unknown:
        fail_setup("unknown arm(s) %s (known: %s)" % (", ".join(unknown), ", ".join(ARMS)))
    torch, env = None, {}
    if not a.bitlearn_only:
        torch = import_torch()
        import transformers
        if any(ARMS[x]["device"] == "cuda" for x in arms) and not torch.cuda.is_available():
            fail_setup("the arms %s need CUDA, and torch sees no CUDA device (use --only cpu)" % a.only)
        env = {"torch": torch.__version__, "transformers": transformers.__version__,
               "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}
    os.makedirs(a.work, exist_ok=True)
    results, failed = [], False
    t_all = time.time()
    for name in arms:
        arm = ARMS[name]
        steps = a.cpu_steps if arm["device"] == "cpu" else a.steps
        print("== %s: %s, batch %d x %d, %s, %d steps" % (name, arm["model"], arm["batch"], arm["seq_len"],
                                                          arm["device"], steps), flush=True)
        row = {"arm": name, "model": arm["model"], "vocab": arm["vocab"], "batch": arm["batch"],
               "seq_len": arm["seq_len"], "device": arm["device"], "threads": arm.get("threads"), "steps": steps}
        work = os.path.join(a.work, name)
        base = {"model": arm["model"], "vocab": arm["vocab"], "work": work}
        try:
            cfg_path = run_driver(a.driver, dict(base, config_only=1), name + " config", 120)["config"]
            with open(cfg_path) as f:
                cfg_dict = json.load(f)
            args = dict(base, synthetic_vocab=arm["vocab"], synthetic_tokens=max(1 << 20, 4 * arm["batch"] * (arm["seq_len"] + 1)),
                        steps=steps, batch=arm["batch"], seq_len=arm["seq_len"], device=arm["device"],
                        lr=3e-4, warmup=0, weight_decay=0.1, clip=1.0, hash_every=0, val_fraction=0)
            if "threads" in arm:
                args["threads"] = arm["threads"]
            ours = run_driver(a.driver, args, name, a.driver_timeout)
            print("  bitlearn: %.0f tok/s, %.4f s/step, first step %.2f s, peak %s GiB (process %.1f s)" %
                  (ours["tokens_per_s"], ours["median_step_s"], ours["first_step_s"],
                   gib(ours.get("peak_cuda_bytes")), ours["process_s"]), flush=True)
            row["bitlearn"] = {k: ours.get(k) for k in ("tokens_per_s", "median_step_s", "first_step_s", "step_s",
                                                        "peak_cuda_bytes", "parameters", "final_loss", "process_s")}
        except RuntimeError as e:
            print("  bitlearn: FAILED: %s" % e, flush=True)
            row["bitlearn_error"] = str(e)
            failed = True
            results.append(row)
            continue
        if torch is None:
            results.append(row)
            continue
        try:
            t0 = time.time()
            theirs = torch_arm(torch, cfg_dict, arm, steps)
            print("  PyTorch:  %.0f tok/s, %.4f s/step, peak %s GiB (%.1f s)" %
                  (theirs["tokens_per_s"], theirs["median_step_s"], gib(theirs.get("peak_cuda_bytes")),
                   time.time() - t0), flush=True)
            row["torch"] = {k: theirs.get(k) for k in ("tokens_per_s", "median_step_s", "step_s", "peak_cuda_bytes",
                                                       "parameters", "attn_implementation")}
            row["torch"]["final_loss"] = theirs["losses"][-1]
            row["ratio"] = ours["tokens_per_s"] / theirs["tokens_per_s"]
            if row["torch"]["parameters"] != ours["parameters"]:
                print("  note: parameter counts differ: bitlearn %d, PyTorch %d" %
                      (ours["parameters"], row["torch"]["parameters"]))
        except Exception as e:  # noqa: BLE001  (report the arm and go on)
            print("  PyTorch: FAILED: %s: %s" % (type(e).__name__, e), flush=True)
            row["torch_error"] = "%s: %s" % (type(e).__name__, e)
            failed = True
        results.append(row)

    print()
    print("| arm | shape | bitlearn tok/s | PyTorch tok/s | bitlearn / PyTorch | bitlearn s/step | "
          "PyTorch s/step | bitlearn peak GiB | PyTorch peak GiB |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        o, t = r.get("bitlearn", {}), r.get("torch", {})
        shape = "%s B=%d T=%d %s%s" % (r["model"], r["batch"], r["seq_len"], r["device"],
                                       " %d threads" % r["threads"] if r.get("threads") else "")
        f = lambda v, fmt: (fmt % v) if v is not None else "-"  # noqa: E731
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["arm"], shape, f(o.get("tokens_per_s"), "%.0f"), f(t.get("tokens_per_s"), "%.0f"),
            f(r.get("ratio"), "%.3f"), f(o.get("median_step_s"), "%.4f"), f(t.get("median_step_s"), "%.4f"),
            gib(o.get("peak_cuda_bytes")), gib(t.get("peak_cuda_bytes"))))
    out = {"environment": env, "results": results, "seconds": time.time() - t_all}
    with open(a.out, "w") as fh:
        json.dump(out, fh, indent=2)
        fh.write("\n")
    print("\n%.0f s in all; results in %s" % (out["seconds"], os.path.abspath(a.out)))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
