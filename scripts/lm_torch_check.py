#!/usr/bin/env python3
"""Accuracy of bitlearn's language-model training against PyTorch (transformers), on one machine.

(a) Gradients. bench/lm_train_driver runs one step of a small Llama (2 layers, width 128, 4 heads /
    2 key-value heads) and a small GPT-2 (2 layers, width 128, tied head) on the project's docs
    folder, batch 4 x 64 tokens, with clipping and weight decay off, and writes the initial weights
    (a Hugging Face folder), the gradients of the step and the step's token windows. transformers
    (LlamaForCausalLM / GPT2LMHeadModel, eager attention) loads the same weights in float64 and in
    float32 (TF32 off), computes the mean next-token cross-entropy on the same windows and its
    gradients. For every parameter: err = ||g - g64|| / ||g64|| for bitlearn's and for PyTorch
    fp32's gradients. Passes when bitlearn's error is at most 2x PyTorch fp32's for every parameter
    (an error below the float32 unit roundoff, 2^-24, passes regardless).
    transformers casts to float32 inside some layers whatever the model's dtype (RMSNorm, the
    softmax of eager attention, the RoPE tables); the float64 pass runs under a function mode that
    turns every float32 request into float64, and reports how many float32 results remained (0).
(b) Loss curve. The driver trains llama-tiny (4 x 256, vocabulary of the corpus tokenizer) for 300
    steps: batch 8 x 128, lr 1e-3, warmup 20, cosine to 0, AdamW (0.9, 0.95, 1e-8), weight decay
    0.1 on matrices except embeddings, clipping 1.0. PyTorch trains the exported initial weights on
    the same windows with the same optimizer groups, clipping and schedule (bitlearn's cosine_lr,
    mirrored and checked against the driver's per-step lr). Reports the max |loss difference| per
    step and over a 20-step moving average; passes when the moving averages agree within 0.05.

  python3 scripts/lm_torch_check.py --driver build/bench/lm_train_driver --work /tmp/lm_check \
      [--device cuda|cpu] [--parts grad,curve] [--curve-steps 300] [--bitlearn-only]

Writes WORK/torch_check.json; exits 0 when every check passes, 1 when one fails, 2 on a setup error
(torch or transformers missing, the driver failing).
"""
import argparse
import json
import math
import os
import struct
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLOOR = 2.0 ** -24


def fail_setup(msg):
    print("lm_torch_check: error: " + msg, file=sys.stderr)
    sys.exit(2)


def import_torch():
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as e:
        fail_setup("this check needs torch and transformers (%s); run it where both are installed, "
                   "or pass --bitlearn-only to exercise the driver alone" % e)
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    return torch


# ---- safetensors (read with numpy, so the bitlearn side needs no torch) ----

_ST_DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32,
              "I16": np.int16, "I8": np.int8, "U8": np.uint8, "U16": np.uint16, "U32": np.uint32, "BOOL": np.bool_}


def read_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] not in _ST_DTYPES:
            fail_setup("%s: tensor %s has dtype %s, not readable here" % (path, name, info["dtype"]))
        a, b = info["data_offsets"]
        arr = np.frombuffer(blob[base + a:base + b], dtype=_ST_DTYPES[info["dtype"]])
        out[name] = arr.reshape(info["shape"]).copy()
    return out


# ---- the driver ----

def run_driver(driver, args, what):
    cmd = [driver] + ["%s=%s" % (k, v) for k, v in args.items()]
    t0 = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    dt = time.time() - t0
    if p.returncode != 0:
        fail_setup("the driver failed (%s, exit %d):\n  %s\n%s" % (what, p.returncode, " ".join(cmd),
                                                                   p.stderr[-4000:]))
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if not lines:
        fail_setup("the driver printed no JSON line (%s):\n%s" % (what, p.stdout[-2000:]))
    res = json.loads(lines[-1])
    print("  driver (%s): %.1f s" % (what, dt), flush=True)
    return res


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")


def small_config(kind, vocab):
    if kind == "llama":
        return {"model_type": "llama", "vocab_size": vocab, "hidden_size": 128, "intermediate_size": 344,
                "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                "max_position_embeddings": 64, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
                "hidden_act": "silu", "tie_word_embeddings": False}
    return {"model_type": "gpt2", "vocab_size": vocab, "n_positions": 64, "n_embd": 128, "n_layer": 2,
            "n_head": 4, "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5,
            "tie_word_embeddings": True}


def data_args(a):
    return {"data": a.data, "tokenizer": os.path.join(a.work, "tokenizer.json"), "train_tokenizer": a.vocab,
            "tokens": os.path.join(a.work, "corpus.tokens"), "device": a.device, "seed": a.seed,
            "work": a.work}


# ---- the PyTorch side ----

def load_hf(torch, folder, dtype, device, attn):
    import transformers
    with open(os.path.join(folder, "config.json")) as f:
        model_type = json.load(f)["model_type"]
    cls = {"llama": transformers.LlamaForCausalLM, "gpt2": transformers.GPT2LMHeadModel}.get(model_type)
    if cls is None:
        fail_setup("%s: model_type %s is not compared here" % (folder, model_type))
    try:
        model, info = cls.from_pretrained(folder, output_loading_info=True, attn_implementation=attn)
    except TypeError:
        model, info = cls.from_pretrained(folder, output_loading_info=True)
        model.config._attn_implementation = attn
    params = dict(model.named_parameters())
    missing = [k for k in info.get("missing_keys", []) if k in params]
    if missing:
        fail_setup("%s: transformers found no weights for %s" % (folder, ", ".join(sorted(missing))))
    model = model.to(device=device, dtype=dtype)
    model.eval()
    # The weights must be bitlearn's exactly (names and layout as exported).
    saved = read_safetensors(os.path.join(folder, "model.safetensors"))
    sd = model.state_dict()
    for name, arr in saved.items():
        if name not in sd:
            fail_setup("%s: %s is not a tensor of %s" % (folder, name, cls.__name__))
        t = sd[name].detach().to("cpu", torch.float64).numpy()
        if t.shape != arr.shape or np.max(np.abs(t - arr.astype(np.float64))) != 0.0:
            fail_setup("%s: %s loaded into transformers differs from the file" % (folder, name))
    return model


def keep64_mode(torch):
    """A function mode under which float32 requests (dtype=, .to(float32), .float()) become float64."""
    from torch.overrides import TorchFunctionMode
    f32, f64 = torch.float32, torch.float64

    class Keep64(TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.rewrites = 0
            self.f32_results = {}

        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            name = getattr(func, "__name__", str(func))
            if name == "float" and args and isinstance(args[0], torch.Tensor):
                self.rewrites += 1
                return args[0].double(**kwargs)
            if kwargs.get("dtype") is f32:
                kwargs["dtype"] = f64
                self.rewrites += 1
            if any(a is f32 for a in args):
                args = tuple(f64 if a is f32 else a for a in args)
                self.rewrites += 1
            out = func(*args, **kwargs)
            outs = out if isinstance(out, (tuple, list)) else (out,)
            for o in outs:
                if isinstance(o, torch.Tensor) and o.dtype == f32:
                    self.f32_results[name] = self.f32_results.get(name, 0) + 1
            return out

    return Keep64()


def patched64_loss(torch, model, win):
    """The float64 loss with transformers' known float32 casts patched out: RMSNorm, the softmax of
    eager attention and the RoPE tables (used when the function mode cannot run)."""
    import torch.nn.functional as F
    patched = []
    for m in model.modules():
        name = type(m).__name__
        if name.endswith("RMSNorm"):
            eps = getattr(m, "variance_epsilon", getattr(m, "eps", None))
            if eps is None:
                fail_setup("%s has no epsilon attribute to patch" % name)

            def rms_forward(h, m=m, eps=eps):
                return m.weight * (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps))
            m.forward = rms_forward
            patched.append(name)
        elif name.endswith("RotaryEmbedding"):
            def rope_forward(x, position_ids, *rest, m=m, **kw):
                freqs = position_ids.to(torch.float64)[..., None] * m.inv_freq.to(torch.float64)[None, None, :]
                emb = torch.cat((freqs, freqs), dim=-1)
                scale = float(getattr(m, "attention_scaling", 1.0))
                return (emb.cos() * scale).to(x.dtype), (emb.sin() * scale).to(x.dtype)
            m.forward = rope_forward
            patched.append(name)
    softmax = F.softmax

    def softmax64(x, dim=None, _stacklevel=3, dtype=None):
        if dtype is torch.float32 and x.dtype == torch.float64:
            dtype = torch.float64
        return softmax(x, dim=dim, dtype=dtype)
    F.softmax = softmax64
    try:
        loss = mean_ce(torch, model, win)
    finally:
        F.softmax = softmax
    return loss, {"method": "patched modules", "patched": sorted(set(patched))}


def mean_ce(torch, model, win):
    import torch.nn.functional as F
    logits = model(input_ids=win[:, :-1], use_cache=False).logits
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), win[:, 1:].reshape(-1))


def torch_grads(torch, folder, win_np, dtype, device):
    model = load_hf(torch, folder, torch.float32, device, "eager")
    if dtype == torch.float64:
        model = model.to(torch.float64)
    win = torch.from_numpy(np.ascontiguousarray(win_np.astype(np.int64))).to(device)
    info = {}
    if dtype == torch.float64:
        mode = keep64_mode(torch)
        old = torch.get_default_dtype()
        torch.set_default_dtype(torch.float64)
        try:
            with mode:
                loss = mean_ce(torch, model, win)
            info = {"method": "function mode", "float32_requests_rewritten": mode.rewrites,
                    "float32_results": mode.f32_results}
        except Exception as e:  # noqa: BLE001  (a transformers version the mode does not suit)
            print("  note: the float64 function mode failed (%s: %s); patching the float32 spots instead" %
                  (type(e).__name__, e), flush=True)
            model.zero_grad(set_to_none=True)
            loss, info = patched64_loss(torch, model, win)
        finally:
            torch.set_default_dtype(old)
    else:
        loss = mean_ce(torch, model, win)
    if loss.dtype != dtype:
        fail_setup("the %s loss came out as %s" % (dtype, loss.dtype))
    loss.backward()
    grads = {n: p.grad.detach().to("cpu", torch.float64).numpy() for n, p in model.named_parameters()}
    value = float(loss.item())
    del model
    return value, grads, info


def rel_err(g, ref):
    d = np.linalg.norm((g.astype(np.float64) - ref).ravel())
    n = np.linalg.norm(ref.ravel())
    return float(d / n) if n > 0 else float(d)


def check_grads(a, torch, kind):
    print("(a) gradients: %s" % kind, flush=True)
    d = os.path.join(a.work, "grad_" + kind)
    os.makedirs(d, exist_ok=True)
    cfg_path = os.path.join(d, "config.json")
    write_json(cfg_path, small_config(kind, a.vocab))
    args = data_args(a)
    args.update({"model": kind, "config": cfg_path, "steps": 1, "batch": 4, "seq_len": 64, "clip": 0,
                 "weight_decay": 0, "warmup": 0, "save_hf_init": os.path.join(d, "init"),
                 "dump_grads": os.path.join(d, "grads.safetensors"),
                 "dump_batches": os.path.join(d, "batches.safetensors")})
    res = run_driver(a.driver, args, "%s, 1 step" % kind)
    bl_grads = read_safetensors(args["dump_grads"])
    win = read_safetensors(args["dump_batches"])["windows"][0]  # [batch, T + 1]
    out = {"model": kind, "bitlearn_loss": res["losses"][0], "windows": list(win.shape),
           "parameters": res["parameters"]}
    if torch is None:
        out["gradients"] = {n: list(g.shape) for n, g in bl_grads.items()}
        print("  bitlearn loss %.6f, %d gradients, windows %s (PyTorch side skipped)" %
              (res["losses"][0], len(bl_grads), win.shape))
        return out, True
    t0 = time.time()
    l64, g64, info64 = torch_grads(torch, args["save_hf_init"], win, torch.float64, a.torch_device)
    l32, g32, _ = torch_grads(torch, args["save_hf_init"], win, torch.float32, a.torch_device)
    print("  PyTorch float64 + float32: %.1f s" % (time.time() - t0), flush=True)
    names = sorted(g64)
    absent = [n for n in names if n not in bl_grads]
    extra = [n for n in bl_grads if n not in g64]
    if absent or extra:
        fail_setup("%s: gradient names disagree: missing from bitlearn %s, unknown to transformers %s" %
                   (kind, absent, extra))
    rows, ok = [], True
    for n in names:
        if bl_grads[n].shape != g64[n].shape:
            fail_setup("%s: %s has shape %s in bitlearn, %s in transformers" %
                       (kind, n, bl_grads[n].shape, g64[n].shape))
        eb, ep = rel_err(bl_grads[n], g64[n]), rel_err(g32[n], g64[n])
        passed = eb <= 2.0 * ep or eb <= FLOOR
        ok = ok and passed
        rows.append({"name": n, "bitlearn_rel_err": eb, "torch_fp32_rel_err": ep,
                     "ratio": eb / ep if ep > 0 else None, "pass": passed})
    worst = sorted(rows, key=lambda r: -(r["ratio"] or 0))
    out.update({"torch_f64_loss": l64, "torch_f32_loss": l32,
                "bitlearn_loss_rel_err": abs(res["losses"][0] - l64) / abs(l64),
                "torch_f32_loss_rel_err": abs(l32 - l64) / abs(l64),
                "float64_reference": info64,
                "max_bitlearn_rel_err": max(r["bitlearn_rel_err"] for r in rows),
                "max_torch_fp32_rel_err": max(r["torch_fp32_rel_err"] for r in rows),
                "max_ratio": max((r["ratio"] or 0) for r in rows), "pass": ok, "parameters_checked": rows})
    print("  loss: bitlearn %.8f  torch fp32 %.8f  torch f64 %.8f  (rel err %.2e / %.2e)" %
          (res["losses"][0], l32, l64, out["bitlearn_loss_rel_err"], out["torch_f32_loss_rel_err"]))
    if info64["method"] == "function mode":
        print("  float64 reference: %d float32 requests made float64, float32 results left: %s" %
              (info64["float32_requests_rewritten"], info64["float32_results"] or "none"))
    else:
        print("  float64 reference: patched %s" % ", ".join(info64["patched"]))
    print("  %d parameters; max rel err vs float64: bitlearn %.3e, PyTorch fp32 %.3e; worst ratio %.2f" %
          (len(rows), out["max_bitlearn_rel_err"], out["max_torch_fp32_rel_err"], out["max_ratio"]))
    for r in worst[:5]:
        print("    %-48s bitlearn %.3e  torch fp32 %.3e  ratio %.2f %s" %
              (r["name"], r["bitlearn_rel_err"], r["torch_fp32_rel_err"], r["ratio"] or 0,
               "" if r["pass"] else "FAIL"))
    print("  %s" % ("PASS" if ok else "FAIL: bitlearn's error exceeds 2x PyTorch fp32's for some parameter"))
    return out, ok


def cosine_lr(step, base, warmup, total, min_lr):
    """bitlearn's nn::cosine_lr (src/nn/schedule.cpp) for a 0-based step."""
    if step < warmup:
        return base * (step + 1) / warmup
    span = total - warmup
    if span <= 0 or step >= total:
        return min_lr
    progress = (step - warmup) / span
    return min_lr + 0.5 * (base - min_lr) * (1.0 + math.cos(math.pi * progress))


def moving_average(x, w):
    x = np.asarray(x, dtype=np.float64)
    if len(x) < w:
        return np.array([x.mean()])
    c = np.cumsum(np.concatenate([[0.0], x]))
    return (c[w:] - c[:-w]) / w


def check_curve(a, torch):
    steps, lr, warmup, wd, clip = a.curve_steps, 1e-3, 20, 0.1, 1.0
    print("(b) loss curve: llama-tiny, %d steps" % steps, flush=True)
    d = os.path.join(a.work, "curve")
    os.makedirs(d, exist_ok=True)
    args = data_args(a)
    args.update({"model": "llama-tiny", "steps": steps, "batch": 8, "seq_len": 128, "lr": lr, "min_lr": 0,
                 "warmup": warmup, "beta1": 0.9, "beta2": 0.95, "eps": 1e-8, "weight_decay": wd, "clip": clip,
                 "save_hf_init": os.path.join(d, "init"), "dump_batches": os.path.join(d, "batches.safetensors"),
                 "report": os.path.join(d, "report.json")})
    t0 = time.time()
    res = run_driver(a.driver, args, "llama-tiny, %d steps" % steps)
    bl_time = time.time() - t0
    wins = read_safetensors(args["dump_batches"])["windows"]  # [steps, batch, T + 1]
    bl_loss = res["losses"]
    lrs = [cosine_lr(s, lr, warmup, steps, 0.0) for s in range(steps)]
    lr_err = max(abs(x - y) / lr for x, y in zip(lrs, res["lr"]))
    out = {"model": "llama-tiny", "steps": steps, "batch": 8, "seq_len": 128, "bitlearn_losses": bl_loss,
           "bitlearn_seconds": bl_time, "schedule_max_rel_diff": lr_err, "parameters": res["parameters"]}
    if torch is None:
        print("  bitlearn: loss %.4f -> %.4f, windows %s (PyTorch side skipped)" % (bl_loss[0], bl_loss[-1],
                                                                                 wins.shape))
        return out, True
    if lr_err > 1e-5:
        fail_setup("the mirrored cosine schedule differs from the driver's lr by %.2e (relative)" % lr_err)
    dev = a.torch_device
    model = load_hf(torch, args["save_hf_init"], torch.float32, dev, "sdpa")
    model.train()
    decay, no_decay = [], []
    for n, p in model.named_parameters():
        excluded = p.ndim < 2 or "embed" in n or "wte" in n or "wpe" in n
        (no_decay if excluded else decay).append(p)
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": wd}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=lr, betas=(0.9, 0.95), eps=1e-8, fused=False, foreach=False)
    win_t = torch.from_numpy(np.ascontiguousarray(wins.astype(np.int64))).to(dev)
    params = [p for p in model.parameters()]
    pt_loss = []
    t0 = time.time()
    for s in range(steps):
        opt.zero_grad(set_to_none=True)
        loss = mean_ce(torch, model, win_t[s])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, clip)
        for g in opt.param_groups:
            g["lr"] = lrs[s]
        opt.step()
        pt_loss.append(float(loss.item()))
    pt_time = time.time() - t0
    diff = np.abs(np.array(bl_loss) - np.array(pt_loss))
    ma = np.abs(moving_average(bl_loss, 20) - moving_average(pt_loss, 20))
    ok = bool(ma.max() <= 0.05)
    out.update({"torch_losses": pt_loss, "torch_seconds": pt_time, "max_abs_loss_diff": float(diff.max()),
                "max_abs_loss_diff_step": int(diff.argmax()) + 1, "first_step_loss_diff": float(diff[0]),
                "max_abs_ma20_diff": float(ma.max()), "final_ma20_bitlearn": float(moving_average(bl_loss, 20)[-1]),
                "final_ma20_torch": float(moving_average(pt_loss, 20)[-1]), "pass": ok})
    print("  bitlearn %.1f s, PyTorch %.1f s" % (bl_time, pt_time))
    print("  loss: step 1 %.5f vs %.5f; final 20-step mean %.4f vs %.4f" %
          (bl_loss[0], pt_loss[0], out["final_ma20_bitlearn"], out["final_ma20_torch"]))
    print("  max |loss diff| %.4f (step %d); max |20-step moving average diff| %.4f" %
          (out["max_abs_loss_diff"], out["max_abs_loss_diff_step"], out["max_abs_ma20_diff"]))
    print("  %s" % ("PASS (moving averages within 0.05)" if ok else "FAIL: moving averages differ by more than 0.05"))
    return out, ok


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--driver", required=True, help="path of the lm_train_driver program")
    ap.add_argument("--work", required=True, help="folder for the runs' files")
    ap.add_argument("--device", default=None, help="bitlearn's device (default: cuda when torch sees one, else cpu)")
    ap.add_argument("--torch-device", default=None, help="PyTorch's device (default: as --device)")
    ap.add_argument("--data", default=os.path.join(ROOT, "docs"), help="corpus (default: the docs folder)")
    ap.add_argument("--vocab", type=int, default=1024, help="ids of the tokenizer trained on the corpus")
    ap.add_argument("--parts", default="grad,curve", help="grad, curve or both")
    ap.add_argument("--models", default="llama,gpt2", help="models of the gradient check")
    ap.add_argument("--curve-steps", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bitlearn-only", action="store_true", help="run the driver side only (no torch)")
    a = ap.parse_args()
    a.driver = os.path.abspath(a.driver)
    a.work = os.path.abspath(a.work)
    a.data = os.path.abspath(a.data)
    if not os.access(a.driver, os.X_OK):
        fail_setup("--driver %s is not an executable (build the lm_train_driver target with -DBITLEARN_BENCH=ON)"
                   % a.driver)
    torch = None if a.bitlearn_only else import_torch()
    if a.device is None:
        a.device = "cuda" if torch is not None and torch.cuda.is_available() else "cpu"
    a.torch_device = a.torch_device or ("cuda" if a.device.startswith("cuda") else "cpu")
    if torch is not None and a.torch_device.startswith("cuda") and not torch.cuda.is_available():
        fail_setup("--torch-device %s but torch sees no CUDA device" % a.torch_device)
    os.makedirs(a.work, exist_ok=True)
    parts = set(a.parts.split(","))
    summary = {"device": a.device, "torch_device": a.torch_device, "data": a.data, "vocab": a.vocab}
    if torch is not None:
        import transformers
        summary["torch"] = torch.__version__
        summary["transformers"] = transformers.__version__
        if a.torch_device.startswith("cuda"):
            summary["gpu"] = torch.cuda.get_device_name(0)
    t0 = time.time()
    ok = True
    try:
        if "grad" in parts:
            summary["gradients"] = []
            for kind in a.models.split(","):
                r, passed = check_grads(a, torch, kind)
                summary["gradients"].append(r)
                ok = ok and passed
        if "curve" in parts:
            r, passed = check_curve(a, torch)
            summary["loss_curve"] = r
            ok = ok and passed
    except Exception as e:  # noqa: BLE001  (name what broke, keep what was measured)
        import traceback
        traceback.print_exc()
        summary["error"] = "%s: %s" % (type(e).__name__, e)
        write_json(os.path.join(a.work, "torch_check.json"), summary)
        fail_setup("the check raised %s: %s (partial summary in %s)" %
                   (type(e).__name__, e, os.path.join(a.work, "torch_check.json")))
    summary["seconds"] = time.time() - t0
    summary["pass"] = ok if torch is not None else None
    path = os.path.join(a.work, "torch_check.json")
    write_json(path, summary)
    verdict = "ALL PASS" if ok else "SOME CHECK FAILED"
    if torch is None:
        verdict = "bitlearn side ran (nothing compared: --bitlearn-only)"
    print("%s in %.0f s; summary in %s" % (verdict, summary["seconds"], path))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
