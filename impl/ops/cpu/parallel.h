#pragma once
// at::parallel_for for crossdev's own kernels, with the one check ATen's header cannot make:
// under ATen's OpenMP backend the loop is a `#pragma omp parallel` compiled into this code, and
// without -fopenmp it silently runs on one thread (every row kernel did, until this check).
// cmake/CrossdevTorch.cmake adds OpenMP to crossdev::torch when ATen/Config.h asks for it.
#include <ATen/Config.h>
#include <ATen/Parallel.h>

// CROSSDEV_SERIAL_PARALLEL_FOR: set by CMake, with a warning, when the compiler has no OpenMP.
#if AT_PARALLEL_OPENMP && !defined(_OPENMP) && !defined(CROSSDEV_SERIAL_PARALLEL_FOR)
#error "ATen's parallel backend is OpenMP but this file is compiled without -fopenmp: at::parallel_for would run on one thread (link crossdev::torch, cmake/CrossdevTorch.cmake)"
#endif
