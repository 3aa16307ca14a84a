# Locate LibTorch. A CMAKE_PREFIX_PATH (or Torch_DIR) given by the user wins, so CUDA, XPU and
# MPS builds of LibTorch 2.x plug in unchanged; otherwise we fall back to the pip wheel that
# `make` installs when none is (pyproject.toml [tool.crossdev]), asking its own interpreter where the CMake package lives.
if(NOT Torch_DIR)
  execute_process(
    COMMAND ${CROSSDEV_PYTHON_EXECUTABLE} -c "import torch, sys; sys.stdout.write(torch.utils.cmake_prefix_path)"
    OUTPUT_VARIABLE _crossdev_pip_torch_prefix
    RESULT_VARIABLE _crossdev_pip_torch_rc
    ERROR_QUIET)
  if(_crossdev_pip_torch_rc EQUAL 0 AND _crossdev_pip_torch_prefix)
    list(APPEND CMAKE_PREFIX_PATH "${_crossdev_pip_torch_prefix}")
  endif()
endif()

# A CUDA LibTorch finds the CUDA toolkit inside find_package(Torch); settle the toolkit, the
# architectures and the pip wheels' CUDA headers/libraries first, or, building without crossdev's
# CUDA kernels, keep torch from looking for a toolkit at all (cmake/CrossdevCuda.cmake).
# Nothing happens for a CPU LibTorch.
include(CrossdevCuda)
crossdev_cuda_prepare()

find_package(Torch 2.0 REQUIRED)
if(CROSSDEV_CUDA_KERNELS MATCHES "^not built")
  crossdev_cuda_stub_targets()
endif()
if(NOT Torch_VERSION)
  set(Torch_VERSION "${Torch_VERSION_MAJOR}.${Torch_VERSION_MINOR}")
endif()

# LibTorch's CMake package reports CUDA through the caffe2 variables it sets.
set(CROSSDEV_HAVE_CUDA OFF)
if(NOT CROSSDEV_CUDA_MODE STREQUAL "OFF" AND NOT CROSSDEV_CUDA_KERNELS MATCHES "^not built"
   AND (TORCH_CUDA_LIBRARIES OR CAFFE2_USE_CUDA))
  set(CROSSDEV_HAVE_CUDA ON)
  set(CROSSDEV_CUDA_KERNELS "built")
endif()

# TorchConfig's TORCH_LIBRARIES holds `torch` plus loose paths; wrap them once.
if(NOT TARGET crossdev::torch)
  add_library(crossdev_torch INTERFACE)
  target_link_libraries(crossdev_torch INTERFACE ${TORCH_LIBRARIES})
  add_library(crossdev::torch ALIAS crossdev_torch)
endif()

# at::parallel_for is a header template. With ATen's OpenMP backend (ATen/Config.h says
# AT_PARALLEL_OPENMP 1, as the pip wheels do) it expands to `#pragma omp parallel` inside *our*
# code, which runs on one thread unless it is compiled with -fopenmp; torch.utils.cpp_extension
# adds the flag for the same reason. libgomp.so.1 is one soname, so the process still has one
# OpenMP runtime (torch's bundled copy or the system's, whichever loads first) and
# torch.set_num_threads sizes it. impl/ops/cpu/parallel.h refuses to compile without it.
set(CROSSDEV_TORCH_PARALLEL "native")
foreach(_dir IN LISTS TORCH_INCLUDE_DIRS)
  if(EXISTS "${_dir}/ATen/Config.h")
    file(STRINGS "${_dir}/ATen/Config.h" _crossdev_at_openmp REGEX "^#define AT_PARALLEL_OPENMP 1")
    if(_crossdev_at_openmp)
      set(CROSSDEV_TORCH_PARALLEL "openmp")
    endif()
    break()
  endif()
endforeach()
if(CROSSDEV_TORCH_PARALLEL STREQUAL "openmp")
  find_package(OpenMP COMPONENTS CXX)
  if(OpenMP_CXX_FOUND)
    # The flag, as cpp_extension passes it, not OpenMP::OpenMP_CXX: that target links the compiler's
    # libgomp by its full path, and torch/lib ships a libgomp.so.1 too, so CMake would warn on every
    # target that it cannot order a safe RPATH. -fopenmp links libgomp.so.1 by soname; the process
    # loads one copy, whichever comes first.
    separate_arguments(_crossdev_omp_flags NATIVE_COMMAND "${OpenMP_CXX_FLAGS}")
    target_compile_options(crossdev_torch INTERFACE "$<$<COMPILE_LANGUAGE:CXX>:${_crossdev_omp_flags}>")
    target_link_options(crossdev_torch INTERFACE ${_crossdev_omp_flags})
  else()
    # A compiler without OpenMP (Apple clang without libomp) still builds, loudly serial.
    message(WARNING "crossdev: ATen's parallel backend is OpenMP but ${CMAKE_CXX_COMPILER_ID} has no OpenMP: "
                    "crossdev's row kernels will run on one thread (for Apple clang: brew install libomp)")
    target_compile_definitions(crossdev_torch INTERFACE CROSSDEV_SERIAL_PARALLEL_FOR=1)
    set(CROSSDEV_TORCH_PARALLEL "openmp, but serial here: no OpenMP in this compiler")
  endif()
endif()
message(STATUS "crossdev: ATen's parallel backend is ${CROSSDEV_TORCH_PARALLEL}")

# The C++ standard LibTorch's headers are written for (2.13 sets CXX_STANDARD 20 on `torch`).
set(CROSSDEV_TORCH_CXX_STANDARD 17)
get_target_property(_crossdev_torch_std torch CXX_STANDARD)
if(_crossdev_torch_std AND _crossdev_torch_std GREATER 17)
  set(CROSSDEV_TORCH_CXX_STANDARD ${_crossdev_torch_std})
endif()

if(CROSSDEV_HAVE_CUDA)
  crossdev_cuda_finish()
endif()
