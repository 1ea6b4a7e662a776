# CudaEmu.cmake — CG_CUDA_EMU=ON: the GPU path built against cuda-emu, the in-tree
# EMULATION of the CUDA runtime, cuBLAS and NCCL (tests/cuda_emu/README.md), for CI
# machines without a GPU. It proves the host logic and the kernels' arithmetic, not
# hardware behaviour. No CUDA toolkit is needed or looked at: nvcc is never run.
#
# Included instead of FindGpu.cmake. cg_add_cuda_emu() (called where the real path
# makes cgcuda) builds the same `cgcuda` library from the same sources:
# harness/cuda/*.cu compiled as host C++17 with tests/cuda_emu/include first on the
# include path (its cuda_runtime.h defines the kernel language and CG_LAUNCH), and
# harness/transports/nccl/*.c against the emulated nccl.h and cuda_runtime_api.h, into
# the same GPU module libcollgrad-gpu.so, loaded on first use; HAVE_CUDA=1 (and HAVE_NCCL=1)
# as on the real path, so the tool and the cudatest_* programs build unchanged.
set(HAVE_NCCL ON)
enable_language(CXX)
message(STATUS "GPU path: EMULATED on the host (CG_CUDA_EMU=ON, tests/cuda_emu): "
               "host logic and kernel arithmetic only, not a GPU")

function(cg_add_cuda_emu)
  set(emu ${PROJECT_SOURCE_DIR}/tests/cuda_emu)
  set(warn -Wall -Wextra)
  # The emulation's own code: C++17, warnings as errors under CG_WERROR.
  file(GLOB emu_sources CONFIGURE_DEPENDS ${emu}/src/*.cpp)
  add_library(cgcuda_emu STATIC ${emu_sources})
  set_target_properties(cgcuda_emu PROPERTIES POSITION_INDEPENDENT_CODE ON) # linked into the module
  target_include_directories(cgcuda_emu BEFORE PRIVATE ${emu}/include)
  target_link_libraries(cgcuda_emu PUBLIC MPI::MPI_C)
  set_target_properties(cgcuda_emu PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
  target_compile_options(cgcuda_emu PRIVATE ${warn} $<$<BOOL:${CG_WERROR}>:-Werror>)

  # The project's kernels, as host C++ (CMP0119: LANGUAGE CXX compiles a .cu as C++),
  # with the nvcc path's warnings and, as there, never -Werror on them.
  file(GLOB cuda_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/harness/cuda/*.cu)
  file(GLOB cuda_c_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/harness/cuda/*.c)
  set_source_files_properties(${cuda_sources} PROPERTIES LANGUAGE CXX)
  add_library(cgcuda MODULE ${cuda_sources} ${cuda_c_sources} ${CG_NCCL_SOURCES}
              ${PROJECT_SOURCE_DIR}/harness/lang/status.c)
  target_include_directories(cgcuda BEFORE PRIVATE ${emu}/include)
  target_include_directories(cgcuda PRIVATE ${PROJECT_SOURCE_DIR}/harness/lang ${CG_GENERATED_INCLUDE}
                                            ${PROJECT_SOURCE_DIR}/harness/autograd
                                            ${PROJECT_SOURCE_DIR}/harness/collectives
                                            ${PROJECT_SOURCE_DIR}/harness/interp
                                            ${PROJECT_SOURCE_DIR}/harness/transports
                                            ${PROJECT_SOURCE_DIR}/harness/rules
                                            ${PROJECT_SOURCE_DIR}/harness/cuda)
  target_link_libraries(cgcuda PRIVATE cgcuda_emu MPI::MPI_C)
  set_target_properties(cgcuda PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
  target_compile_options(cgcuda PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${warn}>)

  cg_gpu_module()
  set(HAVE_CUDA ON PARENT_SCOPE)
endfunction()
