# Building against a CUDA LibTorch (docs/building.md, "Other LibTorch builds").
#
# LibTorch's CMake package looks for the CUDA toolkit itself, inside find_package(Torch), with
# its own copies of FindCUDA/FindCUDAToolkit. Out of the box that fails in four ways against the
# pip CUDA wheels on a machine without a GPU (issue 12), so crossdev_cuda_prepare() runs before
# find_package(Torch) and settles what torch would otherwise guess:
#   1. the toolkit: the real nvcc, not a wrapper script on PATH (torch derives the toolkit root
#      from nvcc's directory), and its major version must match the CUDA LibTorch was built with
#      (CROSSDEV_ENABLE_CUDA=ON: or configure stops; AUTO: or crossdev goes on without its kernels);
#   2. TORCH_CUDA_ARCH_LIST: with no GPU visible torch falls back to a list that starts at
#      compute_50, which nvcc 13 rejects; we default it to CROSSDEV_CUDA_NO_GPU_ARCH_LIST.
#      A -DTORCH_CUDA_ARCH_LIST=... or $TORCH_CUDA_ARCH_LIST always wins, and with a GPU visible
#      torch's own detection is left alone. (torch ignores CMAKE_CUDA_ARCHITECTURES.)
#   3./4. the pip wheels' nvidia/<pkg>/{include,lib}: headers a bare toolkit lacks (cusparse.h,
#      cublas_v2.h, ...) and libraries shipped only with versioned names (libnvrtc.so.13, ...),
#      used only for what the toolkit itself does not have.
# crossdev_cuda_finish() runs after find_package(Torch): adds those headers to crossdev::torch and
# makes the CUDA runtime come once, as the shared library torch links (torch::cudart).
#
# Without crossdev's CUDA kernels (CROSSDEV_ENABLE_CUDA=OFF, or AUTO, the default, when no toolkit of
# LibTorch's CUDA major version is found) no toolkit is needed at all, as for a CppExtension built
# against a CUDA torch: torch's public/cuda.cmake returns at once when the target torch::cudart exists,
# so _crossdev_cuda_skip_toolkit() defines it first, and crossdev_cuda_stub_targets() gives the other
# CUDA targets LibTorch's targets name, which only the toolkit search would have made, empty stand-ins.
# LibTorch's own libraries (libtorch_cuda, libc10_cuda) are still linked, so the cuda device works and
# the fused ops run their fallback there. CROSSDEV_CUDA_KERNELS says which: "" for a CPU LibTorch,
# "built", or "not built (<why>)" (the bundle's execution_target.cuda_kernels).

# Architectures compiled when no GPU is visible (CI build checks, build-only machines): Ampere
# and Hopper SASS, plus Hopper PTX that newer GPUs JIT-compile. Supported by nvcc 12.x and 13.x.
set(CROSSDEV_CUDA_NO_GPU_ARCH_LIST "8.0;9.0+PTX" CACHE STRING
    "TORCH_CUDA_ARCH_LIST used when none is given and no GPU is visible at configure time")

# Where find_package(Torch) will look: Torch_DIR, then CMAKE_PREFIX_PATH (cache, then env).
function(_crossdev_locate_torch_config out_dir)
  set(_candidates)
  foreach(_dir IN ITEMS "${Torch_DIR}" "$ENV{Torch_DIR}")
    if(_dir)
      list(APPEND _candidates "${_dir}")
    endif()
  endforeach()
  set(_prefixes ${CMAKE_PREFIX_PATH})
  if(DEFINED ENV{CMAKE_PREFIX_PATH})
    string(REPLACE ":" ";" _env_prefixes "$ENV{CMAKE_PREFIX_PATH}")
    list(APPEND _prefixes ${_env_prefixes})
  endif()
  foreach(_p IN LISTS _prefixes)
    list(APPEND _candidates "${_p}" "${_p}/Torch" "${_p}/share/cmake/Torch" "${_p}/lib/cmake/Torch")
  endforeach()
  foreach(_c IN LISTS _candidates)
    if(EXISTS "${_c}/TorchConfig.cmake")
      get_filename_component(_c "${_c}" REALPATH)
      set(${out_dir} "${_c}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${out_dir} "" PARENT_SCOPE)
endfunction()

# The CUDA version a LibTorch was built with: torch/version.py (pip), build-version (zip).
function(_crossdev_torch_cuda_version prefix out_var)
  set(_v "")
  if(EXISTS "${prefix}/version.py")
    file(STRINGS "${prefix}/version.py" _line REGEX "^cuda[^=]*= *['\"][0-9]+\\.[0-9]+")
    if(_line MATCHES "['\"]([0-9]+\\.[0-9]+)")
      set(_v "${CMAKE_MATCH_1}")
    endif()
  endif()
  if(NOT _v AND EXISTS "${prefix}/build-version")
    file(READ "${prefix}/build-version" _bv)
    if(_bv MATCHES "\\+cu([0-9]+)([0-9])")
      set(_v "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}")
    endif()
  endif()
  set(${out_var} "${_v}" PARENT_SCOPE)
endfunction()

# A wrapper script named nvcc (e.g. /usr/local/bin/nvcc exec'ing the real one) hides the toolkit;
# nvcc's dry run names the directory it really runs from.
function(_crossdev_real_nvcc candidate out_var)
  set(_probe "${CMAKE_BINARY_DIR}/CMakeFiles/crossdev_nvcc_probe.cu")
  file(WRITE "${_probe}" "")
  execute_process(COMMAND "${candidate}" --dryrun -c "${_probe}" -o "${_probe}.o"
                  OUTPUT_VARIABLE _out ERROR_VARIABLE _err RESULT_VARIABLE _rc)
  set(_real "")
  if(_rc EQUAL 0 AND "${_out}${_err}" MATCHES "#\\$ _HERE_=([^\r\n]+)")
    set(_here "${CMAKE_MATCH_1}")
    if(EXISTS "${_here}/nvcc")
      get_filename_component(_real "${_here}/nvcc" REALPATH)
    endif()
  endif()
  if(NOT _real)
    get_filename_component(_real "${candidate}" REALPATH)
  endif()
  set(${out_var} "${_real}" PARENT_SCOPE)
endfunction()

# CROSSDEV_ENABLE_CUDA as one of AUTO, ON, OFF (CMake's other spellings of true and false count).
function(_crossdev_cuda_mode out_var)
  string(TOUPPER "${CROSSDEV_ENABLE_CUDA}" _v)
  if(_v STREQUAL "AUTO" OR _v STREQUAL "")
    set(_mode AUTO)
  elseif(_v MATCHES "^(ON|YES|TRUE|Y|1)$")
    set(_mode ON)
  elseif(_v MATCHES "^(OFF|NO|FALSE|N|0|IGNORE|NOTFOUND|.*-NOTFOUND)$")
    set(_mode OFF)
  else()
    message(FATAL_ERROR "crossdev: CROSSDEV_ENABLE_CUDA is '${CROSSDEV_ENABLE_CUDA}'; expected AUTO, ON or OFF")
  endif()
  set(${out_var} ${_mode} PARENT_SCOPE)
endfunction()

# The nvcc the toolkit is taken from: first of CUDA_TOOLKIT_ROOT_DIR, CMAKE_CUDA_COMPILER, $CUDACXX,
# $CUDA_HOME/$CUDA_PATH, nvcc on PATH, /usr/local/cuda, a pip nvcc; then its real location. "" when none.
# -DCMAKE_IGNORE_PATH=<dirs> hides an nvcc from the search (ci/cuda_fallback_check.sh: every directory
# holding one, e.g. /usr/local/cuda/bin;/usr/local/bin).
function(_crossdev_find_nvcc pip_bin_dirs out_var)
  set(_nvcc "")
  if(CUDA_TOOLKIT_ROOT_DIR AND EXISTS "${CUDA_TOOLKIT_ROOT_DIR}/bin/nvcc")
    set(_nvcc "${CUDA_TOOLKIT_ROOT_DIR}/bin/nvcc")
  elseif(CMAKE_CUDA_COMPILER)
    set(_nvcc "${CMAKE_CUDA_COMPILER}")
  elseif(DEFINED ENV{CUDACXX} AND NOT "$ENV{CUDACXX}" STREQUAL "")
    set(_nvcc "$ENV{CUDACXX}")
  else()
    foreach(_env CUDA_HOME CUDA_PATH)
      if(NOT _nvcc AND DEFINED ENV{${_env}} AND EXISTS "$ENV{${_env}}/bin/nvcc")
        set(_nvcc "$ENV{${_env}}/bin/nvcc")
      endif()
    endforeach()
    if(NOT _nvcc)
      find_program(_found NAMES nvcc PATHS /usr/local/cuda/bin ${pip_bin_dirs} NO_CACHE)
      if(_found)
        set(_nvcc "${_found}")
      endif()
    endif()
  endif()
  if(_nvcc)
    _crossdev_real_nvcc("${_nvcc}" _nvcc)
  endif()
  set(${out_var} "${_nvcc}" PARENT_SCOPE)
endfunction()

macro(crossdev_cuda_prepare)
  set(CROSSDEV_TORCH_IS_CUDA OFF)
  set(CROSSDEV_CUDA_VERSION "")
  set(CROSSDEV_CUDA_PIP_INCLUDE_DIRS "")
  set(CROSSDEV_CUDA_KERNELS "")
  _crossdev_cuda_mode(CROSSDEV_CUDA_MODE)
  _crossdev_locate_torch_config(_cx_torch_config_dir)
  if(_cx_torch_config_dir)
    get_filename_component(_cx_torch_prefix "${_cx_torch_config_dir}/../../.." ABSOLUTE)
    file(GLOB _cx_c10_cuda "${_cx_torch_prefix}/lib/libc10_cuda.*" "${_cx_torch_prefix}/lib/c10_cuda.*")
    if(_cx_c10_cuda)
      set(CROSSDEV_TORCH_IS_CUDA ON)
    endif()
  endif()
  if(CROSSDEV_TORCH_IS_CUDA)
    _crossdev_cuda_prepare_impl()
  endif()
endmacro()

# No crossdev CUDA kernels against this CUDA LibTorch: say why in one line, and keep torch's CMake
# package from looking for a toolkit.
# why: the reason the bundle records; where: what the configure line adds (the nvcc concerned), or "".
macro(_crossdev_cuda_skip_toolkit why where)
  set(CROSSDEV_CUDA_KERNELS "not built (${why})")
  set(_cx_shown_version "${CROSSDEV_CUDA_VERSION}")
  if(NOT _cx_shown_version)
    set(_cx_shown_version "(of a version it does not say)")
  endif()
  message(STATUS "crossdev: CUDA kernels not built: LibTorch is built with CUDA ${_cx_shown_version} and ${why}${where}; "
                 "the fused ops run their fallback on cuda (-DCROSSDEV_ENABLE_CUDA=ON requires the kernels)")
  # torch's public/cuda.cmake begins `if(TARGET torch::cudart) return()`. The stand-in links the runtime
  # LibTorch ships (pip: nvidia/*/lib; a LibTorch zip: lib/libcudart-<hash>.so), which libc10_cuda
  # needs when an executable is linked.
  if(NOT TARGET torch::cudart)
    add_library(torch::cudart INTERFACE IMPORTED)
    file(GLOB _cx_cudart "${_cx_site}/nvidia/*/lib/libcudart.so.[0-9]*" "${_cx_torch_prefix}/lib/libcudart*.so*")
    if(_cx_cudart)
      list(SORT _cx_cudart)
      list(GET _cx_cudart 0 _cx_cudart)
      set_property(TARGET torch::cudart PROPERTY INTERFACE_LINK_LIBRARIES "${_cx_cudart}")
    endif()
  endif()
endmacro()

macro(_crossdev_cuda_prepare_impl)
  _crossdev_torch_cuda_version("${_cx_torch_prefix}" CROSSDEV_CUDA_VERSION)
  # pip wheels: torch/ sits beside nvidia/<pkg>/ (cu13: nvidia/cu13; cu12: nvidia/cublas, ...).
  get_filename_component(_cx_site "${_cx_torch_prefix}/.." ABSOLUTE)
  set(_cx_pip_lib_dirs)
  set(_cx_pip_include_dirs)
  set(_cx_pip_bin_dirs)
  if(IS_DIRECTORY "${_cx_site}/nvidia")
    file(GLOB _cx_pip_lib_dirs LIST_DIRECTORIES true "${_cx_site}/nvidia/*/lib")
    file(GLOB _cx_pip_include_dirs LIST_DIRECTORIES true "${_cx_site}/nvidia/*/include")
    file(GLOB _cx_pip_bin_dirs LIST_DIRECTORIES true "${_cx_site}/nvidia/*/bin")
  endif()
  if(CROSSDEV_CUDA_MODE STREQUAL "OFF")
    _crossdev_cuda_skip_toolkit("CROSSDEV_ENABLE_CUDA is OFF" "")
  else()
    _crossdev_cuda_use_toolkit()
  endif()
endmacro()

macro(_crossdev_cuda_use_toolkit)
  # --- 1. the toolkit, and its major version against LibTorch's. A problem is an error when the
  # kernels were asked for (ON); under AUTO the build goes on without them.
  set(_cx_problem "")
  set(_cx_problem_where "")
  set(_cx_problem_detail "")
  _crossdev_find_nvcc("${_cx_pip_bin_dirs}" _cx_nvcc)
  if(NOT _cx_nvcc)
    set(_cx_problem "no CUDA toolkit (nvcc) was found")
    string(CONCAT _cx_problem_detail
      "crossdev: LibTorch at ${_cx_torch_prefix} is built with CUDA ${CROSSDEV_CUDA_VERSION}, and "
      "building against it needs nvcc from a CUDA ${CROSSDEV_CUDA_VERSION} toolkit, which was not found. "
      "Install one (or put its bin/ on PATH, or pass -DCUDA_TOOLKIT_ROOT_DIR=... or -DCMAKE_CUDA_COMPILER=...), "
      "or use a CPU LibTorch, or leave CROSSDEV_ENABLE_CUDA at AUTO (or OFF) to build without crossdev's CUDA kernels.")
  else()
    get_filename_component(_cx_toolkit_root "${_cx_nvcc}" DIRECTORY)
    get_filename_component(_cx_toolkit_root "${_cx_toolkit_root}" DIRECTORY)
    execute_process(COMMAND "${_cx_nvcc}" --version OUTPUT_VARIABLE _cx_nvcc_out RESULT_VARIABLE _cx_rc ERROR_QUIET)
    if(NOT _cx_rc EQUAL 0 OR NOT _cx_nvcc_out MATCHES "release ([0-9]+)\\.([0-9]+)")
      set(_cx_problem "the CUDA toolkit found printed no CUDA release")
      set(_cx_problem_where " (${_cx_nvcc} --version)")
      string(CONCAT _cx_problem_detail "crossdev: '${_cx_nvcc} --version' failed or printed no CUDA release: ${_cx_nvcc_out}")
    else()
      set(CROSSDEV_NVCC_VERSION "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}")
      set(_cx_nvcc_major "${CMAKE_MATCH_1}")
      if(CROSSDEV_CUDA_VERSION MATCHES "^([0-9]+)\\." AND NOT CMAKE_MATCH_1 STREQUAL _cx_nvcc_major)
        if(_cx_nvcc_major LESS CMAKE_MATCH_1)
          set(_cx_which "too old")
        else()
          set(_cx_which "too new")
        endif()
        set(_cx_problem "the CUDA toolkit found is CUDA ${CROSSDEV_NVCC_VERSION}, another major version")
        set(_cx_problem_where " (${_cx_nvcc})")
        string(CONCAT _cx_problem_detail
          "crossdev: the CUDA toolkit is ${_cx_which} for this LibTorch. LibTorch ${_cx_torch_prefix} was built "
          "with CUDA ${CROSSDEV_CUDA_VERSION}, but nvcc ${_cx_nvcc} is CUDA ${CROSSDEV_NVCC_VERSION}; the major "
          "versions must match. Point -DCUDA_TOOLKIT_ROOT_DIR=... (or CUDACXX) at a CUDA ${CMAKE_MATCH_1}.x "
          "toolkit, or use a LibTorch built for CUDA ${_cx_nvcc_major}, or leave CROSSDEV_ENABLE_CUDA at AUTO "
          "(or OFF) to build without crossdev's CUDA kernels.")
      elseif(NOT CROSSDEV_CUDA_VERSION)
        message(STATUS "crossdev: could not tell which CUDA LibTorch at ${_cx_torch_prefix} was built with; "
                       "not checking it against nvcc ${CROSSDEV_NVCC_VERSION}")
      endif()
    endif()
  endif()
  if(_cx_problem AND CROSSDEV_CUDA_MODE STREQUAL "ON")
    message(FATAL_ERROR "${_cx_problem_detail}")
  elseif(_cx_problem)
    _crossdev_cuda_skip_toolkit("${_cx_problem}" "${_cx_problem_where}")
  else()
    set(CROSSDEV_CUDA_KERNELS "built")
    _crossdev_cuda_prepare_toolkit()
  endif()
endmacro()

# The toolkit is settled (_cx_nvcc, _cx_toolkit_root): hand it to torch's CMake package.
macro(_crossdev_cuda_prepare_toolkit)
  # torch's FindCUDA takes the toolkit from these; CMake's CUDA language from CMAKE_CUDA_COMPILER.
  # FORCE: a root or compiler given as a wrapper's location is replaced by the real one.
  set(CUDA_TOOLKIT_ROOT_DIR "${_cx_toolkit_root}" CACHE PATH "CUDA toolkit root (crossdev: from the real nvcc)" FORCE)
  set(CMAKE_CUDA_COMPILER "${_cx_nvcc}" CACHE FILEPATH "CUDA compiler (crossdev: the real nvcc)" FORCE)
  message(STATUS "crossdev: CUDA toolkit ${CROSSDEV_NVCC_VERSION} at ${_cx_toolkit_root}; LibTorch built with CUDA ${CROSSDEV_CUDA_VERSION}")

  # --- 2. architectures.
  if(DEFINED TORCH_CUDA_ARCH_LIST)
    message(STATUS "crossdev: TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST} (given)")
  elseif(DEFINED ENV{TORCH_CUDA_ARCH_LIST})
    message(STATUS "crossdev: TORCH_CUDA_ARCH_LIST=$ENV{TORCH_CUDA_ARCH_LIST} (from the environment)")
  else()
    set(_cx_gpu_visible OFF)
    if(EXISTS /dev/nvidia0 OR EXISTS /dev/dxg)
      set(_cx_gpu_visible ON)
    else()
      find_program(_cx_nvidia_smi nvidia-smi NO_CACHE)
      if(_cx_nvidia_smi)
        execute_process(COMMAND "${_cx_nvidia_smi}" -L OUTPUT_VARIABLE _cx_smi RESULT_VARIABLE _cx_rc ERROR_QUIET)
        if(_cx_rc EQUAL 0 AND _cx_smi MATCHES "GPU [0-9]+:")
          set(_cx_gpu_visible ON)
        endif()
      endif()
    endif()
    if(_cx_gpu_visible)
      message(STATUS "crossdev: a GPU is visible; torch detects its architecture (set TORCH_CUDA_ARCH_LIST to choose)")
    else()
      set(TORCH_CUDA_ARCH_LIST "${CROSSDEV_CUDA_NO_GPU_ARCH_LIST}")
      message(STATUS "crossdev: no GPU visible; TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST} "
                     "(CROSSDEV_CUDA_NO_GPU_ARCH_LIST; set TORCH_CUDA_ARCH_LIST to choose)")
    endif()
  endif()

  # --- 3./4. what the toolkit lacks, from the pip wheels: versioned libraries, headers.
  set(_cx_toolkit_lib_dirs)
  file(GLOB _cx_toolkit_lib_dirs LIST_DIRECTORIES true
       "${_cx_toolkit_root}/lib64" "${_cx_toolkit_root}/lib" "${_cx_toolkit_root}/targets/*/lib")
  # <cache variable suffix>=<library file name>; both FindCUDA and FindCUDAToolkit read CUDA_<suffix>_LIBRARY.
  foreach(_cx_pair cudart=cudart CUDART=cudart cublas=cublas cublasLt=cublasLt cufft=cufft cufftw=cufftw
                   curand=curand cusparse=cusparse cusolver=cusolver nvrtc=nvrtc nvJitLink=nvJitLink
                   cupti=cupti cuFile=cufile nvtx3interop=nvtx3interop)
    string(REPLACE "=" ";" _cx_pair "${_cx_pair}")
    list(GET _cx_pair 0 _cx_var)
    list(GET _cx_pair 1 _cx_lib)
    if(CUDA_${_cx_var}_LIBRARY AND NOT CUDA_${_cx_var}_LIBRARY MATCHES "NOTFOUND$")
      continue()
    endif()
    set(_cx_in_toolkit OFF)
    foreach(_cx_dir IN LISTS _cx_toolkit_lib_dirs)
      if(EXISTS "${_cx_dir}/lib${_cx_lib}.so")
        set(_cx_in_toolkit ON)
      endif()
    endforeach()
    if(_cx_in_toolkit)
      continue()
    endif()
    foreach(_cx_dir IN LISTS _cx_pip_lib_dirs)
      file(GLOB _cx_found "${_cx_dir}/lib${_cx_lib}.so.[0-9]*")
      if(_cx_found)
        list(SORT _cx_found)
        list(GET _cx_found 0 _cx_found)
        set(CUDA_${_cx_var}_LIBRARY "${_cx_found}" CACHE FILEPATH "${_cx_lib} (crossdev: from the pip wheel)" FORCE)
        message(STATUS "crossdev: ${_cx_lib} from the pip wheel: ${_cx_found}")
        break()
      endif()
    endforeach()
  endforeach()
  # torch caches CUDA_NVRTC_LIB from CUDA_nvrtc_LIBRARY once; drop a NOTFOUND left by an earlier configure.
  if(DEFINED CACHE{CUDA_NVRTC_LIB} AND CUDA_NVRTC_LIB MATCHES "NOTFOUND")
    unset(CUDA_NVRTC_LIB CACHE)
  endif()
  # Headers: only when the toolkit lacks the math libraries' headers that ATen/cuda includes.
  set(_cx_toolkit_include "${_cx_toolkit_root}/include")
  if(NOT EXISTS "${_cx_toolkit_include}/cusparse.h" OR NOT EXISTS "${_cx_toolkit_include}/cublas_v2.h")
    set(CROSSDEV_CUDA_PIP_INCLUDE_DIRS ${_cx_pip_include_dirs})
    if(_cx_pip_include_dirs)
      message(STATUS "crossdev: CUDA headers the toolkit lacks come from the pip wheels: ${_cx_pip_include_dirs}")
    else()
      message(WARNING "crossdev: the CUDA toolkit at ${_cx_toolkit_root} has no cusparse.h/cublas_v2.h, which "
                      "LibTorch's CUDA headers include; install the toolkit's math libraries (or use the pip torch wheel)")
    endif()
  endif()
endmacro()

# After find_package(Torch) when the toolkit was skipped: every CUDA target LibTorch's targets name
# (torch 2.13: torch::cudart; older ones also torch::nvtoolsext, caffe2::cudnn, CUDA::..., whatever
# their public/cuda.cmake would have made) that is still missing becomes an empty stand-in, so linking
# torch, torch_cuda and c10_cuda needs no toolkit. Their own libraries find the CUDA runtime at run time.
macro(crossdev_cuda_stub_targets)
  file(GLOB _cx_targets_files "${Torch_DIR}/../Caffe2/Caffe2Targets*.cmake")
  foreach(_cx_file IN LISTS _cx_targets_files)
    file(STRINGS "${_cx_file}" _cx_lines REGEX "INTERFACE_LINK_LIBRARIES")
    string(REGEX MATCHALL "[A-Za-z0-9_]+::[A-Za-z0-9_.+-]+" _cx_names "${_cx_lines}")
    foreach(_cx_name IN LISTS _cx_names)
      if(NOT TARGET ${_cx_name})
        add_library(${_cx_name} INTERFACE IMPORTED)
      endif()
    endforeach()
  endforeach()
endmacro()

# After find_package(Torch), for crossdev's own CUDA targets.
macro(crossdev_cuda_finish)
  # Linked after torch's own targets, so these come after torch's and the toolkit's include dirs.
  if(CROSSDEV_CUDA_PIP_INCLUDE_DIRS AND NOT TARGET crossdev_cuda_pip_headers)
    add_library(crossdev_cuda_pip_headers INTERFACE)
    target_include_directories(crossdev_cuda_pip_headers SYSTEM INTERFACE ${CROSSDEV_CUDA_PIP_INCLUDE_DIRS})
    target_link_libraries(crossdev_torch INTERFACE crossdev_cuda_pip_headers)
  endif()
  # The CUDA runtime comes once, shared: torch links torch::cudart (libcudart.so); without this,
  # every target with .cu sources would also link CMake's default, the static cudart.
  set(CMAKE_CUDA_RUNTIME_LIBRARY None)
  if(NOT CMAKE_CUDA_STANDARD)
    set(CMAKE_CUDA_STANDARD ${CROSSDEV_TORCH_CXX_STANDARD})
  endif()
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
endmacro()
