# occ_library(NAME SOURCES <files...> [LINKS <targets...>] [PRIVATE_LINKS <targets...>])
#
# One folder, one static library (PIC: libocctrace.so links the injector's). The folder's
# headers are included by their path from the project root ("analyzer/model/occupancy.h"), and a
# target sees only the folders it LINKS names, so the build checks the layering: a header from a
# folder that is not linked does not compile.
function(occ_library name)
  cmake_parse_arguments(arg "" "" "SOURCES;LINKS;PRIVATE_LINKS" ${ARGN})
  add_library(${name} STATIC ${arg_SOURCES})
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_include_directories(${name} PUBLIC "${PROJECT_SOURCE_DIR}")
  target_link_libraries(${name} PUBLIC ${arg_LINKS} PRIVATE occ_warnings ${arg_PRIVATE_LINKS})
endfunction()
