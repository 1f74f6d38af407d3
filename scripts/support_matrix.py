#!/usr/bin/env python3
"""Generates docs/support-matrix.md: which op runs on which backend, and which tests verify it.

Sources (nothing is typed in by hand):
  * ops and backends: src/kernels/<op>.h (the scalar reference), src/kernels/cpu/<op>*.cpp (the
    optimized CPU version), src/kernels/cuda/<op>*.cu (the CUDA version);
  * tests: the GoogleTest registry, `bitlearn_tests --gtest_list_tests` and
    `bitlearn_cuda_tests --gtest_list_tests` when those binaries are given; otherwise the TEST(...)
    declarations of tests/**/*.cpp and tests/cuda/*.cu (the same names, read from the sources);
  * verifier checks: `bitlearn verify --list` when the binary is given.
  * the conformance driver's case lists: tests/conformance/case_lists.h names each list and the row
    it verifies; the driver's parametrized tests (one per list, Cpu/ConformanceDriver.* in
    bitlearn_tests and Cuda/ConformanceDriverCuda.* in bitlearn_cuda_tests) belong to that row, and
    the "driver lists" column says on which backends the driver runs them;
A test suite belongs to the op whose name (lower case, without '_') starts the suite name once
"Conformance", "Cpu" and "Cuda" are removed (MathMapCuda -> math_map); a few contract areas that are
not kernels (rng, digest, contraction) have fixed aliases below.

Usage:
  scripts/support_matrix.py [--build DIR] [--cuda-build DIR] [--gpu-log FILE] [--out FILE]
--gpu-log takes the summary the GPU run wrote ($OUT/summary.txt of scripts/gpu-check.sh, or a log
of bitlearn_cuda_tests); without it the GPU section says "not yet run on GPU".
"""
import argparse
import datetime
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Kernel headers that are shared plumbing, not ops.
NOT_OPS = {"launch", "backend", "strided", "elementwise_functors", "arg_reduce_leaves", "cumsum_check"}
# Areas outside src/kernels that have their own tests: suite prefix -> row name.
ALIASES = {
    "philox": "rng (contract/rng.h)",
    "rng": "rng (contract/rng.h)",
    "sha256": "digest (core/digest.h)",
    "tensordigest": "digest (core/digest.h)",
    "contraction": "contract flags (no contraction)",
    "fpstate": "contract flags (no contraction)",
    "verify": "verifier (bitlearn verify)",
    "shapeop": "shape (copy, concat)",
    "math": "contract math (contract/math.h)",
    "cpufeatures": "core (cpu features, devices, isa)",
    "deviceinfo": "core (cpu features, devices, isa)",
    "isa": "core (cpu features, devices, isa)",
    "tensor": "tensor (core/tensor.h) and Tensor ops",
    "shape": "shape (copy, concat)",
    "estimatorchecks": "ml",
    "conformancedriver": "conformance driver (tests/conformance/driver.h)",
}
# The conformance driver: its case-list table and the files that instantiate it per backend.
DRIVER_LISTS = "tests/conformance/case_lists.h"
DRIVER_INSTANCES = {"cpu": "tests/conformance/test_conformance_driver.cpp",
                    "cuda": "tests/cuda/test_conformance_driver_cuda.cu"}
# Kernel headers that one implementation file serves together: header -> (row, file prefix).
GROUPS = {"unary": ("elementwise", "elementwise"), "binary": ("elementwise", "elementwise"),
          "cast": ("elementwise", "elementwise"), "copy": ("shape (copy, concat)", "shape")}
# Verifier checks -> op rows (by full name first, then by family).
CHECK_ROWS = {"op.elementwise": "elementwise", "op.index": "index", "op.reduce_api": "reduce",
              "op.softmax": "softmax", "op.norm": "norm", "op.cumsum": "cumsum", "op.sort_topk": "sort"}
CHECK_FAMILIES = {"math": "math_map", "rng": "rng (contract/rng.h)", "reduce": "reduce",
                  "gemm": "matmul", "mlp": "model (mlp.forward)"}


def norm(s):
    return re.sub(r"[^a-z0-9]", "", s.lower())


def kernel_ops():
    ops = {}
    for h in sorted(glob.glob(os.path.join(ROOT, "src/kernels/*.h"))):
        name = os.path.splitext(os.path.basename(h))[0]
        if name in NOT_OPS:
            continue
        row, prefix = GROUPS.get(name, (name, name))
        cpu = sorted(os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "src/kernels/cpu", prefix + "*.cpp")))
        cuda = sorted(os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "src/kernels/cuda", prefix + "*.cu")))
        entry = ops.setdefault(row, {"cpu": [], "cuda": [], "headers": []})
        entry["cpu"] = sorted(set(entry["cpu"] + cpu))
        entry["cuda"] = sorted(set(entry["cuda"] + cuda))
        entry["headers"].append(name + ".h")
    return ops


def list_tests_from_binary(path):
    out = subprocess.run([path, "--gtest_list_tests"], capture_output=True, text=True, check=True).stdout
    tests, suite = [], None
    for line in out.splitlines():
        if not line.strip() or line.startswith("Running"):
            continue
        if not line.startswith(" "):
            suite = line.strip().split()[0].rstrip(".")
        else:
            tests.append(suite + "." + line.strip().split()[0])
    return tests


def driver_lists():
    """The driver's case lists in table order: [(list, row)], from DRIVER_LISTS."""
    path = os.path.join(ROOT, DRIVER_LISTS)
    if not os.path.exists(path):
        return []
    text = "\n".join(l for l in open(path, encoding="utf-8").read().splitlines() if not l.lstrip().startswith("//"))
    return re.findall(r'\{\s*"(\w+)"\s*,\s*"([^"]+)"\s*,\s*&\w+\s*\}', text)


def is_driver_file(text):
    return '#include "conformance/case_lists.h"' in text


def list_tests_from_sources(patterns):
    """TEST names; a parametrized driver suite is expanded to one name per case list, as the
    binary lists it (Prefix/Suite.Test/list)."""
    tests = []
    lists = [name for name, _ in driver_lists()]
    for pattern in patterns:
        for path in sorted(glob.glob(os.path.join(ROOT, pattern), recursive=True)):
            text = open(path, encoding="utf-8", errors="replace").read()
            prefixes = dict((m.group(2), m.group(1)) for m in re.finditer(
                r"INSTANTIATE_TEST_SUITE_P\(\s*(\w+)\s*,\s*(\w+)", text))
            for m in re.finditer(r"^\s*TEST(?:_F|_P)?\(\s*(\w+)\s*,\s*(\w+)\s*\)", text, re.M):
                suite, test = m.group(1), m.group(2)
                if is_driver_file(text) and suite in prefixes:
                    tests += ["%s/%s.%s/%s" % (prefixes[suite], suite, test, l) for l in lists]
                else:
                    tests.append(suite + "." + test)
    return sorted(set(tests))


def driver_row(test, lists):
    """The row of a conformance-driver test (Prefix/ConformanceDriver*.Test/list), else None."""
    m = re.match(r"^(?:\w+/)?ConformanceDriver\w*\.\w+/(\w+)$", test)
    return lists.get(m.group(1)) if m else None


def row_of_suite(suite, ops):
    # A parameterized suite "Prefix/Suite" is named by its suite, not by the instantiation prefix.
    key = norm(suite.split("/")[-1])
    # Backend and kind words at the end of a suite name do not name the op.
    key = re.sub(r"(conformance|cuda|cpu)+$", "", key)
    best = None
    for op in ops:
        k = norm(op)
        if k and key.startswith(k) and (best is None or len(k) > len(norm(best))):
            best = op
    if best:
        return best
    for prefix, row in ALIASES.items():
        if key.startswith(prefix):
            return row
    return None


def find_binary(build, name):
    """The test binary in a build dir (tests/<name> or <name>), or None."""
    if not build:
        return None
    for p in (os.path.join(build, "tests", name), os.path.join(build, name)):
        if os.path.exists(p):
            return p
    return None


def verifier_checks(build):
    exe = os.path.join(build, "bitlearn") if build else None
    if not exe or not os.path.exists(exe):
        return []
    r = subprocess.run([exe, "verify", "--list"], capture_output=True, text=True)
    return [l.strip() for l in r.stdout.splitlines() if l.strip()] if r.returncode == 0 else []


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="CPU build dir (bitlearn_tests, bitlearn)")
    ap.add_argument("--cuda-build", default=None, help="CUDA build dir (bitlearn_cuda_tests)")
    ap.add_argument("--gpu-log", default=None, help="summary of a GPU run to include")
    ap.add_argument("--gpu-note", default=None,
                    help="file whose text is added under the GPU results (what ran when, what did not)")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs/support-matrix.md"))
    args = ap.parse_args()

    ops = kernel_ops()
    cpu_bin = find_binary(args.build, "bitlearn_tests")
    if cpu_bin:
        cpu_tests, cpu_source = list_tests_from_binary(cpu_bin), "`bitlearn_tests --gtest_list_tests`"
    else:
        cpu_tests, cpu_source = list_tests_from_sources(["tests/**/*.cpp"]), "TEST declarations in tests/**/*.cpp"
    cuda_bin = find_binary(args.cuda_build, "bitlearn_cuda_tests")
    if cuda_bin:
        cuda_tests, cuda_source = list_tests_from_binary(cuda_bin), "`bitlearn_cuda_tests --gtest_list_tests`"
    else:
        cuda_tests, cuda_source = list_tests_from_sources(["tests/**/*.cu"]), "TEST declarations in tests/**/*.cu"
    checks = verifier_checks(args.build)

    rows = {op: {"ref": True, "cpu": ops[op]["cpu"], "cuda": ops[op]["cuda"], "cpu_tests": [],
                 "cuda_tests": [], "checks": []} for op in ops}

    def row(name):
        if name not in rows:
            rows[name] = {"ref": False, "cpu": [], "cuda": [], "cpu_tests": [], "cuda_tests": [], "checks": []}
        return rows[name]

    lists = dict(driver_lists())
    driver_backends = [b for b, f in sorted(DRIVER_INSTANCES.items()) if os.path.exists(os.path.join(ROOT, f))]
    for name, r in driver_lists():
        row(r).setdefault("lists", []).append(name)
    unmapped = []
    for t in cpu_tests:
        r = driver_row(t, lists) or row_of_suite(t.split(".")[0], ops)
        (row(r)["cpu_tests"] if r else unmapped).append(t)
    for t in cuda_tests:
        r = driver_row(t, lists) or row_of_suite(t.split(".")[0], ops)
        (row(r)["cuda_tests"] if r else unmapped).append(t)
    for c in checks:
        fam = c.split(".")[0]
        row(CHECK_ROWS.get(c) or CHECK_FAMILIES.get(fam) or fam)["checks"].append(c)

    def cell_tests(tests):
        if not tests:
            return "-"
        sab = sum(1 for t in tests if "Sabotage" in t or "NegativeControl" in t)
        names = ", ".join("`%s`" % t for t in tests)
        return "%d tests (%d sabotage): %s" % (len(tests), sab, names)

    today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    lines = [
        "# Support matrix",
        "",
        "Generated by `scripts/support_matrix.py` on %s; do not edit by hand." % today,
        "",
        "Rows are ops (`src/kernels/<op>.h`, whose scalar reference is the specification) and other",
        "tested areas. A backend column names the source files of that backend; the verification columns",
        "list the tests that compare it with the reference bit for bit (sabotage arms and negative",
        "controls counted as sabotage).",
        "CPU tests from %s; CUDA tests from %s." % (cpu_source, cuda_source),
        "The driver lists column names the conformance driver's case lists of a row (`%s`): the" % DRIVER_LISTS,
        "same cases run on every backend named there (cpu: each ISA variant x threads 1, 2, 3; cuda:",
        "each launch shape of kConformanceLaunchConfigs), memcmp against the scalar reference.",
        "",
        "| op | cpu reference | cpu optimized | cuda | driver lists | verified on cpu | verified on cuda | `bitlearn verify` checks |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in sorted(rows):
        r = rows[name]
        driver = "-"
        if r.get("lists"):
            driver = "%s on %s" % (", ".join("`%s`" % l for l in r["lists"]), " and ".join(driver_backends) or "-")
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            name, ("yes (" + ", ".join(ops[name]["headers"]) + ")") if r["ref"] else "-",
            ", ".join(r["cpu"]) or "-", ", ".join(r["cuda"]) or "-", driver,
            cell_tests(r["cpu_tests"]), cell_tests(r["cuda_tests"]),
            ", ".join("`%s`" % c for c in r["checks"]) or "-"))
    if unmapped:
        lines += ["", "Tests not attributed to an op: " + ", ".join("`%s`" % t for t in unmapped)]
    lines += ["", "## Results on a GPU", ""]
    if args.gpu_log and os.path.exists(args.gpu_log):
        lines += ["From `%s`:" % os.path.basename(args.gpu_log), "", "```"]
        lines += [l.rstrip() for l in open(args.gpu_log, encoding="utf-8", errors="replace").read().splitlines()[:80]]
        lines += ["```"]
    else:
        lines += ["**Not yet run on GPU.** The CUDA columns above list tests that exist and compile; their",
                  "results on the H200 (scripts/gpu-check.sh writes `$OUT/summary.txt`) go here, via",
                  "`scripts/support_matrix.py --gpu-log summary.txt`."]
    if args.gpu_note and os.path.exists(args.gpu_note):
        lines += [""] + [l.rstrip() for l in open(args.gpu_note, encoding="utf-8").read().splitlines()]
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out + ".tmp", "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(args.out + ".tmp", args.out)
    print("wrote %s (%d rows, %d cpu tests, %d cuda tests, %d checks)" % (
        args.out, len(rows), len(cpu_tests), len(cuda_tests), len(checks)))


if __name__ == "__main__":
    sys.exit(main())
