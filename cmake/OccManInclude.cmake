# Script mode helper of docs/CMakeLists.txt: writes a help2man --include file holding the
# --help of every subcommand TOOL lists under "Subcommands:", so that the man page documents
# each subcommand's flags, read from the tool itself, and a SEE ALSO section.
#   cmake -DTOOL=<executable> -DOUT=<file> -P OccManInclude.cmake
execute_process(COMMAND "${TOOL}" --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${TOOL} --help exited ${rc}")
endif()
get_filename_component(name "${TOOL}" NAME)
string(REPLACE "\n" ";" lines "${help}")
set(in_list OFF)
set(subcommands)
foreach(line IN LISTS lines)
  if(line MATCHES "^Subcommands:")
    set(in_list ON)
  elseif(in_list AND line MATCHES "^  ([a-z][a-z0-9-]*) ")
    list(APPEND subcommands "${CMAKE_MATCH_1}")
  elseif(in_list AND NOT line MATCHES "^  ")
    set(in_list OFF)
  endif()
endforeach()
set(text "")
foreach(sub IN LISTS subcommands)
  execute_process(COMMAND "${TOOL}" ${sub} --help OUTPUT_VARIABLE sub_help RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${TOOL} ${sub} --help exited ${rc}")
  endif()
  # roff: a backslash is \e; a line starting with . or ' would be a request.
  string(REPLACE "\\" "\\e" sub_help "${sub_help}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" sub_help "${sub_help}")
  string(TOUPPER "${sub}" upper)
  string(APPEND text "[SUBCOMMAND ${upper}]\n.nf\n${sub_help}.fi\n\n")
endforeach()
string(APPEND text "[SEE ALSO]\n.BR occtrace (1),\n.BR occ-report (1);\n"
            "the documentation installed in share/doc/occtrace: docs/cli.md (occ-report), "
            "docs/tracing.md (occtrace), docs/report-guide.md.\n")
file(WRITE "${OUT}" "${text}")
