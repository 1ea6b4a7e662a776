#!/usr/bin/env bash
# Install what the build needs, from Debian's packages, if anything is missing.
# Idempotent and quiet when everything is already there.
set -euo pipefail

packages=(build-essential cmake pkg-config mpich libmpich-dev check libsubunit-dev libcjson-dev)
# torch 1.13 for /usr/bin/python3: --backend pytorch:API and its tests (the tool
# itself runs without it; those tests are skipped where it is missing)
packages+=(python3-torch)
# headless Chromium renders the matrix page in its test (tests/e2e/matrix.sh)
packages+=(chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
