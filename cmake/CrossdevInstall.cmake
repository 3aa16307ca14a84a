# What `cmake --install` (and so the wheel: pyproject.toml builds it with scikit-build-core) puts
# where. Everything lands in one Python package folder, crossdev/, under the install prefix (the
# wheel's platlib): the install rules are the one list of what the wheel holds.
#
#   crossdev/*.py, report/, ...     the Python package (python/crossdev)
#   crossdev/_crossdev.<abi>.so     the pybind11 module           RPATH $ORIGIN/lib
#   crossdev/_bench.<abi>.so        crossdev.bench's module (only with the benchmarks)
#   crossdev/bin/crossdev           the engine                     RPATH $ORIGIN/../lib
#   crossdev/lib/libcrossdev_*.so   the engine's shared libraries  RPATH $ORIGIN
#   crossdev/matrices/              the built-in catalog, expectations, error patterns (util/data_dir.h)
#   crossdev/include/, crossdev/share/cmake/crossdev/   headers + find_package(crossdev)
#
# Every RPATH is relative. torch's own libraries are found through $ORIGIN/../torch/lib (torch in
# the same site-packages) or are already loaded (the module imports torch first; the `crossdev`
# command puts torch/lib of the interpreter's torch on LD_LIBRARY_PATH for the engine, for a venv
# whose torch is in the system's site-packages). No path into the build tree or the build machine
# is installed. Test-only targets have no install rule.
include(CMakePackageConfigHelpers)

set(CROSSDEV_PKG crossdev)  # the package folder under the install prefix
set(_torch_from_lib "$ORIGIN/../../torch/lib")  # crossdev/lib -> site-packages/torch/lib

set_target_properties(crossdev_core crossdev_yaml crossdev_ops crossdev_manager PROPERTIES
  INSTALL_RPATH "$ORIGIN;${_torch_from_lib}")
set_target_properties(crossdev PROPERTIES INSTALL_RPATH "$ORIGIN/../lib;${_torch_from_lib}")
set_target_properties(crossdev_core PROPERTIES EXPORT_NAME core)
set_target_properties(crossdev_ops PROPERTIES EXPORT_NAME ops)

install(TARGETS crossdev RUNTIME DESTINATION ${CROSSDEV_PKG}/bin COMPONENT runtime)
install(TARGETS crossdev_core crossdev_ops EXPORT crossdevTargets
  LIBRARY DESTINATION ${CROSSDEV_PKG}/lib COMPONENT runtime
  INCLUDES DESTINATION ${CROSSDEV_PKG}/include)
install(TARGETS crossdev_yaml crossdev_manager LIBRARY DESTINATION ${CROSSDEV_PKG}/lib COMPONENT runtime)
if(TARGET crossdev_python)
  set_target_properties(crossdev_python PROPERTIES INSTALL_RPATH "$ORIGIN/lib;$ORIGIN/../torch/lib")
  install(TARGETS crossdev_python LIBRARY DESTINATION ${CROSSDEV_PKG} COMPONENT runtime)
endif()
if(TARGET crossdev_bench_python)  # crossdev._bench: only where the benchmarks are built
  set_target_properties(crossdev_bench_python PROPERTIES INSTALL_RPATH "$ORIGIN/lib;$ORIGIN/../torch/lib")
  install(TARGETS crossdev_bench_python LIBRARY DESTINATION ${CROSSDEV_PKG} COMPONENT runtime)
endif()

install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/crossdev/ DESTINATION ${CROSSDEV_PKG} COMPONENT runtime
  PATTERN "__pycache__" EXCLUDE PATTERN "*.pyc" EXCLUDE)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/matrices/ DESTINATION ${CROSSDEV_PKG}/matrices COMPONENT runtime)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/impl/ DESTINATION ${CROSSDEV_PKG}/include COMPONENT runtime
  FILES_MATCHING PATTERN "*.h")

# find_package(crossdev): crossdev::core (presets: CROSSDEV_REGISTER_PRESET) and crossdev::ops
# (ops: CROSSDEV_REGISTER_OP). Torch comes from the consumer's own find_package(Torch).
set(_cmake_dir ${CROSSDEV_PKG}/share/cmake/crossdev)
install(EXPORT crossdevTargets NAMESPACE crossdev:: DESTINATION ${_cmake_dir} COMPONENT runtime)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/crossdevConfig.cmake.in
  ${CMAKE_BINARY_DIR}/crossdevConfig.cmake INSTALL_DESTINATION ${_cmake_dir})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/crossdevConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/crossdevConfig.cmake ${CMAKE_BINARY_DIR}/crossdevConfigVersion.cmake
  DESTINATION ${_cmake_dir} COMPONENT runtime)
