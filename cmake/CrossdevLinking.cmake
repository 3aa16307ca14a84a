# Every crossdev shared library and Python module binds its calls to the functions it defines itself
# (-Bsymbolic-functions), so the dynamic linker cannot route them to another library's copy.
#
# Why: LibTorch's pip builds export their own instantiations of std templates and their own copies of
# libstdc++ functions (std::regex's compiler in libtorch_python.so, 142 std::filesystem functions in
# libtorch_cpu.so), compiled with the toolchain torch was built with. In a Python process torch's
# copies come first, and a crossdev library's call to an instantiation it also defines went to torch's:
# on an H100 host (torch 2.11+cu130, Ubuntu 24.04, GCC 13) ErrorClassifier's std::regex crashed inside
# libtorch_python.so the first time a catalog was loaded from Python. Only function symbols are bound
# this way: data (std::locale::id and other statics) stays shared, one copy per process.
# conformance/python/test_library_binding.py checks the built libraries.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  add_link_options(
    "$<$<IN_LIST:$<TARGET_PROPERTY:TYPE>,SHARED_LIBRARY;MODULE_LIBRARY>:LINKER:-Bsymbolic-functions>")
endif()
