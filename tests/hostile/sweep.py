#!/usr/bin/env python3
"""The hostile-input sweep of the `bitlearn` command line.

Generates several hundred malformed or adversarial inputs through every reader the command line has
(safetensors, shard index, config.json, tokenizer.json, CSV, model files, XGBoost JSON, IDX,
language-model checkpoints, verify reports, and the options of every command), runs `bitlearn` on
each in a fresh folder under a wall-clock timeout and an address-space limit, and classifies what
happened:

  clean        exit 2 (or 1) with a message on stderr that is not a bare exception text
  accepted     exit 0: right only when the case allows it (expect "either" or "ok")
  crash        a signal, an exit code >= 128, "terminate called" or a sanitizer report
  hang         the timeout ran out
  bad message  stderr is empty or holds a bare C++ exception text or type name
  memory       "out of memory" on stderr or a peak resident size beyond the limit of the case:
               the program tried to allocate more than the input justifies
  escaped      a file appeared outside the case's folder, or an input file of the case changed
  refused      a case meant to be valid (expect "ok", the unmodified inputs) was refused: the
               mutations of that family would not reach the reader they are meant for

Usage: sweep.py [--bitlearn PATH] [--source DIR] [--only READER] [--list] [--jobs N] [--json FILE]
                [--keep] [--timeout S]
Exit code 0 only when no case crashed, hung, gave a bad message, ran out of memory, escaped, was
accepted against its expectation or (for a valid input) refused. Cases marked `known` are failures
already reported; they are shown but do not change the exit code.

Python 3 standard library only.
"""

import argparse
import concurrent.futures
import copy
import gzip
import hashlib
import json
import os
import re
import resource
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import time
import zlib

# ----------------------------------------------------------------------------------------------
# Limits of one case.

TIMEOUT_S = 20                 # wall clock per command
OVERFLOW_STEPS_TIMEOUT_S = 5   # --steps 10^23: refused at once, or taken as a huge count and run
FIFO_TIMEOUT_S = 5             # a named pipe nobody writes: a reader that opens it blocks at once
ADDRESS_SPACE = 4 << 30        # RLIMIT_AS; every valid case of the sweep also passes with 256 MiB
RSS_LIMIT_KB = 1 << 20         # peak resident size (KiB) beyond which a small input is a memory finding

# Texts on stderr that mean an exception reached the user without being turned into a message.
BAD_TEXT = [
    re.compile(p) for p in (
        r"std::", r"bad_alloc", r"basic_string", r"vector::_M", r"\bsto(i|l|ll|ul|ull|f|d|ld)\b",
        r"invalid_argument", r"out_of_range", r"nlohmann", r"St\d+[a-z_]+", r"N\d+[A-Za-z_]+\d",
        r"what\(\):", r"bad_array_new_length", r"length_error", r"unordered_map::at", r"map::at",
        r"\bbitset\b", r"^bitlearn: error: \[json\.exception", r"Unknown exception",
    )
]
CRASH_TEXT = ("terminate called", "Sanitizer", "runtime error:", "Segmentation fault", "core dumped",
              "Assertion", "stack smashing", "double free", "corrupted", "free(): ", "malloc(): ")

# ----------------------------------------------------------------------------------------------
# A case: files written into its folder, one or more commands run there, and what it expects.


class Case:
    """One hostile input.

    reader:  the family (safetensors, shard_index, config, tokenizer, csv, model_file, xgboost,
             idx, checkpoint, report, options)
    name:    unique within the sweep
    steps:   list of argv lists; "{bin}" is replaced by the binary, "{d}" by the case folder,
             "{fx}" by the shared fixture folder, "{src}" by the source folder. The steps run in
             order; the case's outcome is the first that fails, else the last. Earlier steps make
             inputs (e.g. fit a model file) and must succeed.
    files:   {relative path: bytes} written into the case folder before the run (inputs)
    links:   {relative path: target} symbolic links made in the case folder
    dirs:    folders made in the case folder
    setup:   a function of the case folder run after files are written (fifos, permissions)
    expect:  "error" (the input is invalid: must be refused), "either" (the mutation may keep it
             valid) or "ok" (a valid input: must be accepted)
    stdout:  None (to a file) or "/dev/full"
    known:   a short text when the case is a failure already reported (it stays in the sweep)
    outputs: input files the command may rewrite (a checkpoint that --resume continues)
    what:    one line saying what the input is
    """

    def __init__(self, reader, name, steps, files=None, expect="error", what="", links=None, dirs=None,
                 setup=None, stdout=None, known=None, env=None, rss_kb=RSS_LIMIT_KB, timeout=None, outputs=(),
                 answers=()):
        self.reader, self.name, self.steps = reader, name, steps
        self.files = files or {}
        self.links = links or {}
        self.dirs = dirs or []
        self.setup = setup
        self.expect, self.what, self.stdout, self.known = expect, what, stdout, known
        self.env = env or {}
        self.rss_kb = rss_kb
        self.timeout = timeout
        self.outputs = set(outputs)
        self.answers = set(answers)  # exit codes other than 0 that are an answer, not a refusal


# ----------------------------------------------------------------------------------------------
# Helpers to build inputs.


def jdump(obj):
    """JSON text as a file; allow_nan writes NaN / Infinity literals when a case puts them in."""
    return json.dumps(obj, indent=1).encode()


def st_read(data):
    """(header dict, data bytes) of a safetensors file."""
    n = struct.unpack("<Q", data[:8])[0]
    return json.loads(data[8:8 + n]), data[8 + n:]


def st_write(header, body, header_text=None):
    """A safetensors file of a header (dict, or the raw text) and its data bytes."""
    h = header_text if header_text is not None else json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + body


def deep_json(depth, open_="[", close="]"):
    return (open_ * depth + close * depth).encode()


def leaf_paths(obj, prefix=()):
    """Paths (tuples of keys / indexes) of the fields of a JSON value: scalars and arrays of scalars
    are fields; arrays of objects are entered through their first element."""
    out = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += leaf_paths(v, prefix + (k,))
    elif isinstance(obj, list):
        if obj and isinstance(obj[0], (dict, list)):
            out += leaf_paths(obj[0], prefix + (0,))
        else:
            out.append(prefix)
    else:
        out.append(prefix)
    return out


def get_path(obj, path):
    for p in path:
        obj = obj[p]
    return obj


def set_path(obj, path, value):
    """A copy of obj with the field at path set to value (or removed when value is REMOVE)."""
    obj = copy.deepcopy(obj)
    parent = get_path(obj, path[:-1])
    if value is REMOVE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return obj


REMOVE = object()


def pname(path):
    return ".".join(str(p) for p in path)


def csv_bytes(rows):
    return ("\n".join(",".join(str(c) for c in r) for r in rows) + "\n").encode()


# ----------------------------------------------------------------------------------------------
# Shared fixtures, made once per sweep with the command line itself where a build would make them.


class Fixtures:
    def __init__(self, binary, src, folder):
        self.bin, self.src, self.dir = binary, src, folder
        self.hf = os.path.join(src, "tests", "data", "hf")

    def run(self, *argv, cwd=None):
        r = subprocess.run([self.bin] + list(argv), cwd=cwd or self.dir, capture_output=True, text=True,
                           timeout=120)
        if r.returncode != 0:
            raise SystemExit("sweep: making a fixture failed: bitlearn %s\n%s" % (" ".join(argv), r.stderr))
        return r

    def read(self, rel):
        with open(os.path.join(self.dir, rel), "rb") as f:
            return f.read()

    def hf_file(self, model, name):
        with open(os.path.join(self.hf, model, name), "rb") as f:
            return f.read()

    def make(self):
        d = self.dir
        # CSV files for the estimators: a classification table and a regression table.
        rows = [["a", "b", "c", "y"]]
        for i in range(40):
            rows.append([(i * 7) % 11 - 5, (i * 3) % 7 * 0.5, (i * 13) % 17 / 4, i % 3])
        self.cls_csv = csv_bytes(rows)
        rows = [["a", "b", "c", "y"]]
        for i in range(40):
            rows.append([(i * 7) % 11 - 5, (i * 3) % 7 * 0.5, (i * 13) % 17 / 4, (i * 5) % 9 * 1.25 - 2])
        self.reg_csv = csv_bytes(rows)
        with open(os.path.join(d, "cls.csv"), "wb") as f:
            f.write(self.cls_csv)
        with open(os.path.join(d, "reg.csv"), "wb") as f:
            f.write(self.reg_csv)
        # Fitted model files of several estimators (the model-file family mutates each field).
        self.models = {}
        for est, data, params in MODEL_ESTIMATORS:
            argv = ["fit", "--model", est, "--data", data + ".csv", "--out", est + ".json", "--quiet", "--threads", "1"]
            if est not in UNSUPERVISED:
                argv += ["--target", "y"]
            elif est not in ("kmeans", "pca", "isolation_forest"):
                argv += ["--ignore", "y"]
            if est == "isotonic_regression":
                argv += ["--features", "a"]  # one feature column
            for p in params:
                argv += ["--param", p]
            self.run(*argv)
            self.models[est] = json.loads(self.read(est + ".json"))
        # XGBoost: a 6-feature table for the binary model of tests/data/ml/xgboost.
        rows = [["f%d" % j for j in range(6)]]
        for i in range(12):
            rows.append([round(((i * (j + 3)) % 7) * 0.37 - 1, 3) for j in range(6)])
        self.xgb_csv = csv_bytes(rows)
        with open(os.path.join(self.src, "tests", "data", "ml", "xgboost", "binary_logistic.json"), "rb") as f:
            self.xgb = json.loads(f.read())
        # A language-model checkpoint: the tiny llama shape of tests/data/hf/llama, step 2 of 3.
        self.corpus = b"hello world, a tiny corpus for a tiny test.\n" * 60
        with open(os.path.join(d, "corpus.txt"), "wb") as f:
            f.write(self.corpus)
        self.run("train", "--model", "llama", "--config", os.path.join(self.hf, "llama", "config.json"),
                 "--data", "corpus.txt", "--tokenizer", os.path.join(self.hf, "tokenizer.json"), "--tokens",
                 "c.tok", "--steps", "3", "--stop-at", "2", "--batch", "2", "--seq-len", "16", "--threads", "1",
                 "--checkpoint", "ck.safetensors", "--quiet")
        self.ckpt = self.read("ck.safetensors")
        self.tokens = self.read("c.tok")
        # A verify report (the quick suite, a fraction of a second).
        self.run("verify", "--quick", "--threads", "1", "--json", "report.json")
        self.report = json.loads(self.read("report.json"))
        # IDX files: 32 training and 16 test images of 28 x 28 with their labels.
        self.idx = {
            "train-images-idx3-ubyte.gz": idx_images(32),
            "train-labels-idx1-ubyte.gz": idx_labels(32),
            "t10k-images-idx3-ubyte.gz": idx_images(16),
            "t10k-labels-idx1-ubyte.gz": idx_labels(16),
        }
        # A gzip member that inflates to 512 MiB of zeros (about 500 KB), made once.
        self.zeros_gz = gzip_of_zeros(512 << 20)


MODEL_ESTIMATORS = [
    ("ridge", "reg", []),
    ("logistic_regression", "cls", []),
    ("decision_tree_classifier", "cls", ["max_depth=3"]),
    ("random_forest_classifier", "cls", ["n_estimators=2", "max_depth=2"]),
    ("hist_gradient_boosting_classifier", "cls", ["max_iter=2", "max_depth=2"]),
    ("kmeans", "cls", ["n_clusters=2"]),
    ("pca", "reg", ["n_components=2"]),
    ("kneighbors_classifier", "cls", ["n_neighbors=3"]),
    ("sgd_classifier", "cls", []),
    ("isotonic_regression", "reg", []),
    ("gaussian_nb", "cls", []),
    ("bernoulli_nb", "cls", []),
    ("nearest_centroid", "cls", []),
    ("linear_discriminant_analysis", "cls", []),
    ("quadratic_discriminant_analysis", "cls", ["reg_param=0.1"]),
    ("kernel_ridge", "reg", ["kernel=rbf"]),
    ("svc", "cls", []),
    ("svr", "reg", []),
    ("gaussian_mixture", "cls", ["n_components=2"]),
    ("dbscan", "cls", ["eps=2"]),
    ("bisecting_kmeans", "cls", ["n_clusters=3"]),
    ("radius_neighbors_classifier", "cls", ["radius=3", "outlier_label=most_frequent"]),
    ("local_outlier_factor", "cls", ["n_neighbors=5"]),
    ("kernel_density", "cls", []),
    ("nystroem", "cls", ["n_components=5"]),
    ("rbf_sampler", "cls", ["n_components=5"]),
    ("agglomerative_clustering", "cls", ["n_clusters=3"]),
    ("mean_shift", "cls", ["bandwidth=3"]),
    ("linear_svc", "cls", []),
    ("linear_svr", "reg", []),
    ("gaussian_process_classifier", "cls", ["optimizer=none"]),
    ("optics", "cls", ["min_samples=3"]),
    ("hdbscan", "cls", ["min_cluster_size=3"]),
    ("affinity_propagation", "cls", []),
    ("birch", "cls", ["n_clusters=2"]),
    ("bayesian_gaussian_mixture", "cls", ["n_components=2"]),
    ("nearest_neighbors", "cls", ["n_neighbors=3"]),
    ("spectral_clustering", "cls", ["n_clusters=2"]),
    ("truncated_svd", "cls", ["n_components=2"]),
    ("kernel_pca", "cls", ["n_components=2", "kernel=rbf"]),
    ("factor_analysis", "cls", ["n_components=2"]),
    ("incremental_pca", "cls", ["n_components=2"]),
    ("fast_ica", "cls", ["n_components=2"]),
    ("mds", "cls", ["max_iter=20"]),
    ("isomap", "cls", ["n_neighbors=3"]),
    ("spectral_embedding", "cls", ["n_neighbors=3"]),
    ("locally_linear_embedding", "cls", ["n_neighbors=3"]),
    ("tsne", "cls", ["perplexity=5", "max_iter=250"]),
    ("standard_scaler", "cls", []),
    ("min_max_scaler", "cls", []),
    ("max_abs_scaler", "cls", []),
    ("robust_scaler", "cls", []),
    ("normalizer", "cls", []),
    ("polynomial_features", "cls", ["degree=2"]),
    ("simple_imputer", "cls", ["strategy=median"]),
    ("ordinal_encoder", "cls", []),
    ("one_hot_encoder", "cls", ["handle_unknown=ignore"]),
    ("quantile_transformer", "cls", ["n_quantiles=10"]),
    ("power_transformer", "cls", []),
    ("knn_imputer", "cls", ["n_neighbors=3"]),
    ("spline_transformer", "cls", ["n_knots=4"]),
    ("target_encoder", "reg", []),
]
# Transformers fitted without a target and read through --output transform (nmf and
# latent_dirichlet_allocation need non-negative data, which the fixtures are not).
TRANSFORMERS = ("truncated_svd", "kernel_pca", "factor_analysis", "standard_scaler", "min_max_scaler",
                "max_abs_scaler", "robust_scaler", "normalizer", "polynomial_features", "simple_imputer",
                "ordinal_encoder", "one_hot_encoder", "quantile_transformer", "power_transformer",
                "knn_imputer", "incremental_pca", "fast_ica", "mds", "isomap", "spline_transformer",
                "spectral_embedding", "locally_linear_embedding", "tsne")
# Unsupervised estimators: fitted without --target; those without predict are read by this output.
UNSUPERVISED = ("kmeans", "pca", "isolation_forest", "gaussian_mixture", "dbscan", "bisecting_kmeans",
                "local_outlier_factor", "kernel_density", "nystroem", "rbf_sampler", "agglomerative_clustering",
                "mean_shift", "optics", "hdbscan", "affinity_propagation", "birch", "bayesian_gaussian_mixture",
                "nearest_neighbors", "spectral_clustering") + TRANSFORMERS
PREDICT_OUTPUT = {"pca": "transform", "nystroem": "transform", "rbf_sampler": "transform",
                  "kernel_density": "score_samples", **{t: "transform" for t in TRANSFORMERS}}
PREDICT_OUTPUT["target_encoder"] = "transform"  # a transformer fitted with --target


def idx_images(n, rows=28, cols=28):
    return gzip.compress(struct.pack(">IIII", 0x803, n, rows, cols) + bytes((i * 7) % 256 for i in range(n * rows * cols)))


def idx_labels(n):
    return gzip.compress(struct.pack(">II", 0x801, n) + bytes(i % 10 for i in range(n)))


def gzip_of_zeros(size, prefix=b""):
    """A gzip file of prefix + size zero bytes, compressed as a stream (never held whole)."""
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    out = [c.compress(prefix)]
    chunk = bytes(1 << 20)
    for _ in range(size >> 20):
        out.append(c.compress(chunk))
    out.append(c.flush())
    return b"".join(out)


# ----------------------------------------------------------------------------------------------
# The case families. Each returns a list of Case.


def gen_safetensors(fx):
    """model.safetensors of the tiny GPT-2, read by `generate` (and `logits`)."""
    cases = []
    data = fx.hf_file("gpt2", "model.safetensors")
    cfg = fx.hf_file("gpt2", "config.json")
    tok = os.path.join(fx.hf, "tokenizer.json")
    header, body = st_read(data)
    names = [k for k in header if k != "__metadata__"]
    gen = [["{bin}", "generate", "--model", "{d}/m", "--ids", "1,2,3", "--max-new-tokens", "2", "--tokenizer", tok]]

    def add(name, st, expect="error", what="", steps=None):
        cases.append(Case("safetensors", "st." + name, steps or gen, {"m/config.json": cfg, "m/model.safetensors": st},
                          expect=expect, what=what))

    add("valid", data, "ok", "the unmodified tiny GPT-2 weights")
    cases.append(Case("safetensors", "st.logits.valid",
                      [["{bin}", "logits", "--model", "{d}/m", "--ids", "1,2,3", "--out", "{d}/l.safetensors"]],
                      {"m/config.json": cfg, "m/model.safetensors": data}, expect="ok", what="logits of the valid weights"))
    # Truncations.
    hlen = struct.unpack("<Q", data[:8])[0]
    for cut in (0, 1, 7, 8, 9, 8 + hlen // 2, 8 + hlen - 1, 8 + hlen, 8 + hlen + 1, 8 + hlen + len(body) // 2,
                len(data) - 1):
        add("truncated.%d" % cut, data[:cut], what="the file cut to %d bytes" % cut)
    # The header length.
    for n in (0, 1, 2, hlen - 1, hlen + 1, len(data), len(data) - 7, 1 << 32, (1 << 63) - 1, 1 << 63, (1 << 64) - 1):
        add("hlen.%d" % n, struct.pack("<Q", n) + data[8:], what="header length field %d (file %d bytes)" % (n, len(data)))
    # The header's JSON.
    bad_headers = {
        "empty": b"", "brace": b"{", "array": b"[]", "null": b"null", "number": b"42", "string": b'"x"',
        "trailing": json.dumps(header).encode() + b"garbage", "nul": json.dumps(header).encode()[:-1] + b"\x00}",
        "latin1": json.dumps(header).encode().replace(b"F32", b"F\xe932", 1), "deep_array": deep_json(100000),
        "deep_object": b'{"a":' * 50000 + b"1" + b"}" * 50000, "spaces": b" " * 1000,
        "tensor_not_object": b'{"x": 5}', "metadata_number": json.dumps(dict(header, __metadata__=5)).encode(),
        "metadata_nested": json.dumps(dict(header, __metadata__={"a": {"b": 1}})).encode(),
        "metadata_huge_key": json.dumps(dict(header, __metadata__={"k" * 100000: "v"})).encode(),
    }
    valid_headers = ("metadata_huge_key",)  # valid safetensors: accepting it is right
    for k, h in bad_headers.items():
        add("header." + k, st_write(None, body, h), "either" if k in valid_headers else "error", what="header JSON: " + k)
    # Duplicate keys in the header: the same tensor twice with different offsets.
    t0 = names[0]
    text = json.dumps(header).encode()
    dup = text[:-1] + b', "%s": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}' % t0.encode()
    add("header.duplicate_key", st_write(None, body, dup), "either", "tensor %s named twice in the header" % t0)
    # Per tensor: dtype, shape and offsets.
    big = names.index(max(names, key=lambda n: header[n]["data_offsets"][1] - header[n]["data_offsets"][0]))
    for t in dict.fromkeys((names[0], names[big], names[-1], names[len(names) // 2])):
        e = header[t]
        a, b = e["data_offsets"]
        muts = {
            "dtype.unknown": {"dtype": "X9"}, "dtype.empty": {"dtype": ""}, "dtype.number": {"dtype": 3},
            "dtype.null": {"dtype": None}, "dtype.lower": {"dtype": "f32"}, "dtype.F16": {"dtype": "F16"},
            "dtype.BF16": {"dtype": "BF16"}, "dtype.F64": {"dtype": "F64"}, "dtype.I64": {"dtype": "I64"},
            "dtype.U8": {"dtype": "U8"}, "dtype.BOOL": {"dtype": "BOOL"}, "dtype.F8_E4M3": {"dtype": "F8_E4M3"},
            "shape.negative": {"shape": [-1] + e["shape"][1:]}, "shape.empty": {"shape": []},
            "shape.zero": {"shape": [0] + e["shape"][1:]}, "shape.huge": {"shape": [1 << 40] + e["shape"][1:]},
            "shape.overflow": {"shape": [1 << 62, 1 << 62]}, "shape.overflow_zero": {"shape": [0, 1 << 62, 1 << 62]},
            "shape.u64": {"shape": [(1 << 64) - 1]}, "shape.float": {"shape": [1.5] + e["shape"][1:]},
            "shape.string": {"shape": "64"}, "shape.strings": {"shape": [str(s) for s in e["shape"]]},
            "shape.extra_dim": {"shape": e["shape"] + [1]}, "shape.transposed": {"shape": list(reversed(e["shape"]))},
            "shape.null": {"shape": None}, "shape.many_dims": {"shape": [1] * 1000 + e["shape"]},
            "offsets.beyond": {"data_offsets": [a, len(body) + 4]}, "offsets.far": {"data_offsets": [1 << 40, (1 << 40) + b - a]},
            "offsets.reversed": {"data_offsets": [b, a]}, "offsets.negative": {"data_offsets": [-4, b - a - 4]},
            "offsets.float": {"data_offsets": [a + 0.5, b]}, "offsets.one": {"data_offsets": [a]},
            "offsets.three": {"data_offsets": [a, b, b]}, "offsets.string": {"data_offsets": "0,4"},
            "offsets.short": {"data_offsets": [a, b - 4]}, "offsets.u64": {"data_offsets": [a, (1 << 64) - 1]},
            "offsets.overlap": {"data_offsets": [max(0, a - 4), b - 4]},
            "missing.dtype": None, "missing.shape": None, "missing.offsets": None,
        }
        if len(e["shape"]) < 2:
            del muts["shape.transposed"]  # the same shape
        for mk, change in muts.items():
            h = copy.deepcopy(header)
            if change is None:
                del h[t][{"missing.dtype": "dtype", "missing.shape": "shape", "missing.offsets": "data_offsets"}[mk]]
            else:
                h[t].update(change)
            add("%s.%s" % (t, mk), st_write(h, body), what="tensor %s: %s" % (t, mk))
        h = copy.deepcopy(header)
        del h[t]
        add("%s.removed" % t, st_write(h, body), what="tensor %s left out of the header" % t)
        h = copy.deepcopy(header)
        h[t + ".extra"] = dict(e)
        add("%s.aliased" % t, st_write(h, body), "either", "a second tensor over the bytes of %s" % t)
    # Data gaps and trailing bytes.
    add("body.trailing", st_write(header, body + b"\x00" * 64), "either", "64 bytes after the last tensor")
    add("body.short", st_write(header, body[:-4]), what="4 bytes of data missing")
    # Non-finite weights: refused at load.
    t = names[big]
    a, _ = header[t]["data_offsets"]
    for label, bits in (("nan", 0x7FC00000), ("inf", 0x7F800000), ("ninf", 0xFF800000)):
        b2 = bytearray(body)
        b2[a + 8:a + 12] = struct.pack("<I", bits)
        add("weight.%s" % label, st_write(header, bytes(b2)), what="one weight of %s set to %s" % (t, label))
    # A byte flipped in the header (each flip either keeps the header valid or must be refused).
    raw = bytearray(data)
    for pos in range(8, 8 + hlen, max(1, hlen // 24)):
        r2 = bytearray(raw)
        r2[pos] ^= 0x5A
        add("flip.%d" % pos, bytes(r2), "either", "byte %d of the header xor 0x5A" % pos)
    return cases


def write_shards(header, body):
    """The tiny GPT-2's tensors split into two safetensors shards and their weight_map."""
    names = [k for k in header if k != "__metadata__"]
    halves = [names[:len(names) // 2], names[len(names) // 2:]]
    files, weight_map = {}, {}
    for i, part in enumerate(halves):
        h, chunks, off = {}, [], 0
        for n in part:
            a, b = header[n]["data_offsets"]
            h[n] = {"dtype": header[n]["dtype"], "shape": header[n]["shape"], "data_offsets": [off, off + b - a]}
            chunks.append(body[a:b])
            off += b - a
            weight_map[n] = "model-%05d-of-00002.safetensors" % (i + 1)
        files["model-%05d-of-00002.safetensors" % (i + 1)] = st_write(h, b"".join(chunks))
    return files, weight_map


def gen_shard_index(fx):
    cases = []
    header, body = st_read(fx.hf_file("gpt2", "model.safetensors"))
    cfg = fx.hf_file("gpt2", "config.json")
    shards, wmap = write_shards(header, body)
    tok = os.path.join(fx.hf, "tokenizer.json")
    gen = [["{bin}", "generate", "--model", "{d}/m", "--ids", "1,2,3", "--max-new-tokens", "2", "--tokenizer", tok]]
    first = next(iter(wmap))

    def add(name, index, expect="error", what="", extra=None, links=None, dirs=None, setup=None, drop=()):
        files = {"m/config.json": cfg}
        for k, v in shards.items():
            if k not in drop:
                files["m/" + k] = v
        if index is not None:
            files["m/model.safetensors.index.json"] = index if isinstance(index, bytes) else jdump(index)
        files.update(extra or {})
        cases.append(Case("shard_index", "shard." + name, gen, files, expect=expect, what=what, links=links,
                          dirs=dirs, setup=setup, timeout=FIFO_TIMEOUT_S if setup else None))

    good = {"metadata": {"total_size": len(body)}, "weight_map": wmap}
    add("valid", good, "ok", "the tiny GPT-2 in two shards")
    outside = st_write(*[{k: v for k, v in header.items()}, body])
    for label, target in (("dotdot", "../outside.safetensors"), ("dotdot_deep", "a/../../outside.safetensors"),
                          ("dotdot_many", "../" * 40 + "etc/passwd"), ("absolute", "/etc/passwd"),
                          ("absolute_case", "{d}/outside.safetensors"), ("empty", ""), ("nul", "model-00001-of-00002.safetensors\x00x"),
                          ("dot", "."), ("slash", "/"), ("folder", "sub"), ("long", "x" * 5000),
                          ("missing", "model-00009-of-00002.safetensors"), ("proc", "/proc/self/mem"),
                          ("dev_zero", "/dev/zero"), ("backslash", "..\\outside.safetensors"),
                          ("url", "https://example.invalid/m.safetensors"), ("tilde", "~/m.safetensors")):
        wm = dict(wmap)
        wm[first] = target
        add("name." + label, {"weight_map": wm}, what="weight_map[%s] = %r" % (first, target[:60]),
            extra={"outside.safetensors": outside}, dirs=["m/sub"])
    # Symbolic links: a shard that links out of the folder, a linked folder, a dangling link.
    wm = dict(wmap)
    wm[first] = "link.safetensors"
    add("symlink.file_out", {"weight_map": wm}, what="a shard that is a link to ../outside.safetensors",
        extra={"outside.safetensors": shards[wmap[first]]}, links={"m/link.safetensors": "../outside.safetensors"})
    wm2 = dict(wmap)
    wm2[first] = "sub/" + wmap[first]
    add("symlink.dir_out", {"weight_map": wm2}, what="a shard under a folder link pointing out of the model folder",
        extra={"out/" + wmap[first]: shards[wmap[first]]}, links={"m/sub": "../out"})
    add("symlink.dangling", {"weight_map": wm}, what="a shard that is a dangling link",
        links={"m/link.safetensors": "../nothing-here"})
    add("symlink.loop", {"weight_map": wm}, what="a shard that is a link to itself", links={"m/link.safetensors": "link.safetensors"})
    wm3 = dict(wmap)
    wm3[first] = "in/" + wmap[first]
    add("symlink.dir_in", {"weight_map": wm3}, "ok", "a shard under a folder link that stays inside the model folder",
        extra={"m/real/" + wmap[first]: shards[wmap[first]]}, links={"m/in": "real"})
    # A shard that is a fifo: opening it would block for ever if the reader does not check the type.
    wm4 = dict(wmap)
    wm4[first] = "fifo.safetensors"
    add("fifo", {"weight_map": wm4}, what="a shard that is a named pipe nobody writes",
        setup=lambda d: os.mkfifo(os.path.join(d, "m/fifo.safetensors")))
    add("shard_dir", {"weight_map": wm4}, what="a shard that is a folder", dirs=["m/fifo.safetensors"])
    # Missing pieces, wrong types.
    add("missing_shard", good, what="the second shard file absent", drop=(wmap[names_last(wmap)],))
    add("no_weight_map", {"metadata": {}}, what="an index without weight_map")
    add("weight_map_list", {"weight_map": list(wmap.values())}, what="weight_map is a list")
    add("weight_map_string", {"weight_map": "model.safetensors"}, what="weight_map is a string")
    add("weight_map_empty", {"weight_map": {}}, what="weight_map is empty")
    wm = dict(wmap)
    wm[first] = 5
    add("value_number", {"weight_map": wm}, what="a weight_map value is a number")
    wm = dict(wmap)
    wm[first] = None
    add("value_null", {"weight_map": wm}, what="a weight_map value is null")
    wm = dict(wmap)
    wm[first] = [k for k in shards if k != wmap[first]][0]
    # The loader reads every shard the index names and takes each tensor where it is: an index that
    # maps a tensor to the wrong shard, or names one no shard holds, still gives the right weights.
    add("wrong_shard", {"weight_map": wm}, "either", "a tensor mapped to the shard that does not hold it")
    wm = dict(wmap)
    del wm[first]
    add("tensor_unmapped", {"weight_map": wm}, "either", "a tensor of a shard left out of weight_map")
    wm = dict(wmap)
    wm["transformer.extra.weight"] = wmap[first]
    add("tensor_phantom", {"weight_map": wm}, "either", "weight_map names a tensor no shard holds (the model does not use it)")
    add("index_empty", b"", what="an empty index file")
    add("index_truncated", jdump(good)[:40], what="the index cut to 40 bytes")
    add("index_array", b"[]", what="an index that is a JSON list")
    add("index_deep", deep_json(100000, "{\"a\":", "}").replace(b"}", b"}", 1)[:0] + b'{"weight_map":' + deep_json(100000) + b"}",
        what="weight_map nested 100000 lists deep")
    add("metadata_total_size_lie", {"metadata": {"total_size": 1 << 60}, "weight_map": wmap}, "either",
        "metadata.total_size 2^60")
    add("index_and_single", good, "either", "both model.safetensors and an index",
        extra={"m/model.safetensors": fx.hf_file("gpt2", "model.safetensors")})
    return cases


def names_last(wmap):
    return list(wmap)[-1]


CONFIG_SHAPE_FIELDS = {"vocab_size", "hidden_size", "n_embd", "num_hidden_layers", "n_layer", "num_attention_heads",
                       "n_head", "num_key_value_heads", "head_dim", "intermediate_size", "n_inner",
                       "max_position_embeddings", "n_positions", "state_size", "conv_kernel", "expand",
                       "time_step_rank", "num_heads", "n_groups", "n_ctx"}


def gen_config(fx):
    """config.json of each tiny model: each numeric field set to 0, -1, huge, a float, a string,
    null, removed; unknown model_type."""
    cases = []
    tok = os.path.join(fx.hf, "tokenizer.json")
    for model in ("gpt2", "llama", "mistral", "qwen2", "phi3", "gemma", "mamba", "mamba2"):
        cfg = json.loads(fx.hf_file(model, "config.json"))
        st = fx.hf_file(model, "model.safetensors")
        gen = [["{bin}", "generate", "--model", "{d}/m", "--ids", "1,2,3", "--max-new-tokens", "2", "--tokenizer", tok]]

        def add(name, c, expect, what):
            text = c if isinstance(c, bytes) else jdump(c)
            cases.append(Case("config", "config.%s.%s" % (model, name), gen, {"m/config.json": text, "m/model.safetensors": st},
                              expect=expect, what="%s config.json: %s" % (model, what)))

        add("valid", cfg, "ok", "unmodified")
        for k, v in cfg.items():
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                continue
            shape = k in CONFIG_SHAPE_FIELDS
            if shape:
                vals = [("zero", 0), ("neg", -1), ("huge", 1 << 40), ("i64max", (1 << 63) - 1),
                        ("half", 1.5 if isinstance(v, int) else v * 1.5), ("string", str(v)), ("null", None)]
                if isinstance(v, int):
                    vals.append(("plus1", v + 1))
            else:  # token ids, epsilons, rope theta, dropout: a value change may stay valid
                vals = [("neg", -1), ("string", str(v)), ("list", [v])]
            for label, nv in vals:
                if shape:
                    expect = "either" if label == "null" else "error"
                    if label == "half" and not isinstance(v, int):
                        expect = "either"
                    # Rotary positions have no weights: a longer context is a valid config.
                    if label == "plus1" and k == "max_position_embeddings":
                        expect = "either"
                    # Mamba: intermediate_size, when given, wins over expand * hidden_size.
                    if k == "expand" and "intermediate_size" in cfg and label in ("half", "plus1"):
                        expect = "either"
                    # Mamba-2 does not use time_step_rank (a Mamba-1 field Hugging Face keeps).
                    if k == "time_step_rank" and model == "mamba2":
                        expect = "either"
                else:
                    expect = "either"
                add("%s.%s" % (k, label), dict(cfg, **{k: nv}), expect, "%s = %r" % (k, nv))
            # Removed: the loader may know a default.
            c2 = dict(cfg)
            del c2[k]
            add("%s.missing" % k, c2, "either", "%s removed" % k)
            # NaN and infinity literals (not JSON, but what Python and some writers emit).
            if isinstance(v, float):
                add("%s.nan" % k, jdump(dict(cfg, **{k: float("nan")})), "error", "%s = NaN (a bare NaN literal)" % k)
        for label, mt in (("unknown", "nosuch"), ("empty", ""), ("number", 7), ("null", None)):
            add("model_type.%s" % label, dict(cfg, model_type=mt), "error", "model_type = %r" % (mt,))
        c2 = dict(cfg)
        c2.pop("model_type", None)
        add("model_type.missing", c2, "either", "model_type removed (architectures may name it)")
    # Shapes that agree with no weights but each other, and the whole file's form.
    base = json.loads(fx.hf_file("llama", "config.json"))
    st = fx.hf_file("llama", "model.safetensors")
    gen = [["{bin}", "generate", "--model", "{d}/m", "--ids", "1,2,3", "--max-new-tokens", "2", "--tokenizer", tok]]
    for label, text in (("empty", b""), ("array", b"[]"), ("truncated", jdump(base)[:50]), ("deep", deep_json(100000)),
                        ("bom", b"\xef\xbb\xbf" + jdump(base)), ("heads_not_dividing", jdump(dict(base, num_attention_heads=3))),
                        ("kv_not_dividing", jdump(dict(base, num_key_value_heads=3))),
                        ("rotary_cap", jdump(dict(base, max_position_embeddings=1 << 20, head_dim=1 << 10))),
                        ("rope_theta_nan_string", jdump(dict(base, rope_parameters={"rope_theta": "NaN", "rope_type": "default"}))),
                        ("rope_type_unknown", jdump(dict(base, rope_parameters={"rope_theta": 10000.0, "rope_type": "nosuch"}))),
                        ("rope_parameters_list", jdump(dict(base, rope_parameters=[1, 2]))),
                        ("hidden_act_unknown", jdump(dict(base, hidden_act="nosuch")))):
        expect = "either" if label in ("bom",) else "error"
        cases.append(Case("config", "config.llama.file.%s" % label, gen, {"m/config.json": text, "m/model.safetensors": st},
                          expect=expect, what="llama config.json: %s" % label))
    return cases


def gen_tokenizer(fx):
    cases = []
    base = json.loads(fx.hf_file("", "tokenizer.json"))
    enc = [["{bin}", "tokenizer", "encode", "--tokenizer", "{d}/t.json", "--text", "hello world <|endoftext|>"]]
    dec = [["{bin}", "tokenizer", "decode", "--tokenizer", "{d}/t.json", "--ids", "1,2,3,0"]]

    def add(name, t, expect="error", what="", steps=None):
        text = t if isinstance(t, bytes) else jdump(t)
        for tag, st in (("encode", enc), ("decode", dec)) if steps is None else (("run", steps),):
            cases.append(Case("tokenizer", "tok.%s.%s" % (name, tag), st, {"t.json": text}, expect=expect, what=what))

    add("valid", base, "ok", "the unmodified tokenizer.json")
    vocab = base["model"]["vocab"]
    some = [k for k in vocab if vocab[k] > 10][:1][0]
    for label, v in (("huge", 1 << 24), ("huge31", 1 << 31), ("i64max", (1 << 63) - 1), ("u64", (1 << 64) - 1),
                     ("neg", -1), ("float", 1.5), ("string", "5"), ("null", None), ("e300", 1e300),
                     ("slack", 2 * len(vocab) + 1024 + 10), ("gap", len(vocab) + 100)):
        t = copy.deepcopy(base)
        t["model"]["vocab"][some] = v
        add("vocab_id.%s" % label, t, "either" if label == "gap" else "error", "vocab[%r] = %r" % (some, v))
    t = copy.deepcopy(base)
    t["model"]["vocab"][some] = vocab["!"]
    add("vocab.duplicate_id", t, "error", "two tokens with the id of '!'")
    text = jdump(base).replace(b'"model": {', b'"model": {', 1)
    dupkey = jdump(base).replace(b'"!": 1,', b'"!": 1,\n"!": 7,', 1)
    add("vocab.duplicate_key", dupkey, "either", "the token '!' twice in the vocabulary")
    for label, v in (("list", list(vocab)), ("string", "abc"), ("empty", {}), ("null", None)):
        t = copy.deepcopy(base)
        t["model"]["vocab"] = v
        add("vocab.%s" % label, t, "error", "model.vocab = %s" % label)
    # Added tokens.
    at = base["added_tokens"][0]
    for label, change in (("collide", {"id": vocab["!"]}), ("huge", {"id": 1 << 24}), ("neg", {"id": -1}),
                          ("float", {"id": 0.5}), ("string_id", {"id": "0"}), ("content_empty", {"content": ""}),
                          ("content_number", {"content": 5}), ("special_string", {"special": "yes"}),
                          ("slack", {"id": 2 * len(vocab) + 1024 + 10})):
        t = copy.deepcopy(base)
        t["added_tokens"][0].update(change)
        add("added.%s" % label, t, "either" if label in ("content_empty",) else "error", "added_tokens[0] %r" % change)
    t = copy.deepcopy(base)
    t["added_tokens"].append(dict(at, content="<x>"))
    add("added.same_id_twice", t, "error", "two added tokens with id 0")
    t = copy.deepcopy(base)
    t["added_tokens"].append(dict(at, id=700))
    add("added.same_content_twice", t, "either", "the same added token content under two ids")
    t = copy.deepcopy(base)
    del t["added_tokens"][0]["id"]
    add("added.no_id", t, "error", "an added token without id")
    t = copy.deepcopy(base)
    t["added_tokens"] = [dict(at, id=600 + i, content="<t%d>" % i) for i in range(5000)]
    add("added.many", t, "either", "5000 added tokens past the vocabulary")
    t = copy.deepcopy(base)
    t["added_tokens"] = {"a": 1}
    add("added.object", t, "error", "added_tokens is an object")
    # Merges.
    merges = base["model"]["merges"]
    for label, m in (("unknown_token", [["zzz_not", "yyy_not"]]), ("one", [["Ġ"]]), ("three", [["Ġ", "Ġ", "Ġ"]]),
                     ("number", [[1, 2]]), ("string_form_bad", ["ĠĠ"]), ("string_form", [" ".join(p) for p in merges]),
                     ("empty_list", []), ("null_pair", [None]), ("empty_strings", [["", ""]])):
        t = copy.deepcopy(base)
        t["model"]["merges"] = (m + merges) if label not in ("string_form", "empty_list") else m
        exp = "either" if label in ("string_form", "empty_list", "unknown_token") else "error"
        add("merges.%s" % label, t, exp, "merges: %s" % label)
    t = copy.deepcopy(base)
    t["model"]["merges"] = "Ġ Ġ"
    add("merges.string", t, "error", "merges is a string")
    t = copy.deepcopy(base)
    t["model"]["merges"] = merges + merges
    add("merges.duplicated", t, "either", "every merge twice")
    # Deep nesting and form.
    for label, text in (("deep_normalizer", jdump(base).replace(b'"normalizer": null', b'"normalizer": ' + deep_json(100000), 1)),
                        ("deep_object", b'{"a":' * 100000 + b"1" + b"}" * 100000), ("deep_1000", jdump(base).replace(
                            b'"normalizer": null', b'"normalizer": ' + deep_json(1000), 1)),
                        ("empty", b""), ("truncated", jdump(base)[:len(jdump(base)) // 2]), ("array", b"[]"),
                        ("latin1", jdump(base).replace(b"BPE", b"BP\xc9", 1)), ("bom", b"\xef\xbb\xbf" + jdump(base)),
                        ("nul", jdump(base)[:100] + b"\x00" + jdump(base)[100:])):
        add("file.%s" % label, text, "either" if label == "bom" else "error", "tokenizer.json: %s" % label)
    for label, path, v in (("model_type", ("model", "type"), "WordPiece"), ("model_type_null", ("model", "type"), None),
                           ("model_missing", ("model",), REMOVE), ("pre_tokenizer", ("pre_tokenizer", "type"), "Nosuch"),
                           ("decoder", ("decoder", "type"), "Nosuch"), ("unk_token", ("model", "unk_token"), "<nosuch>"),
                           ("byte_fallback", ("model", "byte_fallback"), "yes"), ("dropout", ("model", "dropout"), 2.5),
                           ("post_processor", ("post_processor",), {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<x>", "type_id": 0}}], "pair": [], "special_tokens": {"<x>": {"id": "<x>", "ids": [1 << 30], "tokens": ["<x>"]}}}),
                           ("post_processor_neg", ("post_processor",), {"type": "TemplateProcessing", "single": [], "pair": [], "special_tokens": {"<x>": {"id": "<x>", "ids": [-5], "tokens": ["<x>"]}}}),
                           ("normalizer", ("normalizer",), {"type": "Nosuch"}), ("version", ("version",), 2)):
        t = set_path(base, path, v)
        exp = "either" if label in ("version", "dropout", "unk_token") else "error"
        add("field.%s" % label, t, exp, "%s = %r" % (pname(path), v if v is not REMOVE else "removed"))
    # The ids of `decode` and the text of `encode` on the valid file.
    okfile = jdump(base)
    for label, ids in (("empty", ""), ("comma", ","), ("double_comma", "1,,2"), ("neg", "-1"), ("huge", "999999999"),
                       ("i64", "9223372036854775807"), ("overflow", "99999999999999999999999"), ("text", "abc"),
                       ("float", "1.5"), ("space", "1, 2"), ("hex", "0x10"), ("plus", "+3"), ("vocab", str(len(vocab))),
                       ("long", ",".join(["1"] * 30000))):
        cases.append(Case("tokenizer", "tok.decode_ids.%s" % label,
                          [["{bin}", "tokenizer", "decode", "--tokenizer", "{d}/t.json", "--ids", ids]], {"t.json": okfile},
                          expect="either" if label in ("space", "plus", "long", "empty") else "error", what="decode --ids %r" % ids[:40]))
    for label, data in (("latin1", b"caf\xe9"), ("nul", b"a\x00b"), ("big", b"ab " * 300000), ("empty", b""),
                        ("surrogate", b"\xed\xa0\x80"), ("overlong", b"\xc0\xaf")):
        exp = "either" if label in ("nul", "big", "empty") else "error"
        cases.append(Case("tokenizer", "tok.encode_file.%s" % label,
                          [["{bin}", "tokenizer", "encode", "--tokenizer", "{d}/t.json", "--file", "{d}/x.txt"]],
                          {"t.json": okfile, "x.txt": data}, expect=exp, what="encode --file of %s text" % label))
    for label, data in (("not_json", b"hello\n"), ("number", b"5\n"), ("object", b'{"a":1}\n'), ("bad_escape", b'"\\ud800"\n'),
                        ("ok", b'"hello"\n"world"\n')):
        cases.append(Case("tokenizer", "tok.encode_jsonl.%s" % label,
                          [["{bin}", "tokenizer", "encode", "--tokenizer", "{d}/t.json", "--jsonl", "{d}/x.jsonl"]],
                          {"t.json": okfile, "x.jsonl": data}, expect="ok" if label == "ok" else ("either" if label == "bad_escape" else "error"),
                          what="encode --jsonl of %s lines" % label))
    return cases


def gen_csv(fx):
    cases = []
    good = fx.cls_csv  # targets 0, 1, 2: a regression target for ridge, class labels for the tree
    ridge = jdump(fx.models["ridge"])
    tree = jdump(fx.models["decision_tree_classifier"])
    cmds = {
        "fit": [["{bin}", "fit", "--model", "ridge", "--data", "{d}/x.csv", "--target", "y", "--out", "{d}/m.json", "--quiet"]],
        "fit_tree": [["{bin}", "fit", "--model", "decision_tree_classifier", "--data", "{d}/x.csv", "--target", "y",
                      "--out", "{d}/m.json", "--quiet"]],
        "predict": [["{bin}", "predict", "--model", "{d}/ridge.json", "--data", "{d}/x.csv", "--out", "{d}/p.csv"]],
        "evaluate": [["{bin}", "evaluate", "--model", "{d}/tree.json", "--data", "{d}/x.csv"]],
        "cv": [["{bin}", "cv", "--model", "ridge", "--data", "{d}/x.csv", "--target", "y", "--folds", "3"]],
    }
    header = "a,b,c,y"
    body_rows = good.decode().splitlines()[1:]
    variants = {
        "valid": (good, "ok"),
        "empty": (b"", "error"),
        "header_only": ((header + "\n").encode(), "error"),
        "one_row": ((header + "\n" + body_rows[0] + "\n").encode(), "either"),
        "blank_lines": (("\n\n" + good.decode()).encode(), "either"),
        "ragged_short": ((header + "\n" + body_rows[0] + "\n1,2\n" + "\n".join(body_rows[1:]) + "\n").encode(), "error"),
        "ragged_long": ((header + "\n" + body_rows[0] + ",9,9\n" + "\n".join(body_rows[1:]) + "\n").encode(), "error"),
        "duplicate_column": (("a,a,c,y\n" + "\n".join(body_rows) + "\n").encode(), "error"),
        "duplicate_target": (("a,y,c,y\n" + "\n".join(body_rows) + "\n").encode(), "error"),
        "empty_name": ((",b,c,y\n" + "\n".join(body_rows) + "\n").encode(), "either"),
        "nan_cell": ((header + "\nnan,1,2,3\n" + "\n".join(body_rows) + "\n").encode(), "either"),
        "inf_cell": ((header + "\ninf,1,2,3\n" + "\n".join(body_rows) + "\n").encode(), "either"),
        "ninf_cell": ((header + "\n-inf,1,2,3\n" + "\n".join(body_rows) + "\n").encode(), "either"),
        "nan_target": ((header + "\n1,1,2,nan\n" + "\n".join(body_rows) + "\n").encode(), "either"),
        "text_cell": ((header + "\nabc,1,2,3\n" + "\n".join(body_rows) + "\n").encode(), "error"),
        "empty_cell": ((header + "\n,1,2,3\n" + "\n".join(body_rows) + "\n").encode(), "either"),
        "overflow_cell": ((header + "\n1e400,1,2,3\n" + "\n".join(body_rows) + "\n").encode(), "either"),
        "denormal_cell": ((header + "\n1e-320,1,2,3\n" + "\n".join(body_rows) + "\n").encode(), "either"),
        "hex_cell": ((header + "\n0x10,1,2,3\n" + "\n".join(body_rows) + "\n").encode(), "either"),
        "spaces_cell": ((header + "\n 1 ,1,2,3\n" + "\n".join(body_rows) + "\n").encode(), "either"),
        "trailing_comma": ((header + ",\n" + "\n".join(r + "," for r in body_rows) + "\n").encode(), "either"),
        "bom": (b"\xef\xbb\xbf" + good, "either"),
        "crlf": (good.replace(b"\n", b"\r\n"), "either"),
        "cr_only": (good.replace(b"\n", b"\r"), "either"),
        "no_final_newline": (good[:-1], "either"),
        "quoted": (('"a","b","c","y"\n' + "\n".join(body_rows) + "\n").encode(), "either"),
        "unterminated_quote": ((header + '\n"1,2,3,4\n' + "\n".join(body_rows) + "\n").encode(), "error"),
        "quoted_newline": ((header + '\n"1\n2",1,2,3\n' + "\n".join(body_rows) + "\n").encode(), "error"),
        "nul_byte": ((header + "\n1\x00,1,2,3\n" + "\n".join(body_rows) + "\n").encode(), "error"),
        "latin1_name": (("a\xe9,b,c,y\n" + "\n".join(body_rows) + "\n").encode("latin-1"), "either"),
        "semicolons": (good.replace(b",", b";"), "error"),
        "long_line": ((header + "\n" + "1" * 10_000_000 + ",1,2,3\n" + "\n".join(body_rows) + "\n").encode(), "either"),
        "long_name": (("a" * 1_000_000 + ",b,c,y\n" + "\n".join(body_rows) + "\n").encode(), "either"),
        "many_rows_short": ((header + "\n" + "1,2,3,4\n" * 200000).encode(), "either"),
    }
    wide_cols = 20001
    wide = [",".join("c%d" % i for i in range(wide_cols - 1)) + ",y"]
    for r in range(3):
        wide.append(",".join(str((i + r) % 5) for i in range(wide_cols)))
    variants["wide_20k"] = (("\n".join(wide) + "\n").encode(), "either")
    for cmd, steps in cmds.items():
        for label, (data, expect) in variants.items():
            if cmd in ("predict", "evaluate") and label in ("duplicate_target",):
                expect = "either"
            if cmd == "fit" and label == "wide_20k":
                expect = "error"  # ridge forms a 20000 x 20000 Gram matrix: refused
            if cmd == "evaluate" and label in ("nan_target", "hex_cell", "empty_name", "latin1_name"):
                expect = "either"
            if cmd in ("predict", "evaluate") and label in ("many_rows_short", "wide_20k", "long_name", "empty_name",
                                                             "latin1_name"):
                expect = "either"
            cases.append(Case("csv", "csv.%s.%s" % (cmd, label), steps,
                              {"x.csv": data, "ridge.json": ridge, "tree.json": tree}, expect=expect,
                              what="%s on a CSV: %s" % (cmd, label)))
    # Paths that are not files.
    for cmd in ("fit", "predict", "cv"):
        steps = [[a.replace("{d}/x.csv", "{d}/folder.csv") for a in cmds[cmd][0]]]
        cases.append(Case("csv", "csv.%s.directory" % cmd, steps, {"ridge.json": ridge}, dirs=["folder.csv"],
                          what="%s --data a folder" % cmd))
        steps = [[a.replace("{d}/x.csv", "{d}/missing.csv") for a in cmds[cmd][0]]]
        cases.append(Case("csv", "csv.%s.missing" % cmd, steps, {"ridge.json": ridge}, what="%s --data a missing file" % cmd))
        steps = [[a.replace("{d}/x.csv", "/dev/null") for a in cmds[cmd][0]]]
        cases.append(Case("csv", "csv.%s.devnull" % cmd, steps, {"ridge.json": ridge}, what="%s --data /dev/null" % cmd))
        steps = [[a.replace("{d}/x.csv", "{d}/fifo.csv") for a in cmds[cmd][0]]]
        cases.append(Case("csv", "csv.%s.fifo" % cmd, steps, {"ridge.json": ridge}, what="%s --data a named pipe nobody writes" % cmd,
                          setup=lambda d: os.mkfifo(os.path.join(d, "fifo.csv")), timeout=FIFO_TIMEOUT_S))
    # Column selection options.
    for label, opts, expect in (("target_missing", ["--target", "nosuch"], "error"), ("target_empty", ["--target", ""], "error"),
                                ("features_missing", ["--features", "a,nosuch"], "error"),
                                ("features_target", ["--features", "a,y"], "error"), ("features_empty", ["--features", ""], "error"),
                                ("features_dup", ["--features", "a,a"], "error"), ("ignore_all", ["--ignore", "a,b,c"], "error"),
                                ("ignore_missing", ["--ignore", "nosuch"], "error"), ("features_commas", ["--features", ",,,"], "error")):
        steps = [["{bin}", "fit", "--model", "ridge", "--data", "{d}/x.csv", "--out", "{d}/m.json", "--quiet"]
                 + (["--target", "y"] if not label.startswith("target") else []) + opts]
        cases.append(Case("csv", "csv.columns.%s" % label, steps, {"x.csv": good}, expect=expect, what="fit %s" % " ".join(opts)))
    # A text target for a regressor, text labels for a classifier.
    txt = (header + "\n" + "\n".join(",".join(r.split(",")[:3] + ["cat" if i % 2 else "dog"]) for i, r in enumerate(body_rows)) + "\n").encode()
    cases.append(Case("csv", "csv.text_target.ridge", cmds["fit"], {"x.csv": txt}, what="ridge on a text target"))
    cases.append(Case("csv", "csv.text_target.tree", cmds["fit_tree"], {"x.csv": txt}, expect="ok", what="a classifier on text labels"))
    return cases


MODEL_MUTATIONS_INT = [("e300", 1e300), ("half", 1.5), ("neg", -1), ("huge", 1 << 40), ("u64", (1 << 64) - 1),
                       ("string", "3"), ("null", None)]
MODEL_MUTATIONS_STR = [("empty", ""), ("number", 5), ("truncated", None), ("odd", None), ("nonhex", None)]
MODEL_MUTATIONS_ARRAY = [("empty", []), ("string", "x"), ("longer", None), ("shorter", None),
                         ("element_string", None), ("element_neg", None), ("element_huge", None)]


def gen_model_file(fx):
    """Every field of the fitted model file of several estimators, set to wrong types and values,
    read by `predict` (and `inspect` and `evaluate` for the whole-file cases)."""
    cases = []
    for est, data, _ in MODEL_ESTIMATORS:
        model = fx.models[est]
        csv = fx.reg_csv if data == "reg" else fx.cls_csv
        pred = [["{bin}", "predict", "--model", "{d}/m.json", "--data", "{d}/x.csv", "--out", "{d}/p.csv"]]
        if est in PREDICT_OUTPUT:
            pred[0] += ["--output", PREDICT_OUTPUT[est]]
        insp = [["{bin}", "inspect", "{d}/m.json", "--all-trees"]]

        def add(name, m, expect, what, steps=pred):
            text = m if isinstance(m, bytes) else jdump(m)
            cases.append(Case("model_file", "model.%s.%s" % (est, name), steps, {"m.json": text, "x.csv": csv},
                              expect=expect, what="%s model file: %s" % (est, what)))

        add("valid", model, "ok", "unmodified")
        add("valid.inspect", model, "ok", "unmodified, inspect", insp)
        for path in leaf_paths(model):
            v = get_path(model, path)
            p = pname(path)
            # Params are text the estimator parses: a value change may stay valid; types must hold.
            in_params = path[0] == "params"
            informational = path[-1] in ("n_iter", "version") or path[0] in ("target",)
            muts = []
            if in_params:
                # Hyper-parameters are text the estimator parses; only their type is checked here.
                muts = [("number", 5, "either"), ("null", None, "either"), ("list", [v], "either")]
            elif isinstance(v, bool):
                muts = [("string", "true", "error"), ("number", 2, "error"), ("null", None, "error")]
            elif isinstance(v, int) or isinstance(v, float):
                for label, nv in MODEL_MUTATIONS_INT:
                    exp = "error"
                    if isinstance(v, float) and label in ("half", "e300", "neg", "huge", "i64max", "u64"):
                        exp = "either"  # a float field given another float
                    if label == "neg" and p.endswith(("feature", "left", "right")):
                        exp = "either"
                    if informational and label in ("neg", "huge", "i64max", "u64", "half", "e300"):
                        exp = "either"
                    muts.append((label, nv, exp))
            elif isinstance(v, str):
                hexlike = len(v) >= 8 and len(v) % 8 == 0 and all(c in "0123456789abcdef" for c in v)
                for label, nv in MODEL_MUTATIONS_STR:
                    if label == "truncated":
                        nv = v[:max(0, len(v) - 8)] if hexlike else v[:len(v) // 2]
                    elif label == "doubled":
                        nv = v + v
                    elif label == "odd":
                        nv = v + "a"
                    elif label == "nonhex":
                        nv = "zz" + v[2:]
                    exp = "error"
                    if in_params and label in ("truncated", "doubled", "odd", "nonhex", "empty"):
                        exp = "either"  # another text value of a hyper-parameter (fit-time only)
                    if in_params and label in ("number", "null"):
                        exp = "either"
                    if not hexlike and not in_params and label in ("truncated", "doubled", "odd", "nonhex", "empty"):
                        exp = "either"  # a name (target, estimator is handled below)
                    if p in ("estimator", "format"):
                        exp = "error"
                    if p == "target":
                        exp = "either"
                    if hexlike and label in ("truncated", "doubled") and v == v[:8] * (len(v) // 8):
                        exp = "error"
                    muts.append((label, nv, exp))
            elif isinstance(v, list):
                for label, nv in MODEL_MUTATIONS_ARRAY:
                    exp = "error"
                    if label == "longer":
                        nv = v + v[-1:] if v else [0]
                    elif label == "shorter":
                        nv = v[:-1]
                    elif label.startswith("element_"):
                        if not v:
                            continue
                        rep = {"element_string": "1", "element_e300": 1e300, "element_neg": -1,
                               "element_huge": 1 << 40}[label]
                        nv = [rep] + v[1:]
                        if label in ("element_neg", "element_e300") and isinstance(v[0], float):
                            exp = "either"
                        if label == "element_neg" and p.endswith(("feature", "left", "right", "default_left")):
                            exp = "either"
                        if label == "element_neg" and p.endswith("labels"):
                            exp = "either"  # -1: noise (dbscan, mean_shift with cluster_all=false)
                        if label == "element_neg" and p.endswith("predecessor"):
                            exp = "either"  # -1: no predecessor (optics)
                        if label == "element_string" and isinstance(v[0], str):
                            exp = "either"
                    if p.endswith("feature_names") and label in ("longer",):
                        exp = "error"
                    if p == "state.cluster_hierarchy" and label == "empty":
                        exp = "either"  # optics: no cluster found is a valid hierarchy
                    muts.append((label, nv, exp))
            elif v is None:
                muts = [("number", 1, "either"), ("string", "x", "either")]
            for label, nv, exp in muts:
                # Without usable feature names, predict takes every column but the target (as for a
                # file that has none): an empty list is the same as none.
                if p == "feature_names" and label in ("empty",):
                    exp = "either"
                # Class labels are any numbers (sorted on reading).
                if p == "state.classes" and label in ("element_huge",):
                    exp = "either"
                add("%s.%s" % (p, label), set_path(model, path, nv), exp, "%s = %s" % (p, short(nv)))
            if len(path) <= 2:
                optional = in_params or informational or p in ("feature_names", "state.label_dtype")
                add("%s.removed" % p, set_path(model, path, REMOVE), "either" if optional else "error", "%s removed" % p)
        # Whole-file cases.
        text = jdump(model)
        for frac in (0, 10, 50, 90, 99):
            add("truncated.%d" % frac, text[:len(text) * frac // 100], "error", "the file cut to %d%%" % frac)
        # Another estimator of the same state (ridge and lasso both hold coef and intercept) may read it.
        add("estimator.other", dict(model, estimator="ridge" if est != "ridge" else "lasso"), "either", "the estimator renamed")
        add("estimator.unknown", dict(model, estimator="nosuch"), "error", "estimator unknown")
        add("format.other", dict(model, format="other"), "error", "format other")
        add("version.2", dict(model, version=2), "error", "version 2")
        add("deep", deep_json(100000), "error", "100000 nested lists")
        add("array", b"[]", "error", "a JSON list")
        add("truncated.inspect", text[:len(text) // 2], "error", "the file cut in half, inspect", insp)
        add("deep.inspect", deep_json(100000), "error", "100000 nested lists, inspect", insp)
    return cases


def short(v):
    s = json.dumps(v)
    return s if len(s) <= 40 else s[:37] + "..."


def gen_xgboost(fx):
    """An XGBoost JSON model imported by `fit --model xgboost_model --param model_file=...`, then
    used by `predict`."""
    cases = []
    base = fx.xgb
    steps = [["{bin}", "fit", "--model", "xgboost_model", "--param", "model_file={d}/x.json", "--data", "{d}/x.csv",
              "--out", "{d}/m.json", "--quiet"],
             ["{bin}", "predict", "--model", "{d}/m.json", "--data", "{d}/x.csv", "--out", "{d}/p.csv"]]

    def add(name, m, expect, what):
        text = m if isinstance(m, bytes) else jdump(m)
        cases.append(Case("xgboost", "xgb." + name, steps, {"x.json": text, "x.csv": fx.xgb_csv}, expect=expect,
                          what="XGBoost JSON: " + what))

    add("valid", base, "ok", "tests/data/ml/xgboost/binary_logistic.json")
    # Keep two trees so the cases stay small and the tree-count fields can be made to lie.
    m = copy.deepcopy(base)
    gm = m["learner"]["gradient_booster"]["model"]
    gm["trees"] = gm["trees"][:2]
    gm["tree_info"] = gm["tree_info"][:2]
    gm["iteration_indptr"] = gm["iteration_indptr"][:3]
    gm["gbtree_model_param"]["num_trees"] = "2"
    add("two_trees", m, "either", "cut to two trees")
    tree_path = ("learner", "gradient_booster", "model", "trees", 0)
    for path in leaf_paths(m):
        v = get_path(m, path)
        p = pname(path)
        if len(path) > 3 and path[:5] == tree_path and path[5] in ("categories", "categories_nodes", "categories_segments",
                                                                    "categories_sizes"):
            continue
        muts = []
        if isinstance(v, str):
            muts = [("number", 7, "error"), ("null", None, "error"), ("garbage", "x!", "error"), ("huge", "99999999999999999999", "error"),
                    ("neg", "-1", "error")]
        elif isinstance(v, bool) or v is None:
            continue
        elif isinstance(v, (int, float)):
            muts = [("string", "abc", "error"), ("neg", -1, "error"), ("huge", 1 << 40, "error"), ("half", 0.5, "error")]
        elif isinstance(v, list):
            muts = [("empty", [], "error"), ("string", "x", "error"), ("shorter", v[:-1], "error")]
            if v and isinstance(v[0], (int, float)) and not isinstance(v[0], bool):
                muts += [("el_huge", [1 << 40] + v[1:], "error"), ("el_neg", [-7] + v[1:], "error"),
                         ("el_nan_string", ["NaN"] + v[1:], "error")]
        # Fields inference does not need (statistics, categorical data of a model without categorical
        # splits, counts the arrays themselves give) are not read: any value there is fine.
        unread = (path[-1] not in XGB_READ or "tree_param" in path[:-1] and path[-1] != "size_leaf_vector"
                  or path[-1] == "num_class")  # num_class is read only by multi:* objectives
        for label, nv, exp in muts:
            if unread:
                exp = "either"
            if path[-1] in ("default_left", "split_type", "size_leaf_vector") and label in ("el_huge", "el_neg", "shorter",
                                                                                       "empty", "neg"):
                exp = "either"  # any non-zero is "left"; an absent split type is numerical
            if p.endswith(("base_weights", "split_conditions", "loss_changes", "sum_hessian")) and label in ("el_huge", "el_neg"):
                exp = "either"
            if p.endswith(("loss_changes", "sum_hessian", "parents", "attributes", "feature_names", "feature_types", "version",
                           "tree_info", "id", "base_weights")):
                exp = "either"
            if path[0] == "version" or (path[:2] == ("learner", "attributes")):
                exp = "either"
            add("%s.%s" % (p, label), set_path(m, path, nv), exp, "%s = %s" % (p, short(nv)))
    # Structural lies.
    t = m["learner"]["gradient_booster"]["model"]["trees"][0]
    for label, change, exp in (
            ("cycle_self", {"left_children": [0] + t["left_children"][1:]}, "error"),
            ("cycle_back", {"right_children": [0 if c != -1 else -1 for c in t["right_children"]]}, "error"),
            ("child_out", {"left_children": [10 ** 6] + t["left_children"][1:]}, "error"),
            ("split_feature_out", {"split_indices": [99] + t["split_indices"][1:]}, "error"),
            ("split_feature_neg", {"split_indices": [-3] + t["split_indices"][1:]}, "error"),
            ("lengths_disagree", {"split_conditions": t["split_conditions"][:1]}, "error")):
        m2 = copy.deepcopy(m)
        m2["learner"]["gradient_booster"]["model"]["trees"][0].update(change)
        add("tree." + label, m2, exp, "tree 0: " + label)
    for label, field, value, exp in (("num_class_huge", "num_class", "1000000000", "either"),
                                     ("num_class_neg", "num_class", "-2", "either"),
                                     ("num_feature_zero", "num_feature", "0", "error"),
                                     ("num_feature_huge", "num_feature", "2147483648", "error"),
                                     ("num_feature_big", "num_feature", "100000", "error"),
                                     ("base_score_nan", "base_score", "nan", "error"),
                                     ("base_score_text", "base_score", "abc", "error"),
                                     ("base_score_list", "base_score", "[5E-1,5E-1]", "either")):
        m2 = copy.deepcopy(m)
        m2["learner"]["learner_model_param"][field] = value
        add("param." + label, m2, exp, "learner_model_param.%s = %r" % (field, value))
    m2 = copy.deepcopy(m)
    m2["learner"]["objective"]["name"] = "nosuch:objective"
    add("objective_unknown", m2, "error", "objective nosuch")
    m2 = copy.deepcopy(m)
    m2["learner"]["gradient_booster"]["model"]["gbtree_model_param"]["num_trees"] = "1000000000"
    add("num_trees_lie", m2, "either", "num_trees 10^9 with two trees (the trees array is what is read)")
    m2 = copy.deepcopy(m)
    m2["learner"]["gradient_booster"]["name"] = "gblinear"
    add("booster_gblinear", m2, "error", "gradient_booster gblinear")
    text = jdump(m)
    for frac in (0, 30, 70, 99):
        add("truncated.%d" % frac, text[:len(text) * frac // 100], "error", "cut to %d%%" % frac)
    add("deep", deep_json(100000), "error", "100000 nested lists")
    add("ubj", b"{U\x07learner{", "error", "UBJSON-looking bytes")
    return cases


def gen_lightgbm(fx):
    """A LightGBM text model (tests/data/ml/lightgbm/binary.txt cut to two trees) imported by
    `fit --model lightgbm_model --param model_file=...`, then used by `predict` and
    `predict --output shap`."""
    cases = []
    steps = [["{bin}", "fit", "--model", "lightgbm_model", "--param", "model_file={d}/m.txt", "--data", "{d}/x.csv",
              "--out", "{d}/m.json", "--quiet"],
             ["{bin}", "predict", "--model", "{d}/m.json", "--data", "{d}/x.csv", "--out", "{d}/p.csv"],
             ["{bin}", "predict", "--model", "{d}/m.json", "--data", "{d}/x.csv", "--out", "{d}/s.csv", "--output", "shap"]]

    def add(name, text, expect, what):
        data = text if isinstance(text, bytes) else text.encode()
        cases.append(Case("lightgbm", "lgb." + name, steps, {"m.txt": data, "x.csv": fx.xgb_csv}, expect=expect,
                          what="LightGBM text model: " + what))

    with open(os.path.join(fx.src, "tests", "data", "ml", "lightgbm", "binary.txt")) as f:
        full = f.read()
    head, rest = full.split("\nTree=0\n", 1)
    blocks = ("Tree=0\n" + rest.split("\nend of trees", 1)[0]).split("\n\n\n")
    header = [l for l in head.split("\n")]
    header = [("tree_sizes=" + " ".join(l.split("=", 1)[1].split()[:2])) if l.startswith("tree_sizes=") else l
              for l in header]
    tree0 = blocks[0].split("\n")
    tree1 = blocks[1].split("\n")

    def model(h, t0):
        return "\n".join(h) + "\n\n" + "\n".join(t0) + "\n\n\n" + "\n".join(tree1) + "\n\n\nend of trees\n"

    base = model(header, tree0)
    add("valid", base, "ok", "tests/data/ml/lightgbm/binary.txt cut to two trees")
    add("valid_full", full, "ok", "tests/data/ml/lightgbm/binary.txt")
    add("crlf", base.replace("\n", "\r\n"), "either", "CRLF line ends")
    # Fields the import reads; the others (gains, weights, internal values, names) are not read.
    read_header = {"version", "num_class", "num_tree_per_iteration", "max_feature_idx", "objective", "tree_sizes"}
    read_tree = {"num_leaves", "num_cat", "split_feature", "threshold", "decision_type", "left_child", "right_child",
                 "leaf_value", "leaf_count", "internal_count", "is_linear"}
    arrays = {"split_feature", "threshold", "decision_type", "left_child", "right_child", "leaf_value", "leaf_count",
              "internal_count", "tree_sizes"}
    required = {"version", "num_class", "num_tree_per_iteration", "max_feature_idx", "num_leaves", "num_cat",
                "split_feature", "threshold", "left_child", "right_child", "leaf_value"}
    for where, lines in (("header", header), ("tree0", tree0)):
        for idx, line in enumerate(lines):
            if "=" not in line or line.startswith("Tree="):
                continue
            key, value = line.split("=", 1)
            words = value.split(" ")
            read = key in (read_header if where == "header" else read_tree)
            muts = [("drop", None, "error" if key in required else "either"),
                    ("empty", "", "error" if read else "either"),
                    ("garbage", "x!", "error" if read else "either"),
                    ("huge", "99999999999999999999", "error" if read and key not in arrays else "either"),
                    ("neg", "-1", "error" if read and key != "tree_sizes" else "either")]
            if key in arrays:
                muts += [("short", " ".join(words[:-1]), "error"), ("long", value + " 0", "error"),
                         ("el_huge", " ".join(["2147483648"] + words[1:]),
                          "either" if key in ("threshold", "leaf_value", "tree_sizes") else "error"),
                         ("el_neg", " ".join(["-7"] + words[1:]),
                          "error" if key in ("split_feature", "decision_type", "leaf_count", "internal_count") else "either"),
                         ("el_nan", " ".join(["nan"] + words[1:]), "either" if key == "tree_sizes" else "error")]
            for label, nv, exp in muts:
                changed = list(lines)
                if nv is None:
                    del changed[idx]
                else:
                    changed[idx] = key + "=" + nv
                text = model(changed, tree0) if where == "header" else model(header, changed)
                add("%s.%s.%s" % (where, key, label), text, exp, "%s %s = %s" % (where, key, "(dropped)" if nv is None
                                                                                 else short(nv)))
    # Structure: cycles, a child out of range, two parents, blocks out of order, lies about sizes.
    def tree_field(key):
        return [l for l in tree0 if l.startswith(key + "=")][0]

    left = tree_field("left_child").split("=", 1)[1].split(" ")
    for label, new, exp in (("cycle_root", ["0"] + left[1:], "error"),
                            ("child_back", left[:-1] + ["1"], "error"),
                            ("child_out", ["1000000"] + left[1:], "error"),
                            ("leaf_out", ["-1000000"] + left[1:], "error"),
                            ("leaf_twice", ["-1"] * len(left), "error")):
        changed = [("left_child=" + " ".join(new)) if l.startswith("left_child=") else l for l in tree0]
        add("tree." + label, model(header, changed), exp, "tree 0 left_child " + label)
    add("tree_index_gap", base.replace("Tree=1\n", "Tree=5\n"), "error", "Tree=5 after Tree=0")
    add("num_leaves_huge", base.replace("num_leaves=", "num_leaves=2147483647\nx=", 1), "error",
        "num_leaves 2^31 - 1 with 7 values")
    add("categorical_no_sets", model(header, [("decision_type=9" + l[len("decision_type=") + 1:])
                                              if l.startswith("decision_type=") else l for l in tree0]), "error",
        "a categorical split without category sets")
    add("no_trees", "\n".join(header) + "\n\nend of trees\n", "error", "no Tree= blocks")
    for frac in (0, 30, 70, 99):
        add("truncated.%d" % frac, base[:len(base) * frac // 100], "error", "cut to %d%%" % frac)
    add("binary_junk", b"tree\n\x00\xff\xfe=\x01\n", "error", "binary bytes")
    add("long_line", "tree\nversion=v4\n" + "x" * 1000000 + "\n", "error", "a 1 MB line without '='")
    return cases


XGB_READ = {"learner", "learner_model_param", "num_class", "num_feature", "num_target", "base_score", "objective", "name",
            "gradient_booster", "model", "gbtree_model_param", "num_parallel_tree", "trees", "tree_info", "tree_param",
            "size_leaf_vector", "split_type", "split_indices", "split_conditions", "left_children", "right_children",
            "default_left", "version"}


def gen_idx(fx):
    """IDX files of Fashion-MNIST read by `train --model mlp`."""
    cases = []
    steps = [["{bin}", "train", "--model", "mlp", "--data", "{d}/fm", "--steps", "2", "--batch", "4", "--width", "8",
              "--threads", "1"]]

    def add(name, replace, expect="error", what=""):
        files = {"fm/" + k: v for k, v in fx.idx.items()}
        for k, v in replace.items():
            files["fm/" + k] = v
        cases.append(Case("idx", "idx." + name, steps, files, expect=expect, what=what))

    img = gzip.decompress(fx.idx["train-images-idx3-ubyte.gz"])
    lab = gzip.decompress(fx.idx["train-labels-idx1-ubyte.gz"])
    TI, TL = "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"
    add("valid", {}, "ok", "32 training and 16 test images")
    add("plain_not_gzip", {TI: img}, "either", "the training images not compressed")
    for label, hdr in (("magic", struct.pack(">IIII", 0x1234, 32, 28, 28)), ("dims0", struct.pack(">IIII", 0x800, 32, 28, 28)),
                       ("dims255", struct.pack(">IIII", 0x8FF, 32, 28, 28)), ("dtype_float", struct.pack(">IIII", 0x0D03, 32, 28, 28)),
                       ("dtype_bad", struct.pack(">IIII", 0x0103, 32, 28, 28)), ("n_huge", struct.pack(">IIII", 0x803, 0x7FFFFFFF, 28, 28)),
                       ("n_u32", struct.pack(">IIII", 0x803, 0xFFFFFFFF, 28, 28)), ("n_more", struct.pack(">IIII", 0x803, 33, 28, 28)),
                       ("n_less", struct.pack(">IIII", 0x803, 31, 28, 28)), ("n_zero", struct.pack(">IIII", 0x803, 0, 28, 28)),
                       ("rows_zero", struct.pack(">IIII", 0x803, 32, 0, 28)), ("rows_huge", struct.pack(">IIII", 0x803, 32, 0xFFFFFFFF, 0xFFFFFFFF)),
                       ("shape_other", struct.pack(">IIII", 0x803, 32, 56, 14)), ("declares_4g", struct.pack(">IIII", 0x803, 6000000, 28, 28)),
                       ("declares_1g", struct.pack(">IIII", 0x803, 1400000, 28, 28))):
        add("images_header." + label, {TI: gzip.compress(hdr + img[16:])},
            "either" if label == "shape_other" else "error", "training images header: " + label)
    for cut in (0, 3, 8, 15, 16, 100, len(img) - 1):
        add("images_truncated.%d" % cut, {TI: gzip.compress(img[:cut])}, what="training images cut to %d bytes" % cut)
    add("images_trailing", {TI: gzip.compress(img + b"\x00" * 100)}, "error", "100 bytes after the declared images")
    add("labels_count", {TL: gzip.compress(struct.pack(">II", 0x801, 31) + lab[8:-1])}, "error", "31 labels for 32 images")
    add("labels_value", {TL: gzip.compress(lab[:8] + b"\xff" + lab[9:])}, "error", "a label 255")
    add("labels_value10", {TL: gzip.compress(lab[:8] + b"\x0a" + lab[9:])}, "error", "a label 10")
    add("labels_magic", {TL: gzip.compress(b"\x00\x00\x08\x03" + lab[4:])}, "error", "labels with the images' magic")
    add("labels_huge", {TL: gzip.compress(struct.pack(">II", 0x801, 0xFFFFFFFF) + lab[8:])}, "error", "labels count 2^32-1")
    gz = fx.idx[TI]
    add("gzip_truncated", {TI: gz[:len(gz) // 2]}, "error", "the gzip stream cut in half")
    add("gzip_crc", {TI: gz[:-8] + bytes(b ^ 0xFF for b in gz[-8:-4]) + gz[-4:]}, "error", "a wrong gzip CRC")
    add("gzip_isize", {TI: gz[:-4] + b"\xff\xff\xff\xff"}, "error", "a wrong gzip size field")
    add("gzip_magic_only", {TI: b"\x1f\x8b"}, "error", "only the gzip magic")
    add("gzip_garbage", {TI: b"\x1f\x8b\x08\x00" + b"\xab" * 200}, "error", "the gzip magic then garbage")
    add("gzip_two_members", {TI: gzip.compress(img[:1000]) + gzip.compress(img[1000:])}, "either", "two gzip members")
    add("empty", {TI: b""}, "error", "an empty file")
    # Gzip bombs: small files that inflate to 512 MiB.
    add("bomb_trailing", {TI: gzip_of_zeros_cached(fx, img)}, "error", "32 images declared, then 512 MiB of zeros (a %d KB file)" % (len(fx.zeros_gz) // 1024))
    bomb_hdr = struct.pack(">IIII", 0x803, 0x7FFFFFFF, 28, 28)
    add("bomb_declared_huge", {TI: gzip_of_zeros_cached(fx, bomb_hdr)}, "error", "2^31-1 images declared, 512 MiB of zeros follow")
    add("bomb_labels", {TL: gzip_of_zeros_cached(fx, struct.pack(">II", 0x801, 32))}, "error", "32 labels then 512 MiB of zeros")
    missing = dict(fx.idx)
    cases.append(Case("idx", "idx.missing_file", steps, {"fm/" + k: v for k, v in missing.items() if k != TL},
                      what="the training labels file absent"))
    cases.append(Case("idx", "idx.folder_is_file", [[a.replace("{d}/fm", "{d}/fm.txt") for a in steps[0]]], {"fm.txt": b"x"},
                      what="--data a regular file"))
    cases.append(Case("idx", "idx.folder_missing", [[a.replace("{d}/fm", "{d}/nosuch") for a in steps[0]]], {},
                      what="--data a missing folder"))
    return cases


_bomb_cache = {}


def gzip_of_zeros_cached(fx, prefix):
    """A gzip file of prefix followed by 512 MiB of zeros: the shared zeros stream with the prefix in
    a first member (gzip readers treat members as one stream)."""
    return gzip.compress(prefix) + fx.zeros_gz


def gen_checkpoint(fx):
    """A language-model checkpoint of `train`, resumed with --resume."""
    cases = []
    header, body = st_read(fx.ckpt)
    meta = header["__metadata__"]
    tok = os.path.join(fx.hf, "tokenizer.json")
    steps = [["{bin}", "train", "--model", "llama", "--config", os.path.join(fx.hf, "llama", "config.json"), "--data",
              "{d}/corpus.txt", "--tokenizer", tok, "--tokens", "{d}/c.tok", "--steps", "3", "--batch", "2", "--seq-len",
              "16", "--threads", "1", "--checkpoint", "{d}/ck.safetensors", "--resume", "--quiet"]]

    def add(name, ck, expect="error", what=""):
        cases.append(Case("checkpoint", "ckpt." + name, steps,
                          {"ck.safetensors": ck, "corpus.txt": fx.corpus, "c.tok": fx.tokens}, expect=expect,
                          what="checkpoint: " + what, outputs=("ck.safetensors",)))

    add("valid", fx.ckpt, "ok", "the checkpoint of step 2, resumed to step 3")
    hlen = struct.unpack("<Q", fx.ckpt[:8])[0]
    for cut in (0, 8, 100, 8 + hlen, 8 + hlen + 1000, len(fx.ckpt) // 2, len(fx.ckpt) - 1):
        add("truncated.%d" % cut, fx.ckpt[:cut], what="cut to %d bytes" % cut)
    names = [k for k in header if k != "__metadata__"]
    for t in ("param.model.embed_tokens.weight", "param.lm_head.weight", "param.model.norm.weight",
              "optim.m.model.norm.weight", "optim.v.lm_head.weight", "optim.beta1_power", "optim.beta2_power"):
        h = copy.deepcopy(header)
        del h[t]
        add("missing.%s" % t, st_write(h, body), what="tensor %s left out" % t)
        h = copy.deepcopy(header)
        h[t]["shape"] = [1] if h[t]["shape"] != [1] else [2]
        e = h[t]
        e["data_offsets"] = [e["data_offsets"][0], e["data_offsets"][0] + 4 * (1 if e["shape"] == [1] else 2)]
        # A beta power of shape [1] instead of [] holds the same one value.
        add("shape.%s" % t, st_write(h, body), "either" if header[t]["shape"] == [] else "error",
            what="tensor %s reshaped to %s" % (t, e["shape"]))
        h = copy.deepcopy(header)
        h[t]["dtype"] = "F16"
        e = h[t]
        a, b = e["data_offsets"]
        e["data_offsets"] = [a, a + (b - a) // 2]
        add("dtype.%s" % t, st_write(h, body), what="tensor %s as F16" % t)
    h = copy.deepcopy(header)
    h["param.model.extra.weight"] = dict(header["param.model.norm.weight"])
    add("extra_tensor", st_write(h, body), "error", "a parameter tensor the model does not have")
    for key, vals in (("step", ["-1", "x", "2x", "1" * 19, "", "3", "0", " 2", "2.0"]),
                      ("optimizer.steps", ["-1", "3", "abc", "1" * 19]), ("optimizer", ["sgd", "", "adamw2"]),
                      ("format", ["other", ""]), ("lm.data_position", ["-1", "x", "99999999999999999999", "1000000000"]),
                      ("lm.hparams", ["{", "[]", "{}", json.dumps(dict(json.loads(meta["lm.hparams"]), layers=3)),
                                      json.dumps(dict(json.loads(meta["lm.hparams"]), seq_len=1 << 40))]),
                      ("lm.config", ["{", "[]", json.dumps(dict(json.loads(meta["lm.config"]), hidden_size=1 << 30)),
                                     json.dumps(dict(json.loads(meta["lm.config"]), vocab_size=-1))])):
        for i, v in enumerate(vals):
            h = copy.deepcopy(header)
            h["__metadata__"][key] = v
            exp = "error"
            if key == "step" and v in ("0",):
                exp = "either"
            if key == "lm.data_position" and v == "1000000000":
                exp = "either"
            if key == "lm.config":
                exp = "either"  # informational: a resumed run takes its shape from --config or the preset
            add("meta.%s.%d" % (key, i), st_write(h, body), exp, "metadata %s = %r" % (key, v[:50]))
        h = copy.deepcopy(header)
        del h["__metadata__"][key]
        add("meta.%s.removed" % key, st_write(h, body), "error" if key in ("step", "optimizer.steps", "optimizer") else "either",
            "metadata %s removed" % key)
    # Beta powers that disagree with the step count.
    for t, val in (("optim.beta1_power", 0.5), ("optim.beta1_power", 1.0), ("optim.beta1_power", 2.0),
                   ("optim.beta2_power", -0.1), ("optim.beta2_power", float("nan"))):
        a, _ = header[t]["data_offsets"]
        b2 = bytearray(body)
        b2[a:a + 4] = struct.pack("<f", val)
        add("beta.%s.%s" % (t, val), st_write(header, bytes(b2)), what="%s = %s" % (t, val))
    # Flipped bytes in the header and in the data.
    for pos in range(8, 8 + hlen, max(1, hlen // 12)):
        r = bytearray(fx.ckpt)
        r[pos] ^= 0x20
        add("flip.header.%d" % pos, bytes(r), "either", "header byte %d xor 0x20" % pos)
    for frac in (10, 50, 90):
        pos = 8 + hlen + len(body) * frac // 100
        r = bytearray(fx.ckpt)
        r[pos] ^= 0xFF
        add("flip.data.%d" % frac, bytes(r), "either", "data byte at %d%% xor 0xFF" % frac)
    # The checkpoint of another shape (from the llama preset's metadata but the mamba config).
    return cases


def gen_report(fx):
    """verify reports read by `compare`."""
    cases = []
    base = fx.report
    steps = [["{bin}", "compare", "{d}/a.json", "{d}/b.json"]]

    def add(name, r, expect="error", what=""):
        text = r if isinstance(r, bytes) else jdump(r)
        cases.append(Case("report", "report." + name, steps, {"a.json": jdump(base), "b.json": text}, expect=expect,
                          what="verify report B: " + what))

    add("valid", base, "ok", "the same report")
    checks = base["runs"][0]["checks"]

    def digest(chs):
        return hashlib.sha256(b"".join(bytes.fromhex(c["hash"]) for c in chs)).hexdigest()

    r = copy.deepcopy(base)
    c0 = r["runs"][0]["checks"][0]
    c0["hash"] = ("0" if c0["hash"][0] != "0" else "1") + c0["hash"][1:]
    add("hash_edited", r, "error", "one check's hash edited, the digest left")
    r2 = copy.deepcopy(r)
    r2["runs"][0]["digest"] = digest(r2["runs"][0]["checks"])
    add("hash_edited_digest", r2, "error", "a hash edited and the run's digest recomputed (IDENTICAL beside another expected)")
    r3 = copy.deepcopy(r2)
    r3["runs"][0]["checks"][0]["expected"] = r3["runs"][0]["checks"][0]["hash"]
    add("hash_expected_edited", r3, "either", "hash, expected and digest edited consistently (compare: different, exit 1)")
    r = copy.deepcopy(base)
    r["runs"][0]["checks"].append(copy.deepcopy(checks[0]))
    add("duplicate_check", r, "error", "a check twice")
    r = copy.deepcopy(base)
    r["runs"].append(copy.deepcopy(base["runs"][0]))
    add("duplicate_run", r, "error", "a device run twice")
    r = copy.deepcopy(base)
    r["runs"][0]["checks"] = []
    r["runs"][0]["digest"] = digest([])
    add("no_checks", r, "error", "no checks")
    r = copy.deepcopy(base)
    r["runs"] = []
    add("no_runs", r, "error", "no device runs")
    r = copy.deepcopy(base)
    r["suite"] = "full"
    add("suite_full", r, "error", "suite full")
    r = copy.deepcopy(base)
    r["contract_profile"] = "other"
    add("profile_other", r, "error", "another contract profile")
    for path in leaf_paths(base):
        v = get_path(base, path)
        p = pname(path)
        if path[-1] in ("seconds", "reason", "cpu_isa", "version", "skipped_devices", "cross_device_divergences", "threads"):
            wrong = [("string", "x", "either"), ("null", None, "either")]
        elif isinstance(v, str):
            wrong = [("number", 5, "error"), ("null", None, "error"), ("list", [v], "error")]
            if p.endswith(("hash", "expected", "digest")):
                wrong += [("short", v[:-2], "error"), ("upper", v.upper(), "either"), ("nonhex", "zz" + v[2:], "error"),
                          ("long", v + "00", "error"), ("empty", "", "error")]
            if p.endswith("state"):
                wrong += [("unknown", "MAYBE", "error"), ("lower", v.lower(), "error")]
            if p == "format":
                wrong += [("other", "bitlearn.verify.report.v9", "error")]
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            wrong = [("string", "x", "error"), ("neg", -1, "either"), ("huge", 1e300, "either")]
        else:
            wrong = [("string", "x", "either")]
        for label, nv, exp in wrong:
            add("%s.%s" % (p, label), set_path(base, path, nv), exp, "%s = %s" % (p, short(nv)))
        if len(path) <= 1 or path[-1] in ("name", "hash", "state", "digest", "device", "expected"):
            opt = path[-1] in ("cpu_isa", "skipped_devices", "cross_device_divergences", "digest", "threads", "version",
                               "seconds", "reason") and len(path) <= 1
            add("%s.removed" % p, set_path(base, path, REMOVE), "either" if opt else "error", "%s removed" % p)
    for label, text in (("empty", b""), ("truncated", jdump(base)[:200]), ("array", b"[]"), ("deep", deep_json(100000)),
                        ("latin1", jdump(base).replace(b"quick", b"qu\xefck", 1)), ("nul", b"\x00" * 100)):
        add("file." + label, text, "error", "file " + label)
    cases.append(Case("report", "report.missing_file", steps, {"a.json": jdump(base)}, what="B does not exist"))
    cases.append(Case("report", "report.directory", steps, {"a.json": jdump(base)}, dirs=["b.json"], what="B is a folder"))
    cases.append(Case("report", "report.fifo", steps, {"a.json": jdump(base)}, what="B is a named pipe nobody writes",
                      setup=lambda d: os.mkfifo(os.path.join(d, "b.json")), timeout=FIFO_TIMEOUT_S))
    return cases


def make_full_device(folder):
    """A character device like /dev/full (major 1, minor 7) named "full" in the case's folder."""
    os.mknod(os.path.join(folder, "full"), 0o666 | stat.S_IFCHR, os.makedev(1, 7))


def gen_options(fx):
    """The options of every command: 0, negative, huge, NaN, non-numeric, paths in missing or
    unwritable folders, an output that is a folder, stdout to /dev/full."""
    cases = []
    hf = fx.hf
    tok = os.path.join(hf, "tokenizer.json")
    ridge = jdump(fx.models["ridge"])
    tree = jdump(fx.models["random_forest_classifier"])
    files = {"r.csv": fx.reg_csv, "c.csv": fx.cls_csv, "ridge.json": ridge, "forest.json": tree, "corpus.txt": fx.corpus,
             "a.json": jdump(fx.report)}
    base = {
        "fit": ["{bin}", "fit", "--model", "ridge", "--data", "{d}/r.csv", "--target", "y", "--out", "{d}/m.json", "--quiet"],
        "predict": ["{bin}", "predict", "--model", "{d}/ridge.json", "--data", "{d}/r.csv", "--out", "{d}/p.csv"],
        "evaluate": ["{bin}", "evaluate", "--model", "{d}/forest.json", "--data", "{d}/c.csv"],
        "cv": ["{bin}", "cv", "--model", "ridge", "--data", "{d}/r.csv", "--target", "y"],
        "inspect": ["{bin}", "inspect", "{d}/forest.json"],
        "generate": ["{bin}", "generate", "--model", os.path.join(hf, "gpt2"), "--ids", "1,2,3", "--max-new-tokens", "2",
                     "--tokenizer", tok],
        "logits": ["{bin}", "logits", "--model", os.path.join(hf, "gpt2"), "--ids", "1,2,3", "--out", "{d}/l.safetensors"],
        "encode": ["{bin}", "tokenizer", "encode", "--tokenizer", tok, "--text", "hello"],
        "decode": ["{bin}", "tokenizer", "decode", "--tokenizer", tok, "--ids", "1,2"],
        "train_mlp": ["{bin}", "train", "--model", "mlp", "--data", "{d}/fm", "--steps", "2", "--batch", "4", "--width", "8",
                      "--threads", "1"],
        "train_lm": ["{bin}", "train", "--model", "llama", "--config", os.path.join(hf, "llama", "config.json"), "--data",
                     "{d}/corpus.txt", "--tokenizer", tok, "--tokens", "{d}/c.tok", "--steps", "2", "--batch", "2",
                     "--seq-len", "16", "--threads", "1", "--quiet"],
        "verify": ["{bin}", "verify", "--list"],
        "compare": ["{bin}", "compare", "{d}/a.json", "{d}/a.json"],
        "doctor": ["{bin}", "doctor"],
        "version": ["{bin}", "version"],
    }
    idx_files = {"fm/" + k: v for k, v in fx.idx.items()}

    def add(cmd, label, argv, expect="error", what="", stdout=None, extra=None, dirs=None, setup=None, timeout=None,
            answers=()):
        f = dict(files)
        if cmd == "train_mlp":
            f.update(idx_files)
        f.update(extra or {})
        cases.append(Case("options", "opt.%s.%s" % (cmd, label), [argv], f, expect=expect, what=what or " ".join(argv[1:])[:120],
                          stdout=stdout, dirs=dirs, setup=setup, timeout=timeout, answers=answers))

    def with_opt(cmd, opt, value):
        """The base command with opt set to value (replacing the base's own value of opt)."""
        argv = list(base[cmd])
        if opt in argv:
            i = argv.index(opt)
            argv[i + 1] = value
        else:
            argv += [opt, value]
        return argv

    for cmd in base:
        add(cmd, "valid", base[cmd], "ok" if cmd != "doctor" else "either", "the command as it is")
        add(cmd, "devfull", base[cmd], "error" if cmd not in ("fit", "logits", "predict", "train_mlp", "train_lm") else "either",
            "stdout on /dev/full", stdout="/dev/full")
    # fit's summary goes to stderr: with nothing for stdout, a full stdout is no error.
    add("fit", "devfull_loud", base["fit"][:-1], "either", "fit without --quiet, stdout on /dev/full", stdout="/dev/full")
    add("train_mlp", "devfull_out", base["train_mlp"], "error", "train mlp, stdout on /dev/full", stdout="/dev/full")
    NUM = [("zero", "0"), ("neg", "-1"), ("huge", "9223372036854775807"), ("overflow", "99999999999999999999999"),
           ("nan", "nan"), ("text", "abc"), ("float", "1.5"), ("empty", "")]
    int_opts = {
        "fit": ["--threads"], "predict": ["--threads"], "evaluate": ["--threads"], "cv": ["--folds", "--seed", "--threads"],
        "inspect": ["--tree", "--max-values"], "generate": ["--max-new-tokens", "--top-k", "--seed"],
        "train_mlp": ["--steps", "--batch", "--width", "--train-subset", "--checkpoint-every", "--seed", "--threads"],
        "train_lm": ["--steps", "--batch", "--seq-len", "--shards", "--accumulate", "--warmup", "--stop-at", "--eval-every",
                     "--eval-batches", "--hash-every", "--checkpoint-every", "--threads"],
        "verify": ["--threads", "--lm-steps", "--lm-switch-every"],
    }
    # Values of each integer option that may be valid.
    ok_values = {("zero", "--tree"), ("zero", "--max-values"), ("zero", "--top-k"), ("zero", "--seed"), ("zero", "--warmup"),
                 ("zero", "--eval-every"), ("zero", "--hash-every"), ("zero", "--checkpoint-every"), ("zero", "--max-new-tokens"),
                 ("e", "--max-values"), ("e", "--top-k"), ("e", "--seed"), ("e", "--warmup"), ("e", "--eval-every"),
                 ("e", "--hash-every"), ("e", "--checkpoint-every"), ("e", "--train-subset"), ("huge", "--seed"),
                 ("huge", "--max-values"), ("huge", "--top-k"), ("huge", "--eval-every"), ("huge", "--hash-every"),
                 ("huge", "--checkpoint-every"), ("huge", "--train-subset"), ("huge", "--stop-at"), ("e", "--stop-at"),
                 ("hex", "--seed"), ("e", "--steps"), ("e", "--width"), ("e", "--batch"), ("huge", "--warmup"),
                 ("zero", "--stop-at"), ("e", "--lm-switch-every"), ("huge", "--lm-switch-every"), ("e", "--lm-steps"),
                 ("e", "--threads"), ("e", "--max-new-tokens"), ("e", "--eval-batches"), ("huge", "--eval-batches"),
                 ("zero", "--seq-len"), ("zero", "--shards"), ("zero", "--eval-batches")}  # 0: the default
    slow = {("huge", "--steps"), ("e", "--steps"), ("e", "--width"), ("e", "--batch"), ("e", "--max-new-tokens"), ("e", "--eval-batches"),
            ("huge", "--eval-batches"), ("e", "--threads")}
    for cmd, opts in int_opts.items():
        for opt in opts:
            for label, value in NUM:
                if (label, opt) in slow:
                    continue  # a valid but long run, not a hostile input
                exp = "either" if (label, opt) in ok_values else "error"
                if cmd == "verify" and opt != "--threads":
                    exp = "either"  # --lm-* options are read only with --lm-training
                add(cmd, "%s.%s" % (opt.lstrip("-"), label), with_opt(cmd, opt, value), exp,
                    timeout=OVERFLOW_STEPS_TIMEOUT_S if (label, opt) == ("overflow", "--steps") else None,
                    answers=(1, 3) if cmd == "verify" else ())
    float_opts = {"generate": ["--temperature", "--top-p", "--min-p", "--repetition-penalty"],
                  "train_mlp": ["--lr"], "train_lm": ["--lr", "--min-lr", "--weight-decay", "--clip", "--val-fraction"]}
    FLT = [("neg", "-1"), ("nan", "nan"), ("inf", "inf"), ("ninf", "-inf"), ("text", "abc"), ("huge", "1e300"),
           ("overflow", "1e400"), ("empty", ""), ("zero", "0"), ("two", "2")]
    ok_f = {("zero", "--temperature"), ("huge", "--temperature"), ("two", "--temperature"), ("zero", "--min-p"),
            ("two", "--repetition-penalty"), ("huge", "--repetition-penalty"), ("zero", "--min-lr"), ("zero", "--weight-decay"),
            ("two", "--weight-decay"), ("zero", "--clip"), ("two", "--clip"), ("huge", "--clip"), ("zero", "--val-fraction"),
            ("two", "--lr"), ("huge", "--lr"), ("two", "--min-lr"), ("huge", "--min-lr"), ("huge", "--weight-decay"),
            ("inf", "--clip"), ("inf", "--temperature"), ("overflow", "--clip"), ("overflow", "--temperature")}
    for cmd, opts in float_opts.items():
        for opt in opts:
            for label, value in FLT:
                exp = "either" if (label, opt) in ok_f else "error"
                add(cmd, "%s.%s" % (opt.lstrip("-"), label), with_opt(cmd, opt, value), exp)
    # Token ids of generate and logits.
    for cmd in ("generate", "logits"):
        for label, ids in (("empty", ""), ("neg", "-1"), ("vocab", "512"), ("huge", "99999999999"), ("text", "a,b"),
                           ("double_comma", "1,,2"), ("long", ",".join(["1"] * 5000)), ("overflow", "1" * 40)):
            add(cmd, "ids.%s" % label, with_opt(cmd, "--ids", ids), "error", "%s --ids %r" % (cmd, ids[:30]))
    add("generate", "prompt_without_tokenizer", ["{bin}", "generate", "--model", "{d}/m", "--prompt", "hi"], "error",
        "generate --prompt with no tokenizer anywhere", extra={"m/config.json": fx.hf_file("gpt2", "config.json"),
                                                             "m/model.safetensors": fx.hf_file("gpt2", "model.safetensors")})
    add("generate", "max_new_tokens_near_max", with_opt("generate", "--max-new-tokens", "9223372036854775806"), "error")
    for cmd in ("generate", "logits", "train_lm"):
        for label, dev in (("cuda99", "cuda:99"), ("bogus", "tpu"), ("cuda_neg", "cuda:-1"), ("cuda_text", "cuda:x"),
                           ("empty", "")):
            add(cmd, "device.%s" % label, with_opt(cmd, "--device", dev), "error", "%s --device %r" % (cmd, dev))
    for label, dev in (("bogus", "tpu"), ("cuda99", "cuda:99")):
        # A device that is not there: verify says so and exits 3 (incomplete), its documented answer.
        add("verify", "device.%s" % label, ["{bin}", "verify", "--quick", "--device", dev],
            "either" if label == "cuda99" else "error", answers=(3,) if label == "cuda99" else ())
    add("generate", "stop_empty", with_opt("generate", "--stop", ""), "either", "generate --stop ''")
    add("generate", "model_missing", with_opt("generate", "--model", "{d}/nosuch"), "error")
    add("generate", "model_file", with_opt("generate", "--model", "{d}/r.csv"), "error", "generate --model a CSV file")
    add("predict", "output_bogus", with_opt("predict", "--output", "bogus"), "error")
    add("predict", "output_proba_regressor", with_opt("predict", "--output", "proba"), "error", "proba of a regressor")
    add("predict", "output_transform_ridge", with_opt("predict", "--output", "transform"), "error", "transform of ridge")
    add("predict", "model_missing", with_opt("predict", "--model", "{d}/nosuch.json"), "error")
    add("predict", "model_dir", with_opt("predict", "--model", "{d}"), "error", "predict --model a folder")
    add("predict", "model_safetensors", with_opt("predict", "--model", os.path.join(hf, "gpt2", "model.safetensors")), "error")
    add("inspect", "model_safetensors", ["{bin}", "inspect", os.path.join(hf, "gpt2", "model.safetensors")], "error")
    add("inspect", "model_fifo", ["{bin}", "inspect", "{d}/fifo.json"], "error", "inspect a named pipe",
        setup=lambda d: os.mkfifo(os.path.join(d, "fifo.json")), timeout=FIFO_TIMEOUT_S)
    add("cv", "folds_more_than_rows", with_opt("cv", "--folds", "41"), "error", "cv --folds 41 on 40 rows")
    add("cv", "folds_one", with_opt("cv", "--folds", "1"), "error")
    add("cv", "stratified_regressor", base["cv"] + ["--stratified"], "error", "stratified folds of a regression target")
    add("cv", "stratified_and_plain", base["cv"] + ["--stratified", "--plain"], "error")
    # Hyper-parameters.
    for label, p, exp in (("alpha_nan", "alpha=nan", "error"), ("alpha_neg", "alpha=-1", "error"), ("alpha_text", "alpha=abc", "error"),
                          ("alpha_inf", "alpha=inf", "error"), ("alpha_empty", "alpha=", "error"), ("no_equals", "alpha", "error"),
                          ("unknown", "nosuch=1", "error"), ("empty", "", "error"), ("twice", "alpha=1", "either"),
                          ("fit_intercept_text", "fit_intercept=maybe", "error"), ("equals_only", "=", "error"),
                          ("alpha_huge", "alpha=1e300", "either"), ("alpha_overflow", "alpha=1e400", "error")):
        argv = base["fit"] + ["--param", p] + (["--param", p] if label == "twice" else [])
        add("fit", "param.%s" % label, argv, exp, "fit ridge --param %r" % p)
    for est, p, exp in (("decision_tree_classifier", "max_depth=-1", "error"), ("decision_tree_classifier", "max_depth=1.5", "error"),
                        ("decision_tree_classifier", "max_depth=99999999999999999999", "error"),
                        ("decision_tree_classifier", "min_samples_split=0", "error"),
                        ("decision_tree_classifier", "min_samples_leaf=0", "error"),
                        ("random_forest_classifier", "n_estimators=0", "error"),
                        ("random_forest_classifier", "n_estimators=-3", "error"),
                        ("random_forest_classifier", "n_estimators=1e9", "error"),
                        ("random_forest_classifier", "max_features=0", "error"),
                        ("random_forest_classifier", "max_features=-1", "error"),
                        ("kmeans", "n_clusters=0", "error"), ("kmeans", "n_clusters=1000", "error"),
                        ("kmeans", "n_clusters=-1", "error"), ("kmeans", "max_iter=-1", "error"),
                        ("pca", "n_components=0", "either"), ("pca", "n_components=99", "error"),
                        ("pca", "n_components=-1", "error"), ("kneighbors_classifier", "n_neighbors=0", "error"),
                        ("kneighbors_classifier", "n_neighbors=1000", "error"),
                        ("hist_gradient_boosting_classifier", "max_iter=0", "error"),
                        ("hist_gradient_boosting_classifier", "learning_rate=nan", "error"),
                        ("hist_gradient_boosting_classifier", "max_bins=100000", "error"),
                        ("hist_gradient_boosting_classifier", "max_bins=1", "error"),
                        ("logistic_regression", "C=0", "error"), ("logistic_regression", "C=-1", "error"),
                        ("logistic_regression", "max_iter=0", "error"), ("logistic_regression", "tol=nan", "error"),
                        ("sgd_classifier", "eta0=nan", "error"), ("sgd_classifier", "max_iter=-5", "error"),
                        ("mlp_nosuch", "x=1", "error")):
        argv = ["{bin}", "fit", "--model", est, "--data", "{d}/c.csv", "--out", "{d}/m.json", "--quiet", "--param", p]
        if est not in ("kmeans", "pca"):
            argv += ["--target", "y"]
        add("fit", "param.%s.%s" % (est, p.replace("=", "_")), argv, exp, "fit %s --param %s" % (est, p))
    # Output paths.
    outs = {"fit": "--out", "predict": "--out", "logits": "--out", "evaluate": "--json", "cv": "--json", "verify": "--json",
            "train_lm": "--report", "train_mlp": "--checkpoint"}
    for cmd, opt in outs.items():
        # "full" is a device node like /dev/full made in the case's folder (never the system's own:
        # a writer that renames a temporary over its target would replace that device with a file).
        for label, path, exp in (("missing_folder", "{d}/no/such/x.json", "error"), ("folder", "{d}", "error"),
                                 ("proc", "/proc/version", "error"), ("empty", "", "error"),
                                 ("dev_full", "{d}/full", "error"), ("under_file", "{d}/r.csv/x.json", "error"),
                                 ("root_unwritable", "/proc/sys/x.json", "error")):
            argv = with_opt(cmd, opt, path)
            if cmd == "verify":
                argv = ["{bin}", "verify", "--quick", "--threads", "1", "--json", path]
            add(cmd, "%s.%s" % (opt.lstrip("-"), label), argv, exp,
                "%s %s %r" % (cmd, opt, path if label != "dev_full" else "a char device 1,7 (/dev/full) in the folder"),
                setup=make_full_device if label == "dev_full" else None)
    # The LM trainer's other paths.
    for label, opt, path, exp in (("save_hf_file", "--save-hf", "{d}/corpus.txt", "error"),
                                  ("save_hf_missing", "--save-hf", "{d}/no/such", "either"),
                                  ("tokens_dir", "--tokens", "{d}", "error"), ("data_missing", "--data", "{d}/nosuch.txt", "error"),
                                  ("data_empty", "--data", "{d}/empty.txt", "error"),
                                  ("data_dir_empty", "--data", "{d}/emptydir", "error"),
                                  ("tokenizer_missing", "--tokenizer", "{d}/nosuch.json", "error"),
                                  ("config_missing", "--config", "{d}/nosuch.json", "error"),
                                  ("config_csv", "--config", "{d}/r.csv", "error"),
                                  ("init_from_missing", "--init-from", "{d}/nosuch", "error"),
                                  ("dump_grads_dir", "--dump-grads", "{d}", "error"),
                                  ("checkpoint_dir", "--checkpoint", "{d}", "error"),
                                  ("sampler_bad", "--sampler", "nosuch", "error"),
                                  ("model_unknown", "--model", "nosuch", "error")):
        add("train_lm", label, with_opt("train_lm", opt, path), exp, "train %s %r" % (opt, path),
            extra={"empty.txt": b""}, dirs=["emptydir"])
    add("train_lm", "resume_no_checkpoint", base["train_lm"] + ["--resume"], "either", "--resume without --checkpoint")
    add("train_lm", "shards_not_dividing", with_opt("train_lm", "--accumulate", "3"), "error", "--accumulate 3 with 2 shards")
    add("train_lm", "seq_len_over_context", with_opt("train_lm", "--seq-len", "100000"), "error", "--seq-len beyond the context")
    add("train_lm", "corpus_tiny", with_opt("train_lm", "--data", "{d}/tiny.txt"), "error", "a 3-byte corpus",
        extra={"tiny.txt": b"hi\n"})
    add("train_mlp", "data_missing", with_opt("train_mlp", "--data", "{d}/nosuch"), "error")
    add("train_mlp", "model_unknown", with_opt("train_mlp", "--model", "nosuch"), "error")
    # Environment.
    for label, v, exp in (("zero", "0", "error"), ("neg", "-1", "error"), ("text", "abc", "error"), ("huge", "99999999999999999999", "error"),
                          ("space", " 2", "either"), ("empty", "", "ok")):
        cases.append(Case("options", "opt.env.BITLEARN_THREADS.%s" % label, [base["fit"]], files, expect=exp,
                          what="BITLEARN_THREADS=%r fit" % v, env={"BITLEARN_THREADS": v}))
    # Unknown commands and options.
    add("cli", "unknown_command", ["{bin}", "nosuch"], "error")
    add("cli", "unknown_option", base["fit"] + ["--nosuch"], "error")
    add("cli", "no_command", ["{bin}"], "either", "bitlearn with no command")
    add("cli", "math_unknown", ["{bin}", "math", "nosuch"], "error", "math of an unknown function")
    return cases


def gen_chat(fx):
    """Chat templates (a template file, a model folder's tokenizer_config.json or chat_template.jinja)
    and messages files, through `tokenizer chat`."""
    cases = []
    chatml = (b"{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
              b"{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
    msgs = json.dumps([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]).encode()
    by_template = [["{bin}", "tokenizer", "chat", "--template", "{d}/t.jinja", "--messages", "{d}/m.json",
                    "--generation-prompt"]]
    by_model = [["{bin}", "tokenizer", "chat", "--model", "{d}/model", "--messages", "{d}/m.json", "--generation-prompt"]]

    def template(name, text, expect="error", what="", messages=msgs, timeout=None):
        cases.append(Case("chat", "chat.template." + name, by_template, {"t.jinja": text, "m.json": messages},
                          expect=expect, what=what, timeout=timeout))

    def messages(name, data, expect="error", what=""):
        cases.append(Case("chat", "chat.messages." + name, by_template, {"t.jinja": chatml, "m.json": data},
                          expect=expect, what=what))

    def config(name, files, expect="error", what=""):
        files = {"model/" + k: v for k, v in files.items()}
        files["m.json"] = msgs
        cases.append(Case("chat", "chat.config." + name, by_model, files, expect=expect, what=what))

    template("valid", chatml, "ok", "a ChatML template")
    messages("valid_empty_list", b"[]", "either", "no messages")
    # Templates: unclosed, unknown or unsupported constructs, runaway loops and output, deep nesting.
    for label, text in (("unclosed_output", b"{{ messages"), ("unclosed_block", b"{% if true %}x"),
                        ("unclosed_comment", b"{# x"), ("stray_endfor", b"{% endfor %}"),
                        ("unknown_statement", b"{% frobnicate %}"), ("macro", b"{% macro f() %}x{% endmacro %}"),
                        ("unknown_filter", b"{{ 'x' | nosuch }}"), ("unknown_test", b"{% if x is nosuch %}{% endif %}"),
                        ("unknown_function", b"{{ nosuch() }}"), ("bad_token", b"{{ 1 $ 2 }}"),
                        ("unclosed_string", b"{{ 'abc }}"), ("raise", b"{{ raise_exception('no system role') }}"),
                        ("undefined_attr", b"{{ nosuch.attr }}"), ("divide_zero", b"{{ 1 // 0 }}"),
                        ("loop_none", b"{% for x in none %}{% endfor %}"), ("int_overflow", b"{{ 9223372036854775807 + 1 }}"),
                        ("huge_int_literal", b"{{ 99999999999999999999999 }}"),
                        ("runaway_range", b"{% for i in range(100000000) %}x{% endfor %}"),
                        ("runaway_nested", b"{% for i in range(1000) %}{% for j in range(1000) %}{% for k in range(1000) %}"
                                           b"x{% endfor %}{% endfor %}{% endfor %}"),
                        ("runaway_output", b"{{ 'x' * 1000000000 }}"),
                        ("deep_parens", b"{{ " + b"(" * 100000 + b"1" + b")" * 100000 + b" }}"),
                        ("deep_blocks", b"{% if true %}" * 5000 + b"{% endif %}" * 5000),
                        ("deep_list", b"{{ " + b"[" * 100000 + b"]" * 100000 + b" }}"),
                        ("long_tag", b"{{ " + b"1 + " * 200000 + b"1 }}"),
                        ("invalid_utf8", b"\xff\xfe{{ 1 }}"), ("nul", b"a\x00{{ 1 }}")):
        expect = "either" if label in ("invalid_utf8", "nul") else "error"
        template(label, text, expect, "template: " + label, timeout=20)
    template("empty", b"", "either", "an empty template")
    # Messages files.
    for label, data in (("not_json", b"[{"), ("object", b'{"role": "user"}'), ("string", b'"hi"'),
                        ("entry_string", b'["hi"]'), ("role_missing", b'[{"content": "x"}]'),
                        ("role_number", b'[{"role": 1, "content": "x"}]'), ("content_number", b'[{"role": "user", "content": 1}]'),
                        ("content_null", b'[{"role": "user", "content": null}]'),
                        ("deep", b"[" * 100000 + b"]" * 100000), ("empty_file", b""),
                        ("invalid_utf8", b'[{"role": "user", "content": "\xff"}]')):
        messages(label, data, "error", "messages: " + label)
    messages("content_10mb", json.dumps([{"role": "user", "content": "x" * 10_000_000}]).encode(), "either",
             "a 10 MB message")
    messages("many", json.dumps([{"role": "user", "content": "x"}] * 100000).encode(), "either", "100,000 messages")
    # tokenizer_config.json and chat_template.jinja of a model folder.
    config("valid", {"tokenizer_config.json": json.dumps({"chat_template": chatml.decode(), "bos_token": "<s>"}).encode()},
           "ok", "a tokenizer_config.json with a template")
    config("jinja_file", {"chat_template.jinja": chatml}, "ok", "chat_template.jinja alone")
    for label, cfg in (("not_json", b"{"), ("list", b"[]"), ("no_template", b"{}"), ("template_number", b'{"chat_template": 3}'),
                       ("template_list_no_default", b'{"chat_template": [{"name": "tool_use", "template": "x"}]}'),
                       ("template_list_bad", b'{"chat_template": [1, 2]}'), ("deep", b'{"a":' * 100000 + b"1" + b"}" * 100000),
                       ("bos_number", json.dumps({"chat_template": chatml.decode(), "bos_token": 5}).encode())):
        expect = "either" if label == "bos_number" else "error"
        config(label, {"tokenizer_config.json": cfg}, expect, "tokenizer_config.json: " + label)
    cases.append(Case("chat", "chat.config.folder_missing", [[a.replace("{d}/model", "{d}/nosuch") for a in by_model[0]]],
                      {"m.json": msgs}, what="--model a missing folder"))
    cases.append(Case("chat", "chat.template.missing", by_template, {"m.json": msgs}, what="--template a missing file"))
    cases.append(Case("chat", "chat.template.fifo", by_template, {"m.json": msgs}, expect="either", what="--template a named pipe nobody writes (reads as an empty template)",
                      setup=lambda d: os.mkfifo(os.path.join(d, "t.jinja")), timeout=FIFO_TIMEOUT_S))
    return cases


GENERATORS = {
    "safetensors": gen_safetensors, "shard_index": gen_shard_index, "config": gen_config, "tokenizer": gen_tokenizer,
    "csv": gen_csv, "model_file": gen_model_file, "xgboost": gen_xgboost, "lightgbm": gen_lightgbm, "idx": gen_idx, "checkpoint": gen_checkpoint,
    "report": gen_report, "options": gen_options, "chat": gen_chat,
}

# Failures already reported (issue 21), by a pattern of case names: a failing case that matches is
# shown as known and does not change the exit code; the first matching pattern names it. Remove a
# line when the library is fixed (the cases stay in the sweep either way).
KNOWN = [
]


# ----------------------------------------------------------------------------------------------
# Running one case.


def limit_commands():
    """The limits every command runs under, set once on the sweep itself and inherited: the
    address-space limit (not under AddressSanitizer, whose shadow memory reserves terabytes) and no
    core files. Set here rather than in each child before its exec, so that commands start by vfork:
    a fork of the sweep (some 400 MB of generated inputs) for each of ~10,000 commands would cost
    more system time than the commands themselves."""
    if not UNDER_ASAN[0]:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


UNDER_ASAN = [False]  # set in main from the binary


def run_one(argv, cwd, stdout_path, stderr_path, devfull, env, timeout):
    """Runs argv; returns (status, peak RSS KiB, seconds, timed_out). status is the wait status."""
    out = open("/dev/full", "wb") if devfull else open(stdout_path, "wb")
    err = open(stderr_path, "wb")
    t0 = time.monotonic()
    # Its own process group (start_new_session), so that a timeout kills everything it started.
    p = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env,
                         start_new_session=True)
    out.close()
    err.close()
    # Poll until it ends: its peak resident size (VmHWM of /proc/PID/status, read while the process
    # runs the binary: the rusage of a forked child would count the sweep's own memory from before
    # the exec) and the deadline.
    timed_out = False
    peak_kb = 0
    deadline = t0 + timeout
    pause = 0.001
    while True:
        done, status, _ = os.wait4(p.pid, os.WNOHANG)
        if done:
            break
        peak_kb = max(peak_kb, vm_hwm_kb(p.pid, argv[0]))
        if time.monotonic() > deadline:
            timed_out = True
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            _, status, _ = os.wait4(p.pid, 0)
            break
        time.sleep(pause)
        pause = min(pause * 2, 0.02)
    p.returncode = 0  # reaped here; keep Popen from waiting again
    # Whatever the command left running in its group (it should leave nothing).
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    return status, peak_kb, time.monotonic() - t0, timed_out


def vm_hwm_kb(pid, binary):
    """The peak resident size (KiB) of process pid once it runs binary, else 0."""
    try:
        if os.readlink("/proc/%d/exe" % pid) != os.path.realpath(binary):
            return 0
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def snapshot(folder):
    """{relative path: (kind, sha256 or link target)} of everything under folder."""
    out = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            full = os.path.join(root, name)
            rel = os.path.relpath(full, folder)
            if os.path.islink(full):
                out[rel] = ("link", os.readlink(full))
            elif os.path.isdir(full):
                out[rel] = ("dir", "")
            elif stat.S_ISCHR(os.lstat(full).st_mode):
                out[rel] = ("chr", str(os.lstat(full).st_rdev))
            elif os.path.isfile(full):
                h = hashlib.sha256()
                with open(full, "rb") as f:
                    for chunk in iter(lambda: f.read(1 << 20), b""):
                        h.update(chunk)
                out[rel] = ("file", h.hexdigest())
            else:
                out[rel] = ("other", "")
    return out


def classify_output(case, rc_status, stderr, rss_kb, timed_out):
    """(outcome, detail) of one command's result."""
    if timed_out:
        return "hang", "no exit within the timeout"
    if os.WIFSIGNALED(rc_status):
        return "crash", "signal %d" % os.WTERMSIG(rc_status)
    rc = os.WEXITSTATUS(rc_status)
    for t in CRASH_TEXT:
        if t in stderr:
            return "crash", "stderr says %r (exit %d)" % (t, rc)
    if rc >= 128:
        return "crash", "exit %d" % rc
    if "out of memory" in stderr:
        return "memory", "out of memory (exit %d)" % rc
    if rss_kb > case.rss_kb:
        return "memory", "peak resident size %d MiB" % (rss_kb // 1024)
    if rc == 0 or rc in case.answers:
        return "accepted", "" if rc == 0 else "exit %d (an answer of this command)" % rc
    if rc not in (1, 2):
        return "bad message", "exit %d" % rc
    text = stderr.strip()
    if not text:
        if rc == 1:
            return "accepted", "exit 1 with nothing on stderr (an answer, e.g. compare: different)"
        return "bad message", "exit %d with nothing on stderr" % rc
    for pat in BAD_TEXT:
        for line in text.splitlines():
            if pat.search(line):
                return "bad message", "stderr matches %r" % pat.pattern
    return "clean", ""


def run_case(case, ctx):
    """Runs one case in a fresh folder; returns its result dict."""
    root = tempfile.mkdtemp(prefix="case-", dir=ctx["root"])
    work = os.path.join(root, "work")
    os.mkdir(work)
    for rel in case.dirs:
        os.makedirs(os.path.join(work, rel), exist_ok=True)
    for rel, data in case.files.items():
        path = os.path.join(work, rel)
        if rel.endswith(".json"):
            data = data.replace(b"{d}", work.encode())  # e.g. an absolute shard name inside the folder
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    for rel, target in case.links.items():
        path = os.path.join(work, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        os.symlink(target, path)
    if case.setup:
        try:
            case.setup(work)
        except OSError as e:  # e.g. mknod without the privilege: the case cannot be built here
            shutil.rmtree(root, ignore_errors=True)
            return {"reader": case.reader, "name": case.name, "what": case.what, "expect": case.expect,
                    "known": case.known, "commands": [], "outcome": "skipped", "detail": "setup: %s" % e,
                    "seconds": 0.0, "peak_rss_mib": 0, "failed": False, "stderr": ""}
    before_root = snapshot(root)
    env = dict(os.environ)
    env.pop("BITLEARN_THREADS", None)
    env.update(case.env)
    env["TMPDIR"] = work
    result = {"reader": case.reader, "name": case.name, "what": case.what, "expect": case.expect, "known": case.known,
              "commands": [], "outcome": None, "detail": "", "seconds": 0.0, "peak_rss_mib": 0}
    subst = {"{bin}": ctx["bin"], "{d}": work, "{fx}": ctx["fx"], "{src}": ctx["src"]}
    outcome = detail = None
    stderr = ""
    for i, step in enumerate(case.steps):
        argv = [substitute(a, subst) for a in step]
        last = i == len(case.steps) - 1
        so, se = os.path.join(root, "stdout.%d" % i), os.path.join(root, "stderr.%d" % i)
        status, rss, secs, timed_out = run_one(argv, work, so, se, case.stdout == "/dev/full" and last, env,
                                               case.timeout or ctx["timeout"])
        with open(se, "rb") as f:
            stderr = f.read().decode("utf-8", "replace")
        result["commands"].append(argv)
        result["seconds"] += secs
        result["peak_rss_mib"] = max(result["peak_rss_mib"], rss // 1024)
        outcome, detail = classify_output(case, status, stderr, rss, timed_out)
        result["exit"] = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)
        if outcome != "accepted":
            break
    result["stderr"] = stderr[-2000:]
    # Escapes: new entries in the case's root beside work/ (or input files changed), new entries in
    # the sweep's root beside the case folders, changes to the fixtures.
    after_root = snapshot(root)
    escaped = []
    for rel, (kind, digest) in before_root.items():
        if rel.startswith("work" + os.sep) or rel == "work":
            if kind in ("file", "chr", "other", "link") and after_root.get(rel) != (kind, digest) and rel[5:] not in case.outputs:
                what_now = after_root.get(rel, ("removed",))[0]
                escaped.append("input %s (%s) changed or replaced (now: %s)" % (rel[5:], kind, what_now))
        elif after_root.get(rel) != (kind, digest):
            escaped.append("%s changed" % rel)
    for rel in after_root:
        if rel not in before_root and not rel.startswith("work" + os.sep) and not rel.startswith(("stdout.", "stderr.")):
            escaped.append("%s created outside the case's work folder" % rel)
    if escaped:
        outcome, detail = "escaped", "; ".join(escaped[:5])
    # The verdict against the expectation.
    failed = outcome in ("crash", "hang", "bad message", "memory", "escaped")
    if outcome == "accepted" and case.expect == "error":
        failed, detail = True, "exit 0 on an input that must be refused" + (": " + detail if detail else "")
        outcome = "accepted"
    if outcome == "clean" and case.expect == "ok":
        outcome, failed, detail = "refused", True, "a valid input was refused"
    result["outcome"], result["detail"], result["failed"] = outcome, detail, failed
    if failed and ctx["keep"]:
        result["folder"] = root
    else:
        shutil.rmtree(root, ignore_errors=True)
    return result


def is_dev_full(path):
    try:
        st = os.stat(path)
    except OSError:
        return False
    return stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 7)


def substitute(arg, subst):
    for k, v in subst.items():
        arg = arg.replace(k, v)
    return arg


# ----------------------------------------------------------------------------------------------
# The sweep.


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="The hostile-input sweep of the bitlearn command line.")
    ap.add_argument("--bitlearn", default=os.path.join(here, "..", "..", "build", "bitlearn"), help="the bitlearn binary")
    ap.add_argument("--source", default=os.path.join(here, "..", ".."), help="the project's root (for the fixtures)")
    ap.add_argument("--only", action="append", help="run only this reader (repeatable): " + ", ".join(GENERATORS))
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="cases run at once")
    ap.add_argument("--json", help="write every case and its outcome to this file")
    ap.add_argument("--keep", action="store_true", help="keep the folders of failing cases")
    ap.add_argument("--timeout", type=float, default=TIMEOUT_S, help="seconds per command (default %d)" % TIMEOUT_S)
    ap.add_argument("--name", help="run only the cases whose name contains this text")
    args = ap.parse_args()
    binary = os.path.abspath(args.bitlearn)
    src = os.path.abspath(args.source)
    if args.only:
        for r in args.only:
            if r not in GENERATORS:
                ap.error("unknown reader %r (known: %s)" % (r, ", ".join(GENERATORS)))
    if not os.access(binary, os.X_OK):
        ap.error("%s: not an executable bitlearn" % binary)
    if args.jobs < 1:
        ap.error("--jobs must be >= 1")
    with open(binary, "rb") as f:
        UNDER_ASAN[0] = b"__asan_init" in f.read()
    limit_commands()
    t0 = time.monotonic()
    top = tempfile.mkdtemp(prefix="bitlearn-sweep-")
    try:
        # Every case runs one copy of the binary, taken now: a rebuild of the original during the
        # sweep (a moment without the file, or a newer build for half the cases) cannot touch it.
        copy_bin = os.path.join(top, "bitlearn")
        for attempt in range(60):
            try:
                shutil.copy2(binary, copy_bin)
                break
            except OSError:
                if attempt == 59:
                    raise
                time.sleep(2)
        with open(copy_bin, "rb") as f:
            bin_sha = hashlib.sha256(f.read()).hexdigest()
        print("bitlearn: %s (sha256 %s)" % (binary, bin_sha[:16]))
        fxdir = os.path.join(top, "fixtures")
        os.mkdir(fxdir)
        fx = Fixtures(copy_bin, src, fxdir)
        fx.make()
        readers = args.only or list(GENERATORS)
        cases = []
        for r in readers:
            cases += GENERATORS[r](fx)
        names = [c.name for c in cases]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise SystemExit("sweep: case names given twice: %s" % ", ".join(sorted(dup)[:10]))
        for c in cases:
            for pattern, text in KNOWN:
                if not c.known and re.search(pattern, c.name):
                    c.known = text
        if args.name:
            cases = [c for c in cases if args.name in c.name]
        if args.list:
            for c in cases:
                print("%-12s %-60s %-6s %s" % (c.reader, c.name, c.expect, c.what))
            print("%d cases" % len(cases))
            return 0
        if any(c.stdout == "/dev/full" for c in cases) and not is_dev_full("/dev/full"):
            raise SystemExit("sweep: /dev/full is not the character device 1,7 here; the standard-output cases need it")
        caseroot = os.path.join(top, "cases")
        os.mkdir(caseroot)
        fx_before = snapshot(fxdir)
        src_data = os.path.join(src, "tests", "data")
        src_before = snapshot(src_data)
        # Places a stray write would land (a device folder beside an output, the source's root, the
        # folder the sweep was started in): their entries, before and after.
        watched = sorted({"/dev", src, os.getcwd()})
        watched_before = {w: set(os.listdir(w)) for w in watched if os.path.isdir(w)}
        ctx = {"bin": copy_bin, "src": src, "fx": fxdir, "root": caseroot, "keep": args.keep, "timeout": args.timeout}
        results = []
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = {pool.submit(run_case, c, ctx): c for c in cases}
            for f in concurrent.futures.as_completed(futures):
                try:
                    results.append(f.result())
                except Exception as e:  # a fault of the sweep itself: reported, never hidden
                    c = futures[f]
                    results.append({"reader": c.reader, "name": c.name, "what": c.what, "expect": c.expect,
                                    "known": None, "commands": [], "outcome": "sweep error", "detail": repr(e),
                                    "seconds": 0.0, "peak_rss_mib": 0, "failed": True, "stderr": ""})
        order = {c.name: i for i, c in enumerate(cases)}
        results.sort(key=lambda r: order[r["name"]])
        stray = []
        if snapshot(fxdir) != fx_before:
            stray.append("the shared fixtures changed")
        if snapshot(src_data) != src_before:
            stray.append("tests/data of the source changed")
        for w, names in watched_before.items():
            new = sorted(set(os.listdir(w)) - names)
            if new:
                stray.append("new entries in %s during the sweep: %s" % (w, ", ".join(new[:5])))
        leftovers = [n for n in os.listdir(caseroot) if not n.startswith("case-")]
        if leftovers:
            stray.append("files created beside the case folders: %s" % ", ".join(leftovers[:5]))
        elapsed = time.monotonic() - t0
        report(results, stray, elapsed, args.jobs)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"bitlearn": binary, "bitlearn_sha256": bin_sha, "seconds": round(elapsed, 1), "jobs": args.jobs, "stray": stray,
                           "cases": results}, f, indent=1)
        bad = [r for r in results if r["failed"] and not r["known"]]
        return 1 if bad or stray else 0
    finally:
        if not args.keep:
            shutil.rmtree(top, ignore_errors=True)
        else:
            # Keep only the folders of failing cases (they were not removed) and say where.
            print("failing case folders are kept under %s" % os.path.join(top, "cases"))


OUTCOMES = ["clean", "accepted", "crash", "hang", "bad message", "memory", "escaped", "refused", "skipped",
            "sweep error"]


def report(results, stray, elapsed, jobs):
    readers = []
    for r in results:
        if r["reader"] not in readers:
            readers.append(r["reader"])
    print("%-12s %6s" % ("reader", "cases") + "".join(" %11s" % o for o in OUTCOMES) + " %11s" % "unexpected")
    tot = {o: 0 for o in OUTCOMES}
    for rd in readers:
        rs = [r for r in results if r["reader"] == rd]
        counts = {o: sum(1 for r in rs if r["outcome"] == o) for o in OUTCOMES}
        unexpected = sum(1 for r in rs if r["outcome"] == "accepted" and r["failed"])
        for o in OUTCOMES:
            tot[o] += counts[o]
        print("%-12s %6d" % (rd, len(rs)) + "".join(" %11d" % counts[o] for o in OUTCOMES) + " %11d" % unexpected)
    unexpected = sum(1 for r in results if r["outcome"] == "accepted" and r["failed"])
    print("%-12s %6d" % ("all", len(results)) + "".join(" %11d" % tot[o] for o in OUTCOMES) + " %11d" % unexpected)
    print("(unexpected: accepted although the case must be refused; these are part of 'accepted')")
    failed = [r for r in results if r["failed"]]
    if failed:
        print("\nfailing cases:")
    for r in failed:
        print("\n[%s%s] %s: %s" % (r["outcome"], ", known: " + r["known"] if r["known"] else "", r["name"], r["what"]))
        print("  %s" % r["detail"])
        if r["commands"]:
            print("  $ %s" % " ".join(quote(a) for a in r["commands"][-1]))
        if r["stderr"].strip():
            print("  stderr: %s" % r["stderr"].strip()[-400:].replace("\n", "\n          "))
        if r.get("folder"):
            print("  folder: %s" % r["folder"])
    for s in stray:
        print("escaped: " + s)
    slow = sorted(results, key=lambda r: -r["seconds"])[:3]
    print("\n%d cases in %.1f s with %d jobs (slowest: %s)" % (len(results), elapsed, jobs,
                                                            ", ".join("%s %.1f s" % (r["name"], r["seconds"]) for r in slow)))
    print("result: %s" % ("PASS" if not [r for r in failed if not r["known"]] and not stray else "FAIL"))


def quote(a):
    if a and re.fullmatch(r"[A-Za-z0-9_./=:,+-]+", a):
        return a
    if len(a) > 120:
        a = a[:60] + "...(%d chars)..." % len(a) + a[-20:]
    return "'" + a.replace("'", "'\\''") + "'"


if __name__ == "__main__":
    sys.exit(main())
