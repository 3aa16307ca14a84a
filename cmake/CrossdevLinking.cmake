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
# Three rules, for SHARED and MODULE targets on Linux:
#   1. libstdc++ is the first library each one needs (DT_NEEDED), so a crossdev library's references to
#      libstdc++ are searched there before torch's libraries and crossdev's own;
#   2. its own std:: code stays local (crossdev_std_local.map): nothing else binds to it, and its own
#      references to it (data too: vtables, typeinfo) never leave the library;
#   3. -Bsymbolic-functions: calls to the functions it defines never go through another library's copy.
# conformance/python/test_library_binding.py checks all three on the built libraries.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  set(_crossdev_shared "$<IN_LIST:$<TARGET_PROPERTY:TYPE>,SHARED_LIBRARY;MODULE_LIBRARY>")
  add_link_options(
    "$<${_crossdev_shared}:LINKER:--push-state,--no-as-needed,-lstdc++,--pop-state>"
    "$<${_crossdev_shared}:LINKER:--version-script=${CMAKE_CURRENT_LIST_DIR}/crossdev_std_local.map>"
    "$<${_crossdev_shared}:LINKER:-Bsymbolic-functions>")
endif()
