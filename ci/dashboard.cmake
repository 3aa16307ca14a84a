# CTest dashboard script: configure, build, run every CTest test, then the conformance matrices,
# and submit all of it to CDash with error and bandwidth figures as CTestMeasurement values.
#
#   ctest -S ci/dashboard.cmake [-DMODEL=Experimental|Nightly|Continuous] [-DBUILD_DIR=build-dash]
#         [-DCDASH_URL=https://cdash.example.org/submit.php?project=crossdev] [-DSIMULATE=cuda:2,mps]
#         [-DSTEPS=configure;build;test;measure;submit] [-DJOBS=2] [-DCONFIGURE_OPTIONS=-DX=Y;...]
#         [-DMATRIX=matrices]
#
# The measurements come from one extra test, crossdev.measurements, that prints
# crossdev.report.ctest_measurements' <CTestMeasurement> tags for the run's bundle; CTest attaches
# them to that test and CDash charts them across builds (max ULP / abs error per op, dtype and
# device; GB/s and share of peak per benchmark). Without CDASH_URL nothing is submitted and the
# results stay in BUILD_DIR/Testing/ (useful to check a dashboard locally).
cmake_minimum_required(VERSION 3.22)

get_filename_component(CTEST_SOURCE_DIRECTORY "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
if(NOT DEFINED BUILD_DIR)
  set(BUILD_DIR "${CTEST_SOURCE_DIRECTORY}/build-dashboard")
endif()
get_filename_component(CTEST_BINARY_DIRECTORY "${BUILD_DIR}" ABSOLUTE BASE_DIR "${CTEST_SOURCE_DIRECTORY}")
if(NOT DEFINED MODEL)
  set(MODEL Experimental)
endif()
if(NOT DEFINED STEPS)
  set(STEPS configure build test measure submit)
endif()
if(NOT DEFINED JOBS)
  cmake_host_system_information(RESULT JOBS QUERY NUMBER_OF_LOGICAL_CORES)
endif()
if(NOT DEFINED MATRIX)
  set(MATRIX matrices)
endif()
find_program(PYTHON NAMES python3 python REQUIRED)

cmake_host_system_information(RESULT _host QUERY HOSTNAME)
set(CTEST_SITE "${_host}")
if(NOT DEFINED CTEST_BUILD_NAME)
  set(CTEST_BUILD_NAME "${CMAKE_SYSTEM_NAME}-${CMAKE_HOST_SYSTEM_PROCESSOR}")
  if(SIMULATE)
    string(APPEND CTEST_BUILD_NAME "-simulated-${SIMULATE}")  # simulated runs never pose as real ones
  endif()
endif()
set(CTEST_CMAKE_GENERATOR Ninja)
if(CDASH_URL)
  set(CTEST_SUBMIT_URL "${CDASH_URL}")
endif()

ctest_start(${MODEL})

set(_failed FALSE)
if(configure IN_LIST STEPS)
  ctest_configure(OPTIONS "-DCMAKE_BUILD_TYPE=Release;${CONFIGURE_OPTIONS}" RETURN_VALUE _rc)
  if(NOT _rc EQUAL 0)
    set(_failed TRUE)
  endif()
endif()
if(build IN_LIST STEPS AND NOT _failed)
  ctest_build(FLAGS "-j${JOBS}" RETURN_VALUE _rc NUMBER_ERRORS _errors)
  if(NOT _rc EQUAL 0 OR _errors GREATER 0)
    set(_failed TRUE)
  endif()
endif()

# The measurement test lives in its own folder so the project's CTest files stay untouched.
set(_measure_dir "${CTEST_BINARY_DIRECTORY}/crossdev-measurements")
if(measure IN_LIST STEPS AND NOT _failed)
  set(_bundle "${_measure_dir}/bundle.json")
  set(_run "${CTEST_BINARY_DIRECTORY}/bin/crossdev" run --matrix "${MATRIX}"
           --out "${_bundle}" --quiet)
  if(SIMULATE)
    list(APPEND _run --simulate "${SIMULATE}")
  endif()
  if(EXISTS "${CTEST_BINARY_DIRECTORY}/bin/crossdev")
    file(MAKE_DIRECTORY "${_measure_dir}")
    # Exit 1 (a case failed) still writes the bundle; the failing cases are in the Test part.
    execute_process(COMMAND ${_run} WORKING_DIRECTORY "${CTEST_SOURCE_DIRECTORY}" RESULT_VARIABLE _run_rc)
    message(STATUS "crossdev run: exit ${_run_rc}")
  else()
    message(WARNING "${CTEST_BINARY_DIRECTORY}/bin/crossdev is missing: no measurements")
  endif()
  if(EXISTS "${_bundle}")
    file(WRITE "${_measure_dir}/CTestTestfile.cmake"
         "add_test(crossdev.measurements \"${PYTHON}\" -m crossdev.report.ctest_measurements \"${_bundle}\")\n"
         # crossdev.report is pure Python: the source tree's copy serves, installed or not.
         "set_tests_properties(crossdev.measurements PROPERTIES LABELS \"measurements\" "
         "ENVIRONMENT \"PYTHONPATH=${CTEST_SOURCE_DIRECTORY}/python\")\n")
  endif()
endif()

if(test IN_LIST STEPS AND NOT _failed)
  ctest_test(PARALLEL_LEVEL ${JOBS} RETURN_VALUE _rc)
  if(NOT _rc EQUAL 0)
    set(_failed TRUE)
  endif()
endif()
set(_submit FALSE)
if(submit IN_LIST STEPS)
  if(CTEST_SUBMIT_URL)
    set(_submit TRUE)
  else()
    message(STATUS "no CDASH_URL: results kept in ${CTEST_BINARY_DIRECTORY}/Testing, nothing submitted")
  endif()
endif()
if(_submit)
  ctest_submit(RETURN_VALUE _submit_rc)
  if(NOT _submit_rc EQUAL 0)
    message(SEND_ERROR "CDash submission to ${CTEST_SUBMIT_URL} failed")
  endif()
endif()
if(measure IN_LIST STEPS AND EXISTS "${_measure_dir}/CTestTestfile.cmake")
  # A second ctest_test rewrites Testing/<tag>/Test.xml, so the project's tests were submitted
  # above (and kept as Test-project.xml); APPEND makes CDash add this one to the same build.
  file(GLOB _test_xml "${CTEST_BINARY_DIRECTORY}/Testing/*/Test.xml")
  foreach(_xml IN LISTS _test_xml)
    get_filename_component(_tag_dir "${_xml}" DIRECTORY)
    file(RENAME "${_xml}" "${_tag_dir}/Test-project.xml")
  endforeach()
  ctest_test(BUILD "${_measure_dir}" APPEND RETURN_VALUE _measure_rc)
  if(_submit)
    ctest_submit(PARTS Test RETURN_VALUE _submit_rc)
    if(NOT _submit_rc EQUAL 0)
      message(SEND_ERROR "CDash submission of the measurements to ${CTEST_SUBMIT_URL} failed")
    endif()
  endif()
endif()
if(_failed)
  message(SEND_ERROR "dashboard: configure, build or tests failed (see ${CTEST_BINARY_DIRECTORY}/Testing)")
endif()
