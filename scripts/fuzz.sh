#!/usr/bin/env bash
# Fuzz the case-language parser (and the oracle on small cases) with libFuzzer
# under ASan and UBSan: build tests/fuzz/fuzz_parser.c with clang, replay the
# seed corpus and the regressions, then fuzz for FUZZ_SECONDS (default 60).
# New inputs and crash artifacts go to a scratch directory outside the tree
# (FUZZ_OUT, default a fresh temporary one, kept when something fails).
# Exits non-zero on any crash, leak, timeout or out-of-memory.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${CG_FUZZ_BUILD_DIR:-$root/build-fuzz}"
seconds="${FUZZ_SECONDS:-60}"
fuzz="$root/tests/fuzz"

# The fuzzer runtime ships apart from clang on Debian (libclang-rt-N-dev).
probe="$(mktemp -d)"
trap 'rm -rf "$probe"' EXIT
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' >"$probe/p.c"
can_fuzz() { clang -fsanitize=fuzzer,address,undefined "$probe/p.c" -o "$probe/p" 2>/dev/null; }
if ! can_fuzz; then
  echo "fuzz: installing clang and its sanitizer runtimes"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends clang
  major="$(clang -dumpversion | cut -d. -f1)"
  can_fuzz || DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "libclang-rt-$major-dev"
fi

# The oracle layer and every layer under it (CMakeLists.txt's cg_layer), so
# the oracle's truth run (its send/recv order check replays each rank over
# the real rules, hazards.h) links as it does in the tool; no reports, no run
# layer, no CUDA (cuda_absent.c stands in for the device kernels the host-only
# oracle never calls). Whole layer folders, globbed as cg_layer does, so a
# file split in two never leaves the fuzz build behind. MPI is linked, never
# initialised: the fuzzer calls the parser and the oracle only.
cd "$root"
layers=(harness/lang harness/autograd harness/collectives harness/interp harness/transports harness/rules oracles)
sources=(tests/fuzz/fuzz_parser.c)
includes=(-Iharness/cuda)
for layer in "${layers[@]}"; do
  sources+=("$layer"/*.c)
  includes+=("-I$layer")
done
# the collective kinds, one file each, and the header the build makes of their words
mkdir -p "$build/generated"
cmake -DCG_KINDS_OUT="$build/generated" -P "$root/harness/collectives/kinds/kinds.cmake"
sources+=(harness/collectives/kinds/*.c)
includes+=("-I$build/generated")
read -r -a mpi_cflags <<<"$(pkg-config --cflags mpich)"
read -r -a mpi_libs <<<"$(pkg-config --libs mpich)"
mkdir -p "$build"
echo "fuzz: building $build/fuzz_parser"
# -fno-sanitize-recover: a UBSan report must stop the run, or libFuzzer never sees it.
(cd "$root" && clang -std=c11 -D_POSIX_C_SOURCE=200809L -g -O1 -fno-omit-frame-pointer \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  -Wall -Wextra -Wno-unused-parameter "${includes[@]}" "${mpi_cflags[@]}" "${sources[@]}" \
  "${mpi_libs[@]}" -lcjson -lm -ldl -lpthread -o "$build/fuzz_parser")

out="${FUZZ_OUT:-$(mktemp -d)}"  # a fresh scratch directory
mkdir -p "$out/corpus" "$out/crashes"
keep_out() { echo "fuzz: FAILED; inputs and crash artifacts are in $out" >&2; }
trap 'rc=$?; rm -rf "$probe"; [ $rc -ne 0 ] && keep_out; exit $rc' EXIT

opts=(-max_len=4096 -timeout=25 -rss_limit_mb=2048 -artifact_prefix="$out/crashes/"
      -dict="$fuzz/case.dict" -print_final_stats=1)
# The live cases and malformed files too (libFuzzer reads folders
# recursively), so cases added after the corpus was copied are seeds as well.
seeds=("$fuzz/corpus" "$root/cases" "$root/tests/malformed")
[ -d "$fuzz/regressions" ] && seeds+=("$fuzz/regressions")

# Replay: every seed and regression once. The scratch corpus comes first so
# libFuzzer never writes into the tree.
echo "fuzz: replaying $(find "${seeds[@]}" -type f | wc -l) inputs"
"$build/fuzz_parser" "${opts[@]}" -runs=0 "$out/corpus" "${seeds[@]}" 2>"$out/replay.log" ||
  { tail -n 60 "$out/replay.log" >&2; exit 1; }

echo "fuzz: fuzzing for ${seconds}s"
"$build/fuzz_parser" "${opts[@]}" -max_total_time="$seconds" "$out/corpus" "${seeds[@]}" \
  2>"$out/fuzz.log" || { tail -n 80 "$out/fuzz.log" >&2; exit 1; }
grep -E '^stat::number_of_executed_units|^stat::new_units_added' "$out/fuzz.log" | sed 's/^/fuzz: /'
[ -n "${FUZZ_OUT:-}" ] || rm -rf "$out"
echo "fuzz: OK"
