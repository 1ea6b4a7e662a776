#!/usr/bin/env bash
# gpu-rehearse.sh — the device call, rehearsed on this machine: the bundle
# (scripts/gpu-bundle.sh, made from an emulated build: tests/cuda_emu) run by
# scripts/gpu-check.sh in a clean environment, with this machine's MPICH,
# UCX, hwloc and cJSON hidden (a private mount namespace binds /dev/null over
# them), so that whatever the bundle forgot fails here and not on the device.
# Usage: scripts/gpu-rehearse.sh OUT_DIR [gpu-check arguments...]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$1"
shift
hide=()
for f in /usr/lib/x86_64-linux-gnu/lib{mpich.so.12,cjson.so.1,ucp.so.0,ucs.so.0,uct.so.0,ucm.so.0,hwloc.so.15} \
         /usr/lib/x86_64-linux-gnu/ucx/*.so.0 /usr/bin/mpiexec.hydra /usr/bin/hydra_pmi_proxy; do
  [ -e "$f" ] && hide+=("$f")
done
exec unshare -m bash -c '
  root="$1" out="$2" n="$3"
  shift 3
  for f in "${@:1:$n}"; do mount --bind /dev/null "$f" || exit 3; done
  shift "$n"
  cd "$root" && exec env -i HOME=/root PATH=/usr/local/bin:/usr/bin:/bin TERM=dumb \
    CG_GPU_CHECK_BUDGET="${CG_GPU_CHECK_BUDGET:-500}" \
    scripts/gpu-check.sh --bundle .gpu-bundle/bundle.tar.gz --out "$out" "$@"
' rehearse "$root" "$out" "${#hide[@]}" "${hide[@]}" "$@"
