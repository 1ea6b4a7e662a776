#!/usr/bin/env bash
# torch 2.x and pytest in a virtual environment outside the tree, with pip's own defaults
# (its Linux wheel brings the CUDA libraries, about 3 GB), for the tests that need it
# (DTensor, DeviceMesh, the functional collectives, torch.compile), and the frameworks whose
# code as it ships the examples check (examples/frameworks/: megatron-core, transformers with
# accelerate, torchtitan; CPU-only, the versions measured there, FRAMEWORKS_SPEC overrides them).
# scripts/test.sh runs it,
# so the README's test command has them; CI (CG_REQUIRE_TORCH2=1, .ci/run) fails where
# they cannot run.
#   scripts/torch2-venv.sh [VENV]        (default /opt/venv-torch2; TORCH_SPEC=torch==2.x pins it)
# Idempotent: an existing venv whose torch imports is left as it is. pip's cache
# (~/.cache/pip) keeps a second install short.
set -euo pipefail
venv="${1:-/opt/venv-torch2}"
spec="${TORCH_SPEC:-torch}"
frameworks="${FRAMEWORKS_SPEC:-megatron-core==0.16.1 transformers==5.24.0 accelerate==1.15.0 torchtitan==0.3.0}"
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import torch, pytest, transformers, accelerate, megatron.core, torchtitan" > /dev/null 2>&1; then
  echo "$venv: torch $("$venv/bin/python" -c 'import torch; print(torch.__version__)') (already there)"
  exit 0
fi
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
if ! /usr/bin/python3 -m venv --help > /dev/null 2>&1 || ! /usr/bin/python3 -c "import ensurepip" > /dev/null 2>&1; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3-venv
fi
if ! [ -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import torch, pytest" > /dev/null 2>&1; then
  $SUDO /usr/bin/python3 -m venv "$venv"
  $SUDO "$venv/bin/pip" install -q --upgrade pip
  $SUDO "$venv/bin/pip" install -q "$spec"
  $SUDO "$venv/bin/pip" install -q pytest numpy
fi
# the frameworks after torch, so pip keeps the torch installed above where their metadata accepts it
# shellcheck disable=SC2086
$SUDO "$venv/bin/pip" install -q $frameworks
echo "$venv: torch $("$venv/bin/python" -c 'import torch; print(torch.__version__)')"
