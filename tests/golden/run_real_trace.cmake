# Builds a real trace's .sql (schema + INSERTs, one transaction) and prints occ-report's JSON
# report of it, for the PASS/FAIL_REGULAR_EXPRESSION checks in CMakeLists.txt.
file(READ "${SCHEMA}" schema)
file(READ "${INPUT}" inserts)
file(WRITE "${OUT}" "BEGIN;\n${schema}\n${inserts}\nCOMMIT;\n")
execute_process(COMMAND "${OCC_REPORT}" "${OUT}" --top 0 --format json RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "occ-report failed: ${rc}")
endif()
