#!/usr/bin/env bash
# A wrong-way include fails the build (issue 23): each layer library sees its
# own include directory and those of the layers it links, nothing above. The
# probes of tests/layers are built with a layer's usage requirements: the
# one that includes only its own and lower headers must build (so a failure
# below is the include, not the probe), the one that includes a higher
# layer's header must fail, naming that header.
. "$(dirname "$0")/common.bash"
BUILD="${CG_BUILD_DIR:?CG_BUILD_DIR is set by tests/CMakeLists.txt}"
CMAKE="${CG_CMAKE:-cmake}"
for layer in lang autograd collectives interp transports rules oracle report run pytorch bench matrix explore; do
  expect_exit 0 -- "$CMAKE" --build "$BUILD" --target "cg_probe_${layer}_own"
  if "$CMAKE" --build "$BUILD" --target "cg_probe_${layer}_up" > "$TMP/out" 2>&1; then
    bad "cg_probe_${layer}_up built: the $layer layer can include a header of a layer above it"
  else ok; fi
  expect_grep "(tensor|comm|transport|rules|oracle|expect|cli|backend_pytorch|explore|matrix_run)\.h(: No such file or directory|' file not found)" "$TMP/out"  # gcc, clang
done
finish
