# Builds a real trace's .sql like run_real_trace.cmake and checks occ-report's JSON report of it
# against the case's owners.cmake: every regular expression in REQUIRE must match, none in
# FORBID may. What #29's owner goldens assert (owners, no action aimed at a library's or an
# autotuner's kernel, compiled variants kept apart) beside their byte-for-byte outputs.
include("${CHECKS}")
file(READ "${SCHEMA}" schema)
file(READ "${INPUT}" inserts)
file(WRITE "${OUT}" "BEGIN;\n${schema}\n${inserts}\nCOMMIT;\n")
execute_process(COMMAND "${OCC_REPORT}" "${OUT}" --top 0 --format json
                RESULT_VARIABLE rc OUTPUT_VARIABLE json ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "occ-report failed (${rc}): ${err}")
endif()
set(failed "")
foreach(re IN LISTS REQUIRE)
  if(NOT json MATCHES "${re}")
    string(APPEND failed "\n  missing: ${re}")
  endif()
endforeach()
foreach(re IN LISTS FORBID)
  if(json MATCHES "${re}")
    string(APPEND failed "\n  forbidden but present: ${re} (${CMAKE_MATCH_0})")
  endif()
endforeach()
if(failed)
  message(FATAL_ERROR "${INPUT}:${failed}")
endif()
message(STATUS "owner checks passed: ${INPUT}")
