#!/usr/bin/env python3
"""Golden data for bitlearn's tokenizer tests, made with the Hugging Face `tokenizers` package.

Writes into tests/data/text/:
  train_corpus.txt        the training corpus (bitlearn's own docs and sources, plus Unicode lines);
                          made once, then kept, so that the golden data stays stable
  trained_tokenizers.json byte-level BPE trained on it by tokenizers' BpeTrainer (vocab 600,
                          min_frequency 2, special tokens <|endoftext|> and <pad>); bitlearn's
                          train_byte_level_bpe must give the same vocabulary and merges
  tokenizer_prefix.json   a second byte-level BPE: add_prefix_space, TemplateProcessing <s> $A </s>,
                          added tokens with lstrip / rstrip / single_word, merges in "a b" form
  tokenizer_split.json    a third: Llama-3 style Sequence[Split(regex), ByteLevel(use_regex=false)]
  tokenizer_golden.json   for each tokenizer, texts with tokenizers' ids and decoded text; random id
                          sequences with tokenizers' decode (skip_special_tokens false and true); and
                          how tokenizers' regex engine classes every code point (\\p{L}, \\p{N}, \\s)

Usage:
  python3 scripts/golden/tokenizer.py                 # (re)write the golden files
  python3 scripts/golden/tokenizer.py --check-trained FILE
      loads FILE (a tokenizer.json written by `bitlearn tokenizer train` on train_corpus.txt with
      the settings above) with tokenizers and checks that its vocabulary, merges and the encodings of
      every golden text equal those of trained_tokenizers.json; exit 1 on a difference.
  python3 scripts/golden/tokenizer.py --evidence build/bitlearn [--count N]
      a larger comparison than the committed golden data (not part of the default tests): N fresh
      texts per tokenizer (default 20000) encoded by `bitlearn tokenizer encode --jsonl` and by
      tokenizers; and training with vocabulary 3000 on all of the repository's docs and sources by
      `bitlearn tokenizer train` and by tokenizers (same vocabulary and merges). Exit 1 on a difference.
"""
import argparse
import glob
import json
import os
import random
import sys
import time

import tokenizers
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "tests", "data", "text")
FIXTURE = os.path.join(ROOT, "tests", "data", "hf", "tokenizer.json")

TRAIN_VOCAB = 600
TRAIN_MIN_FREQUENCY = 2
TRAIN_SPECIALS = ["<|endoftext|>", "<pad>"]
LLAMA3_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                r"|\s*[\r\n]+|\s+(?!\S)|\s+")


def corpus_texts(corpus):
    """The corpus split after every newline (the same split as the C++ test)."""
    parts = corpus.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def make_corpus():
    files = sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    files += sorted(glob.glob(os.path.join(ROOT, "src", "contract", "*.h")))
    text = "".join(open(f, encoding="utf-8").read() for f in files)
    rng = random.Random(11)
    unicode_lines = []
    words = ["数据", "学习", "モデル", "данные", "обучение", "δεδομένα", "café", "naïve", "résumé",
             "straße", "😀", "🚀", "👍🏽", "नमस्ते", "مرحبا", "สวัสดี", "한국어", "①②", "Ⅻ", "٣٤٥"]
    for _ in range(300):
        unicode_lines.append(" ".join(rng.choice(words) for _ in range(rng.randint(2, 9))))
    return text + "\n".join(unicode_lines) + "\n"


def train_tokenizers(texts, vocab_size, specials, add_prefix_space=False):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=TRAIN_MIN_FREQUENCY,
                                  special_tokens=specials, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts, trainer)
    return tok


def make_prefix_tokenizer(texts):
    tok = train_tokenizers(texts, 700, ["<unk>", "<s>", "</s>"], add_prefix_space=True)
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", special_tokens=[("<s>", tok.token_to_id("<s>")), ("</s>", tok.token_to_id("</s>"))])
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True, rstrip=False, special=True)])
    tok.add_tokens([AddedToken("[[name]]", single_word=True, normalized=False),
                    AddedToken("hello world", normalized=False),
                    AddedToken("@@", rstrip=True, normalized=True)])
    data = json.loads(tok.to_str())
    # Exercise the older "a b" string form of merges as well.
    data["model"]["merges"] = [a + " " + b for a, b in data["model"]["merges"]]
    return Tokenizer.from_str(json.dumps(data)), data


def make_split_tokenizer(texts):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3_SPLIT), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=650, min_frequency=TRAIN_MIN_FREQUENCY,
                                  special_tokens=["<|begin_of_text|>", "<|end_of_text|>"], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts, trainer)
    tok.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(single="<|begin_of_text|> $A",
                                      special_tokens=[("<|begin_of_text|>", tok.token_to_id("<|begin_of_text|>"))])])
    return tok


def valid_code_point(rng):
    while True:
        cp = rng.randrange(0x110000) if rng.random() < 0.5 else rng.randrange(0x30000)
        if not 0xD800 <= cp < 0xE000:
            return cp


def sample_texts(rng, count, specials, source_lines):
    pools = {
        "cjk": [chr(c) for c in range(0x4E00, 0x4F00)] + [chr(c) for c in range(0x3040, 0x30A0)],
        "hangul": [chr(c) for c in range(0xAC00, 0xAC80)],
        "cyrillic": [chr(c) for c in range(0x0400, 0x0460)],
        "greek": [chr(c) for c in range(0x0391, 0x03CA)],
        "arabic": [chr(c) for c in range(0x0620, 0x064B)] + [chr(c) for c in range(0x0660, 0x066A)],
        "devanagari": [chr(c) for c in range(0x0900, 0x0970)],
        "thai": [chr(c) for c in range(0x0E01, 0x0E5B)],
        "emoji": [chr(c) for c in range(0x1F600, 0x1F650)] + [chr(c) for c in range(0x1F300, 0x1F320)]
                 + ["\u200d", "\U0001F3FB", "\U0001F3FD", "\U0001F1EB\U0001F1F7", "\ufe0f", "👨‍👩‍👧"],
        "combining": [chr(c) for c in range(0x0300, 0x0370)] + ["\u20dd", "\u0489"],
        "digits": list("0123456789") + ["٣", "٤", "０", "９", "Ⅻ", "①", "½", "²", "𝟙"],
        "latin": list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") + list("éèêëàâäöüßçñøåæœ"),
        "space": [" ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "\u2028", "\x85", "\u180e", "\u200b",
                  "\u1680", "\u2009", "\x0b", "\x0c", "   \n"],
        "punct": list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~") + ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d",
                                                              "'S", "'LL", "…", "—", "«", "»", "、", "。", "¿"],
    }
    names = sorted(pools)
    out = []
    for i in range(count):
        kind = i % 6
        if kind == 0:  # random printable ASCII with whitespace runs
            alphabet = [chr(c) for c in range(32, 127)] + [" "] * 10 + ["\n", "\t", "\r"]
            s = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        elif kind == 1:  # source lines and chunks
            k = rng.randrange(len(source_lines))
            s = "".join(source_lines[k:k + rng.randint(1, 4)])
        elif kind == 2:  # mixed scripts, words separated by varied whitespace
            parts = []
            for _ in range(rng.randint(1, 8)):
                pool = pools[rng.choice(names)]
                parts.append("".join(rng.choice(pool) for _ in range(rng.randint(1, 6))))
                parts.append(rng.choice(pools["space"]) if rng.random() < 0.7 else "")
            s = "".join(parts)
        elif kind == 3:  # random code points anywhere in Unicode
            s = "".join(chr(valid_code_point(rng)) for _ in range(rng.randint(1, 20)))
        elif kind == 4:  # special and added tokens inside text, whole and broken
            pieces = list(specials) + [sp[:-1] for sp in specials] + ["word", " ", "x", "\n", "  ", "ab"]
            s = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 8)))
        else:  # long whitespace and punctuation runs, contractions
            pool = pools["space"] + pools["punct"] + ["a", "Z", "1", "22", "它"]
            s = "".join(rng.choice(pool) for _ in range(rng.randint(1, 30)))
        out.append(s)
    return out


def encode_cases(tok, texts):
    cases = []
    for t in texts:
        ids = tok.encode(t).ids
        cases.append({"text": t, "ids": ids, "decoded": tok.decode(ids, skip_special_tokens=False)})
    return cases


def decode_cases(tok, rng, count):
    n = tok.get_vocab_size()
    out = []
    for _ in range(count):
        ids = [rng.randrange(n) for _ in range(rng.randint(1, 12))]
        out.append({"ids": ids, "text": tok.decode(ids, skip_special_tokens=False),
                    "text_skip_special": tok.decode(ids, skip_special_tokens=True)})
    return out


def code_point_classes():
    """Ranges [first, last] of code points that tokenizers' regex engine puts in each class."""
    classes = {}
    for name, pattern in [("L", r"\p{L}"), ("N", r"\p{N}"), ("s", r"\s")]:
        split = pre_tokenizers.Split(Regex(pattern), behavior="removed")
        member = []
        chunk = 4096
        for start in range(0, 0x110000, chunk):
            cps = [c for c in range(start, start + chunk) if not 0xD800 <= c < 0xE000]
            if not cps:
                continue
            s = "".join(chr(c) for c in cps)
            kept = [False] * len(cps)
            for _, (b, e) in split.pre_tokenize_str(s):
                for k in range(b, e):
                    kept[k] = True
            member.extend(c for c, k in zip(cps, kept) if not k)
        ranges = []
        for c in member:
            if ranges and ranges[-1][1] == c - 1:
                ranges[-1][1] = c
            else:
                ranges.append([c, c])
        classes[name] = ranges
    return classes


def write_json(path, data):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=True, separators=(",", ":"))
        f.write("\n")


def check_trained(path):
    ours = Tokenizer.from_file(path)
    theirs = Tokenizer.from_file(os.path.join(OUT, "trained_tokenizers.json"))
    ok = True
    if ours.get_vocab(with_added_tokens=True) != theirs.get_vocab(with_added_tokens=True):
        print("FAIL vocabulary differs")
        ok = False
    ours_json = json.loads(ours.to_str())
    theirs_json = json.loads(theirs.to_str())
    if ours_json["model"]["merges"] != theirs_json["model"]["merges"]:
        print("FAIL merges differ")
        ok = False
    golden = json.load(open(os.path.join(OUT, "tokenizer_golden.json"), encoding="utf-8"))
    texts = [c["text"] for c in golden["tokenizers"]["trained"]["encode"]]
    texts += corpus_texts(open(os.path.join(OUT, "train_corpus.txt"), encoding="utf-8").read())
    bad = sum(ours.encode(t).ids != theirs.encode(t).ids for t in texts)
    print(f"{'PASS' if bad == 0 else 'FAIL'} {len(texts) - bad}/{len(texts)} texts encode identically "
          f"(tokenizers {tokenizers.__version__} loading bitlearn's file vs its own training)")
    return ok and bad == 0


def evidence(binary, count):
    import subprocess
    import tempfile
    ok = True
    tmp = tempfile.mkdtemp(prefix="bl_tok_")
    source_lines = open(os.path.join(OUT, "train_corpus.txt"), encoding="utf-8").read().splitlines(keepends=True)
    files = {"fixture": (FIXTURE, ["<|endoftext|>"]),
             "prefix": (os.path.join(OUT, "tokenizer_prefix.json"), ["<s>", "</s>", "<mask>", "[[name]]", "@@"]),
             "split": (os.path.join(OUT, "tokenizer_split.json"), ["<|begin_of_text|>"]),
             "trained": (os.path.join(OUT, "trained_tokenizers.json"), TRAIN_SPECIALS)}
    # Letters and digits that tokenizers' Oniguruma knows but PCRE2 10.42 (Unicode 14, the version of
    # this Python's unicodedata too) does not: texts holding them may split differently (docs/tokenizer.md).
    import unicodedata
    golden = json.load(open(os.path.join(OUT, "tokenizer_golden.json"), encoding="utf-8"))
    newer = set()
    for cls in ("L", "N"):
        for first, last in golden["code_point_classes"][cls]:
            newer.update(c for c in range(first, last + 1) if unicodedata.category(chr(c)) == "Cn")
    print(f"(unicodedata {unicodedata.unidata_version}; {len(newer)} letters/digits newer than it)")
    rng = random.Random(777)
    for name, (path, specials) in files.items():
        tok = Tokenizer.from_file(path)
        texts = sample_texts(rng, count, specials, source_lines)
        jsonl = os.path.join(tmp, name + ".jsonl")
        with open(jsonl, "w", encoding="ascii") as f:
            for t in texts:
                f.write(json.dumps(t, ensure_ascii=True) + "\n")
        out = subprocess.run([binary, "tokenizer", "encode", "--tokenizer", path, "--jsonl", jsonl],
                             check=True, capture_output=True, text=True).stdout.split("\n")
        bad = newer_unicode = 0
        for i, t in enumerate(texts):
            ours = [int(x) for x in out[i].split(",")] if out[i] else []
            if ours != tok.encode(t).ids:
                if any(ord(c) in newer for c in t):
                    newer_unicode += 1
                    continue
                bad += 1
                if bad <= 3:
                    print(f"  {name}: differs on {t!r}")
        ok &= bad == 0
        print(f"{'PASS' if bad == 0 else 'FAIL'} encode {name}: {count - bad - newer_unicode}/{count} texts identical,"
              f" {newer_unicode} differ through letters/digits newer than Unicode 14, {bad} otherwise")
    corpus_files = sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")) + glob.glob(os.path.join(ROOT, "src", "**", "*.h"), recursive=True)
                          + glob.glob(os.path.join(ROOT, "src", "**", "*.cpp"), recursive=True))
    corpus = os.path.join(tmp, "corpus.txt")
    with open(corpus, "w", encoding="utf-8", newline="\n") as f:
        for c in corpus_files:
            f.write(open(c, encoding="utf-8").read())
    ours_path = os.path.join(tmp, "ours.json")
    t0 = time.perf_counter()
    subprocess.run([binary, "tokenizer", "train", "--corpus", corpus, "--vocab-size", "3000", "--special",
                    "<|endoftext|>", "--out", ours_path], check=True, capture_output=True)
    t_ours = time.perf_counter() - t0
    texts = corpus_texts(open(corpus, encoding="utf-8").read())
    t0 = time.perf_counter()
    theirs = train_tokenizers(texts, 3000, ["<|endoftext|>"])
    t_theirs = time.perf_counter() - t0
    ours = json.loads(Tokenizer.from_file(ours_path).to_str())
    theirs = json.loads(theirs.to_str())
    same = ours["model"]["vocab"] == theirs["model"]["vocab"] and ours["model"]["merges"] == theirs["model"]["merges"]
    ok &= same
    print(f"{'PASS' if same else 'FAIL'} training vocabulary 3000 on {os.path.getsize(corpus)} bytes "
          f"({len(texts)} texts): {len(ours['model']['merges'])} merges identical to tokenizers' BpeTrainer "
          f"(bitlearn {t_ours:.2f} s incl. process start, tokenizers {t_theirs:.2f} s)")
    return ok


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--check-trained", metavar="FILE")
    parser.add_argument("--evidence", metavar="BITLEARN")
    parser.add_argument("--count", type=int, default=20000)
    args = parser.parse_args()
    if args.check_trained:
        sys.exit(0 if check_trained(args.check_trained) else 1)
    if args.evidence:
        sys.exit(0 if evidence(args.evidence, args.count) else 1)

    os.makedirs(OUT, exist_ok=True)
    corpus_path = os.path.join(OUT, "train_corpus.txt")
    if not os.path.exists(corpus_path):
        with open(corpus_path, "w", encoding="utf-8", newline="\n") as f:
            f.write(make_corpus())
    corpus = open(corpus_path, encoding="utf-8").read()
    texts = corpus_texts(corpus)

    trained = train_tokenizers(texts, TRAIN_VOCAB, TRAIN_SPECIALS)
    trained.save(os.path.join(OUT, "trained_tokenizers.json"))
    prefix, prefix_data = make_prefix_tokenizer(texts)
    with open(os.path.join(OUT, "tokenizer_prefix.json"), "w", encoding="utf-8") as f:
        json.dump(prefix_data, f, ensure_ascii=False, indent=1)
    split = make_split_tokenizer(texts)
    split.save(os.path.join(OUT, "tokenizer_split.json"))

    source_lines = []
    for f in sorted(glob.glob(os.path.join(ROOT, "src", "core", "*.cpp")))[:6]:
        source_lines += open(f, encoding="utf-8").read().splitlines(keepends=True)
    fixture = Tokenizer.from_file(FIXTURE)
    rng = random.Random(20261130)
    golden = {"tokenizers_version": tokenizers.__version__, "tokenizers": {}}
    plan = [("fixture", fixture, FIXTURE, 2400, 400, ["<|endoftext|>"]),
            ("prefix", prefix, "tokenizer_prefix.json", 600, 150, ["<s>", "</s>", "<mask>", "[[name]]",
                                                                  "hello world", "@@"]),
            ("split", split, "tokenizer_split.json", 600, 150, ["<|begin_of_text|>", "<|end_of_text|>"]),
            ("trained", trained, "trained_tokenizers.json", 600, 100, TRAIN_SPECIALS)]
    for name, tok, path, n_text, n_decode, specials in plan:
        sample = sample_texts(rng, n_text, specials, source_lines)
        golden["tokenizers"][name] = {
            "file": os.path.relpath(path if os.path.isabs(path) else os.path.join(OUT, path), ROOT),
            "vocab_size": tok.get_vocab_size(),
            "encode": encode_cases(tok, sample),
            "decode": decode_cases(tok, rng, n_decode),
        }
    golden["code_point_classes"] = code_point_classes()
    golden["train"] = {"corpus": "tests/data/text/train_corpus.txt", "vocab_size": TRAIN_VOCAB,
                       "min_frequency": TRAIN_MIN_FREQUENCY, "special_tokens": TRAIN_SPECIALS,
                       "expected": "tests/data/text/trained_tokenizers.json"}
    write_json(os.path.join(OUT, "tokenizer_golden.json"), golden)
    total = sum(len(v["encode"]) for v in golden["tokenizers"].values())
    print(f"wrote {total} encode cases for {len(plan)} tokenizers (tokenizers {tokenizers.__version__})")


if __name__ == "__main__":
    main()
