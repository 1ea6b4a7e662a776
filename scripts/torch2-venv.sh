#!/usr/bin/env bash
# torch 2.x (from PyPI: its Linux wheel brings the CUDA libraries, about 3 GB; TORCH_INDEX=URL
# names another index, e.g. https://download.pytorch.org/whl/cpu for the CPU wheel) and pytest in a virtual
# environment outside the tree, for the tests that need it (DTensor, DeviceMesh, the
# functional collectives, torch.compile): those tests run with COLLGRAD_PYTHON naming
# this venv's python and skip, with the reason, where it is missing.
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
if [ -n "${TORCH_INDEX:-}" ]; then
  $SUDO "$venv/bin/pip" install -q "$spec" --index-url "$TORCH_INDEX" --extra-index-url https://pypi.org/simple
else
  $SUDO "$venv/bin/pip" install -q "$spec"
fi
$SUDO "$venv/bin/pip" install -q pytest numpy
echo "$venv: torch $("$venv/bin/python" -c 'import torch; print(torch.__version__)')"
