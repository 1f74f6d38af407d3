#!/usr/bin/env bash
# Installs what bitlearn's build, tests and benchmarks need (Debian/Ubuntu, run as root).
set -euo pipefail
pkgs=(cmake ninja-build g++ libgtest-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev libssl-dev
      libmpfr-dev libgmp-dev libopenblas-dev qemu-user libpcre2-dev pkg-config)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}"
fi
