#!/usr/bin/env bash
# `pip install ./python` as a user of Debian's python3-torch runs it (issue 60 items 10 and 11):
# - into a venv made with --system-site-packages, over the machine's torch (Debian's is
#   1.13.0a0, a pre-release by PEP 440) with no index at all: pip must find the requirement
#   met by the torch it has, never reach for another;
# - the installed package's pytest entry point and `-p collgrad_core.pytest_plugin`
#   together are one plugin (pluggy refuses one module under two names).
. "$(dirname "$0")/common.bash"
PY=/usr/bin/python3
if ! "$PY" -c "import torch, setuptools, pytest" > /dev/null 2>&1; then
  echo "skipped: $PY lacks torch, setuptools or pytest (scripts/setup.sh installs them)"; exit 77
fi
echo "machine's torch: $("$PY" -c 'import importlib.metadata as m; print(m.version("torch"))')"
expect_exit 0 -- "$PY" -m venv --system-site-packages "$TMP/venv"
cp -r "$SRC/python" "$TMP/src"   # pip's in-tree build writes into the source: not into the checkout
rm -rf "$TMP/src"/*.egg-info "$TMP/src/build"
# --no-index: nothing can be downloaded, so a requirement the machine's torch does not meet fails here
expect_exit 0 -- env PIP_CONFIG_FILE=/dev/null "$TMP/venv/bin/pip" install -q --no-index --no-build-isolation "$TMP/src"
expect_exit 0 -- "$TMP/venv/bin/python" -c "import collgrad_torch, torch; print(torch.__file__)"
if grep -q "^$TMP/venv" "$TMP/out"; then bad "a second torch went into the venv: $(cat "$TMP/out")"; else ok; fi

# the plugin, by its entry point, by -p, and both at once (an egg-info beside the sources, an
# installed package and a -p in pytest.ini are the everyday ways to meet both)
mkdir -p "$TMP/t"
printf 'def test_plain():\n    assert 1 + 1 == 2\n' > "$TMP/t/test_plain.py"
cd "$TMP/t" || exit 1
expect_exit 0 -- "$TMP/venv/bin/python" -m pytest -q -p no:cacheprovider --collgrad-cold test_plain.py
expect_exit 0 -- "$TMP/venv/bin/python" -m pytest -q -p no:cacheprovider -p collgrad_core.pytest_plugin \
  --collgrad-cold test_plain.py
expect_exit 0 -- env PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 "$TMP/venv/bin/python" -m pytest -q -p no:cacheprovider \
  -p collgrad_core.pytest_plugin --collgrad-cold test_plain.py
# and turned off by the name the docs give
expect_exit 4 -- "$TMP/venv/bin/python" -m pytest -q -p no:cacheprovider -p no:collgrad_core.pytest_plugin \
  --collgrad-cold test_plain.py
finish
