#!/usr/bin/env python3
"""Every registry estimator gives the same bytes under every CPU ISA and at threads 1, 2 and 3.

For each estimator the registry names (read from the error `bitlearn fit --model ?` gives), the
check fits a small deterministic CSV table with `bitlearn fit`, then runs `bitlearn predict` with
every output the estimator offers (predict, proba, decision, transform, score_samples: those that
succeed at the reference run), under BITLEARN_ISA=<isa> and BITLEARN_THREADS=<t> for every ISA this
CPU can run (scalar, avx2, avx512, neon; the ones `bitlearn` refuses are skipped) and t = 1, 2, 3.
It hashes the model file and each prediction file (SHA-256) and compares them with the scalar,
one-thread run. The hyper-parameters that keep the slow estimators small come from the hostile
sweep's table (tests/hostile/sweep.py), with a few additions here.

Usage: registry_isa_check.py [--bitlearn PATH] [--source DIR] [--jobs N] [--only NAME ...]
Exit 0 when every compared estimator is identical everywhere; 1 naming the estimator, ISA, thread
count and output of each difference (or an estimator that fails at one setting but not at the
reference); 2 on bad usage.

Python 3 standard library only.
"""

import argparse
import concurrent.futures
import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ISAS = ("scalar", "avx2", "avx512", "neon")
THREADS = (1, 2, 3)
OUTPUTS = ("predict", "proba", "decision", "transform", "score_samples")
TIMEOUT_S = 120

# Hyper-parameters added to (or replacing) the sweep's for this check's tables.
EXTRA_PARAMS = {
    "stacking_classifier": ["estimators=logistic_regression;decision_tree_classifier(max_depth=2)"],
    "voting_classifier": ["estimators=logistic_regression;decision_tree_classifier(max_depth=2)"],
    "stacking_regressor": ["estimators=ridge;decision_tree_regressor(max_depth=2)"],
    "voting_regressor": ["estimators=ridge;decision_tree_regressor(max_depth=2)"],
    "pipeline": ["steps=standard_scaler;pca(n_components=2);logistic_regression"],
    "random_forest_regressor": ["n_estimators=3", "max_depth=3"],
    "extra_trees_classifier": ["n_estimators=3", "max_depth=3"],
    "extra_trees_regressor": ["n_estimators=3", "max_depth=3"],
    "bagging_classifier": ["n_estimators=3"],
    "bagging_regressor": ["n_estimators=3"],
    "adaboost_classifier": ["n_estimators=3"],
    "adaboost_regressor": ["n_estimators=3"],
    "hist_gradient_boosting_regressor": ["max_iter=3", "max_depth=2"],
    "isolation_forest": ["n_estimators=5"],
    "mlp_classifier": ["max_iter=20"],
    "mlp_regressor": ["max_iter=20"],
    "tsne": ["perplexity=5", "max_iter=250"],
    "mds": ["max_iter=20"],
    "nystroem": ["n_components=5"],
    "rbf_sampler": ["n_components=5"],
}
# Estimators read from their own table: (table, parameters).
SPECIAL_DATA = {"categorical_nb": "int", "multinomial_nb": "int", "complement_nb": "int", "xgboost_model": "xgb"}
# Forecasters (src/ml/timeseries/) fit one series: series.csv's only column y, as the target.
SPECIAL_DATA.update({"exponential_smoothing": "series"})
SPECIAL_DATA.update({"arima": "series", "sarimax": "series"})
SPECIAL_DATA.update({"lightgbm_model": "xgb"})  # the 6-feature LightGBM model of tests/data/ml/lightgbm


def load_sweep(src):
    """The hostile sweep's estimator table, or {} when it cannot be read."""
    path = os.path.join(src, "tests", "hostile", "sweep.py")
    try:
        spec = importlib.util.spec_from_file_location("bitlearn_hostile_sweep", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return {est: list(params) for est, _, params in mod.MODEL_ESTIMATORS}
    except Exception as e:  # the check still runs, with its own parameters only
        print("registry_isa_check: note: sweep table not read (%s)" % e)
        return {}


def csv_text(header, rows):
    return ",".join(header) + "\n" + "".join(",".join(repr(v) if isinstance(v, float) else str(v) for v in r) + "\n"
                                             for r in rows)


def write_tables(folder):
    """main.csv: five features a..e (non-negative), a class label `cls` (3 classes) and a positive
    regression target `reg`; int.csv: the same with integer features; xgb.csv: six features f0..f5."""
    rows, irows = [], []
    for i in range(36):
        x = [((i * 7) % 11) / 2, ((i * 3) % 7) * 0.5 + 0.25, ((i * 13) % 17) / 4, ((i * 5) % 9) / 3 + 1,
             ((i * 11) % 13) / 5]
        label = (i + (i * 7) % 11 // 4) % 3
        target = round(0.5 + x[0] * 0.75 + x[2] * 0.5 - x[4] * 0.25 + ((i * 5) % 9) * 0.125, 6)
        rows.append([round(v, 6) for v in x] + [label, target])
        irows.append([(i * 7) % 5, (i * 3) % 4, (i * 13) % 6, (i * 5) % 3, (i * 11) % 4, label, target])
    header = ["a", "b", "c", "d", "e", "cls", "reg"]
    with open(os.path.join(folder, "main.csv"), "w") as f:
        f.write(csv_text(header, rows))
    with open(os.path.join(folder, "int.csv"), "w") as f:
        f.write(csv_text(header, irows))
    xrows = [[round(((i * (j + 3)) % 7) * 0.37 - 1, 3) for j in range(6)] for i in range(16)]
    with open(os.path.join(folder, "xgb.csv"), "w") as f:
        f.write(csv_text(["f%d" % j for j in range(6)], xrows))
    srows = [[round(10 + 0.25 * i + (3, 1, -2, -1)[i % 4] + ((i * 7) % 5) * 0.1, 6)] for i in range(36)]
    with open(os.path.join(folder, "series.csv"), "w") as f:
        f.write(csv_text(["y"], srows))


def registry_names(binary):
    r = subprocess.run([binary, "fit", "--model", "?", "--data", "none.csv", "--out", "none.json"],
                       capture_output=True, text=True, timeout=60)
    m = re.search(r"\(known: ([a-z0-9_, ]+)\)", r.stderr)
    if not m:
        raise SystemExit("registry_isa_check: cannot read the estimator names from: " + r.stderr.strip())
    return [n.strip() for n in m.group(1).split(",") if n.strip()]


def modes(name):
    """Ways to fit `name`, most likely first: extra fit arguments."""
    sup_c = ["--target", "cls", "--ignore", "reg"]
    sup_r = ["--target", "reg", "--ignore", "cls"]
    unsup = ["--ignore", "cls,reg"]
    if name == "isotonic_regression":
        return [["--target", "reg", "--features", "a"]]
    if name.endswith(("_classifier", "_nb", "_discriminant_analysis", "svc")) or name in (
            "logistic_regression", "nearest_centroid"):
        return [sup_c, sup_r, unsup]
    if name.endswith(("_regressor", "_regression", "svr")) or name in (
            "ridge", "lasso", "elastic_net", "lars", "lasso_lars", "bayesian_ridge", "ard_regression",
            "kernel_ridge", "target_encoder"):
        return [sup_r, sup_c, unsup]
    return [unsup, sup_c, sup_r]


def run(binary, argv, folder, isa, threads):
    env = dict(os.environ, BITLEARN_ISA=isa, BITLEARN_THREADS=str(threads))
    try:
        r = subprocess.run([binary] + argv, cwd=folder, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
        return r.returncode, r.stderr.strip()
    except subprocess.TimeoutExpired:
        return -1, "timed out after %d s" % TIMEOUT_S


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def one_setting(binary, name, folder, table, fit_args, params, outputs, isa, threads):
    """Fit and predict once; {what: sha256} or an error text."""
    os.makedirs(folder, exist_ok=True)
    argv = ["fit", "--model", name, "--data", table, "--out", "m.json", "--quiet"] + fit_args
    for p in params:
        argv += ["--param", p]
    rc, err = run(binary, argv, folder, isa, threads)
    if rc != 0:
        return "fit failed (%d): %s" % (rc, err.splitlines()[-1] if err else "")
    got = {"model file": digest(os.path.join(folder, "m.json"))}
    for out in outputs:
        rc, err = run(binary, ["predict", "--model", "m.json", "--data", table, "--out", out + ".csv", "--output", out],
                      folder, isa, threads)
        got[out] = digest(os.path.join(folder, out + ".csv")) if rc == 0 else "error: " + (err.splitlines() or [""])[-1]
    return got



def check(binary, work, name, params, isas):
    """(name, settings run, skip reason or None, [differences], what was compared)."""
    table = os.path.join(work, {"int": "int.csv", "xgb": "xgb.csv", "series": "series.csv"}.get(
        SPECIAL_DATA.get(name), "main.csv"))
    fit_args = None
    base = os.path.join(work, name, "scalar-1")
    last = ""
    tries = [[]] if name in ("xgboost_model", "lightgbm_model") else modes(name)
    if SPECIAL_DATA.get(name) == "series":
        tries = [["--target", "y"]]
    for args in tries:
        shutil.rmtree(base, ignore_errors=True)
        os.makedirs(base)
        argv = ["fit", "--model", name, "--data", table, "--out", "m.json", "--quiet"] + args
        for p in params:
            argv += ["--param", p]
        rc, err = run(binary, argv, base, "scalar", 1)
        if rc == 0:
            fit_args = args
            break
        last = err.splitlines()[-1] if err else "exit %d" % rc
    if fit_args is None:
        return name, 0, "no fit succeeded: " + last, [], ""
    outputs = []
    for out in OUTPUTS:
        rc, _ = run(binary, ["predict", "--model", "m.json", "--data", table, "--out", out + ".csv", "--output", out],
                    base, "scalar", 1)
        if rc == 0:
            outputs.append(out)
    ref = one_setting(binary, name, base, table, fit_args, params, outputs, "scalar", 1)
    if isinstance(ref, str):
        return name, 0, "reference run failed: " + ref, [], ""
    diffs, compared = [], 0
    for isa in isas:
        for t in THREADS:
            if isa == "scalar" and t == 1:
                continue
            folder = os.path.join(work, name, "%s-%d" % (isa, t))
            got = one_setting(binary, name, folder, table, fit_args, params, outputs, isa, t)
            compared += 1
            if isinstance(got, str):
                diffs.append("%s: BITLEARN_ISA=%s threads=%d: %s" % (name, isa, t, got))
                continue
            for what, h in ref.items():
                if got.get(what) != h:
                    diffs.append("%s: BITLEARN_ISA=%s threads=%d: %s differs from scalar/1 (%s vs %s)"
                                 % (name, isa, t, what if what == "model file" else "predict --output " + what,
                                    got.get(what, "missing")[:16], h[:16]))
            shutil.rmtree(folder, ignore_errors=True)
    how = "fit %s; model file, predict --output %s" % (" ".join(fit_args) or "(no column options)",
                                                       "/".join(outputs) or "(none)")
    return name, compared + 1, None, diffs, how


def supported_isas(binary, work):
    got = []
    for isa in ISAS:
        rc, err = run(binary, ["fit", "--model", "ridge", "--data", "main.csv", "--target", "reg", "--ignore", "cls",
                               "--out", "isa_probe.json", "--quiet"], work, isa, 1)
        if rc == 0:
            got.append(isa)
        else:
            print("registry_isa_check: ISA %s skipped: %s" % (isa, err.splitlines()[-1] if err else rc))
    return got


SABOTAGE = """#!%s
# bitlearn, but `predict` at BITLEARN_THREADS=3 appends one byte to its output: the check must see it.
import os, subprocess, sys
rc = subprocess.call([%r] + sys.argv[1:])
if rc == 0 and sys.argv[1:2] == ["predict"] and os.environ.get("BITLEARN_THREADS") == "3":
    with open(sys.argv[sys.argv.index("--out") + 1], "ab") as f:
        f.write(b"\\n")
sys.exit(rc)
"""


def self_test(binary, work, isas):
    """The sabotage arm: a prediction that differs at three threads must be reported, once per ISA."""
    fake = os.path.join(work, "sabotaged_bitlearn")
    with open(fake, "w") as f:
        f.write(SABOTAGE % (sys.executable, binary))
    os.chmod(fake, 0o755)
    _, _, skip, diffs, _ = check(fake, work, "ridge", [], isas)
    want = ["ridge: BITLEARN_ISA=%s threads=3: predict --output predict differs" % isa for isa in isas]
    ok = skip is None and len(diffs) == len(isas) and all(d.startswith(w) for d, w in zip(diffs, want))
    print("registry_isa_check: self-test %s: %s" % ("passed" if ok else "FAILED", diffs or skip))
    return 0 if ok else 1


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bitlearn", default=os.path.join(here, "..", "..", "build", "bitlearn"))
    ap.add_argument("--source", default=os.path.join(here, "..", ".."))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", nargs="*", help="only these estimators")
    ap.add_argument("--self-test", action="store_true",
                    help="prove the check reports a difference (a prediction altered at three threads)")
    ap.add_argument("--verbose", action="store_true", help="print how each estimator was fitted and read")
    args = ap.parse_args()
    binary, src = os.path.abspath(args.bitlearn), os.path.abspath(args.source)
    if not os.access(binary, os.X_OK):
        print("registry_isa_check: no bitlearn binary at " + binary)
        return 2
    start = time.time()
    sweep_params = load_sweep(src)
    work = tempfile.mkdtemp(prefix="bl_registry_isa_")
    try:
        write_tables(work)
        isas = supported_isas(binary, work)
        if args.self_test:
            return self_test(binary, work, isas)
        names = registry_names(binary)
        if args.only:
            names = [n for n in names if n in args.only]
        params = {}
        for n in names:
            merged = dict(p.split("=", 1) for p in sweep_params.get(n, []))
            merged.update(p.split("=", 1) for p in EXTRA_PARAMS.get(n, []))
            if n == "xgboost_model":
                merged["model_file"] = os.path.join(src, "tests", "data", "ml", "xgboost", "binary_logistic.json")
            if n == "lightgbm_model":
                merged["model_file"] = os.path.join(src, "tests", "data", "ml", "lightgbm", "binary.txt")
            params[n] = ["%s=%s" % kv for kv in merged.items()]
        failures, skipped, compared = [], [], 0
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = [pool.submit(check, binary, work, n, params[n], isas) for n in names]
            for fut in concurrent.futures.as_completed(futures):
                name, settings, skip, diffs, how = fut.result()
                if args.verbose and not skip:
                    print("registry_isa_check: %s: %s" % (name, how))
                if skip:
                    skipped.append(name)
                    print("registry_isa_check: %s skipped: %s" % (name, skip))
                    continue
                compared += 1
                failures += diffs
        for d in sorted(failures):
            print("DIFFERENT " + d)
        print("registry_isa_check: %d estimators compared at %d settings each (ISA %s x threads %s), %d skipped, "
              "%d differences, %.0f s" % (compared, len(isas) * len(THREADS), "/".join(isas),
                                          "/".join(map(str, THREADS)), len(skipped), len(failures), time.time() - start))
        return 1 if failures else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
