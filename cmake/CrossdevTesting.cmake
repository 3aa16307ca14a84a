# crossdev_add_gtest(<target> LABELS <label>... SOURCES <file>... [LIBS <lib>...])
# One GoogleTest executable, discovered per test case by CTest at test time (PRE_TEST keeps
# the build from running LibTorch binaries), labelled by device kind / area so that
# `ctest -L cuda` runs only what a CUDA runner should.
function(crossdev_add_gtest target)
  cmake_parse_arguments(ARG "" "" "LABELS;SOURCES;LIBS" ${ARGN})
  add_executable(${target} ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  target_compile_definitions(${target} PRIVATE
    CROSSDEV_SOURCE_DIR="${CROSSDEV_SOURCE_DIR}"
    CROSSDEV_MATRIX_DIR="${CROSSDEV_MATRIX_DIR}")
  crossdev_target_warnings(${target})
  gtest_discover_tests(${target}
    DISCOVERY_MODE PRE_TEST
    DISCOVERY_TIMEOUT 120
    PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT 600 ENVIRONMENT "OMP_WAIT_POLICY=passive")
endfunction()
