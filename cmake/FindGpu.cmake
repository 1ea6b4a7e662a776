# Optional CUDA + NCCL detection. Sets HAVE_NCCL (ON/OFF) and, when found,
# CG_CUDA_INCLUDE, CG_NCCL_LIBRARY and CG_CUDART_LIBRARY. Never fails the build:
# everything but the GPU path builds, tests and runs without them.
set(HAVE_NCCL OFF)
find_package(CUDAToolkit QUIET)
set(_cg_cuda_hint "${CUDAToolkit_LIBRARY_ROOT}" /usr/local/cuda)
find_path(CG_NCCL_INCLUDE nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} PATH_SUFFIXES include
          PATHS ${_cg_cuda_hint})
find_library(CG_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} PATH_SUFFIXES lib64 lib
             PATHS ${_cg_cuda_hint})
if(CUDAToolkit_FOUND AND CG_NCCL_INCLUDE AND CG_NCCL_LIBRARY)
  set(HAVE_NCCL ON)
  message(STATUS "GPU path: CUDA ${CUDAToolkit_VERSION}, NCCL ${CG_NCCL_LIBRARY}")
else()
  message(STATUS "GPU path: off (CUDA toolkit or NCCL not found); MPI path only")
endif()
