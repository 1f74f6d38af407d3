"""bitlearn.lm: train and fine-tune causal language models (GPT-2 and Llama-family) from Python.

``train`` runs the library's trainer, the one ``bitlearn train --model gpt2|llama|<preset>`` runs:
the same options give the same per-step losses, parameter hashes and checkpoint bytes, on every
device and thread count, and a checkpoint written here resumes from the command line and back.
The trained model loads with ``bitlearn.models.CausalLM.from_pretrained(save_hf)``.
"""
import json
import os

from . import _core

__all__ = ["train", "presets"]


def presets():
    """The names of the model presets ``train(model=...)`` takes (besides ``gpt2`` and ``llama``)."""
    return list(_core._lm_presets())


def _path(p):
    return "" if p is None else os.fspath(p)


def train(model="llama", *, data, tokenizer=None, config=None, init_from=None, tokens=None,
          steps=200, batch=8, seq_len=0, shards=0, accumulate=1, lr=3e-4, min_lr=0.0,
          weight_decay=0.1, clip=1.0, beta1=0.9, beta2=0.95, eps=1e-8, warmup=0,
          sampler="random", seed=1, device="cpu", threads=0, recompute=False, checkpoint=None,
          checkpoint_every=0, resume=False, stop_at=0, save_hf=None, report=None,
          val_fraction=0.05, eval_every=0, eval_batches=4, hash_every=1, progress=False,
          on_step=None):
    """Trains a causal language model and returns the run's report as a dict.

    model: ``"gpt2"``, ``"llama"`` or a preset name (``presets()``); config: a config.json whose
    shape replaces the preset's; init_from: a Hugging Face folder to fine-tune (its tokenizer.json
    is the default tokenizer). data: a UTF-8 text file or a folder of them; tokenizer: a
    tokenizer.json (``bitlearn tokenizer train`` makes one); tokens: the token file (made when
    missing or stale).

    steps, batch (sequences per step), seq_len (0: the model's context), shards (logical shards
    per step, 0: one per sequence; the step's gradient is their ordered fold, so accumulate, the
    micro-batches per step, never changes a bit), AdamW (lr, min_lr, weight_decay, beta1, beta2,
    eps; no decay on norms, biases and embeddings), clip (global gradient norm, 0: off), warmup
    (linear, then cosine to min_lr), sampler ("random" windows by (seed, step) or "sequential"),
    seed (weights and batches), device ("cpu", "cuda", "cuda:N"), threads (CPU threads for the
    run, 0: the current count; restored afterwards), recompute (activation recomputation: less
    memory, the same bits).

    checkpoint (a safetensors file with model, optimizer, step, schedule and data position,
    written atomically every checkpoint_every steps and at the end), resume (continue from it),
    stop_at (end after this step of the schedule, leaving a checkpoint to resume, here, from the
    command line, or on another device), save_hf (export a Hugging Face folder at the end), report
    (also write the JSON report there, with a loss-curve SVG beside it), val_fraction, eval_every
    and eval_batches (held-out loss), hash_every (parameter SHA-256 every N steps, 0: never),
    progress (a progress line on stderr).

    on_step: called after every step with that step's record (a dict: step, loss, loss_bits,
    grad_norm, grad_norm_bits, lr, lr_bits, val_loss when evaluated, params_sha256 when hashed,
    seconds, tokens); an exception it raises stops the run and reaches the caller, the last
    checkpoint left as it was.

    Returns the report (format ``bitlearn.lm.train.v1``): ``steps`` (one record per step run
    here), ``first_step``, ``last_step``, ``parameters``, ``final_params_sha256`` and
    ``checkpoint_sha256``. Bad input (a corpus shorter than one sequence, a tokenizer that does not
    fit the model, a checkpoint of another shape or other options, a NaN loss) raises
    ``bitlearn.Error`` naming the problem.
    """
    if sampler not in ("random", "sequential"):
        raise ValueError("sampler must be 'random' or 'sequential', got %r" % (sampler,))
    if on_step is not None and not callable(on_step):
        raise TypeError("on_step must be callable or None")
    if tokenizer is None and init_from is not None:
        candidate = os.path.join(os.fspath(init_from), "tokenizer.json")
        if os.path.exists(candidate):
            tokenizer = candidate
    if data is None:
        raise ValueError("data is required: a UTF-8 text file or a folder of them")
    if tokenizer is None:
        raise ValueError("tokenizer is required: a tokenizer.json (`bitlearn tokenizer train --corpus "
                         "FILES --vocab-size N --out FILE` makes one from the corpus)")
    options = {
        "model": str(model), "config": _path(config), "init_from": _path(init_from),
        "data": _path(data), "tokenizer": _path(tokenizer), "tokens": _path(tokens),
        "steps": int(steps), "batch": int(batch), "seq_len": int(seq_len), "shards": int(shards),
        "accumulate": int(accumulate), "lr": float(lr), "min_lr": float(min_lr),
        "weight_decay": float(weight_decay), "clip": float(clip), "beta1": float(beta1),
        "beta2": float(beta2), "eps": float(eps), "warmup": int(warmup), "sampler": sampler,
        "seed": int(seed), "device": str(device), "threads": int(threads),
        "recompute": bool(recompute), "checkpoint": _path(checkpoint),
        "checkpoint_every": int(checkpoint_every), "resume": bool(resume), "stop_at": int(stop_at),
        "save_hf": _path(save_hf), "report": _path(report), "val_fraction": float(val_fraction),
        "eval_every": int(eval_every), "eval_batches": int(eval_batches),
        "hash_every": int(hash_every), "progress": bool(progress),
    }
    return json.loads(_core._lm_train(options, on_step))
