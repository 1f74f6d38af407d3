"""Causal language models and tokenizers (include/bitlearn/models.h, tokenizer.h).

    lm = bitlearn.models.CausalLM.from_pretrained("path/to/model", device="cpu")
    logits = lm.logits([[1, 2, 3]])                   # bitlearn.Tensor [1, 3, vocab]
    ids = lm.generate([1, 2, 3], max_new_tokens=8)    # prompt + new ids (the same as `bitlearn generate`)
    for token in lm.generate([1, 2, 3], max_new_tokens=8, stream=True):
        print(token)                                  # each new id as soon as it is picked

A model folder holds config.json and model.safetensors (Hugging Face layout: GPT-2, Llama,
Mistral, Qwen2, Phi-3, Gemma, Mamba, Mamba-2). The forward pass gives the same bits on every
device and for a sequence alone or inside a batch.
"""
import os

from . import _core

__all__ = ["CausalLM", "Tokenizer"]


class Tokenizer:
    """A tokenizer.json tokenizer: encode/decode as Hugging Face tokenizers does."""

    def __init__(self, impl):
        self._impl = impl

    @classmethod
    def from_file(cls, path):
        """Loads a tokenizer.json file."""
        return cls(_core.Tokenizer.from_file(os.fspath(path)))

    @classmethod
    def from_pretrained(cls, directory):
        """DIR/tokenizer.json, else DIR/../tokenizer.json (as `bitlearn generate` looks)."""
        for cand in (os.path.join(directory, "tokenizer.json"),
                     os.path.join(directory, os.pardir, "tokenizer.json")):
            if os.path.exists(cand):
                return cls.from_file(cand)
        raise FileNotFoundError(f"no tokenizer.json in {directory} or its parent folder")

    def encode(self, text):
        """The ids of text (list of int)."""
        return self._impl.encode(text)

    def decode(self, ids, skip_special_tokens=False):
        """The text of ids."""
        return self._impl.decode([int(i) for i in ids], skip_special_tokens)

    @property
    def vocab_size(self):
        return self._impl.vocab_size

    def token_to_id(self, token):
        return self._impl.token_to_id(token)

    def id_to_token(self, i):
        return self._impl.id_to_token(int(i))


def _ids(x):
    return [int(i) for i in x]


class CausalLM:
    """A decoder-only language model on one device."""

    def __init__(self, impl, tokenizer=None):
        self._impl = impl
        self.tokenizer = tokenizer

    @classmethod
    def from_pretrained(cls, directory, device="cpu"):
        """Loads DIR/config.json and DIR/model.safetensors onto device ('cpu', 'cuda', 'cuda:N');
        the tokenizer too when DIR (or its parent) has a tokenizer.json."""
        directory = os.fspath(directory)
        impl = _core.CausalLM.load(directory, device)
        try:
            tok = Tokenizer.from_pretrained(directory)
        except FileNotFoundError:
            tok = None
        return cls(impl, tok)

    @property
    def device(self):
        return self._impl.device

    @property
    def config(self):
        i = self._impl
        return {"model_type": i.model_type, "vocab_size": i.vocab_size,
                "max_positions": i.max_positions, "eos_token_id": i.eos_token_id}

    def logits(self, ids):
        """Logits of one sequence (list of ids: [T, vocab]) or of a batch (list of lists: [B, T, vocab],
        right padded), as a bitlearn.Tensor on the model's device."""
        if len(ids) and not hasattr(ids[0], "__len__"):
            out = self._impl.logits([_ids(ids)])
            return out.reshape(list(out.shape[1:]))
        return self._impl.logits([_ids(s) for s in ids])

    def _prompt(self, prompt):
        if isinstance(prompt, str):
            if self.tokenizer is None:
                raise ValueError("a text prompt needs a tokenizer (no tokenizer.json with the model)")
            return self.tokenizer.encode(prompt)
        return _ids(prompt)

    def generate(self, prompt, max_new_tokens=16, temperature=0.0, top_k=0, top_p=1.0, seed=0,
                 stop_at_eos=True, stream=False):
        """Prompt (ids or text) followed by up to max_new_tokens new ids: greedy at temperature 0,
        else sampling with Philox(seed). stream=True returns an iterator over the new ids as they
        are picked (the same ids)."""
        ids = self._prompt(prompt)
        args = (ids, int(max_new_tokens), float(temperature), int(top_k), float(top_p), int(seed),
                bool(stop_at_eos))
        if not stream:
            return self._impl.generate(*args)
        gen = _core.Generation(self._impl, *args)

        def tokens():
            while True:
                t = gen.next()
                if t is None:
                    return
                yield t
        return tokens()

    def generate_text(self, prompt, **kw):
        """generate() on text, decoded (the prompt included)."""
        if self.tokenizer is None:
            raise ValueError("generate_text needs a tokenizer (no tokenizer.json with the model)")
        return self.tokenizer.decode(self.generate(prompt, **kw))
