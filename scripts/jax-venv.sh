#!/usr/bin/env bash
# JAX (CPU), numpy, pytest and mypy in a virtual environment outside the tree, with pip's
# own defaults, for the JAX check's tests (collgrad_jax), which import the package from
# the tree. No torch: collgrad_jax needs none, and this venv shows it.
# scripts/test.sh runs it, so the README's test command has them; CI
# (CG_REQUIRE_JAX=1, .ci/run) fails where they cannot run.
#   scripts/jax-venv.sh [VENV]        (default /opt/venv-jax; JAX_SPEC=jax==0.x pins it)
# Idempotent: an existing venv whose jax imports is left as it is.
set -euo pipefail
venv="${1:-/opt/venv-jax}"
spec="${JAX_SPEC:-jax}"
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import jax, pytest" > /dev/null 2>&1; then
  echo "$venv: jax $("$venv/bin/python" -c 'import jax; print(jax.__version__)') (already there)"
  exit 0
fi
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
if ! /usr/bin/python3 -m venv --help > /dev/null 2>&1 || ! /usr/bin/python3 -c "import ensurepip" > /dev/null 2>&1; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3-venv
fi
$SUDO /usr/bin/python3 -m venv "$venv"
$SUDO "$venv/bin/pip" install -q --upgrade pip
$SUDO "$venv/bin/pip" install -q "$spec" numpy pytest mypy
echo "$venv: jax $("$venv/bin/python" -c 'import jax; print(jax.__version__)')"
