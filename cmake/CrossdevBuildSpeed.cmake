# How crossdev's build stays short on a 2-core machine (docs/ARCHITECTURE.md, "Building"):
#   - ccache, when the machine has it (CROSSDEV_CCACHE: AUTO, the default; ON requires it; OFF never), as the
#     compiler launcher, with paths under the source tree hashed as relative ones (CCACHE_BASEDIR) and
#     the working directory left out (CCACHE_NOHASHDIR), so a clean clone elsewhere hits what an earlier
#     clone compiled. A launcher the user gives (CMAKE_CXX_COMPILER_LAUNCHER) wins.
#   - precompiled headers (CROSSDEV_PCH, ON by default): LibTorch's headers are parsed once per kind of
#     compilation instead of once per translation unit. crossdev_pch compiles them once for the libraries
#     that use it (the same flags: -fPIC, the standard, OpenMP); targets with other flags (executables: -fPIE;
#     the Python module: hidden visibility; the ops' CPU copies: their instruction sets) compile their own
#     (crossdev_use_pch). The header is large (~400 MB): compiling it takes about a minute on this 2-core
#     machine and loading it about a second, so only targets where it measured faster use it (docs/benchmarks.md,
#     "Building"): a unit of crossdev_core compiles in about a second without it, while ops/*/op.cpp goes from
#     28 s to 16 s with it.
set(CROSSDEV_CCACHE AUTO CACHE STRING "Compile through ccache: AUTO (when found), ON (required) or OFF")
set_property(CACHE CROSSDEV_CCACHE PROPERTY STRINGS AUTO ON OFF)
option(CROSSDEV_PCH "Precompile LibTorch's headers (target_precompile_headers)" ON)

if(NOT CROSSDEV_CCACHE STREQUAL "OFF" AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(CROSSDEV_CCACHE_PROGRAM ccache)
  # env, not `cmake -E env`: the command line of every compilation names the launcher, and the cmake running a
  # configure differs between venvs (pip's own), which would make ninja recompile everything.
  find_program(CROSSDEV_ENV_PROGRAM env)
  if(CROSSDEV_CCACHE_PROGRAM AND CROSSDEV_ENV_PROGRAM)
    # CCACHE_DEPEND: the cache key from the compiler's own -MD list, so a miss costs no preprocessor run
    # (with LibTorch's headers that pass costs as much as a light translation unit's compilation);
    # pch_defines,time_macros: what ccache needs to cache compilations that use a precompiled header;
    # include_file_mtime/ctime: a header written moments before (the generated .inc files) still hits.
    set(CMAKE_CXX_COMPILER_LAUNCHER
        "${CROSSDEV_ENV_PROGRAM}" "CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}" CCACHE_NOHASHDIR=1 CCACHE_DEPEND=1
        "CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime" "${CROSSDEV_CCACHE_PROGRAM}")
    message(STATUS "crossdev: compiling through ${CROSSDEV_CCACHE_PROGRAM}")
  elseif(CROSSDEV_CCACHE STREQUAL "ON")
    message(FATAL_ERROR "CROSSDEV_CCACHE=ON but ccache (or env) was not found")
  endif()
endif()

# The headers most of crossdev's translation units include, directly or through crossdev's own headers.
set(CROSSDEV_PCH_HEADERS
  <ATen/ATen.h>
  <ATen/core/dispatch/Dispatcher.h>
  <torch/library.h>
  <c10/util/Exception.h>
  <algorithm> <functional> <map> <memory> <mutex> <optional> <sstream> <string> <unordered_map> <vector>)

if(CROSSDEV_PCH)
  # The shared precompiled header: an object library of one empty source, with the flags of a crossdev library.
  # file(CONFIGURE) rewrites it only when its text changes: a reconfigure (each `make install`'s pip) leaves its
  # time alone, so the object and every library reusing the header are not rebuilt (issue 49).
  file(CONFIGURE OUTPUT "${CMAKE_BINARY_DIR}/generated/crossdev_pch.cpp"
       CONTENT "// crossdev_pch: holds the shared precompiled header\n")
  add_library(crossdev_pch OBJECT "${CMAKE_BINARY_DIR}/generated/crossdev_pch.cpp")
  target_link_libraries(crossdev_pch PRIVATE crossdev::torch)
  target_precompile_headers(crossdev_pch PRIVATE ${CROSSDEV_PCH_HEADERS})
endif()

# crossdev_use_pch(<target>... [OWN] [HEADERS <header>...]): each target compiles with LibTorch's headers
# precompiled. A library (static, shared, module, object) of the default flags reuses crossdev_pch; an
# executable (-fPIE), or a target given OWN (other flags), or HEADERS (more headers), precompiles its own.
function(crossdev_use_pch)
  if(NOT CROSSDEV_PCH)
    return()
  endif()
  cmake_parse_arguments(ARG "OWN" "" "HEADERS" ${ARGN})
  foreach(target IN LISTS ARG_UNPARSED_ARGUMENTS)
    get_target_property(_type ${target} TYPE)
    if(ARG_OWN OR ARG_HEADERS OR _type STREQUAL "EXECUTABLE")
      target_precompile_headers(${target} PRIVATE ${CROSSDEV_PCH_HEADERS} ${ARG_HEADERS})
    else()
      target_precompile_headers(${target} REUSE_FROM crossdev_pch)
    endif()
  endforeach()
endfunction()
