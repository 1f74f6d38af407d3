# cli_expect.sh: sourced by the command-line tests. Needs $tmp (a scratch folder) and $fail.
# expect CODE PATTERN CMD...: runs CMD, checks its exit code is CODE and its stderr holds PATTERN
# (a fixed string); on a mismatch prints FAIL with what came instead and sets fail=1.
expect() {
  local code="$1" pattern="$2"
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  local got=$?
  if [ "$got" != "$code" ] || ! grep -qF -- "$pattern" "$tmp/err"; then
    echo "FAIL: $* -> exit $got (want $code), stderr: $(head -c 400 "$tmp/err") (want '$pattern')"
    fail=1
  fi
}
