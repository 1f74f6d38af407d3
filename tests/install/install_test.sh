#!/usr/bin/env bash
# install_test.sh BUILD CONSUMER_SOURCE CXX: installs BUILD into a temporary prefix, moves the
# prefix (the package must not depend on where it was installed), then builds the consumer program
# against it twice, through find_package(bitlearn) and through pkg-config, and checks what both
# print. Also checks that the installed tree has the public headers only and a working program.
set -euo pipefail
build=$1 consumer=$2 cxx=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/first" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "cmake --install"; }
mv "$tmp/first" "$tmp/prefix"
p=$tmp/prefix
for f in include/bitlearn/tensor.h include/bitlearn/error.h include/bitlearn/version.h include/bitlearn/ml/estimator.h \
         bin/bitlearn; do
  [ -e "$p/$f" ] || fail "the installed tree has no $f"
done
lib=$(find "$p" -name libbitlearn.a | head -n 1)
[ -n "$lib" ] || fail "no libbitlearn.a installed"
libdir=$(dirname "$lib")
[ -f "$libdir/cmake/bitlearn/bitlearnConfig.cmake" ] || fail "no bitlearnConfig.cmake in $libdir/cmake/bitlearn"
[ -f "$libdir/pkgconfig/bitlearn.pc" ] || fail "no bitlearn.pc in $libdir/pkgconfig"
# The internal headers of src/ are not part of the package.
extra=$(find "$p/include" -mindepth 1 -maxdepth 1 ! -name bitlearn)
[ -z "$extra" ] || fail "the installed include/ holds more than bitlearn/: $extra"
"$p/bin/bitlearn" version >"$tmp/version.txt" || fail "the installed bitlearn version exits non-zero"

expected="version 0.1.0 bitlearn.identical.v1
matmul 4 5 10 11
ridge predicts 22.000
bl::Error caught"

# 1. CMake: find_package(bitlearn) from the moved prefix.
cmake -S "$consumer" -B "$tmp/cmake-build" -DCMAKE_PREFIX_PATH="$p" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_BUILD_TYPE=Release >"$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log"; fail "configuring the consumer"; }
cmake --build "$tmp/cmake-build" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "building the consumer (CMake)"; }
got=$("$tmp/cmake-build/consumer") || fail "the consumer (CMake) exits non-zero: $got"
[ "$got" = "$expected" ] || fail "the consumer (CMake) printed:
$got
expected:
$expected"
echo "ok: find_package(bitlearn) consumer"

# 2. pkg-config, with the same moved prefix.
flags=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs bitlearn) || fail "pkg-config --cflags --libs bitlearn"
# shellcheck disable=SC2086
"$cxx" -std=c++17 -O1 "$consumer/main.cpp" -o "$tmp/consumer-pc" $flags >"$tmp/pc.log" 2>&1 || { cat "$tmp/pc.log"; fail "building the consumer (pkg-config: $flags)"; }
got=$("$tmp/consumer-pc") || fail "the consumer (pkg-config) exits non-zero"
[ "$got" = "$expected" ] || fail "the consumer (pkg-config) printed: $got"
echo "ok: pkg-config consumer ($flags)"
