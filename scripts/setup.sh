#!/usr/bin/env bash
# Install what the build needs, from Debian's packages, if anything is missing.
# Idempotent and quiet when everything is already there.
set -euo pipefail

packages=(build-essential cmake pkg-config mpich libmpich-dev check libsubunit-dev libcjson-dev)
# torch 1.13 for /usr/bin/python3: --backend pytorch:API and its tests (the tool
# itself runs without it; those tests are skipped where it is missing)
packages+=(python3-torch)
# the user-code check's tests: its public API type-checked (mypy), its pytest plugin (also under xdist)
packages+=(mypy python3-pytest python3-pytest-xdist)
# headless Chromium renders the matrix page in its test (tests/e2e/matrix.sh)
packages+=(chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
if [ ${#missing[@]} -ne 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The collgrad_torch package (python/), as a user installs it: pip install ./python,
# into Debian's /usr/bin/python3 (the one with python3-torch). Reinstalled only when
# the package's sources changed since the last install (a hash kept beside pip's cache).
root="$(cd "$(dirname "$0")/.." && pwd)"
stamp=/var/cache/collgrad-check/python-install.sha1
hash="$(cd "$root" && find python/pyproject.toml python/README.md python/collgrad_core python/collgrad_torch python/collgrad_jax -type f \
          \( -name '*.py' -o -name '*.toml' -o -name '*.md' -o -name py.typed \) | sort | xargs sha1sum | sha1sum)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$hash" ]; then
  echo "setup: pip install ./python (collgrad_torch) for /usr/bin/python3"
  build="$(mktemp -d)"
  cp -r "$root/python/." "$build/"   # pip's in-tree build writes build/ and *.egg-info: not into the checkout
  $SUDO /usr/bin/python3 -m pip install -q --no-deps --no-build-isolation --break-system-packages \
    --root-user-action=ignore "$build"
  rm -rf "$build"
  $SUDO mkdir -p "$(dirname "$stamp")"
  echo "$hash" | $SUDO tee "$stamp" >/dev/null
fi
