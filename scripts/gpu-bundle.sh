#!/usr/bin/env bash
# gpu-bundle.sh — what a GPU machine without a network needs to run the GPU
# check (scripts/gpu-check.sh --bundle), made here, where the packages are.
#
# The device machines this project is lent (the device tool's KINDS.md) have
# CUDA 13 (nvcc, cudart, cuBLAS), torch 2.x with its NCCL, CMake and Python,
# but no MPICH, cJSON or Check, and reach no package registry. So the tool is
# built here, for sm_90 (H100/H200), against this machine's CUDA 13 and NCCL
# headers, and installed into a prefix together with:
#   bin/   collgrad-check, mpiexec.hydra (as mpiexec) and hydra_pmi_proxy, the
#          cudatest_* programs (kernels against the CPU ops, the nccl transport)
#   lib/   libmpich.so.12 and what it loads (UCX, hwloc, numa, udev), UCX's
#          modules in lib/ucx, libcjson.so.1; the GPU module in
#          lib/collgrad-check (the install's place)
#   share/ the built-in cases, the report schema, the collgrad_torch package
# CUDA's libraries and NCCL are NOT carried (cuBLAS and NCCL alone are over
# 300 MB): gpu-check.sh finds the device's own (its CUDA, or torch's wheels)
# at run time; the sonames match (libcudart.so.13, libcublas.so.13,
# libnccl.so.2). The prefix is packed as .gpu-bundle/bundle.tar.gz (ignored),
# which the device call names in `carry`.
#
# Usage: scripts/gpu-bundle.sh [BUILD_DIR]
#   BUILD_DIR: an already built tree to bundle (e.g. build-emu for a rehearsal
#   against the CUDA emulation); default: configure and build build-bundle
#   (Release, CMAKE_CUDA_ARCHITECTURES=90).
# Exit: 0 made; 1 a step failed (said on stderr).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build-bundle}"
dest="$root/.gpu-bundle"
libdir=/usr/lib/x86_64-linux-gnu

if [ -z "${1:-}" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCG_WERROR=ON > /dev/null
  cmake --build "$build" -j "$(nproc)"
fi
[ -x "$build/tests/cudatest_ops" ] || {
  echo "gpu-bundle: $build has no GPU path (no tests/cudatest_ops)" >&2
  exit 1
}

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
prefix="$work/collgrad"
cmake --install "$build" --prefix "$prefix" > /dev/null
mkdir -p "$prefix/bin" "$prefix/lib/ucx"
for t in cudatest_ops cudatest_graph cudatest_local cudatest_nccl; do
  cp "$build/tests/$t" "$prefix/bin/"
done
# the GPU module where the install puts it, whatever LIBDIR the platform chose
module="$(find "$prefix" -name libcollgrad-gpu.so | head -n 1)"
if [ "$(dirname "$module")" != "$prefix/lib/collgrad-check" ]; then
  mkdir -p "$prefix/lib/collgrad-check"
  mv "$module" "$prefix/lib/collgrad-check/"
fi

# MPICH's runtime and cJSON: the libraries, mpiexec and its proxy, and every
# library any of them loads (ldd's closure) that is not glibc's or the C++
# runtime's, which any Linux with CUDA has; UCX's modules go where libucs
# looks for them (lib/ucx)
glibc='(libc|libm|libdl|libpthread|librt|libresolv|libgcc_s|libstdc\+\+|ld-linux-x86-64)\.so'
for so in libmpich.so.12 libcjson.so.1; do
  cp -L "$libdir/$so" "$prefix/lib/"
done
# cma only (single-node copies); the ib and rdmacm modules would bring the
# verbs libraries, for hardware no device machine has
cp -L "$libdir/ucx/libuct_cma.so.0" "$prefix/lib/ucx/"
ldd "$libdir/libmpich.so.12" "$libdir/libcjson.so.1" /usr/bin/mpiexec.hydra /usr/bin/hydra_pmi_proxy \
    "$prefix"/lib/ucx/*.so.0 | awk '$3 ~ /^\// {print $3}' | sort -u | while read -r dep; do
  basename "$dep" | grep -qE "^$glibc" || cp -L "$dep" "$prefix/lib/"
done
cp -L /usr/bin/mpiexec.hydra "$prefix/bin/mpiexec"
cp -L /usr/bin/hydra_pmi_proxy "$prefix/bin/"

# every program and library of the bundle must find what it loads in the
# bundle, glibc, the C++ runtime, or CUDA and NCCL (the device's own): the
# device lacks the rest (a library forgotten here fails only there)
missing="$(for f in "$prefix"/bin/* "$prefix"/lib/*.so* "$prefix"/lib/ucx/*.so* \
                   "$prefix"/lib/collgrad-check/*.so; do
  LD_LIBRARY_PATH="$prefix/lib" ldd "$f" 2>/dev/null | awk -v f="$f" '$3 ~ /^\// {print f": "$1" => "$3}'
done | grep -vE "=> $prefix/lib/" | grep -vE ": ($glibc|libcudart\.so|libcublas(Lt)?\.so|libnccl\.so)" || true)"
if [ -n "$missing" ]; then
  echo "gpu-bundle: these load libraries from outside the bundle:" >&2
  echo "$missing" >&2
  exit 1
fi

{
  echo "collgrad-check GPU bundle, made $(date -u +%FT%TZ) on $(uname -n)"
  echo "source: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$root" diff --quiet 2>/dev/null || echo ' (uncommitted changes)')"
  echo "build: $build ($(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt"), CUDA architectures $(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' "$build/CMakeCache.txt"), emulation $(sed -n 's/^CG_CUDA_EMU:[A-Z]*=//p' "$build/CMakeCache.txt"))"
  echo "MPICH: $(dpkg-query -W -f '${Version}' libmpich12 2>/dev/null || echo '?'), cJSON: $(dpkg-query -W -f '${Version}' libcjson1 2>/dev/null || echo '?')"
  (cd "$prefix" && find . -type f | sort)
} > "$prefix/MANIFEST"

mkdir -p "$dest"
tar -C "$work" -czf "$dest/bundle.tar.gz.tmp" collgrad
mv "$dest/bundle.tar.gz.tmp" "$dest/bundle.tar.gz"
echo "gpu-bundle: $dest/bundle.tar.gz ($(du -h "$dest/bundle.tar.gz" | cut -f1); unpacked $(du -sh "$prefix" | cut -f1))"
