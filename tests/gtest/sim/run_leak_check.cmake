# cmake -DTEST_BINARY=<gtest exe> [-DLSAN_RUNTIME=<liblsan.so>] [-DVALGRIND=<valgrind>] -P run_leak_check.cmake
#
# Runs the sim backend tests under LeakSanitizer (the runtime preloaded into the unmodified
# binary, so no sanitizer rebuild) or, without it, valgrind. Definite leaks fail; memory still
# reachable from PyTorch's registries at exit does not. A canary that leaks one sim block on
# purpose must be caught, so a broken leak check cannot pass silently.
set(LEAK_EXIT 23)
if(LSAN_RUNTIME AND EXISTS "${LSAN_RUNTIME}")
  set(tool "LeakSanitizer")
  set(prefix ${CMAKE_COMMAND} -E env "LD_PRELOAD=${LSAN_RUNTIME}" "LSAN_OPTIONS=exitcode=${LEAK_EXIT}:report_objects=1")
elseif(VALGRIND)
  set(tool "valgrind")
  set(prefix ${VALGRIND} --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=${LEAK_EXIT} -q)
else()
  message(FATAL_ERROR "leak check: neither liblsan nor valgrind was found at configure time")
endif()

execute_process(COMMAND ${prefix} ${TEST_BINARY} --gtest_brief=1 RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "leak check (${tool}): crossdev_sim_tests exited ${rc}\n${out}\n${err}")
endif()
message(STATUS "leak check (${tool}): no definite leaks in crossdev_sim_tests")

execute_process(COMMAND ${prefix} ${TEST_BINARY} --gtest_also_run_disabled_tests
                        --gtest_filter=SimLeakCanary.* RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL LEAK_EXIT)
  message(FATAL_ERROR "leak check (${tool}) is blind: the canary leak was not reported (exit ${rc})\n${out}\n${err}")
endif()
message(STATUS "leak check (${tool}): canary leak detected as expected")
