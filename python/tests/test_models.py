"""bitlearn.models: the tiny Hugging Face fixtures of tests/data/hf against `bitlearn generate`,
`bitlearn logits` and `bitlearn tokenizer`, streaming included."""
import json
import pathlib
import struct
import subprocess

import numpy as np
import pytest

import bitlearn as bl
from bitlearn.models import CausalLM, Tokenizer

HF = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "hf"
PROMPT = [467, 284, 73, 66, 264, 65, 67, 371, 8, 78, 306, 199, 259, 323, 291, 302]
MODELS = ["gpt2", "llama", "mistral", "qwen2", "phi3", "gemma", "mamba", "mamba2"]


def read_safetensors(path):
    raw = pathlib.Path(path).read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, h in header.items():
        if name == "__metadata__":
            continue
        a, b = h["data_offsets"]
        out[name] = (h["dtype"], h["shape"], raw[8 + n + a:8 + n + b])
    return out


def cli_ids(text):
    return [int(t) for t in text.strip().split(",")]


@pytest.mark.parametrize("name", MODELS)
def test_greedy_and_streaming_equal_the_program(cli, name):
    lm = CausalLM.from_pretrained(HF / name)
    want = cli_ids(subprocess.run([cli, "generate", "--model", str(HF / name), "--ids",
                                   ",".join(map(str, PROMPT)), "--max-new-tokens", "12"],
                                  capture_output=True, text=True, check=True).stdout)
    assert lm.generate(PROMPT, max_new_tokens=12) == want
    assert PROMPT + list(lm.generate(PROMPT, max_new_tokens=12, stream=True)) == want


def test_sampling_equals_the_program(cli):
    lm = CausalLM.from_pretrained(HF / "llama")
    want = cli_ids(subprocess.run([cli, "generate", "--model", str(HF / "llama"), "--ids", "5,6,7",
                                   "--max-new-tokens", "10", "--temperature", "1.3", "--seed", "9",
                                   "--top-k", "50", "--top-p", "0.9"],
                                  capture_output=True, text=True, check=True).stdout)
    kw = dict(max_new_tokens=10, temperature=1.3, seed=9, top_k=50, top_p=0.9)
    assert lm.generate([5, 6, 7], **kw) == want
    assert [5, 6, 7] + list(lm.generate([5, 6, 7], stream=True, **kw)) == want


@pytest.mark.parametrize("name", ["qwen2", "mamba2"])
def test_logits_bytes_equal_the_program(cli, tmp_path, name):
    out = tmp_path / "l.safetensors"
    subprocess.run([cli, "logits", "--model", str(HF / name), "--ids", "1,2,3,4", "--out", str(out)],
                   check=True, capture_output=True)
    dtype, shape, data = read_safetensors(out)["logits"]
    lm = CausalLM.from_pretrained(HF / name)
    mine = lm.logits([1, 2, 3, 4])
    assert list(mine.shape) == shape[-2:]
    assert np.asarray(mine).astype("<f4").tobytes() == data
    # A sequence gives the same bits alone and inside a padded batch.
    batch = lm.logits([[1, 2, 3, 4], [9, 8]])
    assert np.asarray(batch)[0].tobytes() == np.asarray(mine).tobytes()


def test_tokenizer_matches_the_program(cli):
    tok = Tokenizer.from_file(HF / "tokenizer.json")
    text = "def main():\n    return 1  # ünïcode"
    want = subprocess.run([cli, "tokenizer", "encode", "--tokenizer", str(HF / "tokenizer.json"),
                           "--text", text], capture_output=True, text=True, check=True).stdout
    ids = tok.encode(text)
    assert ids == [int(t) for t in want.replace(",", " ").split()]
    assert tok.decode(ids) == text
    lm = CausalLM.from_pretrained(HF / "gpt2")
    got = subprocess.run([cli, "generate", "--model", str(HF / "gpt2"), "--prompt", "def main():",
                          "--max-new-tokens", "4"], capture_output=True, text=True, check=True).stdout
    assert lm.generate_text("def main():", max_new_tokens=4) == got.rstrip("\n")


def test_bad_input_is_a_python_exception(tmp_path):
    with pytest.raises(bl.Error):
        CausalLM.from_pretrained(tmp_path)
    lm = CausalLM.from_pretrained(HF / "gpt2")
    with pytest.raises(bl.Error, match="empty"):
        lm.generate([])
    with pytest.raises(bl.Error, match="max_position"):
        lm.generate(PROMPT, max_new_tokens=10_000)
    with pytest.raises(bl.Error):
        lm.logits([[1, 2, 100_000]])
    if not bl.cuda_available():
        with pytest.raises(bl.Error, match="CUDA"):
            CausalLM.from_pretrained(HF / "gpt2", device="cuda")


def test_language_model_training_from_python_writes_the_programs_checkpoint(cli, tmp_path):
    """A tiny Llama trained through bitlearn.cli (the program's code, in process) and by the
    program write the same checkpoint bytes; the exported model loads in CausalLM."""
    root = HF.parents[2]
    docs = sorted(str(p) for p in (root / "docs").glob("*.md"))
    tok = tmp_path / "tokenizer.json"
    assert bl.cli("tokenizer", "train", "--corpus", *docs, "--vocab-size", "384", "--special",
                  "<|endoftext|>", "--out", str(tok)) == 0
    (tmp_path / "config.json").write_text(json.dumps({
        "model_type": "llama", "vocab_size": 384, "hidden_size": 64, "intermediate_size": 96,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
        "max_position_embeddings": 32, "rms_norm_eps": 1e-5, "hidden_act": "silu",
        "tie_word_embeddings": False}))
    common = ["train", "--model", "llama", "--config", str(tmp_path / "config.json"), "--tokenizer",
              str(tok), "--steps", "4", "--batch", "4", "--seq-len", "32", "--warmup", "2", "--quiet",
              "--data", str(root / "docs"), "--tokens", str(tmp_path / "tokens.bin"), "--lr", "3e-3"]
    assert bl.cli(*common, "--checkpoint", str(tmp_path / "py.ckpt"), "--save-hf", str(tmp_path / "hf")) == 0
    subprocess.run([cli, *common, "--checkpoint", str(tmp_path / "cli.ckpt")], check=True,
                   capture_output=True)
    assert (tmp_path / "py.ckpt").read_bytes() == (tmp_path / "cli.ckpt").read_bytes()
    lm = CausalLM.from_pretrained(tmp_path / "hf")
    want = subprocess.run([cli, "generate", "--model", str(tmp_path / "hf"), "--ids", "1,2,3",
                           "--max-new-tokens", "5"], capture_output=True, text=True, check=True).stdout
    assert lm.generate([1, 2, 3], max_new_tokens=5) == cli_ids(want)
