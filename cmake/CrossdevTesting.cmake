# crossdev_add_gtest(<target> LABELS <label>... SOURCES <file>... [LIBS <lib>...])
# One GoogleTest executable, labelled by device kind / area so that `ctest -L cuda` runs only what a
# CUDA runner should. CTest runs it in one of two ways (CROSSDEV_CTEST_PER_CASE):
#   OFF (default)  one CTest test per executable: every case in one process, as PyTorch runs its C++
#                  test binaries. A process costs LibTorch's start-up (~0.3 s here), so this is what keeps
#                  `make test` in its budget. Cases are picked with GoogleTest's own filter:
#                  GTEST_FILTER='ErrorClassifier.*' ctest -R crossdev_manager_tests
#   ON             one CTest test per GoogleTest case, discovered at test time (PRE_TEST keeps the
#                  build from running LibTorch binaries): a case that aborts or hangs loses only itself.
#                  ci/gpu/run.sh turns it on, since on a real accelerator a driver error can kill a process.
function(crossdev_add_gtest target)
  cmake_parse_arguments(ARG "" "" "LABELS;SOURCES;LIBS" ${ARGN})
  add_executable(${target} ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  target_compile_definitions(${target} PRIVATE
    CROSSDEV_SOURCE_DIR="${CROSSDEV_SOURCE_DIR}"
    CROSSDEV_MATRIX_DIR="${CROSSDEV_MATRIX_DIR}")
  crossdev_target_warnings(${target})
  if(CROSSDEV_CTEST_PER_CASE)
    gtest_discover_tests(${target} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 120
      PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT 600 ENVIRONMENT "OMP_WAIT_POLICY=passive")
  else()
    # --gtest_brief: on failure, --output-on-failure shows the failing cases, not 800 OK lines.
    add_test(NAME ${target} COMMAND ${target} --gtest_brief=1)
    set_tests_properties(${target} PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT 600 ENVIRONMENT "OMP_WAIT_POLICY=passive")
  endif()
endfunction()

# crossdev_add_tests_target(): the target crossdev_tests builds everything `make test` needs beyond `all`:
# every target of tests/ (added EXCLUDE_FROM_ALL), and the targets others mark test-only with
#   set_property(GLOBAL APPEND PROPERTY CROSSDEV_TEST_ONLY_TARGETS <target>)
# (the -O0 copies of the fused CPU kernels, the C++ per-call benchmark).
function(_crossdev_targets_under dir out_var)
  get_property(_targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(_subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(_sub IN LISTS _subdirs)
    _crossdev_targets_under("${_sub}" _sub_targets)
    list(APPEND _targets ${_sub_targets})
  endforeach()
  set(${out_var} ${_targets} PARENT_SCOPE)
endfunction()
function(crossdev_add_tests_target)
  _crossdev_targets_under("${PROJECT_SOURCE_DIR}/tests" _targets)
  get_property(_extra GLOBAL PROPERTY CROSSDEV_TEST_ONLY_TARGETS)
  list(APPEND _targets ${_extra})
  add_custom_target(crossdev_tests)
  foreach(_target IN LISTS _targets)
    get_target_property(_type ${_target} TYPE)
    if(NOT _type STREQUAL "INTERFACE_LIBRARY")
      add_dependencies(crossdev_tests ${_target})
    endif()
  endforeach()
endfunction()
