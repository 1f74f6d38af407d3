#!/usr/bin/env python3
"""Encode throughput of bitlearn's tokenizer against the Hugging Face tokenizers library.

Both encode the same text (tests/data/text/train_corpus.txt repeated 16 times, about 1.1 MB) with
the same tokenizer.json, once as one string and once line by line, single-threaded (tokenizers'
encode of one string runs on one thread; RAYON_NUM_THREADS=1 is set anyway). The ids are checked
equal first. Prints MB/s for both and the ratio bitlearn / tokenizers.

  python3 scripts/bench_tokenizer.py [--build build] [--tokenizer FILE]
"""
import argparse
import os
import subprocess
import sys
import time

os.environ["RAYON_NUM_THREADS"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"
from tokenizers import Tokenizer  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def best(f, reps=5):
    t = 1e30
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        t = min(t, time.perf_counter() - t0)
    return t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--tokenizer", default="tests/data/hf/tokenizer.json")
    ap.add_argument("--text", default="tests/data/text/train_corpus.txt")
    ap.add_argument("--repeat", type=int, default=16)
    a = ap.parse_args()
    os.chdir(ROOT)
    text = open(a.text, encoding="utf-8").read() * a.repeat
    lines = text.splitlines(keepends=True)
    tok = Tokenizer.from_file(a.tokenizer)
    mb = len(text.encode("utf-8")) / 1e6
    whole = best(lambda: tok.encode(text))
    per_line = best(lambda: [tok.encode(l) for l in lines])
    ids = tok.encode(text).ids
    out = subprocess.run([os.path.join(a.build, "bench", "bench_tokenizer"), f"--tokenizer={a.tokenizer}",
                          f"--text={a.text}", f"--repeat={a.repeat}", "--benchmark_filter=NONE"],
                         check=True, capture_output=True, text=True).stdout
    ours = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].startswith("bitlearn_"):
            ours[parts[0]] = float(parts[1])
        if parts and parts[0] == "bytes":
            ours_tokens = int(parts[3])
    same = ours_tokens == len(ids)
    print(f"text {mb:.2f} MB, {len(ids)} tokens, tokenizer {a.tokenizer}; token counts equal: {same}")
    print(f"{'case':<22}{'bitlearn MB/s':>15}{'tokenizers MB/s':>17}{'ratio':>8}")
    for name, key, t in [("one encode, whole", "bitlearn_encode_whole_MBps", whole),
                         ("encode per line", "bitlearn_encode_lines_MBps", per_line)]:
        theirs = mb / t
        print(f"{name:<22}{ours[key]:>15.2f}{theirs:>17.2f}{ours[key] / theirs:>8.2f}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
