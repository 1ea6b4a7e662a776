#!/usr/bin/env bash
# torch 2.x and pytest in a virtual environment outside the tree, with pip's own defaults
# (its Linux wheel brings the CUDA libraries, about 3 GB), for the tests that need it
# (DTensor, DeviceMesh, the functional collectives, torch.compile). scripts/test.sh runs it,
# so the README's test command has them; CI (CG_REQUIRE_TORCH2=1, .ci/run) fails where
# they cannot run.
#   scripts/torch2-venv.sh [VENV]        (default /opt/venv-torch2; TORCH_SPEC=torch==2.x pins it)
# Idempotent: an existing venv whose torch imports is left as it is. pip's cache
# (~/.cache/pip) keeps a second install short.
set -euo pipefail
venv="${1:-/opt/venv-torch2}"
spec="${TORCH_SPEC:-torch}"
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import torch, pytest" > /dev/null 2>&1; then
  echo "$venv: torch $("$venv/bin/python" -c 'import torch; print(torch.__version__)') (already there)"
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
$SUDO "$venv/bin/pip" install -q "$spec"
$SUDO "$venv/bin/pip" install -q pytest numpy
echo "$venv: torch $("$venv/bin/python" -c 'import torch; print(torch.__version__)')"
