#!/usr/bin/env bash
# `cmake --install` into a fresh prefix: the installed tool finds its
# installed cases (not the source tree's), the installed headers compile
# standalone through pkg-config, and a rule-set plugin built against the
# install runs in the installed tool. CG_BUILD_DIR, CG_CMAKE and CG_CC come
# from tests/CMakeLists.txt.
. "$(dirname "$0")/common.bash"
BUILD="${CG_BUILD_DIR:-$(dirname "$BIN")}"
CC="${CG_CC:-cc}"
P="$TMP/prefix"
expect_exit 0 -- "${CG_CMAKE:-cmake}" --install "$BUILD" --prefix "$P"
P="$(cd "$P" && pwd -P)"   # the tool prints resolved paths
for f in bin/collgrad-check share/man/man1/collgrad-check.1 include/collgrad/collgrad_transport.h include/collgrad/rules.h \
         include/collgrad/transport.h include/collgrad/tensor.h \
         share/collgrad-check/cases/collectives/all_reduce_sum.case \
         share/collgrad-check/schema/report-1.schema.json share/collgrad-check/schema/junit-10.xsd; do
  if [ -e "$P/$f" ]; then ok; else bad "not installed: $f"; fi
done
PC_DIR="$(dirname "$(find "$P" -name collgrad-check.pc | head -1)")"
if [ -f "$PC_DIR/collgrad-check.pc" ]; then ok; else bad "no collgrad-check.pc under $P"; fi

# the installed tool lists the installed cases, all of them
expect_exit 0 -- "$P/bin/collgrad-check" --oracle-only --list
expect_grep "^all_reduce_sum +W=.*  $P/share/collgrad-check/cases/collectives/all_reduce_sum.case$" "$TMP/out"
if grep -q "  $SRC/cases/" "$TMP/out"; then bad "the installed tool used the source tree's cases"; else ok; fi
want="$(find "$SRC/cases" -name '*.case' | wc -l)"
expect_grep "^$want cases, [0-9]+ jobs, 0 errors$" "$TMP/out"
# and runs them (the oracle needs no MPI)
expect_exit 0 -- "$P/bin/collgrad-check" --oracle-only "$P/share/collgrad-check/cases/pytorch-58005"
# the Python it starts is installed beside it: the PyTorch ranks' and the JAX process's packages,
# and with jax at hand (scripts/jax-venv.sh) the installed tool runs a case through JAX from there
for f in collgrad_core/ir.py collgrad_torch/runner/rank.py collgrad_jax/runner/__main__.py collgrad_jax/runner/program.py; do
  if [ -f "$P/share/collgrad-check/python/$f" ]; then ok; else bad "not installed: share/collgrad-check/python/$f"; fi
done
JPY="${CG_JAX_PYTHON:-/opt/venv-jax/bin/python}"
if [ -x "$JPY" ] && "$JPY" -c "import jax" > /dev/null 2>&1; then
  (cd "$TMP" && PYTHONPATH= COLLGRAD_JAX_PYTHON="$JPY" timeout -k 5 300 "$P/bin/collgrad-check" --backend jax:shard_map \
    --world 2 "$P/share/collgrad-check/cases/collectives/all_reduce_sum.case") > "$TMP/out" 2>&1 && ok \
    || { bad "the installed tool cannot run a case through JAX"; tail -5 "$TMP/out"; }
fi
# $COLLGRAD_CASES_DIR wins over everything
mkdir -p "$TMP/mine" && cp "$SRC/cases/collectives/all_reduce_sum.case" "$TMP/mine/"
COLLGRAD_CASES_DIR="$TMP/mine" expect_exit 0 -- "$P/bin/collgrad-check" --oracle-only --list
expect_grep "^1 cases, [0-9]+ jobs, 0 errors$" "$TMP/out"

# a build with the GPU path installs its module, and the installed tool loads
# that one (not the build tree's) when asked for nccl
if [ "${CG_HAVE_CUDA:-0}" = 1 ]; then
  module="$(find "$P" -path "*/collgrad-check/libcollgrad-gpu.so" | head -1)"
  if [ -n "$module" ]; then ok; else bad "the GPU module libcollgrad-gpu.so is not installed under $P"; fi
  LD_DEBUG=files LD_DEBUG_OUTPUT="$TMP/ld" "$P/bin/collgrad-check" --transport nccl \
    "$P/share/collgrad-check/cases/collectives/all_reduce_sum.case" > "$TMP/out" 2>&1
  if grep -qhE "file=$P/(bin/\.\./)?lib[^ ]*/collgrad-check/libcollgrad-gpu.so" "$TMP"/ld.*; then ok
  else bad "the installed tool did not load the installed GPU module"; sed 's/^/    /' "$TMP/out" | tail -3; fi
  rm -f "$TMP"/ld.*
fi

# pkg-config: version and flags
export PKG_CONFIG_PATH="$PC_DIR"
expect_exit 0 -- pkg-config --modversion collgrad-check
expect_grep "^$("$BIN" --version | awk '{print $2}')$" "$TMP/out"
expect_exit 0 -- pkg-config --cflags collgrad-check
expect_grep "^-I[^ ]*/include/collgrad( |$)" "$TMP/out"
CFLAGS_CG="$(pkg-config --cflags collgrad-check)"

# each plugin header compiles on its own, both include styles
for h in rules.h collgrad_transport.h transport.h collgrad/rules.h collgrad/collgrad_transport.h; do
  printf '#include <%s>\nint cg_header_ok;\n' "$h" > "$TMP/h.c"
  # shellcheck disable=SC2086 # the flags are words
  expect_exit 0 -- "$CC" -std=c11 -Wall -Wextra -Werror -c $CFLAGS_CG "$TMP/h.c" -o "$TMP/h.o"
done
# a one-line plugin
echo '#include <collgrad/rules.h>
const cg_rules *collgrad_rules(void) { return &cg_rules_reference; }' > "$TMP/one.c"
# shellcheck disable=SC2086
expect_exit 0 -- "$CC" -std=c11 -shared -fPIC $CFLAGS_CG "$TMP/one.c" -o "$TMP/libone.so"

# the example rules plugin, built against the install, in the installed tool
# shellcheck disable=SC2086
expect_exit 0 -- "$CC" -std=c11 -Wall -Werror -shared -fPIC $CFLAGS_CG \
  "$SRC/examples/rules_plugin/own_slice_rules.c" -o "$TMP/libown.so"
expect_exit 1 -- "$P/bin/collgrad-check" --rules "$TMP/libown.so" --world 2 \
  "$P/share/collgrad-check/cases/allgather-zh"
expect_grep "fail per_rank\(x\) rank 0 rules=.*libown.so: expected \[12, 12, 12, 12\] observed \[6, 6, 6, 6\]" "$TMP/out"
finish
