#!/usr/bin/env bash
# Tests `bitlearn math FN` end to end: known results, canonical NaN, pow pairs, and the error
# cases (unknown function, input length not a multiple of the record size) which must exit
# non-zero with a message on stderr and nothing on stdout.
# Usage: cmd_math_test.sh /path/to/bitlearn
set -u
BIN="$1"
fail=0
hex() { od -An -tx1 -v | tr -d ' \n'; }
expect() {  # name, input printf format, expected hex output
  local got
  got=$(printf "$2" | "$BIN" math "$1" | hex)
  if [ "$got" != "$3" ]; then echo "FAIL: math $1: got '$got', expected '$3'"; fail=1; fi
}
expect exp   '\x00\x00\x00\x00' 0000803f                        # exp(0) = 1
expect log   '\x00\x00\x80\x3f\x00\x00\x80\xbf' 00000000'0000c07f'  # log(1) = 0, log(-1) = NaN
expect log   '\x01\x00\xc0\xff' 0000c07f                        # NaN input -> canonical NaN
expect rsqrt '\x00\x00\x80\x40' 0000003f                        # rsqrt(4) = 0.5
expect pow   '\x00\x00\x00\x40\x00\x00\x40\x40' 00000041        # pow(2, 3) = 8
expect sin   '' ''                                              # empty input, empty output

check_error() {  # name, input printf format, text expected on stderr
  local out err rc
  out=$(mktemp); err=$(mktemp)
  printf "$2" | "$BIN" math "$1" >"$out" 2>"$err"; rc=$?
  if [ $rc -eq 0 ]; then echo "FAIL: math $1 with bad input exited 0"; fail=1; fi
  if [ -s "$out" ]; then echo "FAIL: math $1 with bad input wrote to stdout"; fail=1; fi
  if ! grep -q "$3" "$err"; then echo "FAIL: math $1: stderr lacks '$3':"; cat "$err"; fail=1; fi
  rm -f "$out" "$err"
}
check_error expf '\x00\x00\x00\x00' "unknown function 'expf'"
check_error exp  '\x00\x00\x00\x00\x00' "not a multiple of 4"
check_error pow  '\x00\x00\x00\x00\x00\x00\x80\x3f\x00\x00\x00\x00' "not a multiple of 8"
[ $fail -eq 0 ] && echo "cmd_math_test: all checks passed"
exit $fail
