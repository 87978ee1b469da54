# Builds a case's .sql like run_real_trace.cmake and checks occ-report's output in each format
# against the case's rules.cmake: for every format F in text, markdown, html, json and csv, each
# regular expression in REQUIRE_F must match and none in FORBID_F may. What a rule of "What to
# change" must show in every format, beside the byte-for-byte goldens (which say everything,
# and so name no rule).
include("${CHECKS}")
file(READ "${SCHEMA}" schema)
file(READ "${INPUT}" inserts)
file(WRITE "${OUT}" "BEGIN;\n${schema}\n${inserts}\nCOMMIT;\n")
set(failed "")
foreach(format text markdown html json csv)
  if(NOT DEFINED REQUIRE_${format} AND NOT DEFINED FORBID_${format})
    continue()
  endif()
  execute_process(COMMAND "${OCC_REPORT}" "${OUT}" --top 0 --format ${format}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE report ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "occ-report --format ${format} failed (${rc}): ${err}")
  endif()
  foreach(re IN LISTS REQUIRE_${format})
    if(NOT report MATCHES "${re}")
      string(APPEND failed "\n  ${format}: missing: ${re}")
    endif()
  endforeach()
  foreach(re IN LISTS FORBID_${format})
    if(report MATCHES "${re}")
      string(APPEND failed "\n  ${format}: forbidden but present: ${re} (${CMAKE_MATCH_0})")
    endif()
  endforeach()
endforeach()
if(failed)
  message(FATAL_ERROR "${INPUT}:${failed}")
endif()
message(STATUS "rules checked: ${INPUT}")
