# How every crossdev shared library and Python module binds C++ standard library code, so that in a
# process where LibTorch came first no library's copy of that code stands in for another's.
#
# Why: LibTorch's pip builds export their own copies of libstdc++ code, compiled with the toolchain torch
# was built with: instantiations of std templates (std::regex's compiler and the vtable of its NFA's
# shared_ptr block in libtorch_python.so), functions libstdc++ also has (std::filesystem in libtorch_cpu.so,
# the std::ostringstream constructor in libc10.so). A crossdev library held such copies too, compiled with
# crossdev's compiler, and exported them. In a Python process neither python nor an earlier global library
# brings libstdc++, so the dynamic linker searched torch's libraries and crossdev's own before libstdc++:
# on an H100 host (torch 2.11+cu130, Ubuntu 24.04, GCC 13) error messages and the error classifier's
# std::regex crashed in a crossdev library's copy, called from libstdc++ and from another crossdev library
# (cuda-gdb backtraces), and LD_PRELOAD=libstdc++.so.6 made them pass.
# A toolchain can also link libstdc++ statically by default. The H100 image's /opt/gcc GCC 13.3 does, as far
# as its binaries show (a test executable held std::locale's implementation; crossdev's libraries referenced
# libstdc++'s internals with no symbol version): every crossdev library and executable then carries its own
# copy of libstdc++'s runtime, with its own std::locale and iostream state, and with rule 2 alone a
# std::regex built in libcrossdev_manager.so and destroyed in a test executable freed the other copy's
# classic locale (`free(): invalid pointer` in gtest's ErrorClassifier cases; with rule 2 the Python calls
# that crashed returned). Linking the shared libstdc++ by path (rule 1) leaves no copy to disagree.
# Three rules:
#   1. stdcxx_first: the *shared* libstdc++ is the first library each SHARED, MODULE and EXECUTABLE target
#      needs (DT_NEEDED), linked by path: the compiler's own libstdc++.so, or where the compiler has none (a
#      static-only toolchain), the system's libstdc++.so.6, the one torch's libraries load. Its symbols then
#      satisfy every reference, so no part of libstdc++.a is linked in, and a crossdev library's references
#      to libstdc++ are searched there before torch's libraries and crossdev's own;
#   2. std_local (SHARED and MODULE): its own std:: code stays local (crossdev_std_local.map): nothing else
#      binds to it, and its own references to it (data too: vtables, typeinfo) never leave the library;
#   3. symbolic_functions (SHARED and MODULE): -Bsymbolic-functions: calls to the functions it defines
#      never go through another library's copy.
# tests/python/packaging/test_library_binding.py checks all three on the built libraries and executables, and
# that none of them carries a copy of libstdc++'s runtime.
# CROSSDEV_LINK_RULES names the rules applied (all three by default); a subset relinks without the others,
# which is how ci/gpu/run.sh's link-rules phase tells on a host which rule a crash depends on.
set(CROSSDEV_LINK_RULES "stdcxx_first;std_local;symbolic_functions" CACHE STRING
    "Linking rules for crossdev's shared libraries (cmake/CrossdevLinking.cmake): a subset of stdcxx_first;std_local;symbolic_functions")
foreach(_rule IN LISTS CROSSDEV_LINK_RULES)
  if(NOT _rule MATCHES "^(stdcxx_first|std_local|symbolic_functions)$")
    message(FATAL_ERROR "CROSSDEV_LINK_RULES: unknown rule '${_rule}' (expected any of stdcxx_first;std_local;symbolic_functions)")
  endif()
endforeach()

# The shared libstdc++ rule 1 links: the compiler's own, else the system's (found where the loader looks).
function(_crossdev_shared_libstdcxx out_var)
  execute_process(COMMAND "${CMAKE_CXX_COMPILER}" -print-file-name=libstdc++.so
                  OUTPUT_VARIABLE _lib OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
  if(_rc EQUAL 0 AND IS_ABSOLUTE "${_lib}" AND EXISTS "${_lib}")
    set(${out_var} "${_lib}" PARENT_SCOPE)
    message(STATUS "crossdev: linking the compiler's shared libstdc++ first: ${_lib}")
    return()
  endif()
  find_library(CROSSDEV_SYSTEM_LIBSTDCXX NAMES libstdc++.so.6
               DOC "The shared libstdc++ crossdev links when the compiler has none (cmake/CrossdevLinking.cmake)")
  if(CROSSDEV_SYSTEM_LIBSTDCXX)
    set(${out_var} "${CROSSDEV_SYSTEM_LIBSTDCXX}" PARENT_SCOPE)
    message(STATUS "crossdev: ${CMAKE_CXX_COMPILER} has no shared libstdc++ (it links libstdc++.a); "
                   "linking the system's first instead: ${CROSSDEV_SYSTEM_LIBSTDCXX}")
  else()
    set(${out_var} "" PARENT_SCOPE)
    message(WARNING "crossdev: no shared libstdc++ found (neither ${CMAKE_CXX_COMPILER} -print-file-name=libstdc++.so "
                    "nor libstdc++.so.6 where the loader looks; set CROSSDEV_SYSTEM_LIBSTDCXX to its path): each "
                    "crossdev library will carry its own copy of libstdc++ (cmake/CrossdevLinking.cmake)")
  endif()
endfunction()

if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  set(_crossdev_shared "$<IN_LIST:$<TARGET_PROPERTY:TYPE>,SHARED_LIBRARY;MODULE_LIBRARY>")
  set(_crossdev_linked "$<IN_LIST:$<TARGET_PROPERTY:TYPE>,SHARED_LIBRARY;MODULE_LIBRARY;EXECUTABLE>")
  if("stdcxx_first" IN_LIST CROSSDEV_LINK_RULES)
    _crossdev_shared_libstdcxx(_crossdev_libstdcxx)
    if(_crossdev_libstdcxx)
      add_link_options("$<${_crossdev_linked}:LINKER:--push-state,--no-as-needed,${_crossdev_libstdcxx},--pop-state>")
    endif()
  endif()
  if("std_local" IN_LIST CROSSDEV_LINK_RULES)
    add_link_options("$<${_crossdev_shared}:LINKER:--version-script=${CMAKE_CURRENT_LIST_DIR}/crossdev_std_local.map>")
  endif()
  if("symbolic_functions" IN_LIST CROSSDEV_LINK_RULES)
    add_link_options("$<${_crossdev_shared}:LINKER:-Bsymbolic-functions>")
  endif()
endif()
