"""bitlearn.lm.train: language-model training from Python gives the bits of `bitlearn train` (the
same checkpoint bytes and per-step records), resumes across the two, streams step records to a
callback, loads as a CausalLM, and refuses bad input with clear errors."""
import json
import os

import pytest

import bitlearn
import bitlearn.lm
from bitlearn.models import CausalLM

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = os.path.join(ROOT, "docs")
VOCAB = 320


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    d = tmp_path_factory.mktemp("lm")
    corpus = sorted(os.path.join(DOCS, f) for f in os.listdir(DOCS) if f.endswith(".md"))
    tok = str(d / "tokenizer.json")
    assert bitlearn.cli("tokenizer", "train", "--corpus", *corpus, "--vocab-size", VOCAB,
                        "--special", "<|endoftext|>", "--out", tok) == 0
    config = str(d / "config.json")
    with open(config, "w") as f:
        json.dump({"model_type": "llama", "vocab_size": VOCAB, "hidden_size": 48,
                   "intermediate_size": 80, "num_hidden_layers": 2, "num_attention_heads": 4,
                   "num_key_value_heads": 2, "max_position_embeddings": 32, "rms_norm_eps": 1e-5,
                   "hidden_act": "silu", "tie_word_embeddings": False}, f)
    return {"dir": d, "tokenizer": tok, "config": config, "tokens": str(d / "tokens.bin")}


def common(s, **kw):
    base = dict(model="llama", config=s["config"], tokenizer=s["tokenizer"], data=DOCS,
                tokens=s["tokens"], steps=5, batch=4, seq_len=32, warmup=2, lr=3e-3)
    base.update(kw)
    return base


def cli_args(s, *extra):
    return ("train", "--model", "llama", "--config", s["config"], "--tokenizer", s["tokenizer"],
            "--data", DOCS, "--tokens", s["tokens"], "--steps", 5, "--batch", 4, "--seq-len", 32,
            "--warmup", 2, "--lr", 3e-3, "--quiet") + extra


def read(path):
    with open(path, "rb") as f:
        return f.read()


def records(report):
    return [(r["step"], r["loss_bits"], r["grad_norm_bits"], r["lr_bits"], r.get("params_sha256"))
            for r in report["steps"]]


def test_python_and_cli_give_the_same_checkpoint_and_records(setup):
    s, d = setup, setup["dir"]
    seen = []
    py = bitlearn.lm.train(**common(s, checkpoint=str(d / "py.ckpt"), save_hf=str(d / "hf")),
                           on_step=seen.append)
    assert py["format"] == "bitlearn.lm.train.v1"
    assert [r["step"] for r in py["steps"]] == [1, 2, 3, 4, 5]
    assert len(py["final_params_sha256"]) == 64 and len(py["checkpoint_sha256"]) == 64
    # The callback saw every step's record, the report's own.
    assert [r["step"] for r in seen] == [1, 2, 3, 4, 5]
    assert [r["loss_bits"] for r in seen] == [r["loss_bits"] for r in py["steps"]]
    assert seen[-1]["params_sha256"] == py["final_params_sha256"]

    assert bitlearn.cli(*cli_args(s, "--checkpoint", str(d / "cli.ckpt"), "--report",
                                  str(d / "cli.json"))) == 0
    with open(d / "cli.json") as f:
        cli = json.load(f)
    assert records(cli) == records(py)
    assert read(d / "cli.ckpt") == read(d / "py.ckpt")
    assert cli["checkpoint_sha256"] == py["checkpoint_sha256"]

    # The exported folder runs as a CausalLM.
    lm = CausalLM.from_pretrained(str(d / "hf"))
    assert lm.config["vocab_size"] == VOCAB
    assert len(lm.generate([1, 2, 3], max_new_tokens=4, stop_at_eos=False)) == 7


def test_micro_batches_and_threads_keep_the_bits(setup):
    s, d = setup, setup["dir"]
    before = bitlearn.num_threads()
    a = bitlearn.lm.train(**common(s, checkpoint=str(d / "a.ckpt")))
    b = bitlearn.lm.train(**common(s, checkpoint=str(d / "b.ckpt"), accumulate=2, threads=1))
    assert bitlearn.num_threads() == before  # the run's thread count is not left behind
    assert records(a) == records(b)
    assert read(d / "a.ckpt") == read(d / "b.ckpt")


def test_stop_in_python_resume_from_the_command_line(setup):
    s, d = setup, setup["dir"]
    whole = bitlearn.lm.train(**common(s, checkpoint=str(d / "whole.ckpt")))
    first = bitlearn.lm.train(**common(s, checkpoint=str(d / "split.ckpt"), stop_at=2))
    assert first["last_step"] == 2
    assert bitlearn.cli(*cli_args(s, "--checkpoint", str(d / "split.ckpt"), "--resume", "--report",
                                  str(d / "rest.json"))) == 0
    with open(d / "rest.json") as f:
        rest = json.load(f)
    assert records(first) + records(rest) == records(whole)
    assert read(d / "split.ckpt") == read(d / "whole.ckpt")
    # And back: a resume from Python of a finished run has nothing left to do.
    again = bitlearn.lm.train(**common(s, checkpoint=str(d / "split.ckpt"), resume=True))
    assert again["steps"] == [] and again["first_step"] == 5


def test_an_exception_in_on_step_stops_the_run_and_keeps_the_checkpoint(setup):
    s, d = setup, setup["dir"]
    ckpt = str(d / "stop.ckpt")
    bitlearn.lm.train(**common(s, checkpoint=ckpt, steps=5, stop_at=2))
    kept = read(ckpt)

    class Halt(Exception):
        pass

    def halt(record):
        if record["step"] == 4:
            raise Halt("enough")

    with pytest.raises(Halt, match="enough"):
        bitlearn.lm.train(**common(s, checkpoint=ckpt, resume=True), on_step=halt)
    assert read(ckpt) == kept


def test_bad_input_raises_clear_errors(setup, tmp_path):
    s = setup
    with pytest.raises(ValueError, match="sampler"):
        bitlearn.lm.train(**common(s, sampler="shuffled"))
    with pytest.raises(ValueError, match="tokenizer is required"):
        bitlearn.lm.train(data=DOCS)
    with pytest.raises(TypeError, match="on_step"):
        bitlearn.lm.train(**common(s), on_step=3)
    short = tmp_path / "short.txt"
    short.write_text("too short")
    with pytest.raises(bitlearn.Error, match="(?i)shorter|tokens"):
        bitlearn.lm.train(**common(s, data=str(short), tokens=str(tmp_path / "short.bin")))
    with pytest.raises(bitlearn.Error):
        bitlearn.lm.train(**common(s, device="cuda:99"))
    assert "llama-tiny" in bitlearn.lm.presets()
