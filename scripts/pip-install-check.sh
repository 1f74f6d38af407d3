#!/usr/bin/env bash
# `pip install .` against the already-built tree: scikit-build-core configures build/ again with
# the options it already has, builds only the module target (the library and the subcommands are
# up to date, so ninja links the module at most), installs the wheel into build/venv, and the
# installed package (not the build tree) then imports and runs the quick verifier.
# Usage: scripts/pip-install-check.sh   (after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=build/venv/bin/python
[ -x "$PY" ] || { echo "pip-install-check: no build/venv (scripts/install-deps.sh makes it)"; exit 1; }
defs=()
for opt in BITLEARN_TESTS BITLEARN_BENCH BITLEARN_CUDA BITLEARN_DEV; do
  v=$(sed -n "s/^$opt:BOOL=//p" build/CMakeCache.txt)
  [ -n "$v" ] && defs+=(--config-settings="cmake.define.$opt=$v")
done
start=$(date +%s)
log=build/pip-install.log
"$PY" -m pip install --no-build-isolation --no-deps --force-reinstall -v . \
  --config-settings=build-dir=build "${defs[@]}" >"$log" 2>&1 || { tail -40 "$log"; exit 1; }
# What ninja did: the module's objects and link only, never a library source.
built=$(grep -E '^ *\[[0-9]+/[0-9]+\] ' "$log" | sed 's/^ *//' || true)
echo "$built" | sed 's/^/  /'
if echo "$built" | grep -qE 'CMakeFiles/bitlearn\.dir/|bitlearn_cli_commands\.dir/'; then
  echo "FAIL: pip install recompiled library sources"; exit 1
fi
(cd /tmp && env -u PYTHONPATH "$OLDPWD/$PY" -c '
import bitlearn, os
assert "site-packages" in bitlearn.__file__, bitlearn.__file__
r = bitlearn.verify(quick=True)
print("installed", bitlearn.__version__, "from", os.path.dirname(bitlearn.__file__), "quick digest", r["runs"][0]["digest"])')
echo "PASS: pip install . from the built tree ($(( $(date +%s) - start )) s)"
