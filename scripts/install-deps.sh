#!/usr/bin/env bash
# Installs what bitlearn's build, tests and benchmarks need (Debian/Ubuntu, run as root).
set -euo pipefail
pkgs=(cmake ninja-build g++ libgtest-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev libssl-dev
      libmpfr-dev libgmp-dev libopenblas-dev qemu-user libpcre2-dev pkg-config hipcc zlib1g-dev libpng-dev libcpp-httplib-dev
      dataset-fashion-mnist fortunes clang libclang-rt-dev)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}"
fi

# AArch64 cross build, run under qemu-aarch64 (scripts/aarch64.sh): the cross compiler and the
# arm64 multiarch -dev packages of the libraries the library and its tests link.
if [ "${BITLEARN_AARCH64:-1}" = 1 ]; then
  arm_pkgs=(g++-aarch64-linux-gnu libssl-dev:arm64 libgtest-dev:arm64 libpcre2-dev:arm64 zlib1g-dev:arm64)
  arm_missing=()
  for p in "${arm_pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || arm_missing+=("$p"); done
  if [ ${#arm_missing[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
    apt-get update -qq
    apt-get install -y -qq "${arm_missing[@]}"
  fi
fi

# The Python package (python/, pyproject.toml): a virtual environment in build/venv with the build
# and test dependencies from PyPI (pinned, so CI runs the versions the tests were written against;
# pyarrow also brings the Apache Arrow C++ libraries the build takes for Parquet input).
# BITLEARN_PYTHON=0 skips it; scripts/build.sh then builds without the module.
if [ "${BITLEARN_PYTHON:-1}" = 1 ]; then
  cd "$(dirname "$0")/.."
  if [ ! -x build/venv/bin/python ]; then
    mkdir -p build
    "${PYTHON:-python3}" -m venv build/venv
  fi
  build/venv/bin/python -m pip install -q --disable-pip-version-check \
    nanobind==3.1.0 scikit-build-core==1.1.2 numpy==2.4.6 scikit-learn==1.9.1 pytest==9.2.0 jinja2==3.1.6 \
    statsmodels==0.15.0 lightgbm==4.7.0 umap-learn==0.5.12 pyarrow==26.0.1
fi
